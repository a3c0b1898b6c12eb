/* The holders of seats: see coord_holders.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_holders.h"
#include "coord_mem.h"
#include "coord_rows.h"

#define HOLDER_COLS                                                                        \
	"item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms, boot_id, pid," \
	" start_time, pgid, stop_reason, activity_index, activity_total, activity_label,"  \
	" run_id, task, in_flight_ms, in_flight_ttl_ms, in_flight_boot_id, in_flight_pid," \
	" in_flight_start_time, kind, state, stop_by, stop_ms, activity_ms"

static void
holders_row(struct coord_st *st, struct coord_holder *h)
{
	memset(h, 0, sizeof *h);
	snprintf(h->item, sizeof h->item, "%s", coord_db_coltext(st, 0));
	snprintf(h->key, sizeof h->key, "%s", coord_db_coltext(st, 1));
	snprintf(h->workdir, sizeof h->workdir, "%s", coord_db_coltext(st, 2));
	snprintf(h->owner, sizeof h->owner, "%s", coord_db_coltext(st, 3));
	h->acquired_ms = coord_db_i64(st, 4);
	h->heartbeat_ms = coord_db_i64(st, 5);
	h->ttl_ms = coord_db_i64(st, 6);
	snprintf(h->ident.boot_id, sizeof h->ident.boot_id, "%s", coord_db_coltext(st, 7));
	h->ident.pid = (pid_t)coord_db_i64(st, 8);
	h->ident.start_time = (uint64_t)coord_db_i64(st, 9);
	h->ident.pgid = (pid_t)coord_db_i64(st, 10);
	snprintf(h->run_id, sizeof h->run_id, "%s", coord_db_coltext(st, 15));
	h->task = (int)coord_db_i64(st, 16) != 0;
	h->in_flight_ms = coord_db_i64(st, 17);
	h->in_flight_ttl_ms = coord_db_i64(st, 18);
	snprintf(h->in_flight_ident.boot_id, sizeof h->in_flight_ident.boot_id, "%s",
		 coord_db_coltext(st, 19));
	h->in_flight_ident.pid = (pid_t)coord_db_i64(st, 20);
	h->in_flight_ident.start_time = (uint64_t)coord_db_i64(st, 21);
	h->in_flight_ident.pgid = h->in_flight_ident.pid;
}

int
coord_holders_stale(struct coord_db *db, const struct coord_holder *h, int64_t now)
{
	static const char q_run[] = "SELECT 1 FROM runs WHERE id = ? AND settled_ms IS NULL";
	int64_t one;
	int rc;

	if (h->run_id[0] != '\0') {
		if ((rc = coord_db_int(db, &one, q_run, "t", h->run_id)) < 0)
			return -1;
		return rc == 0;
	}
	if (h->ttl_ms > 0 && now - h->heartbeat_ms > h->ttl_ms)
		return 1;
	if (h->ident.pid > 0 && ident_check(&h->ident) == IDENT_GONE)
		return 1;
	return 0;
}

int
coord_holders_in_flight(const struct coord_holder *h, int64_t now)
{
	int64_t ttl = h->in_flight_ttl_ms > 0 ? h->in_flight_ttl_ms : h->ttl_ms;

	if (h->in_flight_ms == 0)
		return 0;
	/* The process that made the transition is gone: it will never
	 * confirm or clear (an identity that cannot be read counts as
	 * alive). The TTL is the backstop for one that lives but is stuck,
	 * or was never named. */
	if (h->in_flight_ident.pid > 0 && ident_check(&h->in_flight_ident) == IDENT_GONE)
		return 0;
	return ttl <= 0 || now - h->in_flight_ms <= ttl;
}

/* Loads every row of a query into a fresh array, so staleness checks (which
 * run their own statements) never interleave with the scan. */
static int
holders_load(struct coord_db *db, struct coord_st *st, struct coord_holder **out, size_t *n)
{
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(out, *n, &cap, sizeof **out, 8);
		holders_row(st, &(*out)[(*n)++]);
	}
	coord_db_done(st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int
coord_holders_get(struct coord_db *db, const char *item, struct coord_holder *h)
{
	static const char sql[] = "SELECT " HOLDER_COLS " FROM seats WHERE item = ?";
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(db, sql, "t", item)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		holders_row(st, h);
	coord_db_done(st);
	return rc;
}

int
coord_holders_all(struct coord_db *db, struct coord_holder **out, size_t *n)
{
	static const char sql[] = "SELECT " HOLDER_COLS " FROM seats ORDER BY item";

	return holders_load(db, coord_db_q(db, sql, ""), out, n) < 0 ? -1 : 0;
}

/* The first live holder among st's rows: 1 into *holder, 0 none, -1. */
static int
holders_first_live(struct coord_db *db, struct coord_st *st, int64_t now,
		   struct coord_holder *holder)
{
	struct coord_holder *rows;
	size_t n, i;
	int rc = 0;

	if (holders_load(db, st, &rows, &n) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = coord_holders_stale(db, &rows[i], now)) == 0) {
			*holder = rows[i];
			rc = 1;
		} else {
			rc = rc < 0 ? -1 : 0;
		}
	}
	free(rows);
	return rc;
}

