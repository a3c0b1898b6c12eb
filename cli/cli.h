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

#define CLI_OK 0
#define CLI_FAIL 1  /* the operation failed, was denied, or the group is unreachable */
#define CLI_USAGE 2 /* bad arguments; also `wait`'s timeout */

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
int cmd_status(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);
int cmd_progress(int argc, char **argv);
int cmd_heartbeat(int argc, char **argv);
int cmd_note(int argc, char **argv);
int cmd_should_stop(int argc, char **argv);
int cmd_seat(int argc, char **argv);
/* Written in cmd_trace.c by the observability part; main.c refers to it
 * weakly so the CLI builds before that file exists. */
int cmd_trace(int argc, char **argv);

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
/* "K=V" with a non-empty name made of [A-Za-z0-9_]. */
int cli_parse_env(const char *s);
/* "A,B,C" into a NULL-terminated array of non-empty items (caller frees
 * with cli_strv_free). */
int cli_split_list(const char *s, char ***items, size_t *n);
void cli_strv_free(char **v);

/* `berth add --batch FILE`: one shell command per line; blank lines and
 * lines whose first non-blank character is '#' are skipped; surrounding
 * blanks are trimmed. On failure err says which line is wrong. */
struct cli_batch {
	char **lines;
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
/* "2026-11-30 06:40:01 (3m ago)" / "(in 42s)"; "-" for 0. */
void cli_fmt_when(int64_t ms, int64_t now_ms, char *buf, size_t n);
/* "in 42s", "3m ago", "now"; "-" for 0. */
void cli_fmt_rel(int64_t ms, int64_t now_ms, char *buf, size_t n);
/* "[#####.....]" for index/total (width 10). */
void cli_fmt_bar(int64_t index, int64_t total, char *buf, size_t n);
/* argv joined by blanks, quoted for a shell where needed. */
void cli_fmt_argv(char *const *argv, size_t argc, char *buf, size_t n);
/* 1 for the terminal run states (succeeded failed timed_out cancelled
 * orphaned aborted). */
int cli_run_terminal(const char *state);
/* Whether a run's exit code / signal is known (Run.exit_code_known,
 * Run.signal_known). */
int cli_run_exit_known(const Berth__Run *r);
int cli_run_signal_known(const Berth__Run *r);
/* 1 for the ticket states `wait` treats as settled. */
int cli_ticket_settled(const char *state);

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
/* A denial's facts as "k=v, k=v" into buf. */
void cli_fmt_facts(const Berth__Denied *d, char *buf, size_t n);
/* Connect, call, check: the common case of one operator request. Returns
 * CLI_OK with *rep set, or CLI_FAIL after printing why. */
int cli_request(Berth__Request *req, Berth__Reply **rep, const char *what);
/* Resolves a ticket id, run id or alias with `show`: the ticket, and in
 * *run the run the id names (for a ticket id: its latest run, or NULL).
 * 0 with *rep to free; -1 no answer (printed unless quiet); -2 refused or
 * unknown (printed). */
int cli_resolve(struct rpc_client *c, const char *id, Berth__Reply **rep,
                const Berth__Ticket **ticket, const Berth__Run **run, int timeout_ms, int quiet);

/* The seat a seat_show reply carries (a SeatOutcome or a one-seat list),
 * or NULL. */
const Berth__Seat *cli_seat_of(const Berth__Reply *rep);

#endif
