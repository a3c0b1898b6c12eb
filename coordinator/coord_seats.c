/* Seats (DESIGN §8): named, owned leases anyone may take, arbitrated in the
 * request's IMMEDIATE transaction. The key answers first (two live holders
 * coexist only when their keys are equal and non-empty; the default key is
 * the item, so a seat is single by default), then the tree (two live
 * holders never share a non-empty workdir): the two refusals give different
 * advice. A holder is stale when its heartbeat is older than its TTL or its
 * owner process is gone; an owner that cannot be verified counts as alive.
 *
 * Runs take seats too, inside the claim: a ticket with --key K takes the
 * seat named K, and a run's key is exclusive: it conflicts with any live
 * holder of K (so two tickets with one key never overlap, and an outside
 * holder of K keeps them waiting) and with nothing else by key. A ticket
 * with only --workdir takes a tree-only seat "run:<run id>" with an empty
 * key, which the key rule ignores in both directions. A workdir that is
 * only the caller's cwd (Add.workdir_default) takes no seat. A run's seat
 * is live while the run is unsettled and is released when it settles or is
 * abandoned. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_seats.h"
#include "ident.h"
#include "util.h"

#define SEATS_DEFAULT_TTL_MS 600000
/* Limits that keep every name whole in struct seat's buffers. */
#define SEATS_NAME_MAX COORD_SEAT_NAME_MAX
#define SEATS_PATH_MAX COORD_SEAT_PATH_MAX

#define SEAT_COLS                                                                           \
	"item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms, boot_id, pid,"  \
	" start_time, pgid, stop_reason, activity_index, activity_total, activity_label,"   \
	" run_id"

/* One seat row as arbitration sees it. */
struct seat {
	char item[COORD_SEAT_NAME_MAX + 1];
	char key[COORD_SEAT_NAME_MAX + 1];
	char workdir[COORD_SEAT_PATH_MAX + 1];
	char owner[COORD_SEAT_NAME_MAX + 1];
	int64_t acquired_ms;
	int64_t heartbeat_ms;
	int64_t ttl_ms;
	struct ident ident;
	char run_id[40];
};

static void
seats_row(sqlite3_stmt *st, struct seat *h)
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

/* 1 stale, 0 live, -1 error. A run's seat lives exactly as long as the
 * run is unsettled; an explicit seat dies by its TTL or its owner. */
