/*
 * The long-poll claim (DESIGN §6): the supervisor keeps one claim in flight
 * while it has a free slot, and the coordinator holds it until a ticket is
 * eligible or the wait passes. The claim goes on a client of its own
 * (struct sup), so the calls of the run table never abandon it: it is sent
 * once per wait, and answered once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "msg.h"
#include "states.h"
#include "sup_int.h"
#include "sup_spawn.h"
#include "util.h"

/* A spawn that failed for want of a resource, not because of the job. */
static int
sup_spawn_deferrable(int rc)
{
	return rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM || rc == -EAGAIN || rc == -ENOSPC ||
	       rc == -EDQUOT;
}

/* runs/<run>, made before the shim needs it: what the run leaves is read
 * from there (aftercare_read). 0, or -errno with the reason in r->reason. */
static int
sup_claim_run_dir(struct sup *s, struct sup_run *r)
{
	char dir[PATH_MAX];
	int rc;

	if (snprintf(dir, sizeof(dir), "%s/runs", s->o->home) >= (int)sizeof(dir) ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST) ||
	    home_run_dir(s->o->home, r->id, dir, sizeof(dir)) == -1 ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST)) {
		rc = errno ? -errno : -ENAMETOOLONG;
		snprintf(r->reason, sizeof(r->reason), "mkdir %s: %s", dir, strerror(-rc));
		return rc;
	}
	return 0;
}

static void
sup_spawn_run(struct sup *s, struct sup_run *r, const Berth__ClaimGranted *g)
{
	struct sup_spawn_req sr;
	char err[512];
	int rc;

	if (fp_skip("supervisor.after_claim", "not spawned")) {
		snprintf(r->reason, sizeof(r->reason), "failpoint supervisor.after_claim");
		goto failed;
	}
	if ((rc = sup_claim_run_dir(s, r)) < 0) {
		if (sup_spawn_deferrable(rc))
			goto deferred;
		goto failed;
	}
	sup_ahead_job_req(s, r, g, &sr);
	sr.shim_path = s->shim_path;
	sr.shim_failpoints = s->shim_failpoints;
	sr.status_fd = s->status_wr;
	if ((rc = sup_spawn_shim(&sr, &r->pid, &r->go_fd, err, sizeof(err))) < 0) {
		snprintf(r->reason, sizeof(r->reason), "%s", err);
		if (sup_spawn_deferrable(rc))
			goto deferred;
		goto failed;
	}
	log_info("run %s: shim %d for %s in %s%s", sup_runs_name(r), (int)r->pid, g->argv[0],
		 sr.workdir[0] ? sr.workdir : ".", sr.isolate ? ", isolated" : "");
	sup_act_fire(s, r, SUP_EV_SPAWN_OK);
	return;
deferred:
	/* Not the job's failure: the claim is given back (no attempt spent)
	 * and the next one waits a little, for descriptors or memory to be
	 * freed. */
	log_warn("run %s: cannot spawn now (%s): given back, claiming again in a second",
		 sup_runs_name(r), r->reason);
	sup_act_fire(s, r, SUP_EV_SPAWN_DEFERRED);
	/* After the abandon: forgetting the run cleared the wait. */
	s->claim_not_before = clock_mono_ms() + 1000;
	return;
failed:
	log_error("run %s: cannot spawn: %s", sup_runs_name(r), r->reason);
	snprintf(r->outcome, sizeof(r->outcome), "%s", run_state_name(RUN_FAILED));
	sup_act_fire(s, r, SUP_EV_SPAWN_FAILED);
}

/*
 * A claim that named a shim spawned ahead (shim, taken out of the pool
 * now) was granted. fused is start's answer, decided in the same
 * transaction: granted, the run is running with that shim, and the go is
 * the hand-off. A coordinator that predates fusion sends no such answer:
 * the run is claimed, and start is sent for the shim as for one spawned
 * after its claim.
 */
