/* When work runs (DESIGN §3-4): activations, --after dependencies, --every
 * firings and the retry backoff. A ticket runs only when a queued
 * activation is due; "blocked" is derived from its dependencies, never
 * stored. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_sched.h"
#include "coord_schema.h"
#include "coord_seats.h"
#include "states.h"
#include "util.h"

int
coord_sched_blocked(struct coord_db *db, int64_t n, int64_t *dep, char *dep_state, size_t dslen)
{
	static const char sql[] =
		"SELECT u.n, u.state FROM tickets t JOIN ticket_deps d ON d.ticket = t.n"
		" JOIN tickets u ON u.n = d.dep WHERE t.n = ? AND u.state != " SQL_TICKET_SUCCEEDED
		" AND (t.after_any = 0 OR u.state NOT IN (" SQL_TICKET_FINAL "))"
		" ORDER BY u.n LIMIT 1";
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	rc = coord_db_step(db, st);
	if (rc == 1) {
		if (dep != NULL)
			*dep = coord_db_i64(st, 0);
		if (dep_state != NULL)
			snprintf(dep_state, dslen, "%s", coord_db_coltext(st, 1));
	}
	coord_db_done(st);
	return rc;
}

/* The first firing due + k * every (k >= 1) strictly after now: however
 * long berth was down, the missed intervals collapse into the one firing
 * that already happened. */
int64_t
coord_sched_next_every(int64_t due, int64_t every, int64_t now)
{
	int64_t k;

	if (every <= 0)
		return now;
	if (due > now)
		return due + every;
	k = (now - due) / every + 1;
	return due + k * every;
}

int64_t
coord_sched_backoff(const struct coord_db_opts *o, int64_t bad)
{
	int64_t d = o->backoff_base_ms;

	while (--bad > 0 && d < o->backoff_max_ms)
		d *= 2;
	return d < o->backoff_max_ms ? d : o->backoff_max_ms;
}

int
coord_sched_queue(struct coord_db *db, int64_t n, const char *kind, int64_t due, int64_t every,
		  int64_t now)
{
	static const char sql[] =
		"INSERT INTO activations (ticket, kind, due_ms, every_ms, state, created_ms)"
		" VALUES (?, ?, ?, ?, " SQL_ACT_QUEUED ", ?)";

	return coord_db_exec(db, sql, "itiii", n, kind, due, every, now) < 0 ? -1 : 0;
}

int64_t
coord_sched_next_due(struct coord_db *db, int64_t now)
{
	static const char sql[] =
		"SELECT a.due_ms FROM activations a INDEXED BY activations_due CROSS JOIN tickets t"
		" ON t.n = a.ticket WHERE a.state = " SQL_ACT_QUEUED " AND a.due_ms > ?"
		" AND t.state = " SQL_TICKET_READY " ORDER BY a.due_ms LIMIT 1";
	int64_t due = INT64_MAX;

	/* Walks the queued activations in due order and stops at the first
	 * whose ticket is ready: no sort, whatever the number of tickets. */
	if (coord_db_int(db, &due, sql, "i", now) != 1)
		return INT64_MAX;
	return due;
}

/*
 * The ticket after its run (DESIGN §4, DECISIONS.md "Tickets, attempts and
 * retries"), first row that fits: a cancel request wins over a retry or a
 * re-queue; a success ends the ticket (or waits for the next firing); an
 * aborted run never executed, so it spends no budget and its activation is
 * queued again; failed, timed_out, orphaned and lost spend the retry budget, and
 * a periodic ticket out of budget skips to its next firing with a fresh one
 * rather than stopping.
 */
#define BAD_OUTCOMES \
	((1u << RUN_FAILED) | (1u << RUN_TIMED_OUT) | (1u << RUN_ORPHANED) | (1u << RUN_LOST))
#define ANY     -1
#define T(s)    TICKET_##s
#define THEN(t) COORD_THEN_##t
#define BAD(b)  COORD_BAD_##b
static const struct coord_ticket_next ticket_next[] = {
	/* outcomes               cancel budget periodic next          then           bad */
	{ ~(1u << RUN_SUCCEEDED), 1, ANY, ANY, T(CANCELLED), THEN(CANCEL), BAD(KEEP) },
	{ 1u << RUN_SUCCEEDED, ANY, ANY, 1, T(READY), THEN(EVERY), BAD(RESET) },
	{ 1u << RUN_SUCCEEDED, ANY, ANY, 0, T(SUCCEEDED), THEN(NOTHING), BAD(RESET) },
	{ 1u << RUN_CANCELLED, ANY, ANY, ANY, T(CANCELLED), THEN(CANCEL), BAD(KEEP) },
	{ 1u << RUN_ABORTED, ANY, ANY, ANY, T(READY), THEN(REQUEUE), BAD(KEEP) },
	{ BAD_OUTCOMES, ANY, 1, ANY, T(READY), THEN(BACKOFF), BAD(SPEND) },
	{ BAD_OUTCOMES, ANY, 0, 1, T(READY), THEN(EVERY), BAD(RESET) },
	{ BAD_OUTCOMES, ANY, 0, 0, T(FAILED), THEN(NOTHING), BAD(SPEND) },
};
#undef T
#undef THEN
#undef BAD

