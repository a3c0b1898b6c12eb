/* The coordination verbs after claim (DESIGN §4) and the actors'
 * bookkeeping: every guard here is one statement, or a read followed by a
 * guarded write inside the request's IMMEDIATE transaction, so the first of
 * two racing requests wins and the second is denied with the state the
 * first left. The moves of a run's state are proto/run_moves.def's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_caller.h"
#include "coord_db.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_moves.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_runs.h"
#include "coord_sched.h"
#include "coord_seats.h"
#include "coord_settings.h"
#include "ident.h"
#include "states.h"

/* The facts of one run a guard needs; end.state is RUN_ABSENT for a run
 * that does not exist. */
struct runs_row {
	int64_t ticket;
	int settled;
	struct run_end end;
	char owner[COORD_SENDER_MAX];        /* the supervisor instance that owns it */
	char checkpointer[COORD_SENDER_MAX]; /* the instance granted its record_exit */
	char host[COORD_HOST_MAX + 1];       /* the host that claimed it */
	int fenced;                          /* its host was declared lost since (coord_hosts.h) */
};

static int
runs_get(struct coord_ctx *c, const char *run_id, struct runs_row *r)
{
	static const char sql[] =
		"SELECT r.ticket, r.state, r.settled_ms IS NOT NULL, r.stop_reason, r.has_record,"
		" r.exit_code, r.signal, r.owner, coalesce(r.aftercare_owner, r.owner), r.host, " COORD_HOSTS_FENCED_SQL(
			"r") " FROM runs r WHERE r.id = ?";
	struct coord_st *st;
	int rc;

	memset(r, 0, sizeof *r);
	r->end.state = RUN_ABSENT;
	if (run_id == NULL || run_id[0] == '\0')
		return 0;
	if ((st = coord_db_q(c->db, sql, "t", run_id)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		r->ticket = coord_db_i64(st, 0);
		r->end.state = run_state_parse(coord_db_coltext(st, 1));
		r->settled = (int)coord_db_i64(st, 2);
		r->end.stop = stop_reason_parse(coord_db_coltext(st, 3));
		r->end.has_record = (int)coord_db_i64(st, 4);
		r->end.has_code = !coord_db_isnull(st, 5);
		r->end.code = (int)coord_db_i64(st, 5);
		r->end.has_signal = !coord_db_isnull(st, 6);
		r->end.signal = (int)coord_db_i64(st, 6);
		snprintf(r->owner, sizeof r->owner, "%s", coord_db_coltext(st, 7));
		snprintf(r->checkpointer, sizeof r->checkpointer, "%s", coord_db_coltext(st, 8));
		snprintf(r->host, sizeof r->host, "%s", coord_db_coltext(st, 9));
		r->fenced = coord_db_i64(st, 10) != 0;
		coord_rows_ticket_name(r->ticket, c->ticket, sizeof c->ticket);
	}
	coord_db_done(st);
	if (rc >= 0)
		snprintf(c->run, sizeof c->run, "%.32s", run_id);
	return rc;
}

/* ------------------------------------------------------------ start .. abandon */

/* 1 when the instance named has no live process by its identity as it
 * said hello (no actor row: it never did, and nobody can vouch for it);
 * an identity that cannot be read counts as alive. -1 on error. */
static int
runs_instance_gone(struct coord_ctx *c, const char *instance)
{
	static const char sql[] =
		"SELECT boot_id, pid, start_time, pgid FROM actors WHERE instance = ?";
	struct ident id;
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(c->db, sql, "t", instance)) == NULL)
		return -1;
	memset(&id, 0, sizeof id);
	if ((rc = coord_db_step(c->db, st)) == 1) {
		snprintf(id.boot_id, sizeof id.boot_id, "%s", coord_db_coltext(st, 0));
		id.pid = (pid_t)coord_db_i64(st, 1);
		id.start_time = (uint64_t)coord_db_i64(st, 2);
		id.pgid = (pid_t)coord_db_i64(st, 3);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	return rc == 0 || id.pid <= 0 || ident_check(&id) == IDENT_GONE;
}

/* Who may make move m of run r (run_moves.def's who column, DESIGN §1,
 * §4): 1 the caller may, 0 not, -1 on error. */
