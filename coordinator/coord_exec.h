#ifndef BERTH_COORD_EXEC_H
#define BERTH_COORD_EXEC_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_trace.h"

/*
 * The transaction requests are decided in (DESIGN §3-5). Every mutation
 * applies its effect, appends its event row, stores the packed reply under
 * (sender instance, request id) and formats its trace line inside an
 * IMMEDIATE transaction, so a repeated request gets the stored reply and no
 * second effect.
 *
 * Group commit (DESIGN §4 "One decision, fewer trips"): a group decides
 * several requests in one transaction, each in a SAVEPOINT of its own (a
 * request that fails rolls back only itself), and commits once; the
 * caller traces and answers them, in decision order, only after
 * coord_exec_group_end, so a reply still leaves only after its decision is
 * durable. The group keeps the lines of its decisions in the database with
 * the COMMIT, so a crash between the COMMIT and their write to the trace
 * loses none (coord_exec_kept_line).
 *
 * A request may carry a fused verb (proto/run_moves.def, FUSE lines): once
 * its own verb is granted, the fused one is decided in the same savepoint,
 * on the same run, under its own guard and caller rules, and answered in
 * Reply.fused. A request may carry parts (Request.then): each is decided
 * after it in a savepoint of its own, as if sent alone, and answered in
 * Reply.then.
 */

struct coord_db;
struct coord_caller;

/* What the decision's trace line needs from its caller. */
struct coord_exec_trace {
	uint64_t seq;  /* the seq the line will carry: the trace's next one */
	int64_t t0_us; /* when the request arrived (coord_trace_now_us) */
};

/* One decision a request made (its own verb's, its fused verb's, each of
 * its parts'), as its trace line will say it. Strings are borrowed from
 * the request, the caller and the verb table. */
struct coord_decided {
	const char *verb;
	const char *fused; /* the verb whose request carried this one, or NULL */
	enum coord_decision decision;
	const char *from, *instance;
	uint64_t req_id;
	const char *caller; /* coord_caller.what; NULL in-process */
	char reason[64];
	char ticket[32];
	char run[40];
	char detail[96]; /* the trace's: coord_ctx.h */
	int64_t lease_expires_ms, lease_renewed_ms;
	char lease_owner[24];
};

/* What one executed request produced. */
struct coord_result {
	enum coord_decision decision; /* its own verb's */
	Berth__Reply *reply;          /* decoded, with the fused verb's answer; NULL when the stored
			      * reply was replayed */
	uint8_t *packed;              /* the reply as it is sent (with the parts' answers), packed
			      * once */
	size_t packed_len;
	char reason[64]; /* denial reason or error text, short */
	char ticket[32];
	char run[40];
	char detail[96]; /* the trace's: coord_ctx.h */
	int64_t lease_expires_ms, lease_renewed_ms;
	char lease_owner[24];
	int committed;             /* a decision in it is durable once its group commits: a
			      * mutation granted or denied */
	int decided_nothing;       /* a claim for the next ticket found nothing due: nothing
			      * is stored, so it may be held and executed again */
	int wake;                  /* the state changed in a way that may unblock held claims */
	char *line;                /* with tracing: the request's trace lines (its verb's, its
			      * fused verb's, its parts'), in decision order, each ending
			      * in a newline; NULL when none could be formatted */
	uint64_t seq;              /* ... the first one's seq */
	unsigned nlines;           /* ... and how many */
	struct coord_decided *dec; /* its decisions, in order (their lines) */
	size_t ndec;
};

/* One request of a group, as the group remembers it (the caller keeps req,
 * caller and res alive until coord_exec_group_end). */
struct coord_exec_entry {
	const Berth__Request *req;
	const struct coord_caller *caller;
	int64_t t0_us;
	int may_park; /* a claim that finds nothing will be held, not answered */
	struct coord_result *res;
	int failed; /* already turned into a storage error */
};

struct coord_group {
	struct coord_db *db;
	int trace;          /* format trace lines */
	uint64_t first_seq; /* the seq of the group's first line */
	uint64_t next_seq;  /* the seq the next line takes */
	int open;           /* a transaction is open */
	int reads;          /* ... a read transaction (one read request alone) */
	int claims;         /* ... claims for the next ticket alone (coord_db_begin_claims) */
	int keep;           /* a decision in it is to be committed */
	int64_t now;        /* the wall clock of the last decision (pruning) */
	struct coord_exec_entry *e;
	size_t n, cap;
};

/* A group on db; with trace set, lines are formatted from first_seq on. */
void coord_exec_group_init(struct coord_group *g, struct coord_db *db, int trace,
			   uint64_t first_seq);
/* The lines of g's next decisions take seqs from first_seq on (the
 * trace's next, when g is empty). */
void coord_exec_group_seq(struct coord_group *g, uint64_t first_seq);
/* Frees what g holds (g must be empty: ended). */
void coord_exec_group_free(struct coord_group *g);
/* 1 when req may be decided in g now: a mutating request joins a group of
 * mutations, a read (one that reads only, without parts) only an empty
 * group, which it then has to itself. */
int coord_exec_group_fits(const struct coord_group *g, const Berth__Request *req);
/* Decides one decoded, envelope-checked request in g at clock_wall_ms(),
 * asked by caller (coord_caller.h; NULL: the coordinator's own process),
 * received at t0_us. 0 with res filled (the decision may be an error:
 * storage faults, invalid fields), -1 only when even an error reply could
 * not be built. A caller the verb's row does not admit is denied
 * not_permitted. With may_park, a claim that finds nothing due
 * (res->decided_nothing) gets no trace line: the caller holds it. */
int coord_exec_group_add(struct coord_group *g, const Berth__Request *req,
			 const struct coord_caller *caller, int64_t t0_us, int may_park,
			 struct coord_result *res);
/* Ends g: the failpoint coordinator.before_commit and COMMIT when a
 * decision in it is to be kept (otherwise the transaction is rolled back,
 * and costs no sync). 0, or -1 when the commit failed: every request of the
 * group was then turned into a storage error (reply and line made again).
 * g is empty afterwards and may be used again, its lines going on from
 * the next seq. */
int coord_exec_group_end(struct coord_group *g);

/* One request alone: a group of one. With tr, its trace lines are
 * formatted from tr->seq on and a committed decision keeps them in the
 * database. */
int coord_exec_request(struct coord_db *db, const Berth__Request *req,
		       const struct coord_caller *caller, const struct coord_exec_trace *tr,
		       struct coord_result *res);
void coord_exec_free(struct coord_result *res);

/* The last committed group's kept lines (one or more, each ending in a
 * newline): 1 with *seq (the first's) and *line (malloc'd), 0 when none is
 * kept, -1 on error. */
int coord_exec_kept_line(struct coord_db *db, uint64_t *seq, char **line);

#endif