int
coord_holders_arbitrate(struct coord_db *db, int64_t now, const char *item, const char *key,
			const char *workdir, int forrun, struct coord_holder *holder,
			enum coord_verdict *v)
{
	/* ?3: a run meets only explicit seats by key (coord_holders.h). */
	static const char q_keys[] =
		"SELECT " HOLDER_COLS " FROM seats WHERE item != ?1 AND task = 0 AND seat_key != ''"
		" AND seat_key != ?2 AND (?3 = 0 OR run_id IS NULL) ORDER BY acquired_ms";
	static const char q_tree[] = "SELECT " HOLDER_COLS " FROM seats WHERE item != ?1"
				     " AND task = 0 AND workdir = ?2 ORDER BY acquired_ms";
	int rc;

	*v = COORD_SEAT_FREE;
	if (key[0] != '\0') {
		rc = holders_first_live(
			db, coord_db_q(db, q_keys, "tti", item, key, (int64_t)forrun), now, holder);
		if (rc != 0) {
			*v = COORD_SEAT_KEY;
			return rc < 0 ? -1 : 0;
		}
	}
	if (workdir[0] != '\0') {
		rc = holders_first_live(db, coord_db_q(db, q_tree, "tt", item, workdir), now,
					holder);
		if (rc < 0)
			return -1;
		if (rc == 1)
			*v = COORD_SEAT_TREE;
	}
	return 0;
}

static Berth__Ident *
holders_ident(const struct ident *id)
{
	return id->pid > 0 ? coord_rows_ident_of(id) : NULL;
}

static Berth__Seat *
holders_msg(const struct coord_holder *h, struct coord_st *st, int64_t now, int stale)
{
	Berth__Seat *m = coord_mem_alloc(sizeof *m);
	int in_flight = !stale && coord_holders_in_flight(h, now);

	berth__seat__init(m);
	m->item = coord_mem_strdup(h->item);
	m->key = coord_mem_strdup(h->key);
	m->workdir = coord_mem_strdup(h->workdir);
	m->owner = coord_mem_strdup(h->owner);
	m->has_acquired_ms = m->has_heartbeat_ms = m->has_ttl_ms = m->has_stale = 1;
	m->acquired_ms = h->acquired_ms;
	m->heartbeat_ms = h->heartbeat_ms;
	m->ttl_ms = h->ttl_ms;
	m->stale = stale;
	m->owner_ident = holders_ident(&h->ident);
	if (h->run_id[0] != '\0')
		m->run_id = coord_mem_strdup(h->run_id);
	m->stop_reason = coord_db_col(st, 11);
	m->stop_by = coord_db_col(st, 24);
	m->has_stop_ms = coord_db_colint(st, 25, &m->stop_ms);
	m->kind = coord_db_col(st, 22);
	m->state = coord_db_col(st, 23);
	m->has_task = 1;
	m->task = h->task;
	m->has_in_flight = m->has_in_flight_healed = 1;
	m->in_flight = in_flight;
	m->in_flight_healed = h->in_flight_ms != 0 && !in_flight;
	if (h->in_flight_ms != 0) {
		m->has_in_flight_ms = m->has_in_flight_ttl_ms = 1;
		m->in_flight_ms = h->in_flight_ms;
		m->in_flight_ttl_ms = h->in_flight_ttl_ms > 0 ? h->in_flight_ttl_ms : h->ttl_ms;
		m->in_flight_ident = holders_ident(&h->in_flight_ident);
	}
	/* Activity is shown only while the holder is live, and, when it
	 * describes a transition, only while that is in flight: a dead
	 * holder's progress, or a healed transition's, is not progress. */
	if (!stale && (h->in_flight_ms == 0 || in_flight) && !coord_db_isnull(st, 12)) {
		m->has_activity_index = m->has_activity_total = 1;
		m->activity_index = coord_db_i64(st, 12);
		m->activity_total = coord_db_i64(st, 13);
		m->activity_label = coord_db_col(st, 14);
		m->has_activity_ms = coord_db_colint(st, 26, &m->activity_ms);
	}
	return m;
}

Berth__Seat *
coord_holders_msg(struct coord_db *db, const char *item, int64_t now)
{
	static const char sql[] = "SELECT " HOLDER_COLS " FROM seats WHERE item = ?";
	struct coord_st *st;
	struct coord_holder h;
	Berth__Seat *m = NULL;
	int rc, stale;

	if ((st = coord_db_q(db, sql, "t", item)) == NULL)
		return NULL;
	if ((rc = coord_db_step(db, st)) == 1) {
		holders_row(st, &h);
		/* Judging staleness runs other statements; st stays
		 * positioned on its row meanwhile (a different statement). */
		if ((stale = coord_holders_stale(db, &h, now)) >= 0)
			m = holders_msg(&h, st, now, stale);
	}
	coord_db_done(st);
	return m;
}