static int
runs_who(struct coord_ctx *c, const struct coord_move *m, const struct runs_row *r)
{
	const char *me = c->req->instance != NULL ? c->req->instance : "";
	int gone;

	/* The coordinator's own process, or a harness under a name that is
	 * no actor's: trusted with every move (in-process tests name the
	 * roles they play, and so keep these rules). */
	if (c->roles == ROLE_ANY)
		return 1;

	if ((m->who & MOVE_WHO_OWNER) && (c->roles & ROLE_SUPERVISOR) && r->owner[0] != '\0' &&
	    strcmp(me, r->owner) == 0)
		return 1;
	if ((m->who & MOVE_WHO_RECOVERY) && (c->roles & ROLE_RECOVERY))
		return 1;
	if ((m->who & MOVE_WHO_STOP_REAPER) && (c->roles & ROLE_REAPER) && r->end.stop != STOP_NONE)
		return 1;
	if ((m->who & MOVE_WHO_CHECKPOINTER) && r->checkpointer[0] != '\0' &&
	    strcmp(me, r->checkpointer) == 0)
		return 1;
	if ((m->who & MOVE_WHO_HEIR) && (c->roles & ROLE_RECOVERY)) {
		/* Recovery inherits an aftercare only from the dead: a paused
		 * or slow owner keeps it however long its lease lapsed. */
		if ((gone = runs_instance_gone(c, r->checkpointer)) != 0)
			return gone;
	}
	return 0;
}

/* Moves run r (as runs_get read it) by verb's line of run_moves.def to
 * state to, writing w: 1 moved; 0 not, with the line's denial set (else
 * the handler answers); -1 on error. */
static int
runs_move(struct coord_ctx *c, Berth__Request__VerbCase verb, const char *run_id,
	  const struct runs_row *r, enum run_state to, const struct coord_move_set *w)
{
	const struct coord_move *m = coord_moves_find(verb, r->end.state);
	int rc;

	/* A fenced run makes only its FENCE move; a FENCE move only of one.
	 * Once lost, every decision about it says so. */
	if ((r->fenced && !r->settled && !m->fence) || (r->end.state == RUN_LOST && !m->fence)) {
		coord_reply_deny(c, "host_lost", "state", run_state_name(r->end.state), "host",
				 r->host, NULL);
		return 0;
	}
	if (m->fence && !r->fenced && !r->settled && r->end.state != RUN_ABSENT) {
		coord_reply_deny(c, "host_not_lost", "state", run_state_name(r->end.state), "host",
				 r->host, NULL);
		return 0;
	}
	if (!coord_moves_allows(m, r->end.state) || r->settled) {
		coord_reply_deny(c, m->denial, "state", run_state_name(r->end.state), NULL);
		return 0;
	}
	if ((rc = runs_who(c, m, r)) <= 0) {
		if (rc == 0)
			coord_reply_deny(
				c, m->who_denial, "state", run_state_name(r->end.state), "owner",
				(m->who & MOVE_WHO_CHECKPOINTER) ? r->checkpointer : r->owner,
				NULL);
		return rc;
	}
	/* The guard was judged on what runs_get read, in this transaction:
	 * the UPDATE finding the run elsewhere is a broken invariant. */
	return coord_moves_apply(c->db, m, run_id, r->end.state, to, w) == 1 ? 1 : -1;
}

int
coord_runs_start(struct coord_ctx *c)
{
	const Berth__Start *m = c->req->start;
	const Berth__Ident *id = m ? m->shim : NULL;
	struct coord_move_set w = { .has_shim = 1, .started_ms = c->now };
	struct runs_row r;
	int rc;

	if (runs_get(c, m ? m->run_id : NULL, &r) < 0)
		return -1;
	if (id != NULL) {
		w.boot_id = id->boot_id;
		w.pid = id->pid;
		w.start_time = (int64_t)id->start_time;
		w.pgid = id->pgid;
	}
	if ((rc = runs_move(c, BERTH__REQUEST__VERB_START, m ? m->run_id : NULL, &r, RUN_RUNNING,
			    &w)) <= 0)
		return rc;
	coord_reply_granted(c);
	return 0;
}

