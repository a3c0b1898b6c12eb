/*
 * One recovery pass: scan -> facts -> rcv_decide -> act (DESIGN §7).
 *
 * Every effect goes through the coordinator, which arbitrates it against
 * whatever the owner may be doing at the same moment: recovery never assumes
 * it is alone. A denial means someone else got there first; recovery then
 * does nothing more for that run in this pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "aftercare.h"
#include "failpoint.h"
#include "log.h"
#include "msg.h"
#include "rcv_decide.h"
#include "rcv_pass.h"
#include "rpc_pass.h"
#include "ring.h"
#include "states.h"
#include "util.h"

/* A run waiting for a confirming second look (RCV_CONFIRM). */
struct rcv_pending {
	char run[48];
	int64_t first_ms; /* monotonic */
};

struct rcv {
	struct rcv_opts opts;
	struct rpc_pass rpc;
	struct rcv_pending *pending;
	int npending;
};

struct rcv *
rcv_new(const struct rcv_opts *o, struct rpc_client *c)
{
	struct rcv *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("recovery: out of memory");
		return NULL;
	}
	r->opts = *o;
	if (r->opts.rpc_timeout_ms <= 0)
		r->opts.rpc_timeout_ms = 10000;
	if (r->opts.confirm_ms <= 0)
		r->opts.confirm_ms = 250;
	r->rpc.client = c;
	r->rpc.timeout_ms = r->opts.rpc_timeout_ms;
	return r;
}

void
rcv_free(struct rcv *r)
{
	if (r == NULL)
		return;
	free(r->pending);
	free(r);
}

const char *
rcv_live_supervisor(const Berth__ScanReply *scan, rcv_check_fn check)
{
	const Berth__Actor *best = NULL;
	struct ident id;
	size_t i;

	for (i = 0; i < scan->n_actors; i++) {
		const Berth__Actor *a = scan->actors[i];

		if (a->actor == NULL || strcmp(a->actor, "supervisor") != 0)
			continue;
		if (a->instance == NULL || a->instance[0] == '\0')
			continue;
		if (best != NULL && a->seen_ms <= best->seen_ms)
			continue;
		/* Only a supervisor we can see alive takes a run over: an
		 * unverifiable one might be a stranger on a reused pid. */
		if (msg_ident_from(a->ident, &id) < 0 || check(&id) != IDENT_MATCHES)
			continue;
		best = a;
	}
	return best != NULL ? best->instance : NULL;
}

int
rcv_instance_alive(const Berth__ScanReply *scan, const char *instance, rcv_check_fn check)
{
	struct ident id;
	size_t i;

	if (instance == NULL || instance[0] == '\0')
		return 0;
	for (i = 0; i < scan->n_actors; i++) {
		const Berth__Actor *a = scan->actors[i];

		if (a->instance == NULL || strcmp(a->instance, instance) != 0)
			continue;
		if (msg_ident_from(a->ident, &id) < 0)
			return 0;
		return check(&id) != IDENT_GONE;
	}
	/* An owner that never said hello cannot be judged alive. */
	return 0;
}

/* Sends req; 0 with *rep set unless there was no answer or an error reply,
 * both logged. Recovery expects no error reply to any of its requests. */
static int
call(struct rcv *r, Berth__Request *req, Berth__Reply **rep, const char *verb, const char *run)
{
	char buf[256];

	if (rpc_pass_call(&r->rpc, req, rep, verb, run) < 0)
		return -1;
	if ((*rep)->result_case == BERTH__REPLY__RESULT_ERROR) {
		msg_describe(*rep, buf, sizeof(buf));
		log_error("%s %s: %s", verb, run, buf);
		berth__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		return -1;
	}
	return 0;
}

int
rcv_hello(struct rcv *r)
{
	return rpc_pass_hello(&r->rpc);
}

/* Aftercare then settle. outcome NULL: the coordinator derives it. */
static int
settle(struct rcv *r, const Berth__Run *run, const struct aftercare *a, const char *outcome,
       const char *reason)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle s = BERTH__SETTLE__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc = -1;

	if (fp_skip("recovery.before_settle", "settle not sent"))
		return -1;
	s.run_id = run->id;
	s.outcome = (char *)(outcome != NULL ? outcome : "");
	msg_settle_aftercare(&s, a);
	if (reason != NULL)
		s.reason = (char *)reason;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &s;
	if (call(r, &req, &rep, "settle", run->alias) < 0)
		return -1;
	msg_describe(rep, desc, sizeof(desc));
	if (msg_is_granted(rep) && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_SETTLE) {
		const Berth__SettleGranted *g = rep->granted->settle;

		log_info("run %s: settled %s%s (ticket %s)", run->alias,
			 g->outcome != NULL ? g->outcome : "?",
			 g->applied ? "" : ", already settled by another",
			 g->ticket_state != NULL ? g->ticket_state : "?");
		rc = g->applied ? 1 : 0;
	} else
		log_info("run %s: settle: %s", run->alias, desc);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

