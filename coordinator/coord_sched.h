#ifndef BERTH_COORD_SCHED_H
#define BERTH_COORD_SCHED_H
#include <stddef.h>
#include <stdint.h>
#include "coord_schema.h"
#include "states.h"
/* When work runs (DESIGN §3-4): activations, --after dependencies, --every
 * firings and the retry backoff. */

struct coord_db;
struct coord_db_opts;

/* A ready ticket with an --after dependency that has not succeeded shows
 * as "blocked": derived, never stored, so not a state of states.h. */
#define COORD_SCHED_BLOCKED "blocked"

/* The SQL condition "ticket t waits for a dependency" (t: an alias of
 * tickets): one that has not succeeded, or with --after-any one that has
 * not finished. Every query that derives "blocked" uses it. */
#define COORD_SCHED_BLOCKED_SQL(t)                                                              \
	"EXISTS (SELECT 1 FROM ticket_deps d JOIN tickets u ON u.n = d.dep WHERE d.ticket = " t \
	".n AND u.state != " SQL_TICKET_SUCCEEDED " AND (" t ".after_any = 0 OR u.state NOT IN" \
	" (" SQL_TICKET_FINAL ")))"

/* 1 when ticket n waits for an --after dependency (COORD_SCHED_BLOCKED_SQL);
 * then dep (if not NULL) names the first such dependency. -1 on error. */
int coord_sched_blocked(struct coord_db *db, int64_t n, int64_t *dep, char *dep_state,
			size_t dslen);
/* The next firing of an --every activation: strictly after now, missed
 * intervals collapsed into one. */
int64_t coord_sched_next_every(int64_t due, int64_t every, int64_t now);
/* Retry backoff after the bad-th bad outcome. */
int64_t coord_sched_backoff(const struct coord_db_opts *o, int64_t bad);
/* Queues an activation for ticket n. */
int coord_sched_queue(struct coord_db *db, int64_t n, const char *kind, int64_t due, int64_t every,
		      int64_t now);
/* Earliest due time strictly after now of a queued activation of a ready
 * ticket, or INT64_MAX. */
int64_t coord_sched_next_due(struct coord_db *db, int64_t now);
/* When held claims should be tried again: the next activation falling due
 * (coord_sched_next_due) or the next lapse of an explicit seat's TTL (a
 * ticket may be waiting for that seat), whichever comes first; INT64_MAX
 * for neither. */
int64_t coord_sched_next_wake(struct coord_db *db, int64_t now);
/* What the caller already knows of a ready ticket: whether a dependency
 * blocks it (coord_sched_blocked: dep, dep_state) and its earliest queued
 * activation (has_due, due). */
struct coord_sched_why {
	int blocked;
	int after_any; /* added with --after-any: waits for the dependency to finish */
	int64_t dep;
	char dep_state[32];
	int has_due;
	int64_t due;
};
/* What follows for the ticket's activations when its run has ended. */
enum coord_then {
	COORD_THEN_NOTHING,
	COORD_THEN_EVERY,   /* the next --every firing is queued */
	COORD_THEN_BACKOFF, /* a retry is queued after the backoff */
	COORD_THEN_REQUEUE, /* the run's own activation is queued again */
	COORD_THEN_CANCEL,  /* every queued activation is cancelled */
};

/* One row of the ticket_next table: for a run that ended with an outcome
 * in outcomes (1u << enum run_state), with a cancel requested or not, with
 * attempts left after this one or not, of a periodic (--every) ticket or
 * not (-1: either): the ticket's next state, what is queued, and what
 * becomes of its count of bad runs (the retry budget spent). */
enum coord_bad {
	COORD_BAD_KEEP,  /* as it was */
	COORD_BAD_SPEND, /* one more */
	COORD_BAD_RESET, /* a fresh budget */
};
struct coord_ticket_next {
	unsigned outcomes;
	int cancel, budget_left, periodic;
	enum ticket_state next;
	enum coord_then then;
	enum coord_bad bad;
};

/* The first row that fits; NULL for an outcome that is not terminal. */
const struct coord_ticket_next *coord_sched_ticket_next(enum run_state outcome, int cancel,
							int budget_left, int periodic);
/* The i-th row (0, 1, ...), NULL past the last: for tests. */
const struct coord_ticket_next *coord_sched_ticket_next_row(size_t i);
/* Moves ticket n on after its run run_id ended with outcome (stop: the
 * run's stop request): its next state into *next, the activations it
 * needs queued or cancelled. 0 or -1. */
int coord_sched_after_run(struct coord_db *db, int64_t n, const char *run_id,
			  enum run_state outcome, enum stop_reason stop, int64_t now,
			  enum ticket_state *next);

/*
 * The --after rule (DESIGN §4): a ticket whose dependency ended failed,
 * cancelled or dependency_failed (for good: a ticket still retrying is
 * ready) ends dependency_failed without running, unless it was added with
 * --after-any; its own dependents follow. Retrying the dependency re-arms
 * them. Their activations stay queued meanwhile, so a re-armed ticket runs
 * when it would have.
 */
/* Ticket n has just ended badly for good: its dependents end. 0 or -1. */
int coord_sched_deps_failed(struct coord_db *db, int64_t n, int64_t now);
/* Ticket n is ready again (berth retry): the tickets it ended are ready
 * again, unless another dependency of theirs ended badly too. 0 or -1. */
int coord_sched_deps_rearm(struct coord_db *db, int64_t n, int64_t now);
/* Ticket n was just added: it ends dependency_failed at once when one of
 * its dependencies already ended badly. 0 or -1. */
int coord_sched_deps_check(struct coord_db *db, int64_t n, int64_t now);

/* Why a ticket that is not held does not run, as text ("" when it could). */
int coord_sched_waiting(struct coord_db *db, int64_t n, int64_t now,
			const struct coord_sched_why *w, char *buf, size_t len);

#endif