static int
runs_lease_granted(struct coord_ctx *c, int64_t expires)
{
	Berth__Granted *g = coord_reply_granted(c);
	Berth__LeaseGranted *l = coord_mem_alloc(sizeof *l);

	berth__lease_granted__init(l);
	l->has_expires_ms = 1;
	l->expires_ms = expires;
	g->payload_case = BERTH__GRANTED__PAYLOAD_LEASE;
	g->lease = l;
	return 0;
}

/* A ticket named in renew/readopt must match the lease's; empty matches. */
static int
runs_ticket_arg(struct coord_ctx *c, const char *id, int64_t *n)
{
	*n = 0;
	if (id == NULL || id[0] == '\0')
		return 0;
	if (coord_rows_ticket_parse(id, n) != 0)
		return -1;
	coord_rows_ticket_name(*n, c->ticket, sizeof c->ticket);
	return 0;
}

/* The run's lease as this decision finds it, for the trace (c->lease_*):
 * whether recovery acted on a lease that had expired, and whose. Reading
 * it decides nothing (liveness is the process identity's business). 0 or
 * -1. */
static int
runs_trace_lease(struct coord_ctx *c, const char *run_id)
{
	static const char sql[] =
		"SELECT expires_ms, renewed_ms, owner FROM leases WHERE run_id = ?";
	struct coord_st *st;
	int rc;

	if (run_id == NULL || (st = coord_db_q(c->db, sql, "t", run_id)) == NULL)
		return run_id == NULL ? 0 : -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		c->lease_expires_ms = coord_db_i64(st, 0);
		c->lease_renewed_ms = coord_db_i64(st, 1);
		snprintf(c->lease_owner, sizeof c->lease_owner, "%s", coord_db_coltext(st, 2));
	}
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}

/* "exit 7", "signal 9", "no exit record": the end a record_exit reports. */
static void
runs_trace_exit(struct coord_ctx *c, const Berth__RecordExit *m)
{
	if (m == NULL || !(m->has_has_record && m->has_record))
		snprintf(c->detail, sizeof c->detail, "no exit record (the job vanished)");
	else if (m->has_signal && m->signal > 0)
		snprintf(c->detail, sizeof c->detail, "signal %d", m->signal);
	else
		snprintf(c->detail, sizeof c->detail, "exit %d",
			 m->has_exit_code ? m->exit_code : 0);
}

int
coord_runs_renew(struct coord_ctx *c)
{
	/* Strict: a lease that has reached its expiry is not renewed, only
	 * readopted, so recovery's view of an expired lease stays true. */
	static const char sql[] =
		"UPDATE leases SET expires_ms = ?1, renewed_ms = ?2 WHERE run_id = ?3"
		" AND (?4 = 0 OR ticket_id = ?4) AND expires_ms > ?2 AND (?5 IS NULL OR owner = ?5)"
		" AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = ?3 AND " COORD_HOSTS_FENCED_SQL(
			"r") ")";
	const Berth__Renew *m = c->req->renew;
	int64_t n, lease_ms, slots;
	int rc;

	if (m == NULL || m->run_id == NULL) {
		coord_reply_deny(c, "lease_not_held", NULL);
		return 0;
	}
	snprintf(c->run, sizeof c->run, "%.32s", m->run_id);
	lease_ms = m->lease_ms ? (int64_t)m->lease_ms : coord_db_opts(c->db)->default_lease_ms;
	if (runs_ticket_arg(c, m->ticket, &n) != 0) {
		coord_reply_deny(c, "lease_not_held", NULL);
		return 0;
	}
	/* Held by the caller: only the lease's owner renews it (a harness
	 * acting in every role may renew any). */
	if ((rc = coord_db_exec(c->db, sql, "iitit", c->now + lease_ms, c->now, m->run_id, n,
				c->roles == ROLE_ANY ? NULL : c->req->instance)) < 0)
		return -1;
	if (rc == 0) {
		coord_reply_deny(c, "lease_not_held", NULL);
		return 0;
	}
	if (runs_lease_granted(c, c->now + lease_ms) != 0 ||
	    coord_settings_slots_of(c->db, c->req->instance, &slots) != 0)
		return -1;
	c->lease_expires_ms = c->now + lease_ms;
	c->lease_renewed_ms = c->now;
	snprintf(c->lease_owner, sizeof c->lease_owner, "%s",
		 c->req->instance ? c->req->instance : "");
	/* A supervisor with every slot busy sends no claim, but renews: this
	 * is how it learns of berth slots. */
	c->reply->granted->lease->has_slots = 1;
	c->reply->granted->lease->slots = (uint32_t)slots;
	return 0;
}

