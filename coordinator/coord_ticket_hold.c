/* The ticket verbs that change a ticket's state (DESIGN §4): hold,
 * release, retry, cancel; a ticket in the wrong state is denied
 * not_ready{state}. Apart from coord_tickets.c (add, the loader and the
 * resolver) so each verb group reads alone (coord_tickets_int.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_settings.h"
#include "coord_tickets.h"
#include "coord_tickets_int.h"
#include "msg.h"
#include "states.h"

/* ------------------------------------------------------------ hold .. cancel */

static int
tickets_set_state(struct coord_ctx *c, int64_t n, enum ticket_state state)
{
	static const char sql[] = "UPDATE tickets SET state = ?, updated_ms = ? WHERE n = ?";

	return coord_db_exec(c->db, sql, "tii", ticket_state_name(state), c->now, n) == 1 ? 0 : -1;
}

/* The ticket a verb names and its state: 1, 0 unknown (error reply set),
 * -1 error. */
static int
tickets_ref(struct coord_ctx *c, const Berth__TicketRef *ref, int64_t *n, enum ticket_state *state)
{
	int rc;

	if ((rc = coord_tickets_resolve(c, ref ? ref->id : NULL, n)) != 1)
		return rc;
	return coord_rows_ticket_state(c->db, *n, state) == 0 ? 1 : -1;
}

/* Hold (to held) and release (to ready): only a ticket that is not running
 * moves between the two (DECISIONS.md); one already there is granted as it
 * is. */
static int
tickets_hold_release(struct coord_ctx *c, const Berth__TicketRef *ref, enum ticket_state to)
{
	enum ticket_state state;
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, ref, &n, &state)) != 1)
		return rc;
	if (state != TICKET_READY && state != TICKET_HELD) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (state != to && tickets_set_state(c, n, to) != 0)
		return -1;
	if (to == TICKET_READY)
		c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

int
coord_tickets_hold(struct coord_ctx *c)
{
	return tickets_hold_release(c, c->req->hold, TICKET_HELD);
}

int
coord_tickets_release(struct coord_ctx *c)
{
	return tickets_hold_release(c, c->req->release, TICKET_READY);
}

/* The state of ticket n's last run (RUN_ABSENT: none): 0 or -1. */
static int
tickets_last_run(struct coord_ctx *c, int64_t n, enum run_state *last)
{
	static const char sql[] =
		"SELECT state FROM runs WHERE ticket = ? ORDER BY attempt DESC LIMIT 1";
	struct coord_st *st;
	int rc;

	*last = RUN_ABSENT;
	if ((st = coord_db_q(c->db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1)
		*last = run_state_parse(coord_db_coltext(st, 0));
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}

int
coord_tickets_retry(struct coord_ctx *c)
{
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	static const char q_budget[] =
		"UPDATE tickets SET state = " SQL_TICKET_READY ", bad_runs = 0, updated_ms = ?"
		" WHERE n = ?";
	static const char q_every[] = "SELECT every_ms FROM tickets WHERE n = ?";
	enum ticket_state state;
	enum run_state last;
	int64_t n, every = 0;
	int rc;

	if ((rc = tickets_ref(c, c->req->retry, &n, &state)) != 1)
		return rc;
	if (tickets_last_run(c, n, &last) != 0)
		return -1;
	/* failed or cancelled, or a ready ticket whose last run was orphaned
	 * (waiting out its backoff): ready now, with a fresh budget. */
	if (state == TICKET_DEPENDENCY_FAILED) {
		/* It never ran: its dependency is the one to retry. */
		Berth__Ticket *t = tickets_load(c->db, n, c->now, 0);

		if (t == NULL)
			return -1;
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), "dependency",
				 t->dependency ? t->dependency : "", NULL);
		berth__ticket__free_unpacked(t, NULL);
		return 0;
	}
	if (state != TICKET_FAILED && state != TICKET_CANCELLED &&
	    !(state == TICKET_READY && last == RUN_ORPHANED)) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (coord_db_int(c->db, &every, q_every, "i", n) < 0)
		return -1;
	if (coord_db_exec(c->db, q_cancel, "ii", c->now, n) < 0 ||
	    coord_db_exec(c->db, q_budget, "ii", c->now, n) != 1 ||
	    coord_sched_queue(c->db, n, every > 0 ? "every" : "now", c->now, every, c->now) != 0 ||
	    coord_sched_deps_rearm(c->db, n, c->now) != 0)
		return -1;
	c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

int
coord_tickets_cancel(struct coord_ctx *c)
{
	static const char q_run[] = "SELECT id FROM runs WHERE ticket = ? AND settled_ms IS NULL";
	/* A cancel overrides a timeout stop: the user's word is final. */
	static const char q_stop[] =
		"UPDATE runs SET stop_reason = " SQL_STOP_CANCEL ", stop_ms = ? WHERE id = ?"
		" AND (stop_reason IS NULL OR stop_reason != " SQL_STOP_CANCEL ")";
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	enum ticket_state state;
	char run[40] = "";
	struct coord_st *st;
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, c->req->cancel, &n, &state)) != 1)
		return rc;
	if ((st = coord_db_q(c->db, q_run, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1)
		snprintf(run, sizeof run, "%s", coord_db_coltext(st, 0));
	coord_db_done(st);
	if (rc < 0)
		return -1;
	if (run[0] != '\0') {
		/* A stop request: the reaper enforces it and the run settles
		 * cancelled. */
		snprintf(c->run, sizeof c->run, "%s", run);
		if (coord_db_exec(c->db, q_stop, "it", c->now, run) < 0)
			return -1;
		return coord_tickets_reply(c, n, 0);
	}
	if (state == TICKET_SUCCEEDED || state == TICKET_FAILED ||
	    state == TICKET_DEPENDENCY_FAILED) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (state != TICKET_CANCELLED && (tickets_set_state(c, n, TICKET_CANCELLED) != 0 ||
					  coord_db_exec(c->db, q_cancel, "ii", c->now, n) < 0 ||
					  coord_sched_deps_failed(c->db, n, c->now) != 0))
		return -1;
	c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}
