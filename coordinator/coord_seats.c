/* Seats (DESIGN §8): named, owned leases anyone may take, arbitrated in the
 * request's IMMEDIATE transaction. The key answers first (two live holders
 * coexist only when their keys are equal and non-empty; the default key is
 * the item, so a seat is single by default), then the tree (two live
 * holders never share a non-empty workdir): the two refusals give different
 * advice. A holder is stale when its heartbeat is older than its TTL or its
 * owner process is gone; an owner that cannot be verified counts as alive.
 * A task seat is seen by everyone and takes part in no arbitration. A
 * holder may mark a transition in flight, which dedupes a second engage of
 * its own until it is confirmed or cleared, or heals (docs/SEATS.md).
 *
 * Runs take seats too, inside the claim: a ticket with --key K takes the
 * seat named K, so two tickets with one key never overlap and an outside
 * holder of seat K keeps them waiting; against explicit seats a run's key
 * obeys the key rule as written (an explicit seat of another key keeps it
 * waiting, and it keeps one out), and runs of different keys coexist
 * (coord_holders.h). A ticket with only --workdir takes a tree-only seat
 * "run:<run id>" with an empty key, which the key rule ignores in both
 * directions. A workdir that is only the caller's cwd (Add.workdir_default)
 * takes no seat. A run's seat is live while the run is unsettled and is
 * released when it settles or is abandoned. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_holders.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_seats.h"
#include "util.h"

#define SEATS_DEFAULT_TTL_MS 600000
/* Limits that keep every name whole in struct coord_holder's buffers. */
#define SEATS_NAME_MAX COORD_SEAT_NAME_MAX
#define SEATS_PATH_MAX COORD_SEAT_PATH_MAX