/*
 * readopt from a supervisor re-arms its own lapsed lease (DESIGN §4: a
 * renewal, once the lease has run out, is denied; the supervisor then
 * readopts, so the expiry is true again while the run lives). It may
 * readopt only a run it owns, for itself: anything else is recovery's
 * (DESIGN §7), and denied lease_not_held like a run without a lease.
 * The sender is judged by its verified role (coord_exec.c).
 */
static int
runs_readopt_foreign(const struct coord_ctx *c, const Berth__Readopt *m, const char *owner)
{
	const char *me = c->req->instance ? c->req->instance : "";

	/* Recovery hands any live run on; a supervisor re-arms only its own
	 * lease, for itself (the verified role: coord_exec.c). */
	if ((c->roles & ROLE_RECOVERY) != 0)
		return 0;
	return strcmp(owner, me) != 0 ||
	       (m->new_owner != NULL && m->new_owner[0] != '\0' && strcmp(m->new_owner, me) != 0);
}

int
coord_runs_readopt(struct coord_ctx *c)
{
	static const char q_find[] =
		"SELECT l.ticket_id, r.owner FROM leases l JOIN runs r ON r.id = l.run_id"
		" WHERE l.run_id = ?1 AND (?2 = 0 OR l.ticket_id = ?2) AND r.settled_ms IS NULL"
		" AND NOT " COORD_HOSTS_FENCED_SQL("r");
	static const char q_lease[] =
		"UPDATE leases SET expires_ms = ?, renewed_ms = ?, owner = coalesce(?, owner)"
		" WHERE run_id = ?";
	static const char q_run[] = "UPDATE runs SET owner = ? WHERE id = ?";
	static const char q_sup[] =
		"SELECT count(*) FROM actors WHERE instance = ? AND actor = 'supervisor'";
	const Berth__Readopt *m = c->req->readopt;
	const char *owner;
	struct coord_st *st;
	char cur[128];
	int64_t n, t = 0, lease_ms;
	int rc;

	if (m == NULL || m->run_id == NULL || runs_ticket_arg(c, m->ticket, &n) != 0) {
		coord_reply_deny(c, "lease_not_held", NULL);
		return 0;
	}
	snprintf(c->run, sizeof c->run, "%.32s", m->run_id);
	lease_ms = m->lease_ms ? (int64_t)m->lease_ms : coord_db_opts(c->db)->default_lease_ms;
	/* The lease as recovery found it, before it moves to the new owner. */
	if (runs_trace_lease(c, m->run_id) < 0)
		return -1;
	if ((st = coord_db_q(c->db, q_find, "ti", m->run_id, n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		t = coord_db_i64(st, 0);
		snprintf(cur, sizeof cur, "%s", coord_db_coltext(st, 1));
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	if (rc == 0 || runs_readopt_foreign(c, m, cur)) {
		coord_reply_deny(c, "lease_not_held", NULL);
		return 0;
	}
	coord_rows_ticket_name(t, c->ticket, sizeof c->ticket);
	owner = m->new_owner && m->new_owner[0] ? m->new_owner : NULL;
	/* A run is handed only to a supervisor that said hello: never to a
	 * name nobody answers to. */
	if (owner != NULL) {
		int64_t known = 0;

		if (coord_db_int(c->db, &known, q_sup, "t", owner) < 0)
			return -1;
		if (known == 0) {
			coord_reply_deny(c, "unknown_owner", "new_owner", owner, NULL);
			return 0;
		}
	}
	if (coord_db_exec(c->db, q_lease, "iitt", c->now + lease_ms, c->now, owner, m->run_id) != 1)
		return -1;
	if (owner != NULL && coord_db_exec(c->db, q_run, "tt", owner, m->run_id) != 1)
		return -1;
	return runs_lease_granted(c, c->now + lease_ms);
}

/* The exit checkpoint: exactly one caller moves running -> aftercare; the
 * loser is told the state the winner left. */
int
coord_runs_record_exit(struct coord_ctx *c)
{
	const Berth__RecordExit *m = c->req->record_exit;
	struct coord_move_set w = { .has_exit = 1 };
	struct runs_row r;
	int rc;

	if (runs_get(c, m ? m->run_id : NULL, &r) < 0 ||
	    runs_trace_lease(c, m ? m->run_id : NULL) < 0)
		return -1;
	runs_trace_exit(c, m);
	if (m != NULL) {
		w.has_record = m->has_has_record && m->has_record;
		w.has_code = w.has_record && m->has_exit_code;
		w.code = m->exit_code;
		w.has_signal = w.has_record && m->has_signal;
		w.signal = m->signal;
		w.ended_ms = m->has_ended_ms && m->ended_ms ? m->ended_ms : c->now;
		/* The capture facts go with the checkpoint: a run whose settle
		 * is lost still has them. */
		w.has_output_bytes = m->has_output_bytes;
		w.output_bytes = m->output_bytes;
		w.has_capture_complete = m->has_capture_complete;
		w.capture_complete = m->capture_complete;
	}
	w.checkpointer = c->req->instance;
	if ((rc = runs_move(c, BERTH__REQUEST__VERB_RECORD_EXIT, m ? m->run_id : NULL, &r,
			    RUN_AFTERCARE, &w)) <= 0)
		return rc;
	coord_reply_granted(c);
	return 0;
}

/* A reason is kept to COORD_TEXT_MAX bytes, cut at a character boundary
 * and marked with an ellipsis (cut has room for that): refusing the settle
 * of a run over its reason's length would leave the run unsettled. */
static const char *
runs_reason(const char *reason, char cut[COORD_TEXT_MAX + 4])
{
	size_t n;

	if (reason == NULL || reason[0] == '\0')
		return NULL;
	if (strlen(reason) <= COORD_TEXT_MAX)
		return reason;
	n = COORD_TEXT_MAX;
	while (n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80)
		n--;
	memcpy(cut, reason, n);
	memcpy(cut + n, "\xe2\x80\xa6", 4); /* "…" and its NUL */
	return cut;
}

/* Ends unsettled run r by verb (abandon, settle) with outcome: the run
 * row, its lease, its seat, its ticket. 1 ended with the ticket's next
 * state in *ts, 0 not (the handler answers), -1 on error. */
static int
runs_finish(struct coord_ctx *c, Berth__Request__VerbCase verb, const char *run_id,
	    const struct runs_row *r, enum run_state outcome, const char *reason,
	    const Berth__Settle *m, enum ticket_state *ts)
{
	static const char q_lease[] = "DELETE FROM leases WHERE run_id = ?";
	struct coord_move_set w = { .settled_ms = c->now };
	char cut[COORD_TEXT_MAX + 4];
	int rc;

	w.reason = runs_reason(reason, cut);
	if (m != NULL) {
		w.has_output_bytes = m->has_output_bytes;
		w.output_bytes = m->output_bytes;
		w.has_capture_complete = m->has_capture_complete;
		w.capture_complete = m->capture_complete;
		w.has_stragglers = m->has_stragglers && m->stragglers >= 0;
		w.stragglers = m->stragglers;
		w.has_disk_full = m->has_disk_full;
		w.disk_full = m->disk_full;
	}
	if ((rc = runs_move(c, verb, run_id, r, outcome, &w)) <= 0)
		return rc;
	if (coord_db_exec(c->db, q_lease, "t", run_id) < 0 ||
	    coord_seats_release_run(c->db, run_id) < 0)
		return -1;
	c->wake = 1;
	return coord_sched_after_run(c->db, r->ticket, run_id, outcome, r->end.stop, c->now, ts) ==
			       0
		       ? 1
		       : -1;
}

/* abandon and lose: verb ends the run in state to, or, repeated on a run it
 * already ended there, is granted and does nothing. 1 ended (*r and *ts
 * as they were), 0 answered (granted again, or denied), -1 an error. */
static int
runs_end_once(struct coord_ctx *c, Berth__Request__VerbCase verb, const char *run_id,
	      enum run_state to, const char *reason, struct runs_row *r, enum ticket_state *ts)
{
	int rc;

	if (runs_get(c, run_id, r) < 0 || runs_trace_lease(c, run_id) < 0)
		return -1;
	if (r->end.state == to) {
		coord_reply_granted(c);
		return 0;
	}
	if ((rc = runs_finish(c, verb, run_id, r, to, reason, NULL, ts)) <= 0)
		return rc; /* denied (reply set) or an error */
	return 1;
}

int
coord_runs_abandon(struct coord_ctx *c)
{
	const Berth__Abandon *m = c->req->abandon;
	enum ticket_state ts;
	struct runs_row r;
	int rc;

	if ((rc = runs_end_once(c, BERTH__REQUEST__VERB_ABANDON, m ? m->run_id : NULL, RUN_ABORTED,
				m ? m->reason : NULL, &r, &ts)) <= 0)
		return rc;
	coord_reply_granted(c);
	return 0;
}

int
coord_runs_settle(struct coord_ctx *c)
{
	const Berth__Settle *m = c->req->settle;
	enum run_state outcome;
	enum ticket_state ts = TICKET_ABSENT;
	Berth__SettleGranted *sg;
	Berth__Granted *g;
	struct runs_row r;
	int applied = 0;

	if (runs_get(c, m ? m->run_id : NULL, &r) < 0 ||
	    runs_trace_lease(c, m ? m->run_id : NULL) < 0)
		return -1;
	if (r.end.state == RUN_ABSENT) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no run '%s'",
				 m && m->run_id ? m->run_id : "");
		return 0;
	}
	if (r.settled) {
		/* Idempotent: the outcome it already has. */
		outcome = r.end.state;
		if (coord_rows_ticket_state(c->db, r.ticket, &ts) != 0)
			return -1;
	} else {
		outcome = m->outcome && m->outcome[0] ? run_state_parse(m->outcome)
						      : run_outcome(&r.end);
		/* lost is lose's alone (a fenced run), never a settle's. */
		if (!run_state_terminal(outcome) || outcome == RUN_LOST) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "bad outcome '%s'",
					 m->outcome);
			return 0;
		}
		if ((applied = runs_finish(c, BERTH__REQUEST__VERB_SETTLE, m->run_id, &r, outcome,
					   m->reason, m, &ts)) <= 0)
			return applied; /* denied (reply set) or an error */
	}
	snprintf(c->detail, sizeof c->detail, "%s%s%s%s",
		 applied ? "" : "already settled: ", run_state_name(outcome),
		 ts == TICKET_ABSENT ? "" : "; ticket ",
		 ts == TICKET_ABSENT ? "" : ticket_state_name(ts));
	g = coord_reply_granted(c);
	sg = coord_mem_alloc(sizeof *sg);
	berth__settle_granted__init(sg);
	sg->has_applied = 1;
	sg->applied = applied;
	sg->outcome = coord_mem_strdup(run_state_name(outcome));
	sg->ticket_state = coord_mem_strdup(ts == TICKET_ABSENT ? "" : ticket_state_name(ts));
	g->payload_case = BERTH__GRANTED__PAYLOAD_SETTLE;
	g->settle = sg;
	return 0;
}

