/*
 * The actions of the supervisor's run table (sup_run.c): each turns a row's
 * action into what it takes in the world — a request to the coordinator, a
 * byte to a shim, a kill — and says which event came of it. sup_act_fire is
 * the one place a run changes state.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "msg.h"
#include "ring.h"
#include "states.h"
#include "sup_int.h"
#include "util.h"

int
sup_act_call(struct sup *s, struct sup_run *r, Berth__Request *req, Berth__Reply **rep,
	     const char *verb)
{
	const char *who = r != NULL ? sup_runs_name(r) : "-";
	char desc[256];
	int rc;

	*rep = NULL;
	if (s->broken)
		return SUP_NOANSWER;
	if (r != NULL && r->req_id != 0 && r->req_verb == (int)req->verb_case) {
		req->has_req_id = 1;
		req->req_id = r->req_id;
	}
	rc = rpc_call(s->rpc, req, rep, SUP_RPC_TIMEOUT_MS);
	if (rc < 0) {
		s->answered = 0;
		log_warn("run %s: %s: no answer from the coordinator (%s)", who, verb,
			 strerror(-rc));
		if (r != NULL && req->has_req_id) {
			r->req_id = req->req_id;
			r->req_verb = (int)req->verb_case;
		}
		return SUP_NOANSWER;
	}
	s->answered = 1;
	if (r != NULL)
		r->req_id = 0;
	if ((*rep)->result_case != BERTH__REPLY__RESULT_ERROR)
		return msg_is_granted(*rep) ? SUP_GRANTED : SUP_DENIED;
	msg_describe(*rep, desc, sizeof(desc));
	if (msg_reply_is_bug(*rep)) {
		/* Trust is asymmetric (STYLE.md): the coordinator says our
		 * own request is malformed. That is our bug; we exit and the
		 * launcher starts a supervisor that may not have it. */
		log_error("bug: run %s: the coordinator refused our %s as malformed: %s; exiting "
			  "for the launcher to restart us",
			  who, verb, desc);
		s->broken = 1;
		sup_act_reply_free(*rep);
		*rep = NULL;
		return SUP_NOANSWER;
	}
	if ((*rep)->error != NULL && ((*rep)->error->code == BERTH__ERROR_CODE__ERR_STORAGE ||
				      (*rep)->error->code == BERTH__ERROR_CODE__ERR_BUSY)) {
		log_warn("run %s: %s: %s", who, verb, desc);
		sup_act_reply_free(*rep);
		*rep = NULL;
		return SUP_NOANSWER;
	}
	/* Anything else retrying cannot cure: a denial, so that the run does
	 * not loop on it forever. */
	log_error("run %s: %s refused: %s", who, verb, desc);
	return SUP_DENIED;
}

void
sup_act_reply_free(Berth__Reply *rep)
{
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
}

/*
 * The shim is gone: what does it leave? An exit record (on disk, or in the
 * status message the shim sent us), a spawn error or the started marker all
 * mean the job was (or was tried to be) executed, and the exit is
 * checkpointed. None of them means the shim died before it forked the job,
 * so nothing executed and the run is abandoned (no attempt spent). What
 * cannot be read now decides nothing: the run waits (SUP_GONE) and the next
 * pass reads again.
 */
static enum sup_event
sup_act_read(struct sup *s, struct sup_run *r)
{
	char dir[PATH_MAX];

	/* Never told to go: whatever the directory holds, nothing ran. */
	if (r->state == SUP_SPAWNED)
		return SUP_EV_GONE_UNSTARTED;
	if (home_run_dir(s->o->home, r->id, dir, sizeof(dir)) != 0 ||
	    aftercare_read(dir, &r->after) != 0)
		return SUP_EV_GONE_UNREAD;
	if (r->has_status)
		aftercare_use_status(&r->after, &r->status);
	if (r->after.unreadable != 0)
		return SUP_EV_GONE_UNREAD;
	/* The job could not be executed: it settles failed, with the shim's
	 * reason. */
	if (r->after.has_spawn_error && r->outcome[0] == '\0') {
		snprintf(r->reason, sizeof(r->reason), "%s", r->after.spawn_error);
		snprintf(r->outcome, sizeof(r->outcome), "%s", run_state_name(RUN_FAILED));
	}
	if (r->after.has_record || r->after.has_spawn_error || r->after.started)
		return SUP_EV_GONE;
	return SUP_EV_GONE_UNSTARTED;
}

