#ifndef BERTH_CF_H
#define BERTH_CF_H
/*
 * The conformance checker's insides (conform.h is its interface): the
 * replay's state, shared by conform.c (the check), cf_state.c (the map,
 * the runs and tickets), cf_moves.c (a decision judged against the move
 * and verb tables), cf_lines.c (the trace's lines, in order, matched with
 * the events table) and cf_db.c (the final database against the replay).
 * The database is the coordinator's store, read through its own interface
 * (coordinator/coord_db.h), on sqlite or PostgreSQL alike.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conform.h"
#include "coord_db.h"
#include "coord_moves.h"
#include "coord_verbs.h"
#include "states.h"
#include "trace.h"

/* A run settled by a settle: terminal, with an outcome the trace does not
 * name. coord_moves_allows() is false for it, as for every terminal state
 * (cf_table_ok() checks that no move leaves one). */
#define CF_SETTLED ((enum run_state)RUN_NSTATES)

struct cf_run {
	char id[48];
	int64_t ticket;
	unsigned attempt; /* the k-th claim of its ticket */
	enum run_state state;
	int aborted_if; /* CF_SETTLED: 1 must be aborted, -1 must not, 0 either */
	char owner[40]; /* "": handed over to an owner the trace does not name */
	char checkpointer[40];
	int started, exited, stop, cancel;
	int64_t claimed_ms, started_ms, settled_ms; /* the decisions' times, -1 unknown */
	size_t host;  /* the global trace: 1 + the index of the host that claimed it, 0 none */
	unsigned gen; /* that host's granted host_lost so far, when it claimed it */
};

/* A host of the global trace: one whose rows it holds, or one a granted
 * host_lost named. */
struct cf_host {
	char id[72];
	uint64_t prev_seq; /* the seq of its last line so far */
	unsigned lost;     /* granted host_lost naming it so far */
	int64_t epoch;     /* the epoch the last of those moved it to, 0 none */
};

struct cf_ticket {
	int64_t n;
	int added;     /* a granted add named it */
	int in_db;     /* the database has it */
	int removable; /* a granted remove or clean may have deleted it */
	unsigned claims;
	size_t live; /* 1 + the index of its unsettled run, 0 none */
};

/* A committed decision, for the replays that repeat it. */
struct cf_req {
	char ticket[32];
	char run[48];
	char reason[128];
	size_t prev; /* 1 + the index of an earlier one with the same key, 0 none */
};

/* Strings to indexes, open addressing. */
struct cf_map {
	char **keys;
	size_t *vals;
	size_t cap, n;
};

struct cf {
	const struct conform_opts *o;
	struct conform_stats *st;
	FILE *out;
	size_t max_report;
	struct coord_db *db;
	struct coord_st *events; /* the events table, in id order */
	int events_ok;           /* the trace and the events table agree so far */
	uint64_t prev_seq;
	uint64_t tail_seq;    /* trace_tail's first line's seq (it keeps a group's lines) */
	struct trace_ev prev; /* the line before (a fused line's request) */
	int has_prev;
	int batches; /* add_batch granted: tickets the trace does not name */
	struct cf_run *runs;
	size_t nruns, caprun;
	struct cf_ticket *tickets;
	size_t ntickets, capticket;
	struct cf_req *reqs;
	size_t nreqs, capreq;
	struct cf_map run_ix, ticket_ix, req_ix;
	int oom;
	/* The global trace (cf_global.c): every host's lines; each line is
	 * host's (1 + an index of hosts) while it is judged. */
	int global;
	struct cf_host *hosts;
	size_t nhosts, caphost, host;
	struct cf_map host_ix;
};

/*
 * Who a line's sender was, as coord_exec.c decides it: the caller the line
 * names (coordinator/coord_caller.c: "operator", "worker", an actor's
 * role, or "coordinator" and "harness", trusted with every role) acting in
 * its verified role; the trusted two act in the role their actor name
 * gives, or in every role for another name. A line without a caller (a
 * trace from before the key) is taken at its name, and its class is not
 * checked.
 */
struct cf_who {
	int known;      /* the line names a caller this checker knows */
	unsigned cls;   /* enum coord_class */
	unsigned roles; /* enum coord_role, for an actor */
	int verified;   /* an actor by its executable (not the trusted two) */
};

/* conform.c: the reports. */
void cf_report(struct cf *, const char *, ...) __attribute__((format(printf, 2, 3)));
/* An events row (id, ts_ms, verb, ticket, run, decision, reason,
 * instance) as a report names it: "claim T1 <run> denied nothing_due from
 * <instance>". */
void cf_event_text(struct coord_st *e, char *buf, size_t n);
/* A violation at a line: the line in a few words, then what is wrong. */
void cf_bad(struct cf *, const struct trace_ev *, const char *, ...)
	__attribute__((format(printf, 3, 4)));

/* conform.c: the check's frame, for cf_global.c. */
int cf_begin(struct cf *, const struct conform_opts *, struct conform_stats *, const char *,
	     const char *);
void cf_end_check(struct cf *);
long cf_done(struct cf *, int);
int cf_home_store(const char *, char *, size_t);

/* cf_state.c */
size_t *cf_map_get(const struct cf_map *, const char *);
int cf_map_put(struct cf_map *, const char *, size_t);
void cf_map_free(struct cf_map *);
struct cf_run *cf_run(struct cf *, const char *);
struct cf_ticket *cf_ticket(struct cf *, int64_t, int);
struct cf_ticket *cf_ticket_of(struct cf *, const char *, int);
int cf_live(enum run_state);
void cf_end(struct cf *, struct cf_run *, enum run_state, int64_t);
const char *cf_state_name(enum run_state);

/* cf_moves.c */
void cf_who_of(const struct trace_ev *, struct cf_who *);
int cf_permitted(const struct cf_who *, const struct trace_ev *, const struct coord_verb *);
int cf_table_ok(void);
const struct coord_verb *cf_verb(const char *);
void cf_move_denied(struct cf *, const struct trace_ev *, const struct cf_who *,
		    const struct coord_verb *, struct cf_run *);
void cf_granted(struct cf *, const struct trace_ev *, const struct cf_who *,
		const struct coord_verb *, int64_t);

/* cf_lines.c */
int cf_trace(struct cf *, FILE *, const char *, const char *);
void cf_line(struct cf *, const struct trace_ev *, int);

/* cf_global.c: the fence (a run whose host a granted host_lost named
 * since it was claimed, while it is live), and the verb that names it. */
int cf_fenced(const struct cf *, const struct cf_run *);
void cf_host_lost(struct cf *, const struct trace_ev *);

/* cf_db.c */
void cf_db_runs(struct cf *);
void cf_db_tickets(struct cf *);

#endif
