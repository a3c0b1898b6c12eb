#ifndef BERTH_COORD_EXEC_H
#define BERTH_COORD_EXEC_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_trace.h"

/* One request, one transaction (DESIGN §3-5): every mutation is one
 * IMMEDIATE transaction that applies the effect, appends its event row,
 * stores the packed reply under (sender instance, request id) and keeps
 * the decision's trace line, so a repeated request gets the stored reply
 * and no second effect, and a crash between COMMIT and the trace write
 * loses no line. */

struct coord_db;
struct coord_caller;

/* What the decision's trace line needs from its caller. */
struct coord_exec_trace {
	uint64_t seq;  /* the seq the line will carry: the trace's next one */
	int64_t t0_us; /* when the request arrived (coord_trace_now_us) */
};

/* What one executed request produced. */
struct coord_result {
	enum coord_decision decision;
	Berth__Reply *reply; /* decoded; NULL when the stored reply was replayed */
	uint8_t *packed;     /* the reply as it is sent, packed once */
	size_t packed_len;
	char reason[64]; /* denial reason or error text, short */
	char ticket[32];
	char run[40];
	char detail[96]; /* the trace's: coord_ctx.h */
	int64_t lease_expires_ms, lease_renewed_ms;
	char lease_owner[24];
	int committed;       /* the decision is durable: a mutation granted or denied */
	int decided_nothing; /* a claim for the next ticket found nothing due: nothing
			      * is stored, so it may be held and executed again */
	int wake;            /* the state changed in a way that may unblock held claims */
	char *line;          /* with a coord_exec_trace: the trace line (newline
			      * included; NULL if it could not be formatted) */
	uint64_t seq;        /* ... and its seq */
};

/* Executes one decoded, envelope-checked request at clock_wall_ms(), asked
 * by caller (coord_caller.h; NULL: the coordinator's own process). 0 with
 * res filled (the decision may be an error: storage faults, invalid
 * fields), -1 only when even an error reply could not be built. A caller
 * the verb's row does not admit is denied not_permitted. With tr,
 * the decision's trace line is formatted (once) into res->line, and a
 * committed decision keeps it in the database in its own transaction. */
int coord_exec_request(struct coord_db *db, const Berth__Request *req,
		       const struct coord_caller *caller, const struct coord_exec_trace *tr,
		       struct coord_result *res);
void coord_exec_free(struct coord_result *res);

/* The last committed decision's kept line: 1 with *seq and *line
 * (malloc'd), 0 when none is kept, -1 on error. */
int coord_exec_kept_line(struct coord_db *db, uint64_t *seq, char **line);

#endif