/* The exit checkpoint, then aftercare and settle when it is ours. a is
 * what the run left, read after its shim was judged gone: a gone shim
 * writes nothing more, so it is the final record or none at all. */
static int
record_exit(struct rcv *r, const Berth__Run *run, const struct aftercare *a, int claimed)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT;
	Berth__Reply *rep;
	struct run_end end;
	char desc[256];
	const char *state;
	int granted, rc;

	if (fp_skip("recovery.before_record_exit", "record_exit not sent"))
		return -1;
	msg_record_exit(&re, run->id, a);
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &re;
	if (call(r, &req, &rep, "record_exit", run->alias) < 0)
		return -1;
	granted = msg_is_granted(rep);
	msg_describe(rep, desc, sizeof(desc));
	state = msg_fact(rep, "state");
	if (!a->has_record)
		log_info("run %s: record_exit (no exit record): %s", run->alias, desc);
	else
		log_info("run %s: record_exit (%s %d): %s", run->alias,
			 a->rec.has_signal ? "signal" : "exit code",
			 a->rec.has_signal ? a->rec.signal : a->rec.code, desc);
	/* Claimed with a started marker: the store never recorded the start
	 * it granted, so no checkpoint can be taken. The job executed, so it
	 * is settled from its record, with the outcome the coordinator would
	 * have derived from a checkpoint (the run is not `claimed` for that
	 * rule: it ran), instead of being run again for free. */
	rc = 0;
	if (!granted && claimed && run_state_parse(state) == RUN_CLAIMED) {
		memset(&end, 0, sizeof(end));
		end.state = RUN_RUNNING;
		end.has_record = a->has_record;
		end.has_code = a->rec.has_code;
		end.code = a->rec.code;
		end.has_signal = a->rec.has_signal;
		end.signal = a->rec.signal;
		rc = settle(r, run, a, run_state_name(run_outcome(&end)),
			    "started marker without a recorded start");
	} else if (granted)
		rc = settle(r, run, a, NULL, NULL);
	/* Denied otherwise: the winner settles, and we do nothing more. */
	berth__reply__free_unpacked(rep, NULL);
	return rc < 0 ? -1 : 1;
}

static int
readopt(struct rcv *r, const Berth__Run *run, const char *new_owner)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Readopt ro = BERTH__READOPT__INIT;
	Berth__Reply *rep;
	char desc[256];

	if (fp_skip("recovery.before_readopt", "readopt not sent"))
		return -1;
	ro.ticket = run->ticket;
	ro.run_id = run->id;
	if (r->opts.lease_ms > 0) {
		ro.has_lease_ms = 1;
		ro.lease_ms = r->opts.lease_ms;
	}
	ro.new_owner = (char *)new_owner;
	req.verb_case = BERTH__REQUEST__VERB_READOPT;
	req.readopt = &ro;
	if (call(r, &req, &rep, "readopt", run->alias) < 0)
		return -1;
	msg_describe(rep, desc, sizeof(desc));
	log_info("run %s: job alive, readopt for supervisor %s: %s", run->alias, new_owner, desc);
	berth__reply__free_unpacked(rep, NULL);
	return 1;
}

static int
abandon(struct rcv *r, const Berth__Run *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Abandon ab = BERTH__ABANDON__INIT;
	Berth__Reply *rep;
	char desc[256];

	if (fp_skip("recovery.before_abandon", "abandon not sent"))
		return -1;
	ab.run_id = run->id;
	ab.reason = run_state_parse(run->state) == RUN_RUNNING
			    ? "shim gone before the job started"
			    : "owner gone before the job started";
	req.verb_case = BERTH__REQUEST__VERB_ABANDON;
	req.abandon = &ab;
	if (call(r, &req, &rep, "abandon", run->alias) < 0)
		return -1;
	msg_describe(rep, desc, sizeof(desc));
	log_info("run %s: never started (%s): abandon: %s", run->alias, ab.reason, desc);
	berth__reply__free_unpacked(rep, NULL);
	return 1;
}

