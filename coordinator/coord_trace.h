#ifndef BERTH_COORD_TRACE_H
#define BERTH_COORD_TRACE_H
#include <stdint.h>
#include "berth.pb-c.h"

/* The durable message trace (DESIGN §9): $home/trace/trace.jsonl, one JSON
 * line per decided request, in the order the coordinator executed them. */

struct coord_trace;

/* What the coordinator answered, as the trace spells it. */
enum coord_decision { COORD_GRANTED, COORD_DENIED, COORD_ERROR, COORD_REPLAYED };
/* "granted", "denied", "error", "replayed". */
const char *coord_decision_name(enum coord_decision d);
/* The monotonic clock latencies are measured on, in microseconds. */
int64_t coord_trace_now_us(void);

/* One line. Strings may be NULL; they are then written as "" (every key is
 * always present and every string key is always a string). */
struct coord_trace_rec {
	int64_t ts_ms;
	const char *from; /* actor: supervisor, recovery, reaper, cli, worker, ... */
	const char *instance;
	uint64_t req_id;
	const char *verb;
	const char *ticket;
	const char *run;
	const char *decision; /* granted | denied | error | replayed */
	const char *reason;
	int64_t latency_us;
	const char *caller; /* who the coordinator took the sender for (coord_caller.h):
			     * supervisor, recovery, reaper, operator, worker, ...;
			     * NULL: not written (a request refused before it was
			     * read, or executed in-process) */
	const char *fused;  /* the verb whose request carried this one (a fused
			     * verb, proto/run_moves.def); NULL: not written */
	/* Optional, written only when set: what the decision was about
	 * ("exit 7", "failed; ticket ready") and the run's lease as the
	 * decision found it (when it expires or expired, when it was last
	 * renewed, by whom), so a diagram can say why recovery acted. */
	const char *detail;
	int64_t lease_expires_ms, lease_renewed_ms;
	const char *lease_owner;
};

/* The record of req's decision, received at t0_us (coord_trace_now_us):
 * sender, request id and verb from req (NULL: bytes that did not decode),
 * the time and the latency now. ticket, run and reason are left NULL. */
void coord_trace_rec_init(struct coord_trace_rec *r, const Berth__Request *req, const char *verb,
			  enum coord_decision d, int64_t t0_us);

/* Opens (creating trace/ 0700 and the file 0600) for appending. seq goes on
 * from the last complete line; a torn last line is cut off. */
int coord_trace_open(struct coord_trace **out, const char *home);
void coord_trace_close(struct coord_trace *t);
/* Appends one line with the next seq, in a single write(2). 0 (written, or
 * kept to be written in order once the file takes it: a line is never
 * torn, its seq never reused) or -1 (logged; the decision stands, only its
 * trace line is lost). */
int coord_trace_write(struct coord_trace *t, const struct coord_trace_rec *r);
/* Appends lines already formatted (coord_trace_format: one, or several
 * joined, the first for seq, which must be the next one, the others
 * following it), in a single write(2): as coord_trace_write (the lines are
 * whole in the file, or wait together, in order, until it takes them). */
int coord_trace_append(struct coord_trace *t, uint64_t seq, const char *line);
/* Writes the lines still waiting, in order, as far as the file takes them:
 * how many still wait (0: none). */
int coord_trace_flush(struct coord_trace *t);
/* The seq of the last line taken, written or waiting (0: none yet). */
uint64_t coord_trace_seq(const struct coord_trace *t);
/* The line for r with this seq, newline included (malloc'd; NULL on
 * failure, logged). */
char *coord_trace_format(const struct coord_trace_rec *r, uint64_t seq);
/* The coordinator writes a group's lines after its COMMIT, so a crash in
 * between (or while the file refused lines) loses them; the database keeps
 * a copy of the last committed group's lines (coord_exec_kept_line: seq is
 * the first's). At start, each copied line the file ends before is appended
 * (lines lost in between show as a gap in seq), and seq goes on after it
 * either way: 1 if one was appended, 0 if nothing was missing (or a copy is
 * not a line, logged), -1 on a write error. */
int coord_trace_restore(struct coord_trace *t, uint64_t seq, const char *line);

#endif