int
coord_holders_insert(struct coord_db *db, int64_t now, const struct coord_holder_spec *s)
{
	static const char sql[] =
		"INSERT INTO seats (item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms,"
		" boot_id, pid, start_time, pgid, run_id, kind, state, task, host) VALUES"
		" (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const Berth__Ident *id = s->owner_ident;
	int has = id != NULL && id->pid > 0;

	/* The seat is its host's (DESIGN §13): a host's registration adopts
	 * only the seats made before hosts were named. */
	if (coord_db_exec(db, sql, "ttttiiitiiitttit", s->item, s->key, s->workdir, s->owner, now,
			  now, s->ttl_ms, has ? id->boot_id : NULL, (int64_t)(has ? id->pid : 0),
			  (int64_t)(has ? id->start_time : 0), (int64_t)(has ? id->pgid : 0),
			  s->run_id, s->kind ? s->kind : "", s->state ? s->state : "",
			  (int64_t)(s->task != 0), coord_db_host(db)->id) != 1)
		return -1;
	return s->in_flight ? coord_holders_mark(db, s->item, now, s->in_flight_ttl_ms,
						 s->in_flight_ident)
			    : 0;
}

int
coord_holders_mark(struct coord_db *db, const char *item, int64_t now, int64_t ttl,
		   const Berth__Ident *id)
{
	static const char sql[] =
		"UPDATE seats SET in_flight_ms = ?, in_flight_ttl_ms = ?, in_flight_boot_id = ?,"
		" in_flight_pid = ?, in_flight_start_time = ?, activity_index = NULL,"
		" activity_total = NULL, activity_label = NULL, activity_ms = NULL WHERE item = ?";
	int has = id != NULL && id->pid > 0;

	/* A new transition starts without the last one's activity. */
	return coord_db_exec(db, sql, "iitiit", now, ttl > 0 ? ttl : 0, has ? id->boot_id : NULL,
			     (int64_t)(has ? id->pid : 0), (int64_t)(has ? id->start_time : 0),
			     item) == 1
		       ? 0
		       : -1;
}

int
coord_holders_unmark(struct coord_db *db, const char *item, const char *state)
{
	static const char sql[] =
		"UPDATE seats SET state = coalesce(?, state), in_flight_ms = NULL,"
		" in_flight_ttl_ms = 0, in_flight_boot_id = NULL, in_flight_pid = 0,"
		" in_flight_start_time = NULL, activity_index = NULL, activity_total = NULL,"
		" activity_label = NULL, activity_ms = NULL WHERE item = ?";

	return coord_db_exec(db, sql, "tt", state, item) == 1 ? 0 : -1;
}

int
coord_holders_delete(struct coord_db *db, const char *item)
{
	static const char sql[] = "DELETE FROM seats WHERE item = ?";

	return coord_db_exec(db, sql, "t", item) < 0 ? -1 : 0;
}

int
coord_holders_need(struct coord_db *db, int64_t n, const char *run_id, struct coord_seat_need *need)
{
	static const char sql[] =
		"SELECT seat_key, CASE WHEN tree_seat != 0 THEN workdir ELSE '' END FROM tickets"
		" WHERE n = ?";
	struct coord_st *st;
	int rc;

	memset(need, 0, sizeof *need);
	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1) {
		snprintf(need->key, sizeof need->key, "%s", coord_db_coltext(st, 0));
		snprintf(need->workdir, sizeof need->workdir, "%s", coord_db_coltext(st, 1));
	}
	coord_db_done(st);
	if (rc != 1)
		return -1;
	if (need->key[0] == '\0' && need->workdir[0] == '\0')
		return 0;
	if (need->key[0] != '\0')
		snprintf(need->item, sizeof need->item, "%s", need->key);
	else
		snprintf(need->item, sizeof need->item, "run:%s", run_id ? run_id : "");
	return 1;
}

int
coord_holders_check(struct coord_db *db, const struct coord_seat_need *need, int64_t now,
		    struct coord_holder *holder, enum coord_verdict *v, int *steal)
{
	int rc;

	*v = COORD_SEAT_FREE;
	*steal = 0;
	if (need->key[0] != '\0') {
		if ((rc = coord_holders_get(db, need->item, holder)) < 0)
			return -1;
		if (rc == 1) {
			if ((rc = coord_holders_stale(db, holder, now)) < 0)
				return -1;
			if (rc == 0) {
				*v = COORD_SEAT_KEY;
				return 1;
			}
			*steal = 1;
		}
	}
	if (coord_holders_arbitrate(db, now, need->item, need->key, need->workdir, 1, holder, v) <
	    0)
		return -1;
	return *v != COORD_SEAT_FREE;
}
