/* claim (DESIGN §4): a named ticket, or the next eligible one. Every guard
 * (ready, not blocked, a due activation, the seat, the caller's slots) is
 * judged inside the request's IMMEDIATE transaction, so of two racing
 * claims the first wins and the second is denied with the state the first
 * left. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_claim.h"
#include "coord_db.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_place.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_seats.h"
#include "coord_settings.h"
#include "ids.h"
#include "log.h"
#include "states.h"

/* DECISIONS.md "Claims that wait": a supervisor that said hello with N
 * slots (or was given N by berth slots) is refused while it owns N
 * unsettled runs. */
static int
claim_slots_full(struct coord_ctx *c, int64_t slots)
{
	static const char q_owned[] =
		"SELECT count(*) FROM runs WHERE owner = ? AND settled_ms IS NULL";
	const char *inst = c->req->instance ? c->req->instance : "";
	int64_t owned = 0;
	char buf[24], sl[24];

	if (inst[0] == '\0' || slots <= 0)
		return 0;
	if (coord_db_int(c->db, &owned, q_owned, "t", inst) < 0)
		return -1;
	if (owned < slots)
		return 0;
	snprintf(buf, sizeof buf, "%" PRId64, owned);
	snprintf(sl, sizeof sl, "%" PRId64, slots);
	coord_reply_deny(c, "slots_full", "running", buf, "slots", sl, NULL);
	return 1;
}

/* Creates the run for ticket n from its due activation: the effect half of
 * claim, after every guard passed. */