void
sup_act_gone(struct sup *s, struct sup_run *r)
{
	sup_act_fire(s, r, sup_act_read(s, r));
}

static enum sup_event
sup_act_start(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Start st = BERTH__START__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc;

	if (fp_skip("supervisor.after_spawn", "start not sent"))
		return SUP_EV_START_DENIED;
	if ((rc = ident_read(r->pid, &r->shim)) < 0) {
		log_error("run %s: cannot read the shim's identity (pid %d): %s", sup_runs_name(r),
			  (int)r->pid, strerror(-rc));
		return SUP_EV_START_DENIED;
	}
	/* Spawned as a session leader, the shim leads its own group. */
	r->shim.pgid = r->pid;
	r->have_ident = 1;
	msg_ident_to(&r->shim, &id);
	st.run_id = r->id;
	st.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_START;
	req.start = &st;
	if (fp_skip("supervisor.before_start", "start not sent"))
		return SUP_EV_START_DENIED;
	rc = sup_act_call(s, NULL, &req, &rep, "start");
	if (rc == SUP_GRANTED) {
		sup_act_reply_free(rep);
		/* Recorded running but not yet told to go: a failure here
		 * leaves a job that never executed, which is abandoned. */
		if (fp_skip("supervisor.after_start", "no go"))
			return SUP_EV_START_DENIED;
		return SUP_EV_START_GRANTED;
	}
	if (rc == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_warn("run %s: start %s", sup_runs_name(r), desc);
	}
	sup_act_reply_free(rep);
	/* No answer is treated as a denial: abandon is allowed whether or not
	 * the start was applied, and the shim never got its go. */
	return SUP_EV_START_DENIED;
}

/* Writes the hand-off to a shim spawned ahead: it is reading, so this
 * takes no longer than the copy, but a shim stopped by someone must not
 * stop us: the write gives up after SUP_HANDOFF_MS. 0, or -1 with errno. */
static int
sup_act_handoff(struct sup_run *r)
{
	int64_t until = clock_mono_ms() + SUP_HANDOFF_MS, left;
	struct pollfd p = { .fd = r->go_fd, .events = POLLOUT };
	size_t off = 0;
	ssize_t n;

	if (fcntl(r->go_fd, F_SETFL, O_NONBLOCK) == -1)
		return -1;
	while (off < r->handoff_len) {
		n = write(r->go_fd, r->handoff + off, r->handoff_len - off);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return -1;
		if ((left = until - clock_mono_ms()) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&p, 1, (int)left) == -1 && errno != EINTR)
			return -1;
	}
	return 0;
}

static enum sup_event
sup_act_go(struct sup *s, struct sup_run *r)
{
	int rc;

	/* If the shim already died, the write fails (EPIPE, ignored as a
	 * signal) and its reaping tells what it left. */
	if (r->handoff != NULL) {
		rc = sup_act_handoff(r);
		free(r->handoff);
		r->handoff = NULL;
	} else
		rc = write(r->go_fd, "g", 1) == 1 ? 0 : -1;
	if (rc == -1) {
		log_warn("run %s: go to shim %d: %s", sup_runs_name(r), (int)r->pid,
			 strerror(errno));
		/* One that did not take it whole never forks the job; it is
		 * ended, and its reaping finds the run never started. */
		if (errno != EPIPE && r->pid > 0 && r->have_ident)
			ident_kill_group(&r->shim, SIGKILL);
	}
	close(r->go_fd);
	r->go_fd = -1;
	return SUP_NEVENTS;
}

static enum sup_event
sup_act_abandon(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Abandon ab = BERTH__ABANDON__INIT;
	Berth__Reply *rep;
	int rc;

	ab.run_id = r->id;
	ab.reason = r->reason[0] ? r->reason : (char *)"never started";
	req.verb_case = BERTH__REQUEST__VERB_ABANDON;
	req.abandon = &ab;
	rc = sup_act_call(s, r, &req, &rep, "abandon");
	sup_act_reply_free(rep);
	return rc == SUP_NOANSWER ? SUP_NEVENTS : SUP_EV_ABANDONED;
}