static void
sup_claim_ahead(struct sup *s, const Berth__ClaimGranted *g, pid_t shim, const Berth__Reply *fused)
{
	struct sup_ahead e;
	struct sup_run *r;
	int have = sup_ahead_take(s, shim, &e), rc;

	if ((r = sup_runs_new(s, g->run_id, g->ticket, g->alias,
			      fused != NULL ? SUP_SPAWNED : SUP_CLAIMED)) == NULL) {
		if (have)
			close(e.go_fd); /* it ends; the run waits for recovery */
		return;
	}
	log_info("run %s: claimed (ticket %s, attempt %u)%s", sup_runs_name(r), r->ticket,
		 (unsigned)g->attempt, fused != NULL ? " and started" : "");
	if (!have) {
		/* It died while the claim was held: it never had the run. A
		 * claimed run gets a shim of its own; a running one is given
		 * back, never started. */
		if (fused == NULL) {
			sup_spawn_run(s, r, g);
			return;
		}
		snprintf(r->reason, sizeof(r->reason), "the shim spawned ahead for it had ended");
		sup_act_fire(s, r, SUP_EV_GONE_UNSTARTED);
		return;
	}
	r->pid = e.pid;
	r->go_fd = e.go_fd;
	r->shim = e.id;
	r->have_ident = 1;
	if ((rc = sup_claim_run_dir(s, r)) < 0 || (rc = sup_ahead_handoff(s, r, g)) < 0) {
		if (sup_spawn_deferrable(rc)) {
			/* Not the job's failure (no space for its directory,
			 * no memory): given back, no attempt spent, and the
			 * next claim waits a little, as for a spawn deferred. */
			log_warn("run %s: %s: given back, claiming again in a second",
				 sup_runs_name(r), r->reason);
			sup_act_fire(s, r,
				     fused != NULL ? SUP_EV_START_DENIED : SUP_EV_SPAWN_DEFERRED);
			s->claim_not_before = clock_mono_ms() + 1000;
			return;
		}
		/* The run cannot be set up at all: it fails with the reason,
		 * as a spawn that failed does. The waiting shim, never told
		 * to go, ends on its closed pipe. */
		log_error("run %s: cannot set up: %s", sup_runs_name(r), r->reason);
		snprintf(r->outcome, sizeof(r->outcome), "%s", run_state_name(RUN_FAILED));
		close(r->go_fd);
		r->go_fd = -1;
		r->pid = -1;
		sup_act_fire(s, r, SUP_EV_SPAWN_FAILED);
		return;
	}
	log_info("run %s: shim %d (spawned ahead) for %s in %s", sup_runs_name(r), (int)r->pid,
		 g->n_argv ? g->argv[0] : "", g->workdir && g->workdir[0] ? g->workdir : ".");
	if (fused == NULL) {
		sup_act_fire(s, r, SUP_EV_SPAWN_OK);
		return;
	}
	if (!msg_is_granted(fused)) {
		char desc[256];

		msg_describe(fused, desc, sizeof(desc));
		log_warn("run %s: start %s", sup_runs_name(r), desc);
		sup_act_fire(s, r, SUP_EV_START_DENIED);
		return;
	}
	/* Recorded running, not yet handed over: a crash here leaves a run
	 * whose shim dies with us, never started, which recovery abandons. */
	if (fp_skip("supervisor.before_handoff", "no hand-off")) {
		snprintf(r->reason, sizeof(r->reason), "failpoint supervisor.before_handoff");
		sup_act_fire(s, r, SUP_EV_START_DENIED);
		return;
	}
	sup_act_fire(s, r, SUP_EV_START_GRANTED);
}

/* A granted claim (rep); shim: the shim spawned ahead it named, or 0. */
static void
sup_claim_granted(struct sup *s, const Berth__Reply *rep, pid_t shim)
{
	const Berth__ClaimGranted *g = rep->granted->claim;
	struct sup_run *r;

	if (g->has_slots)
		sup_runs_slots(s, g->slots);
	if (g->run_id == NULL || g->run_id[0] == '\0') {
		log_error("claim granted without a run id");
		return;
	}
	if (sup_runs_find_id(s, g->run_id) != NULL) {
		log_error("run %s: claimed again while supervised (ignored)", g->run_id);
		return;
	}
	if (shim != 0) {
		sup_claim_ahead(s, g, shim, rep->fused);
		return;
	}
	if ((r = sup_runs_new(s, g->run_id, g->ticket, g->alias, SUP_CLAIMED)) == NULL)
		return;
	log_info("run %s: claimed (ticket %s, attempt %u)", sup_runs_name(r), r->ticket,
		 (unsigned)g->attempt);
	if (g->n_argv == 0) {
		snprintf(r->reason, sizeof(r->reason), "empty command");
		snprintf(r->outcome, sizeof(r->outcome), "%s", run_state_name(RUN_FAILED));
		sup_act_fire(s, r, SUP_EV_SPAWN_FAILED);
		return;
	}
	sup_spawn_run(s, r, g);
}