static int
claim_grant(struct coord_ctx *c, int64_t n, int64_t act, int64_t lease_ms)
{
	static const char q_ticket[] =
		"SELECT attempts, argv, workdir, env, timeout_ms, isolate FROM tickets WHERE n = ?";
	static const char q_upd[] =
		"UPDATE tickets SET state = " SQL_TICKET_CLAIMED ", attempts = attempts + 1,"
		" updated_ms = ? WHERE n = ? AND state = " SQL_TICKET_READY;
	static const char q_run[] =
		"INSERT INTO runs (id, ticket, attempt, state, owner, token_hash, claimed_ms,"
		" timeout_ms, host, epoch) VALUES (?, ?, ?, " SQL_RUN_CLAIMED ", ?, ?, ?, ?, ?, ?)";
	static const char q_lease[] =
		"INSERT INTO leases (ticket_id, run_id, owner, acquired_ms, renewed_ms, expires_ms)"
		" VALUES (?, ?, ?, ?, ?, ?)";
	static const char q_act[] =
		"UPDATE activations SET state = " SQL_ACT_COMPLETED ", run_id = ?, done_ms = ?"
		" WHERE id = ?";
	const char *owner = c->req->instance ? c->req->instance : "";
	char run_id[IDS_RUN_LEN + 1], token[IDS_TOKEN_LEN + 1], hash[IDS_HASH_LEN + 1];
	char alias[48], *argv = NULL, *env = NULL, *workdir = NULL;
	int64_t attempt = 0, timeout = 0, isolate = 0;
	Berth__ClaimGranted *g;
	Berth__Granted *gr;
	struct coord_st *st;
	int rc, ret = -1;

	if ((st = coord_db_q(c->db, q_ticket, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		attempt = coord_db_i64(st, 0) + 1;
		argv = coord_db_col(st, 1);
		workdir = coord_db_col(st, 2);
		env = coord_db_col(st, 3);
		timeout = coord_db_i64(st, 4);
		isolate = coord_db_i64(st, 5);
	}
	coord_db_done(st);
	if (rc != 1)
		goto out;
	if (ids_run_id(run_id) != 0) {
		log_error("coord_claim: cannot make a run id");
		goto out;
	}
	/* Derived, not drawn: the stored reply holds no token, and a replay
	 * to the claimer derives it again (coord_exec.c). */
	ids_token_for(coord_db_key(c->db), run_id, token);
	ids_hash_hex(token, hash);
	snprintf(c->run, sizeof c->run, "%s", run_id);
	coord_rows_ticket_name(n, c->ticket, sizeof c->ticket);

	if (coord_db_exec(c->db, q_upd, "ii", c->now, n) != 1)
		goto out;
	if (coord_db_exec(c->db, q_run, "tiittiiti", run_id, n, attempt, owner, hash, c->now,
			  timeout, coord_db_host(c->db)->id, coord_db_host(c->db)->epoch) != 1)
		goto out;
	if (coord_db_exec(c->db, q_lease, "ittiii", n, run_id, owner, c->now, c->now,
			  c->now + lease_ms) != 1)
		goto out;
	if (coord_db_exec(c->db, q_act, "tii", run_id, c->now, act) != 1)
		goto out;
	if ((rc = coord_seats_take(c, n, run_id, 0)) != 0) {
		/* The dry run in the same transaction said the seat was free. */
		if (rc > 0)
			log_error("coord_runs: seat for T%" PRId64 " refused after its check", n);
		goto out;
	}

	gr = coord_reply_granted(c);
	g = coord_mem_alloc(sizeof *g);
	berth__claim_granted__init(g);
	gr->payload_case = BERTH__GRANTED__PAYLOAD_CLAIM;
	gr->claim = g;
	g->run_id = coord_mem_strdup(run_id);
	g->ticket = coord_mem_strdup(c->ticket);
	g->has_attempt = 1;
	g->attempt = (uint32_t)attempt;
	if (coord_rows_json_list(c->db, argv, &g->argv, &g->n_argv) != 0 ||
	    coord_rows_json_list(c->db, env, &g->env, &g->n_env) != 0)
		goto out;
	g->workdir = workdir;
	workdir = NULL;
	g->has_lease_expires_ms = 1;
	g->lease_expires_ms = c->now + lease_ms;
	g->token = coord_mem_strdup(token);
	g->has_timeout_ms = 1;
	g->timeout_ms = timeout;
	coord_rows_alias_name(n, attempt, alias, sizeof alias);
	g->alias = coord_mem_strdup(alias);
	g->has_isolate = 1;
	g->isolate = isolate != 0;
	c->wake = 1;
	ret = 0;
out:
	explicit_bzero(token, sizeof token);
	free(argv);
	free(env);
	free(workdir);
	return ret;
}

static int
claim_ticket(struct coord_ctx *c, const char *id, int64_t lease_ms)
{
	static const char q_act[] =
		"SELECT id, due_ms FROM activations WHERE ticket = ? AND state = " SQL_ACT_QUEUED
		" ORDER BY due_ms LIMIT 1";
	enum ticket_state state;
	char dstate[16], buf[32];
	struct coord_st *st;
	int64_t n, dep, act = 0, due = 0;
	int rc;

	if (coord_rows_ticket_parse(id, &n) != 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "bad ticket id '%s'", id);
		return 0;
	}
	coord_rows_ticket_name(n, c->ticket, sizeof c->ticket);
	if (coord_rows_ticket_state(c->db, n, &state) != 0)
		return -1;
	if (state != TICKET_READY) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if ((rc = coord_sched_blocked(c->db, n, &dep, dstate, sizeof dstate)) < 0)
		return -1;
	if (rc == 1) {
		snprintf(buf, sizeof buf, "T%" PRId64, dep);
		coord_reply_deny(c, "not_ready", "state", COORD_SCHED_BLOCKED, "after", buf,
				 "after_state", dstate, NULL);
		return 0;
	}
	if ((st = coord_db_q(c->db, q_act, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		act = coord_db_i64(st, 0);
		due = coord_db_i64(st, 1);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		coord_reply_deny(c, "activation_not_queued", NULL);
		return 0;
	}
	if (due > c->now) {
		snprintf(buf, sizeof buf, "%" PRId64, due);
		coord_reply_deny(c, "nothing_due", "next_due_at", buf, NULL);
		return 0;
	}
	if ((rc = coord_place_here(c, n)) != 1)
		return rc;
	if ((rc = coord_seats_take(c, n, NULL, 1)) != 0)
		return rc < 0 ? -1 : 0;
	return claim_grant(c, n, act, lease_ms);
}

/* The next eligible ticket: a due queued activation, ready (so neither held
 * nor claimed), not blocked, one this host may take (its placement, as
 * COORD_PLACE_SQL judges it in the same walk), highest priority then
 * oldest; one whose seat is taken is passed over for the next. The scan
 * walks tickets_ready in order and stops at the first that fits, a page
 * of CLAIM_PAGE at a time: sqlite computes rows as they are stepped, but
 * PostgreSQL's libpq gets a statement's every row at once, and without the
 * LIMIT each claim ranked the whole queue (7-10 ms a claim at 1000 queued;
 * bench/run --store). */
#define CLAIM_PAGE 32
/* On PostgreSQL the walk locks each ticket it returns (FOR UPDATE) and
 * passes over one another host's claim has locked (SKIP LOCKED): of two
 * hosts claiming at once, each gets a ticket of its own, and neither
 * waits for the other's. A ticket locked stays locked until COMMIT, and
 * libpq takes a page's every row at once, so the first page is one ticket
 * (a claim locks the one it takes) and each page after it, past tickets
 * whose seat was taken, twice the last, up to CLAIM_PAGE. */
#define CLAIM_PAGE_PG 1
/* This host's placement in the same walk: ?4 its id, ?5 its labels. */
#define CLAIM_PLACED COORD_PLACE_SQL("t", "?4", "?5")
/* The due queued activation of ticket t, due by ?1. */
#define CLAIM_ACT                                                                            \
	"(SELECT a.id FROM activations a WHERE a.ticket = t.n AND a.state = " SQL_ACT_QUEUED \
	" AND a.due_ms <= ?1 ORDER BY a.due_ms LIMIT 1)"
#define CLAIM_BLOCKED COORD_SCHED_BLOCKED_SQL("t")
static int
claim_next(struct coord_ctx *c, int64_t lease_ms)
{
	static const char sql[] =
		"SELECT n, act FROM (SELECT t.n, t.priority, " CLAIM_ACT " AS act"
		" FROM tickets t INDEXED BY tickets_ready WHERE t.state = " SQL_TICKET_READY
			CLAIM_PLACED " AND NOT " CLAIM_BLOCKED ") AS ready"
		" WHERE act IS NOT NULL ORDER BY priority DESC, n LIMIT ?2 OFFSET ?3";
	/* The same walk, as PostgreSQL locks rows: a lock applies to the
	 * query's own tables, not to a subquery in its FROM. */
	static const char sql_pg[] =
		"SELECT t.n, " CLAIM_ACT
		" AS act FROM tickets t WHERE t.state = " SQL_TICKET_READY CLAIM_PLACED
		" AND NOT " CLAIM_BLOCKED " AND " CLAIM_ACT " IS NOT NULL"
		" ORDER BY t.priority DESC, t.n LIMIT ?2 OFFSET ?3 FOR UPDATE OF t SKIP LOCKED";
	const struct coord_host *h = coord_db_host(c->db);
	int pg = coord_db_kind(c->db) == COORD_STORE_POSTGRESQL;
	int64_t n = 0, act = 0, next, offset = 0, page = pg ? CLAIM_PAGE_PG : CLAIM_PAGE;
	struct coord_st *st;
	char buf[24];
	int rc, found = 0, rows = (int)page;

	while (!found && rows == page) {
		if ((st = coord_db_q(c->db, pg ? sql_pg : sql, "iiitt", c->now, page, offset, h->id,
				     h->labels)) == NULL)
			return -1;
		rows = 0;
		while ((rc = coord_db_step(c->db, st)) == 1) {
			int seat;

			rows++;
			n = coord_db_i64(st, 0);
			act = coord_db_i64(st, 1);
			if ((seat = coord_seats_take(c, n, NULL, 1)) < 0) {
				rc = -1;
				break;
			}
			if (seat == 0) {
				found = 1;
				break;
			}
		}
		coord_db_done(st);
		if (rc < 0)
			return -1;
		offset += page;
		if (pg && rows == page && page < CLAIM_PAGE)
			rows = (int)(page *= 2);
	}
	if (found) {
		c->ticket[0] = '\0';
		return claim_grant(c, n, act, lease_ms);
	}
	/* Nothing eligible (or every due ticket waits for a seat): decided
	 * nothing, so it is not stored and the caller may park it. */
	next = coord_sched_next_due(c->db, c->now);
	snprintf(buf, sizeof buf, "%" PRId64, next == INT64_MAX ? (int64_t)0 : next);
	coord_reply_deny(c, "nothing_due", "next_due_at", buf, NULL);
	c->ticket[0] = '\0';
	c->decided_nothing = 1;
	return 0;
}

int
coord_claim(struct coord_ctx *c)
{
	const Berth__Claim *cl = c->req->claim;
	int64_t lease_ms = cl && cl->has_lease_ms && cl->lease_ms
				   ? (int64_t)cl->lease_ms
				   : coord_db_opts(c->db)->default_lease_ms;
	int named = cl != NULL && cl->ticket != NULL && cl->ticket[0] != '\0';
	struct coord_settings set;
	int64_t slots;
	char sl[24];
	int rc;

	if (coord_settings_get(c->db, &set) < 0 ||
	    coord_settings_slots_of(c->db, c->req->instance, &slots) < 0)
		return -1;
	if ((rc = claim_slots_full(c, slots)) != 0)
		return rc < 0 ? -1 : 0;
	/* berth pause: nothing is claimed. A claim for the next ticket
	 * decided nothing and waits, held, for berth resume to wake it. */
	if (set.paused) {
		snprintf(sl, sizeof sl, "%" PRId64, slots);
		coord_reply_deny(c, "paused", "slots", sl, NULL);
		c->decided_nothing = !named;
		return 0;
	}
	/* No run is claimed under a host lease the store does not hold now
	 * (DESIGN §13); a claim for the next ticket waits, held. */
	if ((rc = coord_hosts_claim_guard(c)) <= 0) {
		c->decided_nothing = rc == 0 && !named;
		return rc;
	}
	if (named)
		rc = claim_ticket(c, cl->ticket, lease_ms);
	else
		rc = claim_next(c, lease_ms);
	/* Every answer tells the supervisor the slots it may fill now. */
	if (rc == 0 && c->reply->result_case == BERTH__REPLY__RESULT_GRANTED &&
	    c->reply->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM) {
		c->reply->granted->claim->has_slots = 1;
		c->reply->granted->claim->slots = (uint32_t)slots;
	}
	return rc;
}