static int
seats_stale(struct coord_db *db, const struct seat *h, int64_t now)
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
seats_load(struct coord_db *db, sqlite3_stmt *st, struct seat **out, size_t *n)
{
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(out, *n, &cap, sizeof **out, 8);
		seats_row(st, &(*out)[(*n)++]);
	}
	sqlite3_reset(st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

static int
seats_get(struct coord_db *db, const char *item, struct seat *h)
{
	static const char sql[] = "SELECT " SEAT_COLS " FROM seats WHERE item = ?";
	sqlite3_stmt *st;
	int rc;

	if ((st = coord_db_q(db, sql, "t", item)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		seats_row(st, h);
	sqlite3_reset(st);
	return rc;
}

enum seats_verdict { SEATS_FREE, SEATS_KEY, SEATS_TREE };

/* The arbitration against every other live holder: key first, then tree.
 * item is the seat being taken (its own row is judged by the caller). For
 * an explicit seat the key rule is the literal one, except that a run's
 * seat conflicts only with holders of its own key; for a run (forrun) the
 * key is exclusive: any other live holder of that key refuses it. */
static int
seats_arbitrate(struct coord_db *db, int64_t now, const char *item, const char *key,
		const char *workdir, int forrun, struct seat *holder, enum seats_verdict *v)
{
	static const char q_keys[] =
		"SELECT " SEAT_COLS " FROM seats WHERE item != ?1 AND seat_key != ''"
		" AND ((run_id IS NULL AND seat_key != ?2) OR (run_id IS NOT NULL AND seat_key = ?2))"
		" ORDER BY acquired_ms";
	static const char q_run_keys[] = "SELECT " SEAT_COLS " FROM seats WHERE item != ?1"
					 " AND seat_key = ?2 ORDER BY acquired_ms";
	static const char q_tree[] = "SELECT " SEAT_COLS " FROM seats WHERE item != ?1"
				     " AND workdir = ?2 ORDER BY acquired_ms";
	struct seat *rows = NULL;
	size_t n, i;
	int rc;

	*v = SEATS_FREE;
	if (key[0] != '\0') {
		if (seats_load(db, coord_db_q(db, forrun ? q_run_keys : q_keys, "tt", item, key),
			       &rows, &n) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if ((rc = seats_stale(db, &rows[i], now)) < 0)
				goto fail;
			if (rc == 0) {
				*holder = rows[i];
				*v = SEATS_KEY;
				free(rows);
				return 0;
			}
		}
		free(rows);
		rows = NULL;
	}
	if (workdir[0] != '\0') {
		if (seats_load(db, coord_db_q(db, q_tree, "tt", item, workdir), &rows, &n) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if ((rc = seats_stale(db, &rows[i], now)) < 0)
				goto fail;
			if (rc == 0) {
				*holder = rows[i];
				*v = SEATS_TREE;
				break;
			}
		}
		free(rows);
	}
	return 0;
fail:
	free(rows);
	return -1;
}

static void
seats_deny(struct coord_ctx *c, const char *reason, const struct seat *h)
{
	char age[24], beat[24];

	snprintf(age, sizeof age, "%" PRId64, c->now - h->acquired_ms);
	snprintf(beat, sizeof beat, "%" PRId64, c->now - h->heartbeat_ms);
	coord_reply_deny(c, reason, "holder", h->item, "owner", h->owner, "age_ms", age,
			 "heartbeat_age_ms", beat, "key", h->key, "workdir", h->workdir, NULL);
}

static Berth__Seat *
seats_msg(const struct seat *h, sqlite3_stmt *st, int stale)
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
	if (st != NULL) {
		m->stop_reason = coord_db_col(st, 11);
		/* Activity is shown only while the holder is live: a dead
		 * holder's progress is not progress. */
		if (!stale && sqlite3_column_type(st, 12) != SQLITE_NULL) {
			m->has_activity_index = m->has_activity_total = 1;
			m->activity_index = sqlite3_column_int64(st, 12);
			m->activity_total = sqlite3_column_int64(st, 13);
			m->activity_label = coord_db_col(st, 14);
		}
	}
	return m;
}

/* A seat as stored, with its staleness judged now. */
static Berth__Seat *
seats_load_msg(struct coord_db *db, const char *item, int64_t now)
{
	static const char sql[] = "SELECT " SEAT_COLS " FROM seats WHERE item = ?";
	sqlite3_stmt *st;
	struct seat h;
	Berth__Seat *m = NULL;
	int rc, stale;

	if ((st = coord_db_q(db, sql, "t", item)) == NULL)
		return NULL;
	if ((rc = coord_db_step(db, st)) == 1) {
		seats_row(st, &h);
		/* Judging staleness runs other statements; st stays
		 * positioned on its row meanwhile (a different statement). */
		if ((stale = seats_stale(db, &h, now)) >= 0)
			m = seats_msg(&h, st, stale);
	}
	sqlite3_reset(st);
	return m;
}

static Berth__SeatOutcome *
seats_outcome(struct coord_ctx *c, const char *outcome)
{
	Berth__Granted *g = coord_reply_granted(c);
	Berth__SeatOutcome *o = coord_mem_alloc(sizeof *o);

	berth__seat_outcome__init(o);
	o->outcome = coord_mem_strdup(outcome);
	g->payload_case = BERTH__GRANTED__PAYLOAD_SEAT;
	g->seat = o;
	snprintf(c->reason, sizeof c->reason, "%s", outcome);
	return o;
}

static int
seats_insert(struct coord_ctx *c, const char *item, const char *key, const char *workdir,
	     const char *owner, int64_t ttl, const Berth__Ident *id, const char *run_id)
{
	static const char sql[] =
		"INSERT INTO seats (item, seat_key, workdir, owner, acquired_ms, heartbeat_ms, ttl_ms,"
		" boot_id, pid, start_time, pgid, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	int has = id != NULL && id->pid > 0;

	return coord_db_exec(c->db, sql, "ttttiiitiiit", item, key, workdir, owner, c->now,
			       c->now, ttl, has ? id->boot_id : NULL, (int64_t)(has ? id->pid : 0),
			       (int64_t)(has ? id->start_time : 0), (int64_t)(has ? id->pgid : 0),
			       run_id) == 1
		       ? 0
		       : -1;
}

static int
seats_delete(struct coord_db *db, const char *item)
{
	static const char sql[] = "DELETE FROM seats WHERE item = ?";

	return coord_db_exec(db, sql, "t", item) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ verbs */

static int
seats_acquire(struct coord_ctx *c, const Berth__SeatAcquire *m)
{
	static const char q_beat[] = "UPDATE seats SET heartbeat_ms = ? WHERE item = ?";
	const char *key, *workdir;
	struct seat cur, holder;
	enum seats_verdict v;
	Berth__SeatOutcome *o;
	Berth__Seat *prev = NULL;
	int64_t ttl;
	int rc, stolen = 0;

	if (m->item == NULL || m->item[0] == '\0' || m->owner == NULL || m->owner[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat acquire needs an item and an owner");
		return 0;
	}
	if (strlen(m->item) > SEATS_NAME_MAX || strlen(m->owner) > SEATS_NAME_MAX ||
	    (m->key && strlen(m->key) > SEATS_NAME_MAX) ||
	    (m->workdir && strlen(m->workdir) > SEATS_PATH_MAX)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat item, owner and key are at most %d bytes, workdir %d",
				 SEATS_NAME_MAX, SEATS_PATH_MAX);
		return 0;
	}
	if (strncmp(m->item, "run:", 4) == 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat names run:... belong to runs");
		return 0;
	}
	key = m->key && m->key[0] ? m->key : m->item;
	workdir = m->workdir ? m->workdir : "";
	ttl = m->has_ttl_ms && m->ttl_ms > 0 ? m->ttl_ms : SEATS_DEFAULT_TTL_MS;

	if ((rc = seats_get(c->db, m->item, &cur)) < 0)
		return -1;
	if (rc == 1) {
		int stale = seats_stale(c->db, &cur, c->now);

		if (stale < 0)
			return -1;
		if (!stale && strcmp(cur.owner, m->owner) == 0) {
			/* The same owner again: a no-op that refreshes. */
			if (coord_db_exec(c->db, q_beat, "it", c->now, m->item) != 1)
				return -1;
			o = seats_outcome(c, "already_held");
			o->seat = seats_load_msg(c->db, m->item, c->now);
			return 0;
		}
		if (!stale) {
			seats_deny(c, "conflict", &cur);
			return 0;
		}
		stolen = 1;
	}
	if (seats_arbitrate(c->db, c->now, m->item, key, workdir, 0, &holder, &v) < 0)
		return -1;
	if (v != SEATS_FREE) {
		seats_deny(c, v == SEATS_KEY ? "conflict" : "tree_conflict", &holder);
		return 0;
	}
	if (stolen) {
		prev = seats_load_msg(c->db, m->item, c->now);
		if (prev == NULL || seats_delete(c->db, m->item) != 0) {
			if (prev)
				berth__seat__free_unpacked(prev, NULL);
			return -1;
		}
	}
	if (seats_insert(c, m->item, key, workdir, m->owner, ttl, m->owner_ident, NULL) != 0) {
		if (prev)
			berth__seat__free_unpacked(prev, NULL);
		return -1;
	}
	o = seats_outcome(c, stolen ? "stolen" : "acquired");
	o->previous = prev;
	o->seat = seats_load_msg(c->db, m->item, c->now);
	return 0;
}

/* Looks up the seat a verb names: 1 found, 0 not (error reply set), -1. */
static int
seats_find(struct coord_ctx *c, const char *item, struct seat *h)
{
	int rc;

	if (item == NULL || item[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "missing seat item");
		return 0;
	}
	if ((rc = seats_get(c->db, item, h)) == 0)
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no seat '%s'", item);
	return rc;
}

static int
seats_release(struct coord_ctx *c, const Berth__SeatRelease *m, int force)
{
	struct seat h;
	Berth__SeatOutcome *o;
	int rc;

	if ((rc = seats_find(c, m->item, &h)) != 1)
		return rc;
	if (!force && (m->owner == NULL || strcmp(m->owner, h.owner) != 0)) {
		coord_reply_deny(c, "not_owner", "holder", h.item, "owner", h.owner, NULL);
		return 0;
	}
	o = seats_outcome(c, force ? "force_released" : "released");
	o->previous = seats_load_msg(c->db, m->item, c->now);
	if (seats_delete(c->db, m->item) != 0)
		return -1;
	c->wake = 1;
	return 0;
}

static int
seats_heartbeat(struct coord_ctx *c, const Berth__SeatRelease *m)
{
	static const char sql[] = "UPDATE seats SET heartbeat_ms = ? WHERE item = ?";
	struct seat h;
	Berth__SeatOutcome *o;
	int rc;

	if ((rc = seats_find(c, m->item, &h)) != 1)
		return rc;
	if (m->owner == NULL || strcmp(m->owner, h.owner) != 0) {
		coord_reply_deny(c, "not_owner", "holder", h.item, "owner", h.owner, NULL);
		return 0;
	}
	/* A heartbeat never revives a stale seat: someone may already be
	 * entitled to steal it. */
	if ((rc = seats_stale(c->db, &h, c->now)) != 0) {
		if (rc < 0)
			return -1;
		seats_deny(c, "stale", &h);
		return 0;
	}
	if (coord_db_exec(c->db, sql, "it", c->now, m->item) != 1)
		return -1;
	o = seats_outcome(c, "heartbeat");
	o->seat = seats_load_msg(c->db, m->item, c->now);
	return 0;
}

static int
seats_stop(struct coord_ctx *c, const Berth__SeatStop *m)
{
	static const char sql[] = "UPDATE seats SET stop_reason = ?, stop_ms = ? WHERE item = ?";
	struct seat h;
	Berth__SeatOutcome *o;
	int rc;

	if (m->reason && strlen(m->reason) > COORD_TEXT_MAX) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "a stop reason is at most %d bytes",
				 COORD_TEXT_MAX);
		return 0;
	}
	if ((rc = seats_find(c, m->item, &h)) != 1)
		return rc;
	/* A stop request annotates: the holder decides when to let go. */
	if (coord_db_exec(c->db, sql, "tit", m->reason && m->reason[0] ? m->reason : "stop",
			    c->now, m->item) != 1)
		return -1;
	o = seats_outcome(c, "stop_requested");
	o->seat = seats_load_msg(c->db, m->item, c->now);
	return 0;
}

static int
seats_activity(struct coord_ctx *c, const Berth__SeatActivity *m)
{
	static const char sql[] =
		"UPDATE seats SET activity_index = ?, activity_total = ?, activity_label = ?,"
		" activity_ms = ? WHERE item = ?";
	struct seat h;
	Berth__SeatOutcome *o;
	int rc;

	if (m->label && strlen(m->label) > COORD_TEXT_MAX) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "a label is at most %d bytes",
				 COORD_TEXT_MAX);
		return 0;
	}
	if ((rc = seats_find(c, m->item, &h)) != 1)
		return rc;
	if (m->owner != NULL && m->owner[0] != '\0' && strcmp(m->owner, h.owner) != 0) {
		coord_reply_deny(c, "not_owner", "holder", h.item, "owner", h.owner, NULL);
		return 0;
	}
	if (coord_db_exec(c->db, sql, "iitit", m->index, m->total, m->label ? m->label : "",
			    c->now, m->item) != 1)
		return -1;
	o = seats_outcome(c, "activity");
	o->seat = seats_load_msg(c->db, m->item, c->now);
	return 0;
}