static const struct rcv_pending *
pending_find(const struct rcv_pending *p, int n, const char *run)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].run, run) == 0)
			return &p[i];
	return NULL;
}

/* Gathers the facts of one run that the scan alone does not carry. */
static void
facts_of(struct rcv *r, const Berth__ScanReply *scan, const Berth__Run *run, const char *run_dir,
	 int64_t now_ms, const char *live_sup, struct rcv_facts *f, struct aftercare *a)
{
	const struct rcv_pending *p;
	const char *owner;
	struct ident shim;

	memset(f, 0, sizeof(*f));
	f->state = rcv_state_parse(run->state);
	f->has_lease = run->has_lease && run->has_lease_expires_ms;
	f->lease_expires_ms = run->lease_expires_ms;
	/* An aftercare belongs to whoever was granted its exit checkpoint
	 * (DESIGN §4): that is the owner judged, for that state. */
	owner = run->owner;
	if (f->state == RCV_ST_AFTERCARE && run->aftercare_owner != NULL &&
	    run->aftercare_owner[0] != '\0')
		owner = run->aftercare_owner;
	f->owner_is_self = owner != NULL && strcmp(owner, rpc_client_instance(r->rpc.client)) == 0;
	f->owner_alive = rcv_instance_alive(scan, owner, ident_check);
	if (msg_ident_from(run->shim, &shim) == 0) {
		f->has_shim = 1;
		f->shim = ident_check(&shim);
	}
	/* Read after the shim was judged: a gone shim writes nothing more, so
	 * this one reading is what the actions below act on too. */
	aftercare_read(run_dir, a);
	f->started = a->started;
	f->started_age_ms = now_ms - a->started_ms;
	f->has_exit_record = a->exit_present;
	f->unreadable = a->unreadable != 0;
	p = pending_find(r->pending, r->npending, run->id);
	f->confirmed = p != NULL && clock_mono_ms() - p->first_ms >= r->opts.confirm_ms;
	f->have_supervisor = live_sup != NULL;
}

/* What one pass carries from run to run: the scan's judgements and what
 * the pass has done so far. */
struct rcv_walk {
	const Berth__ScanReply *scan;
	int64_t now_ms;
	const char *live_sup;
	struct rcv_stats *st;
	struct rcv_pending *next; /* the runs to confirm on a later pass */
	int nnext;
};

/* Observation: what recovery concluded of a run, in the ring (for `berth
 * trace`) and, at debug level, in the log. */
static void
say_verdict(const Berth__Run *run, const struct rcv_facts *f, enum rcv_action a, int64_t now_ms)
{
	if (a != RCV_NONE && a != RCV_WAIT && a != RCV_CONFIRM)
		ring_global_emit(RING_STATE, NULL, run->ticket, run->id, rcv_action_name(a),
				 f->has_shim ? ident_status_name(f->shim) : "no shim", 0, 0,
				 f->owner_alive ? "owner alive" : "owner gone");
	if (a != RCV_NONE)
		log_debug("run %s: %s, owner %s%s, shim %s, lease %s: %s", run->alias, run->state,
			  run->owner != NULL ? run->owner : "-",
			  f->owner_alive ? " alive" : " gone",
			  f->has_shim ? ident_status_name(f->shim) : "none",
			  f->has_lease && f->lease_expires_ms > now_ms ? "valid" : "expired",
			  rcv_action_name(a));
}

/* One nonterminal run of the scan: facts, verdict, act. */
static void
rcv_run(struct rcv *r, struct rcv_walk *w, const Berth__Run *run)
{
	const struct rcv_pending *old;
	struct aftercare after;
	struct rcv_facts f;
	enum rcv_action a;
	char run_dir[4096];
	int acted = 0;

	if (home_run_dir(r->opts.home, run->id, run_dir, sizeof(run_dir)) < 0)
		return;
	facts_of(r, w->scan, run, run_dir, w->now_ms, w->live_sup, &f, &after);
	a = rcv_decide(&f, w->now_ms);
	say_verdict(run, &f, a, w->now_ms);
	switch (a) {
	case RCV_NONE: break;
	case RCV_WAIT: w->st->waiting++; break;
	case RCV_CONFIRM:
		/* Keep the time of the first sighting, so the verdict is
		 * confirmed once it has held long enough. */
		old = pending_find(r->pending, r->npending, run->id);
		snprintf(w->next[w->nnext].run, sizeof(w->next[w->nnext].run), "%s", run->id);
		w->next[w->nnext].first_ms = old != NULL ? old->first_ms : clock_mono_ms();
		w->nnext++;
		w->st->pending++;
		break;
	case RCV_ABANDON: acted = abandon(r, run) > 0; break;
	case RCV_READOPT: acted = readopt(r, run, w->live_sup) > 0; break;
	case RCV_RECORD_EXIT:
		acted = record_exit(r, run, &after, f.state == RCV_ST_CLAIMED) > 0;
		break;
	case RCV_SETTLE: acted = settle(r, run, &after, NULL, NULL) >= 0; break;
	}
	w->st->acted += acted;
}

