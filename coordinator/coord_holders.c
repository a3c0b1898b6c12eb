/* The holders of seats: see coord_holders.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_holders.h"
#include "coord_mem.h"
#include "coord_rows.h"

#define HOLDER_COLS                                                                         \
	"item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms, boot_id, pid,"  \
	" start_time, pgid, stop_reason, activity_index, activity_total, activity_label,"   \
	" run_id"

static void
holders_row(sqlite3_stmt *st, struct coord_holder *h)
{
	memset(h, 0, sizeof *h);
	snprintf(h->item, sizeof h->item, "%s", coord_db_coltext(st, 0));
	snprintf(h->key, sizeof h->key, "%s", coord_db_coltext(st, 1));
	snprintf(h->workdir, sizeof h->workdir, "%s", coord_db_coltext(st, 2));
	snprintf(h->owner, sizeof h->owner, "%s", coord_db_coltext(st, 3));
	h->acquired_ms = sqlite3_column_int64(st, 4);
	h->heartbeat_ms = sqlite3_column_int64(st, 5);
	h->ttl_ms = sqlite3_column_int64(st, 6);
	snprintf(h->ident.boot_id, sizeof h->ident.boot_id, "%s", coord_db_coltext(st, 7));
	h->ident.pid = (pid_t)sqlite3_column_int64(st, 8);
	h->ident.start_time = (uint64_t)sqlite3_column_int64(st, 9);
	h->ident.pgid = (pid_t)sqlite3_column_int64(st, 10);
	snprintf(h->run_id, sizeof h->run_id, "%s", coord_db_coltext(st, 15));
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

/* Loads every row of a query into a fresh array, so staleness checks (which
 * run their own statements) never interleave with the scan. */
static int
holders_load(struct coord_db *db, sqlite3_stmt *st, struct coord_holder **out, size_t *n)
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
	sqlite3_reset(st);
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
	sqlite3_stmt *st;
	int rc;

	if ((st = coord_db_q(db, sql, "t", item)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		holders_row(st, h);
	sqlite3_reset(st);
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
holders_first_live(struct coord_db *db, sqlite3_stmt *st, int64_t now,
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
	static const char q_keys[] =
		"SELECT " HOLDER_COLS " FROM seats WHERE item != ?1 AND seat_key != ''"
		" AND ((run_id IS NULL AND seat_key != ?2) OR (run_id IS NOT NULL AND seat_key = ?2))"
		" ORDER BY acquired_ms";
	static const char q_run_keys[] = "SELECT " HOLDER_COLS " FROM seats WHERE item != ?1"
					 " AND seat_key = ?2 ORDER BY acquired_ms";
	static const char q_tree[] = "SELECT " HOLDER_COLS " FROM seats WHERE item != ?1"
				     " AND workdir = ?2 ORDER BY acquired_ms";
	int rc;

	*v = COORD_SEAT_FREE;
	if (key[0] != '\0') {
		rc = holders_first_live(db, coord_db_q(db, forrun ? q_run_keys : q_keys, "tt", item,
						       key),
					now, holder);
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

static Berth__Seat *
holders_msg(const struct coord_holder *h, sqlite3_stmt *st, int stale)
{
	Berth__Seat *m = coord_mem_alloc(sizeof *m);

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
	if (h->ident.pid > 0)
		m->owner_ident = coord_rows_ident_of(&h->ident);
	if (h->run_id[0] != '\0')
		m->run_id = coord_mem_strdup(h->run_id);
	m->stop_reason = coord_db_col(st, 11);
	/* Activity is shown only while the holder is live: a dead holder's
	 * progress is not progress. */
	if (!stale && sqlite3_column_type(st, 12) != SQLITE_NULL) {
		m->has_activity_index = m->has_activity_total = 1;
		m->activity_index = sqlite3_column_int64(st, 12);
		m->activity_total = sqlite3_column_int64(st, 13);
		m->activity_label = coord_db_col(st, 14);
	}
	return m;
}

Berth__Seat *
coord_holders_msg(struct coord_db *db, const char *item, int64_t now)
{
	static const char sql[] = "SELECT " HOLDER_COLS " FROM seats WHERE item = ?";
	sqlite3_stmt *st;
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
			m = holders_msg(&h, st, stale);
	}
	sqlite3_reset(st);
	return m;
}

int
coord_holders_insert(struct coord_db *db, int64_t now, const char *item, const char *key,
		     const char *workdir, const char *owner, int64_t ttl,
		     const Berth__Ident *id, const char *run_id)
{
	static const char sql[] =
		"INSERT INTO seats (item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms,"
		" boot_id, pid, start_time, pgid, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	int has = id != NULL && id->pid > 0;

	return coord_db_exec(db, sql, "ttttiiitiiit", item, key, workdir, owner, now, now, ttl,
			     has ? id->boot_id : NULL, (int64_t)(has ? id->pid : 0),
			     (int64_t)(has ? id->start_time : 0), (int64_t)(has ? id->pgid : 0),
			     run_id) == 1
		       ? 0
		       : -1;
}

int
coord_holders_delete(struct coord_db *db, const char *item)
{
	static const char sql[] = "DELETE FROM seats WHERE item = ?";

	return coord_db_exec(db, sql, "t", item) < 0 ? -1 : 0;
}

int
coord_holders_need(struct coord_db *db, int64_t n, const char *run_id,
		   struct coord_seat_need *need)
{
	static const char sql[] =
		"SELECT seat_key, CASE WHEN tree_seat THEN workdir ELSE '' END FROM tickets"
		" WHERE n = ?";
	sqlite3_stmt *st;
	int rc;

	memset(need, 0, sizeof *need);
	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1) {
		snprintf(need->key, sizeof need->key, "%s", coord_db_coltext(st, 0));
		snprintf(need->workdir, sizeof need->workdir, "%s", coord_db_coltext(st, 1));
	}
	sqlite3_reset(st);
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