static enum sup_event
sup_act_kill_abandon(struct sup *s, struct sup_run *r)
{
	int rc;

	/* The shim is our unreaped child, so its pid cannot have been reused;
	 * the identity check is kept anyway, as for every kill. Closing the go
	 * pipe also tells a shim that survived the kill to give up. */
	if (r->pid > 0 && r->have_ident) {
		if ((rc = ident_kill_group(&r->shim, SIGKILL)) < 0 && rc != -ESRCH)
			log_error("run %s: kill shim group %d: %s", sup_runs_name(r),
				  (int)r->shim.pgid, strerror(-rc));
	} else if (r->pid > 0 && kill(r->pid, SIGKILL) == -1 && errno != ESRCH) {
		log_error("run %s: kill shim %d: %s", sup_runs_name(r), (int)r->pid,
			  strerror(errno));
	}
	if (r->go_fd != -1) {
		close(r->go_fd);
		r->go_fd = -1;
	}
	if (r->reason[0] == '\0')
		snprintf(r->reason, sizeof(r->reason), "start denied");
	return sup_act_abandon(s, r);
}

/* Settle's request for run r: the aftercare facts as read when its shim
 * was gone (nothing for a run that could not be spawned), and the outcome
 * ("" lets the coordinator derive it from the exit). */
static void
sup_act_settle_msg(struct sup_run *r, Berth__Settle *se)
{
	msg_settle_aftercare(se, &r->after);
	se->run_id = r->id;
	se->outcome = r->outcome;
	if (r->reason[0] != '\0')
		se->reason = r->reason;
}

static void
sup_act_settled_log(struct sup_run *r, const Berth__Reply *rep)
{
	Berth__SettleGranted *g;

	if (!msg_is_granted(rep) || rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SETTLE)
		return;
	g = rep->granted->settle;
	log_info("run %s: settled %s%s, ticket %s%s%s", sup_runs_name(r),
		 g->outcome ? g->outcome : "?", g->applied ? "" : " (already)",
		 g->ticket_state ? g->ticket_state : "?", r->reason[0] ? ": " : "", r->reason);
}

/*
 * The next run's claim as a part of this run's record_exit (Request.then,
 * DESIGN §4): when settling this run frees a slot no claim in flight waits
 * for, and a shim waits ahead. Never held: nothing due is answered at
 * once, and the long-poll claim takes over. Its request id is kept with
 * the run, so a resent record_exit resends the same claim and a grant that
 * was made is replayed, not made twice. 1 when part is to be sent.
 */
static int
sup_act_then_claim(struct sup *s, struct sup_run *r, Berth__Request *part, Berth__Claim *cl,
		   Berth__Ident *id)
{
	const struct sup_ahead *e;

	if (r->then_req_id == 0) {
		if (s->then_shim != 0 || s->claim_inflight || s->claim_req_id != 0 || s->stopping ||
		    !s->hello_done || !sup_ahead_fused(s) || sup_runs_busy(s) - 1 >= s->slots ||
		    (e = sup_ahead_first(s)) == NULL)
			return 0;
		s->then_shim = e->pid;
		s->then_shim_id = e->id;
		r->then_req_id = rpc_next_req_id();
	}
	cl->has_wait_ms = 1;
	cl->wait_ms = 0;
	if (s->o->lease_ms > 0) {
		cl->has_lease_ms = 1;
		cl->lease_ms = (uint32_t)s->o->lease_ms;
	}
	msg_ident_to(&s->then_shim_id, id);
	cl->shim = id;
	part->has_req_id = 1;
	part->req_id = r->then_req_id;
	part->verb_case = BERTH__REQUEST__VERB_CLAIM;
	part->claim = cl;
	return 1;
}

/* The record_exit that carried the next claim was answered: the answer to
 * the claim goes to the claim's floor (sup_claim_then), or, when the
 * coordinator sent none (it predates parts), the shim waits for the next
 * claim. */
