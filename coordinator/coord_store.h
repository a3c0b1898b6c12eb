#ifndef BERTH_COORD_STORE_H
#define BERTH_COORD_STORE_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"

/* The coordinator's durable state: one sqlite database, owned by one thread
 * of one process. Every mutation is one IMMEDIATE transaction that applies
 * the effect, appends its event row and stores the packed reply under
 * (sender instance, request id), so a repeated request gets the stored reply
 * and no second effect (DESIGN §3-5). */

#define COORD_SCHEMA_VERSION 4

struct coord_store;

struct coord_store_opts {
	int sync_full;            /* 1: synchronous=FULL (default), 0: NORMAL */
	int64_t default_lease_ms; /* claim/renew/readopt with lease_ms 0 */
	int64_t backoff_base_ms;  /* retry backoff: base * 2^(failures-1) ... */
	int64_t backoff_max_ms;   /* ... capped here */
};

/* Opens (creating and migrating) the database at path. A schema newer than
 * COORD_SCHEMA_VERSION is refused with a clear message in err. */
int coord_store_open(struct coord_store **out, const char *path, const struct coord_store_opts *o,
		     char *err, size_t errlen);
void coord_store_close(struct coord_store *s);

/* What one executed request produced: the reply and the facts the trace
 * line needs. */
struct coord_result {
	Berth__Reply *reply;  /* NULL when the stored reply was replayed */
	uint8_t *packed;      /* the packed reply, always set on return 0 */
	size_t packed_len;
	const char *decision; /* "granted" | "denied" | "error" | "replayed" */
	char reason[64];      /* denial reason or error text, short */
	char ticket[32];
	char run[40];
	int wake;             /* state changed in a way that may unblock parked claims */
};

/* Executes one decoded, envelope-checked request at clock_wall_ms(). Returns
 * 0 with res filled (decision may be "error" for storage faults and invalid
 * fields), -1 only when even an error reply could not be built. A claim for
 * the next eligible ticket that finds nothing is denied "nothing_due" and
 * that denial is NOT stored, so the caller may hold (park) the request and
 * execute it again later with the same request id. */
int coord_store_exec(struct coord_store *s, const Berth__Request *req, struct coord_result *res);
void coord_result_free(struct coord_result *res);

/* Earliest due time of a queued activation of a ready ticket, or INT64_MAX:
 * when parked claims should be tried again. Only times after now count, and
 * the moment an explicit seat's TTL lapses counts too (a ticket may be
 * waiting for that seat). */
int64_t coord_store_next_due_ms(struct coord_store *s);

/* The trace line of a decision about to be committed, newline included
 * (malloc'd), and the seq it will carry; NULL to keep none. Called inside
 * the transaction, just before COMMIT, with the decision's facts. */
typedef char *(*coord_trace_line_fn)(void *arg, const Berth__Request *req, const char *decision,
				     const char *reason, const char *ticket, const char *run,
				     uint64_t *seq);
/* With fn set, every committed decision keeps its trace line in the
 * database, in the same transaction (only the last one is kept), so a crash
 * between COMMIT and the trace write loses no line (coord_trace_restore). */
void coord_store_keep_trace(struct coord_store *s, coord_trace_line_fn fn, void *arg);
/* The last committed decision's kept line: 1 with *seq and *line (malloc'd),
 * 0 when none is kept, -1 on error. */
int coord_store_trace_tail(struct coord_store *s, uint64_t *seq, char **line);

/* For tests and the bench: the raw handle (sqlite3 *). */
void *coord_store_db(struct coord_store *s);

#endif