/* Fences what another host left (DESIGN §13), from the scan's hosts: a
 * host whose lease lapsed by the store's clock, and that was not declared
 * lost since it last renewed, is declared lost (host_lost, decided once
 * per epoch whoever asks); every fenced run, of any host (the next pass
 * sees those of a host just declared lost), ends lost. */
static void
rcv_hosts(struct rcv *r, const Berth__ScanReply *scan, struct rcv_stats *st)
{
	Berth__Reply *one = NULL;
	char desc[256];
	size_t i, j;

	for (i = 0; i < scan->n_hosts; i++) {
		const Berth__Host *h = scan->hosts[i];
		Berth__Request lq = BERTH__REQUEST__INIT;
		Berth__HostLost hl = BERTH__HOST_LOST__INIT;

		if (h->self || !h->lapsed || (h->has_lost_ms && h->lost_ms >= h->renewed_ms))
			continue;
		hl.host = h->host;
		hl.has_epoch = 1;
		hl.epoch = h->epoch;
		lq.verb_case = BERTH__REQUEST__VERB_HOST_LOST;
		lq.host_lost = &hl;
		if (call(r, &lq, &one, "host_lost", h->host) < 0)
			continue;
		msg_describe(one, desc, sizeof desc);
		log_warn("host %s: its lease lapsed: host_lost: %s", h->host, desc);
		st->acted += msg_is_granted(one);
		berth__reply__free_unpacked(one, NULL);
		one = NULL;
	}
	for (i = 0; i < scan->n_hosts; i++) {
		for (j = 0; j < scan->hosts[i]->n_stale_runs; j++) {
			Berth__Request lq = BERTH__REQUEST__INIT;
			Berth__Lose lo = BERTH__LOSE__INIT;

			lo.run_id = scan->hosts[i]->stale_runs[j];
			lq.verb_case = BERTH__REQUEST__VERB_LOSE;
			lq.lose = &lo;
			if (call(r, &lq, &one, "lose", lo.run_id) < 0)
				continue;
			msg_describe(one, desc, sizeof desc);
			log_warn("run %s of lost host %s: lose: %s", lo.run_id,
				 scan->hosts[i]->host, desc);
			st->acted += msg_is_granted(one);
			berth__reply__free_unpacked(one, NULL);
			one = NULL;
		}
	}
}

int
rcv_pass(struct rcv *r, struct rcv_stats *st)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	Berth__Reply *rep = NULL;
	struct rcv_walk w = { .st = st };
	char desc[256];
	int rc = -1;
	size_t i;

	memset(st, 0, sizeof(*st));
	r->rpc.unreachable = 0;
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	if (call(r, &req, &rep, "scan", "") < 0)
		return r->rpc.broken ? -2 : -1;
	if (!msg_is_granted(rep) || rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SCAN) {
		msg_describe(rep, desc, sizeof(desc));
		log_error("scan: unexpected reply: %s", desc);
		goto out;
	}
	w.scan = rep->granted->scan;
	w.now_ms = w.scan->has_now_ms ? w.scan->now_ms : clock_wall_ms();
	w.live_sup = rcv_live_supervisor(w.scan, ident_check);
	if (w.scan->n_runs > 0 && (w.next = calloc(w.scan->n_runs, sizeof(*w.next))) == NULL) {
		log_error("recovery: out of memory");
		goto out;
	}
	for (i = 0; i < w.scan->n_runs; i++) {
		const Berth__Run *run = w.scan->runs[i];

		if (run->id == NULL || run->alias == NULL || run->settled_ms > 0 ||
		    rcv_state_parse(run->state) == RCV_ST_OTHER)
			continue;
		st->scanned++;
		rcv_run(r, &w, run);
	}
	free(r->pending);
	r->pending = w.next;
	r->npending = w.nnext;
	w.next = NULL;
	rcv_hosts(r, w.scan, st);
	rc = r->rpc.broken ? -2 : 0;
out:
	free(w.next);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}