static void
sup_act_then_answered(struct sup *s, struct sup_run *r, Berth__Reply *rep)
{
	if (r->then_req_id != 0) {
		r->then_req_id = 0;
		if (rep != NULL && rep->n_then > 0 && s->then_rep == NULL) {
			s->then_rep = rep;
			return;
		}
		s->then_shim = 0;
	}
	sup_act_reply_free(rep);
}

/*
 * The exit checkpoint, with the settlement fused into it (DESIGN §4): the
 * aftercare facts are known once the shim is gone, so record_exit carries
 * them and settles in the same transaction. The checkpoint still decides
 * the race with recovery; denied, nothing more. Unfused when the
 * coordinator predates fusion (no fused answer: settle is sent alone) and
 * while a failpoint of the window between the two is armed (DESIGN §10).
 */
static enum sup_event
sup_act_record_exit(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT, part = BERTH__REQUEST__INIT, *parts[1];
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc;

	if (fp_skip("supervisor.before_record_exit", "record_exit not sent"))
		return SUP_NEVENTS;
	msg_record_exit(&re, r->id, &r->after);
	if (!s->o->no_ahead && !fp_armed("supervisor.after_record_exit") &&
	    !fp_armed("supervisor.before_settle")) {
		sup_act_settle_msg(r, &se);
		se.run_id = NULL; /* record_exit's own */
		re.settle = &se;
	}
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &re;
	if (re.settle != NULL && sup_act_then_claim(s, r, &part, &cl, &id)) {
		parts[0] = &part;
		req.n_then = 1;
		req.then = parts;
	}
	rc = sup_act_call(s, r, &req, &rep, "record_exit");
	if (rc == SUP_NOANSWER)
		return SUP_NEVENTS;
	if (rc == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_info("run %s: record_exit %s: another actor settles it", sup_runs_name(r),
			 desc);
		sup_act_then_answered(s, r, rep);
		return SUP_EV_EXIT_DENIED;
	}
	if (re.settle != NULL && rep->fused != NULL && msg_is_granted(rep->fused)) {
		sup_act_settled_log(r, rep->fused);
		sup_act_then_answered(s, r, rep);
		return SUP_EV_EXIT_SETTLED;
	}
	sup_act_then_answered(s, r, rep);
	/* The checkpoint is ours now; a crash here leaves the run in
	 * aftercare for recovery. An error has no operation to fail. */
	fp_hit("supervisor.after_record_exit");
	return SUP_EV_EXIT_GRANTED;
}

static enum sup_event
sup_act_settle(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	Berth__Reply *rep;
	int rc;

	if (fp_skip("supervisor.before_settle", "settle not sent"))
		return SUP_NEVENTS;
	sup_act_settle_msg(r, &se);
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &se;
	rc = sup_act_call(s, r, &req, &rep, "settle");
	if (rc == SUP_NOANSWER)
		return SUP_NEVENTS;
	if (rc == SUP_GRANTED)
		sup_act_settled_log(r, rep);
	sup_act_reply_free(rep);
	return SUP_EV_SETTLED;
}

/* Re-arms run r's lapsed lease: readopt, for ourselves, of a run we own
 * (the coordinator refuses a supervisor any other). */
static void
sup_act_rearm(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Readopt ro = BERTH__READOPT__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc;

	ro.ticket = r->ticket;
	ro.run_id = r->id;
	ro.new_owner = (char *)s->instance;
	if (s->o->lease_ms > 0) {
		ro.has_lease_ms = 1;
		ro.lease_ms = (uint32_t)s->o->lease_ms;
	}
	req.verb_case = BERTH__REQUEST__VERB_READOPT;
	req.readopt = &ro;
	rc = sup_act_call(s, NULL, &req, &rep, "readopt");
	if (rc == SUP_GRANTED) {
		log_info("run %s: lease had lapsed; re-armed", sup_runs_name(r));
	} else if (rc == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_warn("run %s: readopt %s", sup_runs_name(r), desc);
	}
	sup_act_reply_free(rep);
}

/* Whether a lapsed lease of a run in this state is ours to re-arm: while
 * the job runs or is being spawned, and in the aftercare our checkpoint
 * won. Not after the shim is gone and before our record_exit is answered
 * (someone else may have checkpointed the exit), nor while abandoning. */
