#ifndef BERTH_COORD_INT_H
#define BERTH_COORD_INT_H
/* Private to the coordinator's store: what the verb files share. Nothing
 * outside coordinator/coord_{store,runs,tickets,seats,sched}.c includes it. */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_store.h"

#define COORD_STMT_CACHE 256
/* Seat names (item, owner, key; a ticket's --key too) and workdirs are
 * bounded so a seat row always fits the fixed buffers arbitration uses. */
#define COORD_SEAT_NAME_MAX 255
#define COORD_SEAT_PATH_MAX 4095
/* Free text a worker or a seat holder writes (a progress or activity
 * label, a note, a seat's stop reason) lands in rows that scans and lists
 * carry for every run or seat: bounded, so those replies stay small. */
#define COORD_TEXT_MAX 4096
/* A reply must fit one message (RPC_MAX_MSG, 4 MiB): lists stop short of it
 * and say so. */
#define COORD_REPLY_BUDGET (3 * 1024 * 1024)

struct coord_store {
	sqlite3 *db;
	struct coord_store_opts o;
	struct {
		const char *sql; /* the literal's address is the key */
		sqlite3_stmt *st;
	} cache[COORD_STMT_CACHE];
	int ncache;
	int64_t pruned_ms; /* when old stored replies were last pruned */
	coord_trace_line_fn trace_fn; /* coord_store_keep_trace */
	void *trace_arg;
};

/* Stored replies answer retries, which come within seconds or minutes (a
 * coordinator restart at most); after a day they are only weight. */
#define COORD_REQUEST_KEEP_MS (24 * 3600 * 1000LL)
#define COORD_PRUNE_EVERY_MS (3600 * 1000LL)

/* One request being executed: the verb handlers fill reply and the facts
 * the event row and the trace line need. */
struct coord_ctx {
	struct coord_store *s;
	const Berth__Request *req;
	int64_t now;
	Berth__Reply *reply;
	char reason[64];
	char ticket[32];
	char run[40];
	int nostore; /* a claim for the next ticket that found nothing: decided nothing */
	int wake;
};

/* ------------------------------------------------ coord_store.c: plumbing */

/* A cached prepared statement, reset and with its bindings cleared, bound
 * from fmt: 'i' int64, 't' text (NULL binds NULL), 'n' NULL (no argument),
 * 'o' an optional int64 given as (int present, int64_t value). */
sqlite3_stmt *coord_store_q(struct coord_store *s, const char *sql, const char *fmt, ...);
/* Steps st: 1 a row, 0 done, -1 an error (logged). */
int coord_store_step(struct coord_store *s, sqlite3_stmt *st);
/* Runs a statement to completion: the number of changed rows, or -1. */
int coord_store_run(struct coord_store *s, const char *sql, const char *fmt, ...);
/* One integer from the first row: 1 found, 0 no row, -1 error. */
int coord_store_int(struct coord_store *s, int64_t *out, const char *sql, const char *fmt, ...);

void *coord_store_alloc(size_t n);
char *coord_store_strdup(const char *str);
/* A column as a fresh string; NULL for SQL NULL. */
char *coord_store_col(sqlite3_stmt *st, int i);
/* "" for SQL NULL, else the column text (valid until the next step). */
const char *coord_store_coltext(sqlite3_stmt *st, int i);