#define NTICKET_NEXT (sizeof ticket_next / sizeof ticket_next[0])

static int
sched_fits(int want, int have)
{
	return want == ANY || want == have;
}

const struct coord_ticket_next *
coord_sched_ticket_next(enum run_state outcome, int cancel, int budget_left, int periodic)
{
	size_t i;

	if (!run_state_terminal(outcome))
		return NULL;
	for (i = 0; i < NTICKET_NEXT; i++) {
		const struct coord_ticket_next *t = &ticket_next[i];

		if ((t->outcomes & (1u << outcome)) && sched_fits(t->cancel, !!cancel) &&
		    sched_fits(t->budget_left, !!budget_left) &&
		    sched_fits(t->periodic, !!periodic))
			return t;
	}
	return NULL;
}

const struct coord_ticket_next *
coord_sched_ticket_next_row(size_t i)
{
	return i < NTICKET_NEXT ? &ticket_next[i] : NULL;
}

/* What row t queues or cancels for ticket n (every, due: its period and
 * the run's activation's due time; bad: its bad runs after). */
static int
sched_then(struct coord_db *db, const struct coord_ticket_next *t, int64_t n, const char *run_id,
	   int64_t every, int64_t due, int64_t bad, int64_t now)
{
	static const char q_requeue[] =
		"UPDATE activations SET state = " SQL_ACT_QUEUED ", run_id = NULL, done_ms = NULL"
		" WHERE run_id = ?";
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	int rc;

	switch (t->then) {
	case COORD_THEN_NOTHING: return 0;
	case COORD_THEN_EVERY:
		return coord_sched_queue(db, n, "every", coord_sched_next_every(due, every, now),
					 every, now);
	case COORD_THEN_BACKOFF:
		return coord_sched_queue(
			db, n, "at", now + coord_sched_backoff(coord_db_opts(db), bad), every, now);
	case COORD_THEN_REQUEUE:
		if ((rc = coord_db_exec(db, q_requeue, "t", run_id)) < 0)
			return -1;
		return rc > 0 ? 0 : coord_sched_queue(db, n, "now", now, 0, now);
	case COORD_THEN_CANCEL: return coord_db_exec(db, q_cancel, "ii", now, n) < 0 ? -1 : 0;
	}
	return -1;
}

int
coord_sched_after_run(struct coord_db *db, int64_t n, const char *run_id, enum run_state outcome,
		      enum stop_reason stop, int64_t now, enum ticket_state *next)
{
	static const char q_ticket[] =
		"SELECT every_ms, max_attempts, bad_runs FROM tickets WHERE n = ?";
	static const char q_act[] = "SELECT due_ms FROM activations WHERE run_id = ?";
	static const char q_set[] =
		"UPDATE tickets SET state = ?, bad_runs = ?, updated_ms = ? WHERE n = ?";
	const struct coord_ticket_next *t;
	int64_t every = 0, max = 1, bad = 0, due = now;
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(db, q_ticket, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1) {
		every = coord_db_i64(st, 0);
		max = coord_db_i64(st, 1);
		bad = coord_db_i64(st, 2);
	}
	coord_db_done(st);
	if (rc != 1 || coord_db_int(db, &due, q_act, "t", run_id) < 0)
		return -1;
	t = coord_sched_ticket_next(outcome, stop == STOP_CANCEL, bad + 1 < max, every > 0);
	if (t == NULL)
		return -1;
	if (t->bad == COORD_BAD_SPEND)
		bad++;
	else if (t->bad == COORD_BAD_RESET)
		bad = 0;
	if (sched_then(db, t, n, run_id, every, due, bad, now) != 0 ||
	    coord_db_exec(db, q_set, "tiii", ticket_state_name(t->next), bad, now, n) != 1)
		return -1;
	/* Failed or cancelled for good: what waits for it never runs. */
	if ((t->next == TICKET_FAILED || t->next == TICKET_CANCELLED) &&
	    coord_sched_deps_failed(db, n, now) != 0)
		return -1;
	*next = t->next;
	return 0;
}

/* The states a dependency ends badly in, for good. */
#define SCHED_BAD_SQL SQL_TICKET_FAILED "," SQL_TICKET_CANCELLED "," SQL_TICKET_DEPENDENCY_FAILED