static void
seats_deny(struct coord_ctx *c, const char *reason, const struct coord_holder *h)
{
	char age[24], beat[24];

	snprintf(age, sizeof age, "%" PRId64, c->now - h->acquired_ms);
	snprintf(beat, sizeof beat, "%" PRId64, c->now - h->heartbeat_ms);
	coord_reply_deny(c, reason, "holder", h->item, "owner", h->owner, "age_ms", age,
			 "heartbeat_age_ms", beat, "key", h->key, "workdir", h->workdir, NULL);
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

/* ------------------------------------------------------------ verbs */

/* A second in-flight acquire by the holder itself while its transition is
 * in flight: satelle's OutcomeInFlight, a denial, so the second engage does
 * not run the transition again. */
static void
seats_deny_in_flight(struct coord_ctx *c, const struct coord_holder *h)
{
	char age[24], pid[24];

	snprintf(age, sizeof age, "%" PRId64, c->now - h->in_flight_ms);
	snprintf(pid, sizeof pid, "%d", (int)h->in_flight_ident.pid);
	coord_reply_deny(c, "in_flight", "holder", h->item, "owner", h->owner, "in_flight_age_ms",
			 age, "in_flight_pid", h->in_flight_ident.pid > 0 ? pid : "", NULL);
}

static int
seats_too_long(const char *s, size_t max)
{
	return s != NULL && strlen(s) > max;
}

static int
seats_acquire(struct coord_ctx *c, const Berth__SeatAcquire *m)
{
	static const char q_beat[] =
		"UPDATE seats SET heartbeat_ms = ?, state = coalesce(?, state) WHERE item = ?";
	struct coord_holder_spec spec;
	struct coord_holder cur, holder;
	enum coord_verdict v;
	Berth__SeatOutcome *o;
	Berth__Seat *prev = NULL;
	int rc, stolen = 0;

	if (m->item == NULL || m->item[0] == '\0' || m->owner == NULL || m->owner[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat acquire needs an item and an owner");
		return 0;
	}
	if (strlen(m->item) > SEATS_NAME_MAX || strlen(m->owner) > SEATS_NAME_MAX ||
	    seats_too_long(m->key, SEATS_NAME_MAX) || seats_too_long(m->kind, SEATS_NAME_MAX) ||
	    seats_too_long(m->state, SEATS_NAME_MAX) ||
	    seats_too_long(m->workdir, SEATS_PATH_MAX)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat item, owner, key, kind and state are at most %d bytes,"
				 " workdir %d",
				 SEATS_NAME_MAX, SEATS_PATH_MAX);
		return 0;
	}
	if (strncmp(m->item, "run:", 4) == 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "seat names run:... belong to runs");
		return 0;
	}
	memset(&spec, 0, sizeof spec);
	spec.item = m->item;
	spec.key = m->key && m->key[0] ? m->key : m->item;
	spec.workdir = m->workdir ? m->workdir : "";
	spec.owner = m->owner;
	spec.ttl_ms = m->has_ttl_ms && m->ttl_ms > 0 ? m->ttl_ms : SEATS_DEFAULT_TTL_MS;
	spec.owner_ident = m->owner_ident;
	spec.kind = m->kind;
	spec.state = m->state && m->state[0] ? m->state : NULL;
	spec.task = m->has_task && m->task;
	spec.in_flight = m->has_in_flight && m->in_flight;
	spec.in_flight_ttl_ms = m->has_in_flight_ttl_ms ? m->in_flight_ttl_ms : 0;
	spec.in_flight_ident = m->in_flight_ident;

	if ((rc = coord_holders_get(c->db, m->item, &cur)) < 0)
		return -1;
	if (rc == 1) {
		int stale = coord_holders_stale(c->db, &cur, c->now);

		if (stale < 0)
			return -1;
		if (!stale && strcmp(cur.owner, m->owner) == 0) {
			/* The same owner again: a no-op that refreshes, unless
			 * it starts a transition while one is in flight. */
			if (spec.in_flight && coord_holders_in_flight(&cur, c->now)) {
				seats_deny_in_flight(c, &cur);
				return 0;
			}
			if (coord_db_exec(c->db, q_beat, "itt", c->now, spec.state, m->item) != 1)
				return -1;
			if (spec.in_flight &&
			    coord_holders_mark(c->db, m->item, c->now, spec.in_flight_ttl_ms,
					       spec.in_flight_ident) != 0)
				return -1;
			o = seats_outcome(c, "already_held");
			o->seat = coord_holders_msg(c->db, m->item, c->now);
			return 0;
		}
		if (!stale) {
			seats_deny(c, "conflict", &cur);
			return 0;
		}
		stolen = 1;
	}
	/* A task seat is visible, and blocked by nobody. */
	if (!spec.task) {
		if (coord_holders_arbitrate(c->db, c->now, m->item, spec.key, spec.workdir, 0,
					    &holder, &v) < 0)
			return -1;
		if (v != COORD_SEAT_FREE) {
			seats_deny(c, v == COORD_SEAT_KEY ? "conflict" : "tree_conflict", &holder);
			return 0;
		}
	}
	if (stolen) {
		prev = coord_holders_msg(c->db, m->item, c->now);
		if (prev == NULL || coord_holders_delete(c->db, m->item) != 0) {
			if (prev)
				berth__seat__free_unpacked(prev, NULL);
			return -1;
		}
	}
	if (coord_holders_insert(c->db, c->now, &spec) != 0) {
		if (prev)
			berth__seat__free_unpacked(prev, NULL);
		return -1;
	}
	o = seats_outcome(c, stolen ? "stolen" : "acquired");
	o->previous = prev;
	o->seat = coord_holders_msg(c->db, m->item, c->now);
	/* A new explicit seat can keep a parked claim waiting, never let one
	 * run: nothing to wake. */
	return 0;
}

/* Looks up the seat a verb names: 1 found, 0 not (error reply set), -1. */
static int
seats_find(struct coord_ctx *c, const char *item, struct coord_holder *h)
{
	int rc;

	if (item == NULL || item[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "missing seat item");
		return 0;
	}
	if ((rc = coord_holders_get(c->db, item, h)) == 0)
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no seat '%s'", item);
	return rc;
}

/* 1 when run run_id is not settled, 0 when it is (or is gone), -1 error. */
static int
seats_run_live(struct coord_ctx *c, const char *run_id)
{
	static const char sql[] = "SELECT count(*) FROM runs WHERE id = ? AND settled_ms IS NULL";
	int64_t n = 0;

	if (coord_db_int(c->db, &n, sql, "t", run_id) < 0)
		return -1;
	return n > 0;
}