Berth__Granted *coord_store_granted(struct coord_ctx *c);
/* Denies with reason and key/value fact pairs, ended by NULL. */
void coord_store_deny(struct coord_ctx *c, const char *reason, ...);
void coord_store_fail(struct coord_ctx *c, Berth__ErrorCode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Ticket ids are T<n>; aliases T<n>-r<attempt>; run ids 32 hex. */
int coord_store_ticket_parse(const char *id, int64_t *n);
int coord_store_alias_parse(const char *id, int64_t *n, int64_t *attempt);
int coord_store_is_hex(const char *str, size_t len);
void coord_store_ticket_name(int64_t n, char *buf, size_t len);

/* JSON arrays of strings (argv, env) are written here and read back with
 * sqlite's json_each. */
char *coord_store_json_array(char *const *v, size_t n);
int coord_store_json_list(struct coord_store *s, const char *json, char ***out, size_t *n);

/* ------------------------------------------------ coord_runs.c */

int coord_runs_claim(struct coord_ctx *c);
int coord_runs_start(struct coord_ctx *c);
int coord_runs_renew(struct coord_ctx *c);
int coord_runs_readopt(struct coord_ctx *c);
int coord_runs_record_exit(struct coord_ctx *c);
int coord_runs_abandon(struct coord_ctx *c);
int coord_runs_settle(struct coord_ctx *c);
int coord_runs_hello(struct coord_ctx *c);
int coord_runs_scan(struct coord_ctx *c);
int coord_runs_mark_stop(struct coord_ctx *c);
int coord_runs_worker(struct coord_ctx *c);
/* Loads a run (by rowid query on runs.id) into a Run message. */
Berth__Run *coord_runs_load(struct coord_store *s, const char *run_id, int with_notes);
/* The columns coord_runs_from_row expects, prefixed by table alias r / lease l. */
#define COORD_RUN_COLS                                                                       \
	"r.id, r.ticket, r.attempt, r.state, r.owner, r.boot_id, r.pid, r.start_time, r.pgid, " \
	"r.has_record, r.exit_code, r.signal, r.reason, r.claimed_ms, r.started_ms, "           \
	"r.ended_ms, r.settled_ms, l.expires_ms, r.progress_label, r.progress_index, "          \
	"r.progress_total, r.progress_ms, r.stop_reason, r.stop_ms, r.output_bytes, "           \
	"r.capture_complete, r.timeout_ms, r.heartbeat_ms"
Berth__Run *coord_runs_from_row(sqlite3_stmt *st);
Berth__Actor **coord_runs_actors(struct coord_store *s, size_t *n);

/* ------------------------------------------------ coord_tickets.c */

int coord_tickets_add(struct coord_ctx *c);
int coord_tickets_add_batch(struct coord_ctx *c);
int coord_tickets_list(struct coord_ctx *c);
int coord_tickets_show(struct coord_ctx *c);
int coord_tickets_hold(struct coord_ctx *c);
int coord_tickets_release(struct coord_ctx *c);
int coord_tickets_retry(struct coord_ctx *c);
int coord_tickets_cancel(struct coord_ctx *c);
int coord_tickets_status(struct coord_ctx *c);
Berth__Ticket *coord_tickets_load(struct coord_store *s, int64_t n, int64_t now, int with_runs);

/* ------------------------------------------------ coord_sched.c */

/* 1 when ticket n waits for an --after dependency that has not succeeded;
 * then dep (if not NULL) names the first such dependency. -1 on error. */
int coord_sched_blocked(struct coord_store *s, int64_t n, int64_t *dep, char *dep_state,
			size_t dslen);
/* The next firing of an --every activation: strictly after now, missed
 * intervals collapsed into one. */
int64_t coord_sched_next_every(int64_t due, int64_t every, int64_t now);
/* Retry backoff after the bad-th bad outcome. */
int64_t coord_sched_backoff(const struct coord_store_opts *o, int64_t bad);
/* Queues an activation for ticket n. */
int coord_sched_queue(struct coord_store *s, int64_t n, const char *kind, int64_t due,
		      int64_t every, int64_t now);
/* Earliest due time strictly after now of a queued activation of a ready
 * ticket, or INT64_MAX. */
int64_t coord_sched_next_due(struct coord_store *s, int64_t now);
/* What the caller already knows of a ready ticket: whether a dependency
 * blocks it (coord_sched_blocked: dep, dep_state) and its earliest queued
 * activation (has_due, due). */
struct coord_sched_why {
	int blocked;
	int64_t dep;
	char dep_state[32];
	int has_due;
	int64_t due;
};
/* Why a ticket that is not held does not run, as text ("" when it could). */
int coord_sched_waiting(struct coord_store *s, int64_t n, int64_t now,
			const struct coord_sched_why *w, char *buf, size_t len);

/* ------------------------------------------------ coord_seats.c */

/* Inside a claim: takes the seat(s) ticket n needs for run_id. 0 taken (or
 * none needed), 1 denied (reply set), -1 error. */
int coord_seats_take(struct coord_ctx *c, int64_t n, const char *run_id, int dry);
/* Releases the seat a run holds (settle, abandon). */
int coord_seats_release_run(struct coord_store *s, const char *run_id);
/* The live holder that keeps ticket n from taking its seat, as text for
 * Ticket.waiting; 0 none, 1 text written, -1 error. */
int coord_seats_waiting(struct coord_store *s, int64_t n, int64_t now, char *buf, size_t len);
int coord_seats_verb(struct coord_ctx *c);

#endif