static int
sup_act_rearms(enum sup_state st)
{
	return st == SUP_CLAIMED || st == SUP_SPAWNED || st == SUP_STARTED ||
	       st == SUP_CHECKPOINTED;
}

/*
 * The renewal of run r's lease, in every state it is not done with (DESIGN
 * §6): a statement of fact, not an authority. Strict renewal is denied
 * once the lease has run out (a pause past the TTL); the run is still
 * ours, so readopt re-arms it and the expiry tells the truth again while
 * the job lives. Neither answer moves the run: liveness is the process
 * identity's business, and what the run does next is the table's.
 */
void
sup_act_renew(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Renew rn = BERTH__RENEW__INIT;
	Berth__Reply *rep;
	const char *why;
	char desc[256];

	if (sup_run_terminal(r->state))
		return;
	rn.ticket = r->ticket;
	rn.run_id = r->id;
	if (s->o->lease_ms > 0) {
		rn.has_lease_ms = 1;
		rn.lease_ms = (uint32_t)s->o->lease_ms;
	}
	req.verb_case = BERTH__REQUEST__VERB_RENEW;
	req.renew = &rn;
	switch (sup_act_call(s, NULL, &req, &rep, "renew")) {
	case SUP_GRANTED:
		/* Every renewal says the slots we may fill (berth slots). */
		if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_LEASE &&
		    rep->granted->lease->has_slots)
			sup_runs_slots(s, rep->granted->lease->slots);
		break;
	case SUP_DENIED:
		msg_describe(rep, desc, sizeof(desc));
		why = msg_denied_reason(rep);
		if (why != NULL && strcmp(why, "lease_not_held") == 0 && sup_act_rearms(r->state)) {
			log_info("run %s: renew %s", sup_runs_name(r), desc);
			sup_act_rearm(s, r);
		} else {
			log_warn("run %s: renew %s", sup_runs_name(r), desc);
		}
		break;
	default: break;
	}
	sup_act_reply_free(rep);
}

static enum sup_event
sup_act(struct sup *s, struct sup_run *r, enum sup_action a)
{
	switch (a) {
	case SUP_ACT_START: return sup_act_start(s, r);
	case SUP_ACT_GO: return sup_act_go(s, r);
	case SUP_ACT_KILL_ABANDON: return sup_act_kill_abandon(s, r);
	case SUP_ACT_ABANDON: return sup_act_abandon(s, r);
	case SUP_ACT_READ: return sup_act_read(s, r);
	case SUP_ACT_RECORD_EXIT: return sup_act_record_exit(s, r);
	case SUP_ACT_SETTLE: return sup_act_settle(s, r);
	case SUP_ACT_NONE:
	case SUP_ACT_FORGET:
	case SUP_ACT_INVALID: break;
	}
	return SUP_NEVENTS;
}

/*
 * The one place a run changes state: the table decides, the action runs,
 * and the action's outcome is the next event, until an action leaves the run
 * waiting for the world.
 */
void
sup_act_fire(struct sup *s, struct sup_run *r, enum sup_event ev)
{
	struct sup_step st;

	while (ev != SUP_NEVENTS) {
		st = sup_run_step(r->state, ev);
		if (st.action == SUP_ACT_INVALID) {
			log_error("run %s: event %s unexpected in state %s (ignored)",
				  sup_runs_name(r), sup_run_event_name(ev),
				  sup_run_state_name(r->state));
			return;
		}
		if (st.next != r->state) {
			char text[80];

			snprintf(text, sizeof(text), "%s -%s-> %s", sup_run_state_name(r->state),
				 sup_run_event_name(ev), sup_run_state_name(st.next));
			log_info("run %s: %s", sup_runs_name(r), text);
			ring_global_emit(RING_STATE, NULL, r->ticket, r->id, NULL, NULL, 0, 0,
					 text);
		}
		r->state = st.next;
		if (st.action == SUP_ACT_FORGET) {
			sup_runs_forget(s, r);
			return;
		}
		ev = sup_act(s, r, st.action);
	}
}