/* The holder of seat m->item for an act of its owner (release, confirm,
 * clear): 1 found and m->owner is its owner, 0 answered (missing item,
 * not_owner, or with absent_ok a seat that is not there: granted
 * "already_free"), -1 on error. */
static int
seats_owned(struct coord_ctx *c, const Berth__SeatRelease *m, int force, int absent_ok,
	    struct coord_holder *h)
{
	int rc;

	if (absent_ok && m->item != NULL && m->item[0] != '\0') {
		if ((rc = coord_holders_get(c->db, m->item, h)) == 0) {
			/* satelle's Release of a free seat: nothing to do, and
			 * a defensive script's release must not fail. */
			seats_outcome(c, "already_free");
			return 0;
		}
		if (rc < 0)
			return -1;
	} else if ((rc = seats_find(c, m->item, h)) != 1) {
		return rc;
	}
	if (!force && (m->owner == NULL || strcmp(m->owner, h->owner) != 0)) {
		coord_reply_deny(c, "not_owner", "holder", h->item, "owner", h->owner, NULL);
		return 0;
	}
	return 1;
}

static int
seats_release(struct coord_ctx *c, const Berth__SeatRelease *m, int force)
{
	struct coord_holder h;
	Berth__SeatOutcome *o;
	int rc;

	if ((rc = seats_owned(c, m, force, 1, &h)) != 1)
		return rc;
	/* A run's seat lives as long as the run: taking it from a live run
	 * would let a second ticket into its key or its working tree while
	 * it still runs. The run is cancelled instead, and its seat goes with
	 * its settlement. */
	if (force && h.run_id[0] != '\0') {
		if ((rc = seats_run_live(c, h.run_id)) != 0) {
			if (rc < 0)
				return -1;
			coord_reply_deny(c, "held_by_run", "holder", h.item, "run", h.run_id,
					 "advice", "cancel the run instead", NULL);
			return 0;
		}
	}
	o = seats_outcome(c, force ? "force_released" : "released");
	o->previous = coord_holders_msg(c->db, m->item, c->now);
	if (coord_holders_delete(c->db, m->item) != 0)
		return -1;
	c->wake = 1;
	return 0;
}

static int
seats_heartbeat(struct coord_ctx *c, const Berth__SeatRelease *m)
{
	static const char sql[] = "UPDATE seats SET heartbeat_ms = ? WHERE item = ?";
	struct coord_holder h;
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
	if ((rc = coord_holders_stale(c->db, &h, c->now)) != 0) {
		if (rc < 0)
			return -1;
		seats_deny(c, "stale", &h);
		return 0;
	}
	if (coord_db_exec(c->db, sql, "it", c->now, m->item) != 1)
		return -1;
	o = seats_outcome(c, "heartbeat");
	o->seat = coord_holders_msg(c->db, m->item, c->now);
	return 0;
}

/* The end of the holder's transition (satelle's Confirm and
 * ClearInFlight): confirm records the state it committed, clear records
 * nothing; both drop the in-flight mark and its activity. Owner-only. They
 * never revive a stale seat (the heartbeat is left as it is), and a clear
 * of a seat that is not there is success: nothing is in flight. */
static int
seats_end_transition(struct coord_ctx *c, const char *item, const char *owner, const char *state)
{
	Berth__SeatRelease ref = BERTH__SEAT_RELEASE__INIT;
	struct coord_holder h;
	Berth__SeatOutcome *o;
	int rc;

	if (state != NULL && (state[0] == '\0' || strlen(state) > SEATS_NAME_MAX)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "a confirmed state is 1 to %d bytes", SEATS_NAME_MAX);
		return 0;
	}
	ref.item = (char *)item;
	ref.owner = (char *)owner;
	if ((rc = seats_owned(c, &ref, 0, state == NULL, &h)) != 1)
		return rc;
	if (coord_holders_unmark(c->db, h.item, state) != 0)
		return -1;
	o = seats_outcome(c, state != NULL ? "confirmed" : "cleared");
	o->seat = coord_holders_msg(c->db, h.item, c->now);
	return 0;
}