/* The "slots" fact of a claim's denial (slots_full, paused), or 0. */
static uint32_t
claim_fact_slots(const Berth__Reply *rep)
{
	size_t i;

	for (i = 0; i < rep->denied->n_facts; i++) {
		const Berth__Fact *f = rep->denied->facts[i];

		if (f->key != NULL && f->value != NULL && strcmp(f->key, "slots") == 0)
			return (uint32_t)strtoul(f->value, NULL, 10);
	}
	return 0;
}

void
sup_claim_send(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	const struct sup_ahead *e;
	int64_t now = clock_mono_ms();
	int rc;

	/* A claim sent before and never answered is always resolved, even
	 * with every slot busy: a grant it may have had must reach us (and, if
	 * it did not happen, the coordinator now says slots_full). */
	/* Nor while a claim sent with a record_exit waits for its answer:
	 * that claim is for the slot this one would ask for. */
	if (s->stopping || !s->hello_done || s->claim_inflight || now < s->claim_not_before ||
	    (sup_runs_busy(s) >= s->slots && s->claim_req_id == 0) ||
	    (s->then_shim != 0 && s->claim_req_id == 0))
		return;
	cl.has_wait_ms = 1;
	cl.wait_ms = (uint32_t)s->o->claim_wait_ms;
	if (s->o->lease_ms > 0) {
		cl.has_lease_ms = 1;
		cl.lease_ms = (uint32_t)s->o->lease_ms;
	}
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &cl;
	/* A claim resent after losing its answer keeps its request id, so a
	 * grant that happened meanwhile is replayed to us, not lost; it also
	 * keeps the shim it named. A new one names the first shim waiting. */
	if (s->claim_req_id != 0) {
		req.has_req_id = 1;
		req.req_id = s->claim_req_id;
	} else {
		s->claim_shim = 0;
		if (sup_ahead_fused(s) && (e = sup_ahead_first(s)) != NULL) {
			s->claim_shim = e->pid;
			s->claim_shim_id = e->id;
		}
	}
	if (s->claim_shim != 0) {
		msg_ident_to(&s->claim_shim_id, &id);
		cl.shim = &id;
	}
	if ((rc = rpc_send(s->claim_rpc, &req)) < 0) {
		log_warn("claim: cannot send: %s", strerror(-rc));
		s->claim_not_before = now + 1000;
		return;
	}
	if (req.has_req_id)
		s->claim_req_id = req.req_id;
	log_debug("claim %llu sent (%d of %d slots busy)", (unsigned long long)s->claim_req_id,
		  sup_runs_busy(s), s->slots);
	s->claim_inflight = 1;
	s->claim_sent_ms = now;
}

void
sup_claim_recv(struct sup *s)
{
	Berth__Reply *rep = NULL;
	int64_t now = clock_mono_ms();
	const char *reason;
	char desc[256];
	int rc;

	if (!s->claim_inflight)
		return;
	if ((rc = rpc_try_recv(s->claim_rpc, &rep)) == -EAGAIN) {
		/* Held far past its wait: the answer was lost. The same
		 * request id is sent again (sup_claim_send), so a grant made
		 * meanwhile is replayed, not lost. */
		if (now > s->claim_sent_ms + s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS) {
			log_warn("claim: no answer in %d ms, asking again",
				 s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS);
			s->claim_inflight = 0;
		}
		return;
	}
	s->claim_inflight = 0;
	if (rc < 0) {
		log_warn("claim: %s", strerror(-rc));
		s->claim_not_before = now + 1000;
		return;
	}
	s->claim_req_id = 0;
	if (msg_is_granted(rep) && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM) {
		pid_t shim = s->claim_shim;

		s->claim_shim = 0;
		sup_claim_granted(s, rep, shim);
	} else if ((reason = msg_denied_reason(rep)) != NULL) {
		sup_runs_slots(s, claim_fact_slots(rep));
		if (strcmp(reason, "nothing_due") == 0 || strcmp(reason, "paused") == 0) {
			/* paused: berth pause; the coordinator held the claim
			 * until berth resume or the end of its wait. */
			/* Normally the coordinator held the claim for its
			 * whole wait; one answered at once is not asked again
			 * at once, so the loop cannot spin. */
			if (now - s->claim_sent_ms < s->o->claim_wait_ms / 2)
				s->claim_not_before = now + 200;
		} else if (strcmp(reason, "slots_full") == 0) {
			/* The coordinator counts a run we already let go of;
			 * ask again at the next pass or the next settle. */
			s->claim_not_before = now + s->o->tick_ms;
		} else {
			msg_describe(rep, desc, sizeof(desc));
			log_info("claim %s", desc);
			s->claim_not_before = now + 1000;
		}
	} else {
		msg_describe(rep, desc, sizeof(desc));
		if (msg_reply_is_bug(rep)) {
			log_error(
				"bug: the coordinator refused our claim as malformed: %s; exiting "
				"for the launcher to restart us",
				desc);
			s->broken = 1;
		} else
			log_error("claim: %s", desc);
		s->claim_not_before = now + 1000;
	}
	/* Answered: the shim it named (if not taken by a grant) waits for
	 * the next claim. */
	s->claim_shim = 0;
	berth__reply__free_unpacked(rep, NULL);
}