static int
seats_list(struct coord_ctx *c, const char *only)
{
	static const char q_all[] = "SELECT item FROM seats ORDER BY item";
	static const char q_one[] = "SELECT item FROM seats WHERE item = ?";
	Berth__SeatListReply *lr;
	Berth__Granted *g;
	sqlite3_stmt *st;
	char **items = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	st = only ? coord_db_q(c->db, q_one, "t", only) : coord_db_q(c->db, q_all, "");
	if (st == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		coord_mem_grow(&items, n, &cap, sizeof *items, 8);
		items[n++] = coord_db_col(st, 0);
	}
	sqlite3_reset(st);
	if (rc < 0)
		goto fail;
	if (only != NULL && n == 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no seat '%s'", only);
		free(items);
		return 0;
	}
	g = coord_reply_granted(c);
	lr = coord_mem_alloc(sizeof *lr);
	berth__seat_list_reply__init(lr);
	g->payload_case = BERTH__GRANTED__PAYLOAD_SEATS;
	g->seats = lr;
	lr->has_now_ms = 1;
	lr->now_ms = c->now;
	lr->seats = coord_mem_alloc((n ? n : 1) * sizeof *lr->seats);
	for (i = 0; i < n; i++) {
		Berth__Seat *m = seats_load_msg(c->db, items[i], c->now);

		if (m == NULL)
			goto fail;
		lr->seats[lr->n_seats++] = m;
	}
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
	return 0;
fail:
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
	return -1;
}