static int
seats_stop(struct coord_ctx *c, const Berth__SeatStop *m)
{
	static const char sql[] =
		"UPDATE seats SET stop_reason = ?, stop_ms = ?, stop_by = ? WHERE item = ?";
	struct coord_holder h;
	Berth__SeatOutcome *o;
	int rc;

	if (m->reason && strlen(m->reason) > COORD_TEXT_MAX) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "a stop reason is at most %d bytes", COORD_TEXT_MAX);
		return 0;
	}
	if (seats_too_long(m->requester, SEATS_NAME_MAX)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "a stop's requester is at most %d bytes", SEATS_NAME_MAX);
		return 0;
	}
	if ((rc = seats_find(c, m->item, &h)) != 1)
		return rc;
	/* A stop request annotates: the holder decides when to let go. */
	if (coord_db_exec(c->db, sql, "titt", m->reason && m->reason[0] ? m->reason : "stop",
			  c->now, m->requester && m->requester[0] ? m->requester : NULL,
			  m->item) != 1)
		return -1;
	o = seats_outcome(c, "stop_requested");
	o->seat = coord_holders_msg(c->db, m->item, c->now);
	return 0;
}

static int
seats_activity(struct coord_ctx *c, const Berth__SeatActivity *m)
{
	static const char sql[] =
		"UPDATE seats SET activity_index = ?, activity_total = ?, activity_label = ?,"
		" activity_ms = ? WHERE item = ?";
	struct coord_holder h;
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
	if (coord_db_exec(c->db, sql, "iitit", m->index, m->total, m->label ? m->label : "", c->now,
			  m->item) != 1)
		return -1;
	o = seats_outcome(c, "activity");
	o->seat = coord_holders_msg(c->db, m->item, c->now);
	return 0;
}

