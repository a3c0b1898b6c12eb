/* When work runs (DESIGN §3-4): activations, --after dependencies, --every
 * firings and the retry backoff. A ticket runs only when a queued
 * activation is due; "blocked" is derived from its dependencies, never
 * stored. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coord_db.h"
#include "coord_sched.h"
#include "coord_schema.h"
#include "coord_seats.h"
#include "states.h"
#include "util.h"

int
coord_sched_blocked(struct coord_db *db, int64_t n, int64_t *dep, char *dep_state, size_t dslen)
{
	static const char sql[] =
		"SELECT u.n, u.state FROM ticket_deps d JOIN tickets u ON u.n = d.dep"		" WHERE d.ticket = ? AND u.state != " SQL_TICKET_SUCCEEDED " ORDER BY u.n LIMIT 1";
	sqlite3_stmt *st;
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	rc = coord_db_step(db, st);
	if (rc == 1) {
		if (dep != NULL)
			*dep = sqlite3_column_int64(st, 0);
		if (dep_state != NULL)
			snprintf(dep_state, dslen, "%s", coord_db_coltext(st, 1));
	}
	sqlite3_reset(st);
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
		"INSERT INTO activations (ticket, kind, due_ms, every_ms, state, created_ms)"		" VALUES (?, ?, ?, ?, " SQL_ACT_QUEUED ", ?)";

	return coord_db_exec(db, sql, "itiii", n, kind, due, every, now) < 0 ? -1 : 0;
}

int64_t
coord_sched_next_due(struct coord_db *db, int64_t now)
{
	static const char sql[] =
		"SELECT a.due_ms FROM activations a INDEXED BY activations_due CROSS JOIN tickets t"
		" ON t.n = a.ticket"		" WHERE a.state = " SQL_ACT_QUEUED " AND a.due_ms > ? AND t.state = " SQL_TICKET_READY
		" ORDER BY a.due_ms LIMIT 1";
	int64_t due = INT64_MAX;

	/* Walks the queued activations in due order and stops at the first
	 * whose ticket is ready: no sort, whatever the number of tickets. */
	if (coord_db_int(db, &due, sql, "i", now) != 1)
		return INT64_MAX;
	return due;
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
coord_sched_waiting(struct coord_db *db, int64_t n, int64_t now,
		    const struct coord_sched_why *w, char *buf, size_t len)
{
	char when[64], in[32];

	buf[0] = '\0';
	if (w->blocked) {
		enum ticket_state dep = ticket_state_parse(w->dep_state);

		if (dep == TICKET_FAILED || dep == TICKET_CANCELLED)
			snprintf(buf, len, "blocked: dependency T%" PRId64 " %s", w->dep,
				 w->dep_state);
		else
			snprintf(buf, len, "blocked: waiting for T%" PRId64 " to succeed (%s)",
				 w->dep, w->dep_state);
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