int
coord_seats_reap(struct coord_ctx *c)
{
	static const char sql[] = "SELECT " SEAT_COLS " FROM seats ORDER BY item";
	struct seat *rows;
	Berth__SeatOutcome *o;
	size_t n, i;
	int rc, reaped = 0;

	/* Staleness is judged here, inside the transaction: a seat that was
	 * re-acquired since the reaper looked is live and stays. */
	if (seats_load(c->db, coord_db_q(c->db, sql, ""), &rows, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((rc = seats_stale(c->db, &rows[i], c->now)) < 0 ||
		    (rc == 1 && seats_delete(c->db, rows[i].item) != 0)) {
			free(rows);
			return -1;
		}
		reaped += rc;
	}
	free(rows);
	o = seats_outcome(c, "reaped");
	o->has_reaped = 1;
	o->reaped = reaped;
	c->wake = reaped > 0;
	return 0;
}

/* A seat verb whose message is missing: the request is malformed. */
static int
seats_malformed(struct coord_ctx *c)
{
	coord_reply_fail(c, BERTH__ERROR_CODE__ERR_MALFORMED, "seat verb without its fields");
	return 0;
}

int
coord_seats_acquire(struct coord_ctx *c)
{
	if (c->req->seat_acquire == NULL)
		return seats_malformed(c);
	return seats_acquire(c, c->req->seat_acquire);
}

int
coord_seats_release(struct coord_ctx *c)
{
	if (c->req->seat_release == NULL)
		return seats_malformed(c);
	return seats_release(c, c->req->seat_release, 0);
}

int
coord_seats_force_release(struct coord_ctx *c)
{
	if (c->req->seat_force_release == NULL)
		return seats_malformed(c);
	return seats_release(c, c->req->seat_force_release, 1);
}

int
coord_seats_heartbeat(struct coord_ctx *c)
{
	if (c->req->seat_heartbeat == NULL)
		return seats_malformed(c);
	return seats_heartbeat(c, c->req->seat_heartbeat);
}

int
coord_seats_stop(struct coord_ctx *c)
{
	if (c->req->seat_stop == NULL)
		return seats_malformed(c);
	return seats_stop(c, c->req->seat_stop);
}

int
coord_seats_activity(struct coord_ctx *c)
{
	if (c->req->seat_activity == NULL)
		return seats_malformed(c);
	return seats_activity(c, c->req->seat_activity);
}

int
coord_seats_list(struct coord_ctx *c)
{
	return seats_list(c, NULL);
}

int
coord_seats_show(struct coord_ctx *c)
{
	if (c->req->seat_show == NULL || c->req->seat_show->item == NULL)
		return seats_malformed(c);
	return seats_list(c, c->req->seat_show->item);
}

/* ------------------------------------------------------------ runs */

/* What seat ticket n needs: 0 none, 1 with item/key/workdir filled. */
static int
seats_for_ticket(struct coord_db *db, int64_t n, const char *run_id, char *item, size_t ilen,
		 char *key, size_t klen, char *workdir, size_t wlen)
{
	static const char sql[] =
		"SELECT seat_key, CASE WHEN tree_seat THEN workdir ELSE '' END FROM tickets"
		" WHERE n = ?";
	sqlite3_stmt *st;
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1) {
		snprintf(key, klen, "%s", coord_db_coltext(st, 0));
		snprintf(workdir, wlen, "%s", coord_db_coltext(st, 1));
	}
	sqlite3_reset(st);
	if (rc != 1)
		return -1;
	if (key[0] == '\0' && workdir[0] == '\0')
		return 0;
	if (key[0] != '\0')
		snprintf(item, ilen, "%s", key);
	else
		snprintf(item, ilen, "run:%s", run_id ? run_id : "");
	return 1;
}