static int
seats_list(struct coord_ctx *c, const char *only, int live_only)
{
	static const char q_all[] = "SELECT item FROM seats ORDER BY item";
	static const char q_one[] = "SELECT item FROM seats WHERE item = ?";
	Berth__SeatListReply *lr;
	Berth__Granted *g;
	struct coord_st *st;
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
	coord_db_done(st);
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
		Berth__Seat *m = coord_holders_msg(c->db, items[i], c->now);

		if (m == NULL)
			goto fail;
		if (live_only && m->stale) {
			berth__seat__free_unpacked(m, NULL);
			continue;
		}
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
	struct coord_holder *rows;
	Berth__SeatOutcome *o;
	size_t n, i;
	int rc, reaped = 0;

	/* Staleness is judged here, inside the transaction: a seat that was
	 * re-acquired since the reaper looked is live and stays. */
	if (coord_holders_all(c->db, &rows, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((rc = coord_holders_stale(c->db, &rows[i], c->now)) < 0 ||
		    (rc == 1 && coord_holders_delete(c->db, rows[i].item) != 0)) {
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
	const Berth__SeatList *m = c->req->seat_list;

	return seats_list(c, NULL, m != NULL && m->has_live_only && m->live_only);
}

int
coord_seats_show(struct coord_ctx *c)
{
	if (c->req->seat_show == NULL || c->req->seat_show->item == NULL)
		return seats_malformed(c);
	return seats_list(c, c->req->seat_show->item, 0);
}

int
coord_seats_confirm(struct coord_ctx *c)
{
	const Berth__SeatConfirm *m = c->req->seat_confirm;

	if (m == NULL)
		return seats_malformed(c);
	if (m->state == NULL || m->state[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "seat confirm needs a state");
		return 0;
	}
	return seats_end_transition(c, m->item, m->owner, m->state);
}

int
coord_seats_clear(struct coord_ctx *c)
{
	const Berth__SeatRelease *m = c->req->seat_clear;

	if (m == NULL)
		return seats_malformed(c);
	return seats_end_transition(c, m->item, m->owner, NULL);
}

/* ------------------------------------------------------------ runs */

int
coord_seats_take(struct coord_ctx *c, int64_t n, const char *run_id, int dry)
{
	struct coord_seat_need need;
	struct coord_holder_spec spec;
	struct coord_holder holder;
	enum coord_verdict v;
	int rc, steal;

	if ((rc = coord_holders_need(c->db, n, run_id, &need)) <= 0)
		return rc;
	/* A seat or a tree is judged by one claim at a time, across hosts
	 * too (coord_db_serial): a ticket without one needs nothing shared. */
	if (coord_db_serial(c->db) != 0)
		return -1;
	if ((rc = coord_holders_check(c->db, &need, c->now, &holder, &v, &steal)) < 0)
		return -1;
	if (rc == 1) {
		seats_deny(c, v == COORD_SEAT_KEY ? "seat_conflict" : "tree_conflict", &holder);
		return 1;
	}
	if (dry)
		return 0;
	if (steal && coord_holders_delete(c->db, need.item) != 0)
		return -1;
	memset(&spec, 0, sizeof spec);
	spec.item = need.item;
	spec.key = need.key;
	spec.workdir = need.workdir;
	spec.owner = run_id;
	spec.run_id = run_id;
	return coord_holders_insert(c->db, c->now, &spec);
}

int
coord_seats_release_run(struct coord_db *db, const char *run_id)
{
	static const char sql[] = "DELETE FROM seats WHERE run_id = ?";

	return coord_db_exec(db, sql, "t", run_id) < 0 ? -1 : 0;
}

/* The alias of run_id (T3-r1): 1, 0 no such run, -1 error. */
static int
seats_run_alias(struct coord_db *db, const char *run_id, char *buf, size_t len)
{
	static const char sql[] = "SELECT ticket, attempt FROM runs WHERE id = ?";
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(db, sql, "t", run_id)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		coord_rows_alias_name(coord_db_i64(st, 0), coord_db_i64(st, 1), buf, len);
	coord_db_done(st);
	return rc;
}

int
coord_seats_waiting(struct coord_db *db, int64_t n, int64_t now, char *buf, size_t len)
{
	struct coord_seat_need need;
	struct coord_holder h;
	enum coord_verdict v;
	char beat[32], alias[48];
	int rc, steal;

	if ((rc = coord_holders_need(db, n, NULL, &need)) <= 0 ||
	    (rc = coord_holders_check(db, &need, now, &h, &v, &steal)) <= 0)
		return rc;
	dur_format(now - h.heartbeat_ms, beat, sizeof beat);
	/* A run's seat is named by the run's alias, the name people know
	 * it by (T3-r1), not its seat item run:<32 hex>. */
	if (h.run_id[0] != '\0' && (rc = seats_run_alias(db, h.run_id, alias, sizeof alias)) < 0)
		return -1;
	if (h.run_id[0] != '\0' && rc == 1) {
		if (v == COORD_SEAT_TREE)
			snprintf(buf, len, "waiting: working tree %s is used by %s (running)",
				 h.workdir, alias);
		else
			snprintf(buf, len, "waiting: seat key %s is held by %s (running)", need.key,
				 alias);
		return 1;
	}
	if (v == COORD_SEAT_TREE)
		snprintf(buf, len,
			 "waiting: working tree %s held by seat %s, owner %s, heartbeat %s ago",
			 h.workdir, h.item, h.owner, beat);
	else if (strcmp(h.item, need.item) == 0)
		snprintf(buf, len,
			 "waiting: seat key %s held by seat %s, owner %s, heartbeat %s ago",
			 need.key, h.item, h.owner, beat);
	else
		snprintf(buf, len,
			 "waiting: seat %s, owner %s, admits only key %s (this ticket's is %s),"
			 " heartbeat %s ago",
			 h.item, h.owner, h.key, need.key, beat);
	return 1;
}

int64_t
coord_seats_next_lapse(struct coord_db *db, int64_t now)
{
	static const char sql[] =
		"SELECT min(heartbeat_ms + ttl_ms + 1) FROM seats WHERE run_id IS NULL AND task = 0"
		" AND ttl_ms > 0 AND heartbeat_ms + ttl_ms + 1 > ?";
	int64_t lapse = 0;

	if (coord_db_int(db, &lapse, sql, "i", now) == 1 && lapse > now)
		return lapse;
	return INT64_MAX;
}