int
coord_sched_deps_failed(struct coord_db *db, int64_t n, int64_t now)
{
	/* The dependents of n, theirs, and so on, that wait (ready or held)
	 * and were not added with --after-any; each ends naming the
	 * dependency it waited for. */
	static const char sql[] =
		"WITH RECURSIVE bad(n, dep) AS (SELECT ?1, CAST(NULL AS BIGINT)"
		"  UNION SELECT d.ticket, d.dep FROM ticket_deps d JOIN bad b ON d.dep = b.n"
		"  JOIN tickets t ON t.n = d.ticket WHERE t.after_any = 0"
		"  AND t.state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD "))"
		" UPDATE tickets SET state = " SQL_TICKET_DEPENDENCY_FAILED ","
		"  failed_dep = (SELECT min(b.dep) FROM bad b WHERE b.n = tickets.n), updated_ms = ?2"
		" WHERE n IN (SELECT n FROM bad WHERE dep IS NOT NULL)"
		" AND state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD ")";

	return coord_db_exec(db, sql, "ii", n, now) < 0 ? -1 : 0;
}

int
coord_sched_deps_check(struct coord_db *db, int64_t n, int64_t now)
{
	static const char q_bad[] =
		"SELECT min(d.dep) FROM tickets t JOIN ticket_deps d ON d.ticket = t.n"
		" JOIN tickets u ON u.n = d.dep WHERE t.n = ? AND t.after_any = 0"
		" AND u.state IN (" SCHED_BAD_SQL ")";
	static const char q_end[] =
		"UPDATE tickets SET state = " SQL_TICKET_DEPENDENCY_FAILED ", failed_dep = ?,"
		" updated_ms = ? WHERE n = ? AND state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD
		")";
	int64_t dep = 0;
	int rc;

	if ((rc = coord_db_int(db, &dep, q_bad, "i", n)) < 0)
		return -1;
	if (rc == 0 || dep <= 0)
		return 0;
	if (coord_db_exec(db, q_end, "iii", dep, now, n) < 0)
		return -1;
	return coord_sched_deps_failed(db, n, now);
}

int
coord_sched_deps_rearm(struct coord_db *db, int64_t n, int64_t now)
{
	/* What n ended, what those ended, and so on. */
	static const char q_ended[] =
		"WITH RECURSIVE back(n) AS (SELECT n FROM tickets WHERE failed_dep = ?1"
		"  AND state = " SQL_TICKET_DEPENDENCY_FAILED
		"  UNION SELECT t.n FROM tickets t JOIN back b ON t.failed_dep = b.n"
		"  WHERE t.state = " SQL_TICKET_DEPENDENCY_FAILED ")"
		" SELECT n FROM back ORDER BY n";
	static const char q_ready[] =
		"UPDATE tickets SET state = " SQL_TICKET_READY ", failed_dep = NULL, updated_ms = ?"
		" WHERE n = ? AND state = " SQL_TICKET_DEPENDENCY_FAILED;
	struct coord_st *st;
	int64_t *ns = NULL;
	size_t nn = 0, cap = 0, i;
	int rc;

	if ((st = coord_db_q(db, q_ended, "i", n)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(&ns, nn, &cap, sizeof *ns, 16);
		ns[nn++] = coord_db_i64(st, 0);
	}
	coord_db_done(st);
	for (i = 0; rc == 0 && i < nn; i++)
		if (coord_db_exec(db, q_ready, "ii", now, ns[i]) < 0)
			rc = -1;
	/* One that waits for another dependency that ended badly as well
	 * ends again, naming that one. */
	for (i = 0; rc == 0 && i < nn; i++)
		if (coord_sched_deps_check(db, ns[i], now) != 0)
			rc = -1;
	free(ns);
	return rc;
}

/* Held claims are tried again when an activation falls due, and also when
 * an explicit seat's TTL lapses: a ticket waiting for that seat's key or
 * tree may run then, and nothing else would say so. */
int64_t
coord_sched_next_wake(struct coord_db *db, int64_t now)
{
	int64_t due = coord_sched_next_due(db, now), lapse = coord_seats_next_lapse(db, now);

	return lapse < due ? lapse : due;
}

/* Only the seat check is left to query: the ticket's loader has read its
 * dependencies and activations already (coord_tickets_load). */
int
coord_sched_waiting(struct coord_db *db, int64_t n, int64_t now, const struct coord_sched_why *w,
		    char *buf, size_t len)
{
	char when[64], in[32];

	buf[0] = '\0';
	if (w->blocked) {
		enum ticket_state dep = ticket_state_parse(w->dep_state);

		/* Only an earlier version's ticket can still be behind a
		 * dependency that ended badly (it ends dependency_failed now). */
		if (ticket_state_final(dep))
			snprintf(buf, len, "blocked: dependency T%" PRId64 " %s", w->dep,
				 w->dep_state);
		else
			snprintf(buf, len, "blocked: waiting for T%" PRId64 " to %s (%s)", w->dep,
				 w->after_any ? "finish" : "succeed", w->dep_state);
		return 0;
	}
	if (!w->has_due) {
		snprintf(buf, len, "no queued activation");
		return 0;
	}
	if (w->due > now) {
		time_format(w->due, when, sizeof when);
		dur_format(w->due - now, in, sizeof in);
		snprintf(buf, len, "due at %s (in %s)", when, in);
		return 0;
	}
	return coord_seats_waiting(db, n, now, buf, len) < 0 ? -1 : 0;
}