/* The seat check for ticket n: 0 free, 1 taken by holder (verdict v). The
 * ticket's own named seat (item = key) is judged first: a live holder of
 * it is a key conflict, a stale one will be stolen. */
static int
seats_check_ticket(struct coord_db *db, int64_t n, const char *run_id, int64_t now,
		   struct seat *holder, enum seats_verdict *v, char *item, size_t ilen,
		   char *key, size_t klen, char *workdir, size_t wlen, int *steal)
{
	int rc;

	*v = SEATS_FREE;
	*steal = 0;
	if ((rc = seats_for_ticket(db, n, run_id, item, ilen, key, klen, workdir, wlen)) <= 0)
		return rc;
	if (key[0] != '\0') {
		if ((rc = seats_get(db, item, holder)) < 0)
			return -1;
		if (rc == 1) {
			if ((rc = seats_stale(db, holder, now)) < 0)
				return -1;
			if (rc == 0) {
				*v = SEATS_KEY;
				return 1;
			}
			*steal = 1;
		}
	}
	if (seats_arbitrate(db, now, item, key, workdir, 1, holder, v) < 0)
		return -1;
	return *v != SEATS_FREE;
}

int
coord_seats_take(struct coord_ctx *c, int64_t n, const char *run_id, int dry)
{
	char item[COORD_SEAT_PATH_MAX + 8], key[COORD_SEAT_NAME_MAX + 1];
	char workdir[COORD_SEAT_PATH_MAX + 1];
	struct seat holder;
	enum seats_verdict v;
	int rc, steal;

	rc = seats_check_ticket(c->db, n, run_id, c->now, &holder, &v, item, sizeof item, key,
				sizeof key, workdir, sizeof workdir, &steal);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		seats_deny(c, v == SEATS_KEY ? "seat_conflict" : "tree_conflict", &holder);
		return 1;
	}
	if (dry || (key[0] == '\0' && workdir[0] == '\0'))
		return 0;
	if (steal && seats_delete(c->db, item) != 0)
		return -1;
	return seats_insert(c, item, key, workdir, run_id, 0, NULL, run_id);
}