void
sup_claim_then(struct sup *s)
{
	Berth__Reply *rep = s->then_rep;
	const Berth__Reply *a;
	pid_t shim = s->then_shim;
	size_t i;

	if (rep == NULL)
		return;
	s->then_rep = NULL;
	s->then_shim = 0;
	for (i = 0; i < rep->n_then; i++) {
		a = rep->then[i];
		if (msg_is_granted(a) &&
		    a->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM) {
			sup_claim_granted(s, a, shim);
		} else if (msg_denied_reason(a) != NULL) {
			/* Nothing due, or no slot: the long-poll claim asks
			 * next, with the shim that this one named. */
			sup_runs_slots(s, claim_fact_slots(a));
			log_debug("claim with the exit: %s", msg_denied_reason(a));
		} else {
			char desc[256];

			msg_describe(a, desc, sizeof(desc));
			log_warn("claim with the exit: %s", desc);
		}
	}
	berth__reply__free_unpacked(rep, NULL);
}

int64_t
sup_claim_deadline(struct sup *s)
{
	int64_t now = clock_mono_ms();

	if (s->claim_inflight)
		return s->claim_sent_ms + s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS;
	/* Waiting to send one: only when it may be sent then. */
	if (s->hello_done && s->claim_not_before > now &&
	    (sup_runs_busy(s) < s->slots || s->claim_req_id != 0))
		return s->claim_not_before;
	return INT64_MAX;
}

/*
 * On a graceful stop, the claim the coordinator may be holding for us must
 * not be granted after we are gone (the run would wait for recovery). It is
 * sent once more with the same request id and no wait: the coordinator
 * replaces the held copy and answers at once. A grant, then or earlier, is
 * abandoned: the job never ran, so no attempt is spent.
 */
void
sup_claim_withdraw(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Reply *rep = NULL;
	struct sup_run *r;
	int rc;

	if (s->claim_req_id == 0)
		return;
	cl.has_wait_ms = 1;
	cl.wait_ms = 0;
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &cl;
	req.has_req_id = 1;
	req.req_id = s->claim_req_id;
	s->claim_inflight = 0;
	if ((rc = rpc_call(s->claim_rpc, &req, &rep, 1000)) < 0) {
		log_info("stop: the held claim could not be withdrawn (%s)", strerror(-rc));
		s->claim_inflight = 1; /* a request may still be queued: see below */
		return;
	}
	s->claim_req_id = 0;
	if (msg_is_granted(rep) && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM &&
	    rep->granted->claim->run_id != NULL) {
		const Berth__ClaimGranted *g = rep->granted->claim;

		if ((r = sup_runs_new(s, g->run_id, g->ticket, g->alias, SUP_ABANDONING)) != NULL) {
			snprintf(r->reason, sizeof(r->reason), "supervisor stopping");
			log_info("run %s: claimed as we stop: abandon", sup_runs_name(r));
			sup_act_fire(s, r, SUP_EV_TICK);
		}
	}
	berth__reply__free_unpacked(rep, NULL);
}