/* A fenced run ends lost (DESIGN §13): its host was declared lost, so the
 * job may have gone on there, and nobody can say how it ended. Recovery's,
 * of any host; repeated on a run already lost: granted, nothing done. */
int
coord_runs_lose(struct coord_ctx *c)
{
	const Berth__Lose *m = c->req->lose;
	enum ticket_state ts;
	struct runs_row r;
	int rc;

	if ((rc = runs_end_once(c, BERTH__REQUEST__VERB_LOSE, m ? m->run_id : NULL, RUN_LOST,
				"host_lost", &r, &ts)) <= 0)
		return rc;
	snprintf(c->detail, sizeof c->detail, "host %.40s lost; ticket %s", r.host,
		 ticket_state_name(ts));
	coord_reply_granted(c);
	return 0;
}

/* ------------------------------------------------------------ actors, scan */

int
coord_runs_hello(struct coord_ctx *c)
{
	static const char sql[] =
		"INSERT INTO actors (instance, actor, boot_id, pid, start_time, pgid, slots, seen_ms)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (instance) DO UPDATE SET"
		" actor = ?2, boot_id = ?3, pid = ?4, start_time = ?5, pgid = ?6, slots = ?7,"
		" seen_ms = ?8";
	const Berth__Hello *m = c->req->hello;
	const Berth__Ident *id = m ? m->ident : NULL;

	if (c->req->instance == NULL || c->req->instance[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "hello without an instance");
		return 0;
	}
	if (coord_db_exec(c->db, sql, "tttoooii", c->req->instance,
			  c->req->actor ? c->req->actor : "", id ? id->boot_id : NULL, id != NULL,
			  (int64_t)(id ? id->pid : 0), id != NULL,
			  (int64_t)(id ? id->start_time : 0), id != NULL,
			  (int64_t)(id ? id->pgid : 0), (int64_t)(m ? m->slots : 0), c->now) != 1)
		return -1;
	c->wake = 1;
	coord_reply_granted(c);
	return 0;
}