int
coord_seats_release_run(struct coord_db *db, const char *run_id)
{
	static const char sql[] = "DELETE FROM seats WHERE run_id = ?";

	return coord_db_exec(db, sql, "t", run_id) < 0 ? -1 : 0;
}

int
coord_seats_waiting(struct coord_db *db, int64_t n, int64_t now, char *buf, size_t len)
{
	char item[COORD_SEAT_PATH_MAX + 8], key[COORD_SEAT_NAME_MAX + 1];
	char workdir[COORD_SEAT_PATH_MAX + 1], beat[32];
	struct seat h;
	enum seats_verdict v;
	int rc, steal;

	rc = seats_check_ticket(db, n, NULL, now, &h, &v, item, sizeof item, key, sizeof key,
				workdir, sizeof workdir, &steal);
	if (rc <= 0)
		return rc;
	dur_format(now - h.heartbeat_ms, beat, sizeof beat);
	if (v == SEATS_TREE)
		snprintf(buf, len,
			 "waiting: working tree %s held by seat %s, owner %s, heartbeat %s ago",
			 h.workdir, h.item, h.owner, beat);
	else
		snprintf(buf, len,
			 "waiting: seat key %s held by seat %s, owner %s, heartbeat %s ago", key,
			 h.item, h.owner, beat);
	return 1;
}

int64_t
coord_seats_next_lapse(struct coord_db *db, int64_t now)
{
	static const char sql[] =
		"SELECT min(heartbeat_ms + ttl_ms + 1) FROM seats WHERE run_id IS NULL"
		" AND ttl_ms > 0 AND heartbeat_ms + ttl_ms + 1 > ?";
	int64_t lapse = 0;

	if (coord_db_int(db, &lapse, sql, "i", now) == 1 && lapse > now)
		return lapse;
	return INT64_MAX;
}
