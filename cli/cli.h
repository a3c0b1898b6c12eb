#ifndef BERTH_CLI_H
#define BERTH_CLI_H
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "rpc.h"

/* The `berth` command line (DESIGN §12). Every command is a function
 * cmd_<name>(argc, argv) with argv[0] = the command's name; it returns the
 * process exit status. Global options (--home, --timeout) are parsed by
 * main.c before the command and exported through the environment
 * (BERTH_HOME, BERTH_TIMEOUT), so every command reads them the same way. */

#define CLI_OK      0
#define CLI_FAIL    1   /* the operation failed, was denied, or the group is unreachable */
#define CLI_USAGE   2   /* bad arguments */
#define CLI_TIMEOUT 124 /* `wait` gave up (as timeout(1) says it) */

#define CLI_DEFAULT_TIMEOUT_MS 10000

/* ------------------------------------------------------------ commands */

int cmd_add(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_hold(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_retry(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_edit(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_slots(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);
int cmd_progress(int argc, char **argv);
int cmd_heartbeat(int argc, char **argv);
int cmd_note(int argc, char **argv);
int cmd_should_stop(int argc, char **argv);
int cmd_seat(int argc, char **argv);
int cmd_trace(int argc, char **argv);

/* The environment berth was started with (main.c), before it exported
 * --home and --timeout: what `berth add` captures for the job. NULL when
 * it could not be kept. */
char **cli_caller_env(void);

/* ------------------------------------------------------------ cli_args.c
 * Pure argument parsers (berth_cli_lib, unit-tested). Each returns 0, or -1
 * when the text is not acceptable; none prints anything. */

/* --at TIME: "HH:MM[:SS]" is local time today, or tomorrow when that moment
 * has already passed at now_ms; "YYYY-MM-DD[T ]HH:MM[:SS]" is a local date
 * and time, with a trailing "Z" a UTC one. */
int cli_parse_at(const char *s, int64_t now_ms, int64_t *at_ms);
/* "I/N" progress: 0 <= I <= N, N >= 1. */
int cli_parse_frac(const char *s, int64_t *index, int64_t *total);
/* A whole decimal number in [min, max]. */
int cli_parse_int(const char *s, long long min, long long max, long long *out);
/* A duration (dur_parse: ms, s, m, h; bare number = seconds) >= min_ms. */
int cli_parse_dur(const char *s, int64_t min_ms, int64_t *ms);
/* An option's number or duration, or a usage error on stderr that names
 * the range ("--retries: bad number 'x' (a whole number from 0 to
 * 1000000)"). CLI_OK, or CLI_USAGE after the message. max_ms INT64_MAX:
 * no upper bound. */
int cli_opt_int(const char *cmd, const char *opt, const char *s, long long min, long long max,
		long long *out);
int cli_opt_dur(const char *cmd, const char *opt, const char *s, int64_t min_ms, int64_t max_ms,
		int64_t *ms);
/* Placement (docs/MANY-HOSTS.md): --host H (host 1) into *hostp, or --on
 * L1,L2,... (host 0) into *labels (a NULL-ended vector replacing the one
 * there, freed with vec_free_str) and *n, checked by the rule the
 * coordinator applies again (labels.h). CLI_OK, CLI_USAGE after the
 * message, CLI_FAIL out of memory. */
int cli_opt_place(const char *cmd, int host, char *arg, char **hostp, char ***labels, size_t *n);
/* A ticket or run id as a user types it: T<n>, or a bare <n> meaning T<n>
 * (the tsp habit); an alias T<n>-r<k>; a run id or a prefix of one (8 to
 * 32 hex digits; one made only of digits reads as a ticket); "last", the
 * newest ticket. Written normalised into buf ("7" -> "T7", hex in lower
 * case). Returns the kind, or -1 when s is none of these (a usage error:
 * exit 2, not a question for the coordinator). */
enum { CLI_ID_TICKET = 1, CLI_ID_ALIAS, CLI_ID_RUN, CLI_ID_LAST };
#define CLI_ID_MAX 48
int cli_parse_id(const char *s, char *buf, size_t n);
/* "K=V" with a non-empty name made of [A-Za-z0-9_]. */
int cli_parse_env(const char *s);
/* "A,B,C" into a NULL-terminated array of non-empty items (caller frees
 * with vec_free_str). */
int cli_split_list(const char *s, char ***items, size_t *n);

/* `berth add --batch FILE`: one shell command per line, any number of
 * them; blank lines and lines whose first non-blank character is '#' are
 * skipped; surrounding blanks are trimmed; a line over BERTH_ARG_MAX bytes
 * is refused. On failure err says which line is wrong. lineno[i] is the
 * file's line number of lines[i]. */
struct cli_batch {
	char **lines;
	long *lineno;
	size_t n;
};
int cli_batch_read(FILE *f, struct cli_batch *b, char *err, size_t errlen);
void cli_batch_free(struct cli_batch *b);

/* Option parsing around getopt_long (argument permutation unless optstring
 * starts with '+'). Returns the option, -1 at the end, or '?' after printing
 * "berth CMD: unknown option ..." / "... needs a value" on stderr. */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);
/* Prints "berth CMD: <msg>" and a hint to --help on stderr; returns CLI_USAGE.
 * Like cli_fail, it escapes the whole message (esc_text) itself: pass text
 * from a job or a user as it is, never through cli_esc. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "berth: <msg>" on stderr, control characters escaped; returns
 * CLI_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------ cli_print.c */

/* s escaped for a terminal (esc_text: no control byte, valid UTF-8), as a
 * printf argument: every string that came from a job, a user or the wire is
 * printed through this (DESIGN §12), except inside cli_fail and
 * cli_usage_error, which escape their whole message. The result lives in
 * one of CLI_ESC_SLOTS buffers used in turn: valid for that many more
 * calls. NULL reads as "". */
#define CLI_ESC_SLOTS 16
const char *cli_esc(const char *s);

/* JSON objects (one line, no trailing newline). Times are wall ms or null. */
void cli_json_run(FILE *f, const Berth__Run *r);
void cli_json_ticket(FILE *f, const Berth__Ticket *t, int with_runs);
void cli_json_seat(FILE *f, const Berth__Seat *s, int64_t now_ms);
/* The NAME of "NAME=value" into buf: what show prints of a ticket's
 * environment (never the values). */
void cli_env_name(const char *kv, char *buf, size_t n);
/* "2026-11-30 06:40:01 (3m ago)" / "(in 42s)"; "-" for 0. */
void cli_fmt_when(int64_t ms, int64_t now_ms, char *buf, size_t n);
/* "in 42s", "3m ago", "now"; "-" for 0. */
void cli_fmt_rel(int64_t ms, int64_t now_ms, char *buf, size_t n);
/* "[#####.....]" for index/total (width 10). */
void cli_fmt_bar(int64_t index, int64_t total, char *buf, size_t n);
/* argv joined by blanks, quoted for a shell where needed. */
void cli_fmt_argv(char *const *argv, size_t argc, char *buf, size_t n);
/* 1 for the terminal run states (states.h: the outcomes). */
int cli_run_terminal(const char *state);
/* Whether a run's exit code / signal is known (Run.exit_code_known,
 * Run.signal_known). */
int cli_run_exit_known(const Berth__Run *r);
int cli_run_signal_known(const Berth__Run *r);
/* 1 for the ticket states `wait` treats as settled (states.h: final). */
int cli_ticket_settled(const char *state);
/* The status a shell sees for a run, as `tsp -w` gives it: 0 when it
 * succeeded, its exit code, 128+N for signal N, else 1 (never 0 for a run
 * that did not succeed). */
int cli_run_exit_status(const Berth__Run *r);
/* The same for a ticket: 0 when it succeeded, else its last run's (1 when
 * it never ran). */
int cli_ticket_exit_status(const Berth__Ticket *t);

/* ------------------------------------------------------------ cli_table.c
 * Tables that fit the terminal and never wrap (list, status). Cells are
 * given escaped (cli_esc). A column with a floor > 0 may shrink to it,
 * widest first, its cells then ending in "..."; floor 0 never shrinks. */

#define CLI_TABLE_MAXCOLS 12

struct cli_table {
	size_t indent; /* blanks before every row (counted in the width) */
	size_t ncols;
	const char *const *heads;
	size_t floor[CLI_TABLE_MAXCOLS];
	char ***rows;
	size_t nrows, cap;
};

int cli_table_init(struct cli_table *t, size_t ncols, const char *const *heads,
		   const size_t *floor);
/* Copies ncols cells (NULL reads as ""). 0 or -1 (out of memory). */
int cli_table_add(struct cli_table *t, const char *const *cells);
/* The column widths for a terminal of width columns (0: no limit). */
void cli_table_fit(const struct cli_table *t, size_t width, size_t *w);
/* The heads and the rows, each at most width columns (0: no limit). */
void cli_table_print(FILE *f, const struct cli_table *t, size_t width);
void cli_table_free(struct cli_table *t);
/* Terminal columns of UTF-8 text. */
size_t cli_text_width(const char *s);
/* $COLUMNS, else the width of the terminal on stdout; 0 (no limit) when
 * stdout is not a terminal. */
size_t cli_term_width(void);

/* ------------------------------------------------------------ cli_rpc.c */

/* $BERTH_HOME (set by main from --home), else the default of DESIGN §2. */
const char *cli_home(void);
/* The coordinator socket path under cli_home(). */
const char *cli_sock_path(void);
/* RPC timeout: BERTH_TIMEOUT (main exports --timeout there), else 10 s. */
int cli_timeout_ms(void);
/* A client for the operator verbs. Fails fast (message naming the socket)
 * when no coordinator can be starting: the socket is missing and no
 * launcher-recorded actor is alive. NULL after printing why. */
struct rpc_client *cli_connect(void);
/* A client for the worker verbs from BERTH_SOCKET / BERTH_TOKEN /
 * BERTH_RUN_ID; NULL after printing which variable is missing. */
struct rpc_client *cli_connect_worker(const char *cmd, const char **run_id);
/* rpc_call with the CLI's messages: 0 with *rep set (any reply, granted or
 * not), -1 after printing that the coordinator did not answer (or quietly
 * with quiet set: `wait` keeps trying). */
int cli_call(struct rpc_client *c, Berth__Request *req, Berth__Reply **rep, int timeout_ms,
	     int quiet);
/* 0 when rep is granted; else prints "berth: <what>: <denial or error>"
 * and returns CLI_FAIL. */
int cli_check(const Berth__Reply *rep, const char *what);
/* The same for verb on id: a denial is told as a sentence ("T3 has
 * already finished (succeeded); nothing to cancel"); the machine code and
 * facts stay in --json and the trace. */
int cli_check_id(const Berth__Reply *rep, const char *verb, const char *id);
void cli_denial_text(const char *verb, const char *id, const Berth__Denied *d, char *buf, size_t n);
/* A denial's fact by key, or NULL. */
const char *cli_fact(const Berth__Denied *d, const char *key);
/* cli_parse_id for a command's argument: CLI_OK with the normalised id in
 * buf, or CLI_USAGE after saying what an ID looks like. */
int cli_id_arg(const char *cmd, const char *s, char *buf, size_t n);
/* A TicketRef verb (hold, release, retry, cancel, remove) on each of the
 * n ids typed in args, every id checked before anything is asked, each
 * its own request. each() gets every reply, granted or not, and returns
 * -1 to count it as a failure. CLI_OK, CLI_FAIL when any failed or the
 * coordinator did not answer, CLI_USAGE for a bad id (said). */
int cli_each_id(const char *cmd, int n, char **args, Berth__Request__VerbCase verb,
		int (*each)(void *arg, const char *id, const Berth__Reply *rep), void *arg);
/* A denial's facts as "k=v, k=v" into buf. */
void cli_fmt_facts(const Berth__Denied *d, char *buf, size_t n);
/* Connect, call, check: the common case of one operator request. Returns
 * CLI_OK with *rep set, or CLI_FAIL after printing why. */
int cli_request(Berth__Request *req, Berth__Reply **rep, const char *what);
/* The same, a refusal told as cli_check_id tells it. */
int cli_request_id(Berth__Request *req, Berth__Reply **rep, const char *verb, const char *id);
/* Resolves a ticket id, run id or alias with `show` (errors said as cmd's):
 * the ticket, and in
 * *run the run the id names (for a ticket id: its latest run, or NULL).
 * 0 with *rep to free; -1 no answer (printed unless quiet); -2 refused or
 * unknown (printed). */
int cli_resolve(struct rpc_client *c, const char *cmd, const char *id, Berth__Reply **rep,
		const Berth__Ticket **ticket, const Berth__Run **run, int timeout_ms, int quiet);

/* The seat a seat_show reply carries (a SeatOutcome or a one-seat list),
 * or NULL. */
const Berth__Seat *cli_seat_of(const Berth__Reply *rep);

#endif