int
coord_runs_scan(struct coord_ctx *c)
{
	static const char q_live[] =
		"SELECT " COORD_RUN_COLS " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
		" WHERE r.settled_ms IS NULL AND r.host = ? ORDER BY r.claimed_ms";
	static const char q_settled[] =
		"SELECT " COORD_RUN_COLS " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
		" WHERE r.settled_ms IS NOT NULL AND (?1 = 0 OR r.settled_ms >= ?1)"
		" AND (?2 = 0 OR r.settled_ms < ?2) AND r.host = ?3 ORDER BY r.settled_ms";
	const char *host = coord_db_host(c->db)->id;
	const Berth__Scan *m = c->req->scan;
	Berth__ScanReply *sr;
	Berth__Granted *g;
	size_t cap = 0;

	g = coord_reply_granted(c);
	sr = coord_mem_alloc(sizeof *sr);
	berth__scan_reply__init(sr);
	g->payload_case = BERTH__GRANTED__PAYLOAD_SCAN;
	g->scan = sr;
	sr->has_now_ms = 1;
	sr->now_ms = c->now;
	/* The actors of a host act on its runs alone (DESIGN §13): only
	 * there can a process identity be judged. */
	if (coord_rows_runs(c->db, coord_db_q(c->db, q_live, "t", host), &sr->runs, &sr->n_runs,
			    &cap) < 0)
		return -1;
	if (m != NULL && m->settled &&
	    coord_rows_runs(c->db,
			    coord_db_q(c->db, q_settled, "iit", m->settled_since_ms,
				       m->settled_before_ms, host),
			    &sr->runs, &sr->n_runs, &cap) < 0)
		return -1;
	sr->actors = coord_rows_actors(c->db, &sr->n_actors);
	return coord_hosts_rows(c->db, &sr->hosts, &sr->n_hosts);
}

int
coord_runs_mark_stop(struct coord_ctx *c)
{
	static const char sql[] =
		"UPDATE runs SET stop_reason = ?, stop_ms = ? WHERE id = ? AND settled_ms IS NULL"
		" AND stop_reason IS NULL";
	const Berth__MarkStop *m = c->req->mark_stop;
	enum stop_reason stop = m != NULL ? stop_reason_parse(m->reason) : STOP_NONE;
	struct runs_row r;

	if (stop == STOP_NONE) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "mark_stop needs reason cancel or timeout");
		return 0;
	}
	if (runs_get(c, m->run_id, &r) < 0)
		return -1;
	if (r.end.state == RUN_ABSENT) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no run '%s'",
				 m->run_id ? m->run_id : "");
		return 0;
	}
	if (r.settled) {
		coord_reply_deny(c, "already_settled", "state", run_state_name(r.end.state), NULL);
		return 0;
	}
	/* The first stop reason stays: a timeout after a cancel is still a
	 * cancel. */
	if (coord_db_exec(c->db, sql, "tit", stop_reason_name(stop), c->now, m->run_id) < 0)
		return -1;
	coord_reply_granted(c);
	return 0;
}
