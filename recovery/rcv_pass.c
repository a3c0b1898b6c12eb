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
#include "exitrec.h"
#include "failpoint.h"
#include "log.h"
#include "rcv_decide.h"
#include "rcv_pass.h"
#include "rpc_pass.h"
#include "ring.h"
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

int
rcv_ident_from_msg(const Berth__Ident *m, struct ident *out)
{
	memset(out, 0, sizeof(*out));
	if (m == NULL || !m->has_pid || m->pid <= 0)
		return -1;
	if (m->boot_id != NULL)
		snprintf(out->boot_id, sizeof(out->boot_id), "%s", m->boot_id);
	out->pid = m->pid;
	out->start_time = m->start_time;
	out->pgid = m->has_pgid ? m->pgid : m->pid;
	return 0;
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
		if (rcv_ident_from_msg(a->ident, &id) < 0 || check(&id) != IDENT_MATCHES)
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
		if (rcv_ident_from_msg(a->ident, &id) < 0)
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

/* A failpoint before an effect: 0 to go on, -1 when the injected failure
 * (error or drop) means the request is not sent this pass. */
static int
failpoint(const char *name)
{
	switch (fp_hit(name)) {
	case FP_PASS:
		return 0;
	case FP_ERROR:
	case FP_DROP:
		log_warn("failpoint %s: request not sent", name);
		return -1;
	}
	return 0;
}

int
rcv_hello(struct rcv *r)
{
	return rpc_pass_hello(&r->rpc);
}

/* The exit facts and aftercare of one run, read from its directory. */
struct rcv_exit {
	int has_record;
	struct exit_record rec;
	int64_t output_bytes;
};

static void
read_exit(const char *run_dir, const char *run, struct rcv_exit *x)
{
	char path[4200];
	struct stat st;
	int rc;

	memset(x, 0, sizeof(*x));
	rc = exitrec_read(run_dir, &x->rec);
	if (rc == 0)
		x->has_record = 1;
	else if (rc != -ENOENT)
		/* The shim writes the record atomically, so a malformed one
		 * was damaged after the fact: it tells us nothing. */
		log_warn("run %s: exit record unreadable (%s): settling as if none", run,
			 strerror(-rc));
	snprintf(path, sizeof(path), "%s/output.log", run_dir);
	if (stat(path, &st) == 0)
		x->output_bytes = st.st_size;
}

/* Aftercare then settle. outcome NULL: the coordinator derives it. */
static int
settle(struct rcv *r, const Berth__Run *run, const struct rcv_exit *x, const char *outcome,
       const char *reason)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle s = BERTH__SETTLE__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc = -1;

	if (failpoint("recovery.before_settle") < 0)
		return -1;
	s.run_id = run->id;
	s.outcome = (char *)(outcome != NULL ? outcome : "");
	s.has_output_bytes = 1;
	s.output_bytes = x->output_bytes;
	/* The shim writes its record only after the job's output is closed:
	 * without one, the output may have been cut short. */
	s.has_capture_complete = 1;
	s.capture_complete = x->has_record;
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

/* The outcome of a run settled without an exit checkpoint, from its record:
 * what the coordinator would have derived. */
static const char *
outcome_of(const struct rcv_exit *x)
{
	if (!x->has_record)
		return "orphaned";
	if (x->rec.has_code && x->rec.code == 0 && !x->rec.has_signal)
		return "succeeded";
	return "failed";
}

static int
record_exit(struct rcv *r, const Berth__Run *run, const char *run_dir, int claimed)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT;
	Berth__Reply *rep;
	struct rcv_exit x;
	char desc[256];
	const char *state;
	int granted, rc;

	if (failpoint("recovery.before_record_exit") < 0)
		return -1;
	/* The shim is already judged gone, and it writes its record before
	 * it exits: reading now sees the final record or none at all. */
	read_exit(run_dir, run->alias, &x);
	re.run_id = run->id;
	re.has_has_record = 1;
	re.has_record = x.has_record;
	if (x.has_record) {
		if (x.rec.has_code) {
			re.has_exit_code = 1;
			re.exit_code = x.rec.code;
		}
		if (x.rec.has_signal) {
			re.has_signal = 1;
			re.signal = x.rec.signal;
		}
		re.has_ended_ms = 1;
		re.ended_ms = x.rec.ended_ms;
	}
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &re;
	if (call(r, &req, &rep, "record_exit", run->alias) < 0)
		return -1;
	granted = msg_is_granted(rep);
	msg_describe(rep, desc, sizeof(desc));
	state = msg_fact(rep, "state");
	if (!x.has_record)
		log_info("run %s: record_exit (no exit record): %s", run->alias, desc);
	else
		log_info("run %s: record_exit (%s %d): %s", run->alias,
			 x.rec.has_signal ? "signal" : "exit code",
			 x.rec.has_signal ? x.rec.signal : x.rec.code, desc);
	/* Claimed with a started marker: the store never recorded the start
	 * it granted, so no checkpoint can be taken. The job executed, so it
	 * is settled from its record instead of being run again for free. */
	rc = 0;
	if (!granted && claimed && state != NULL && strcmp(state, "claimed") == 0)
		rc = settle(r, run, &x, outcome_of(&x), "started marker without a recorded start");
	else if (granted)
		rc = settle(r, run, &x, NULL, NULL);
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

	if (failpoint("recovery.before_readopt") < 0)
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

	if (failpoint("recovery.before_abandon") < 0)
		return -1;
	ab.run_id = run->id;
	ab.reason = run->state != NULL && strcmp(run->state, "running") == 0
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
	 int64_t now_ms, const char *live_sup, struct rcv_facts *f)
{
	const struct rcv_pending *p;
	struct ident shim;
	char path[4200];
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->state = rcv_state_parse(run->state);
	f->has_lease = run->has_lease && run->has_lease_expires_ms;
	f->lease_expires_ms = run->lease_expires_ms;
	f->owner_is_self = run->owner != NULL &&
			   strcmp(run->owner, rpc_client_instance(r->rpc.client)) == 0;
	f->owner_alive = rcv_instance_alive(scan, run->owner, ident_check);
	if (rcv_ident_from_msg(run->shim, &shim) == 0) {
		f->has_shim = 1;
		f->shim = ident_check(&shim);
	}
	snprintf(path, sizeof(path), "%s/started", run_dir);
	if (stat(path, &st) == 0) {
		f->started = 1;
		f->started_age_ms =
		    now_ms - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
	}
	/* Read after the shim was judged: a gone shim writes nothing more. */
	snprintf(path, sizeof(path), "%s/exit", run_dir);
	f->has_exit_record = stat(path, &st) == 0;
	p = pending_find(r->pending, r->npending, run->id);
	f->confirmed = p != NULL && clock_mono_ms() - p->first_ms >= r->opts.confirm_ms;
	f->have_supervisor = live_sup != NULL;
}

int
rcv_pass(struct rcv *r, struct rcv_stats *st)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	Berth__Reply *rep = NULL;
	const Berth__ScanReply *scan;
	struct rcv_pending *next = NULL;
	const struct rcv_pending *old;
	int nnext = 0, rc = -1;
	const char *live_sup;
	char run_dir[4096], desc[256];
	int64_t now_ms;
	size_t i;

	memset(st, 0, sizeof(*st));
	r->rpc.unreachable = 0;
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	if (call(r, &req, &rep, "scan", "") < 0)
		return -1;
	if (!msg_is_granted(rep) || rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SCAN) {
		msg_describe(rep, desc, sizeof(desc));
		log_error("scan: unexpected reply: %s", desc);
		goto out;
	}
	scan = rep->granted->scan;
	now_ms = scan->has_now_ms ? scan->now_ms : clock_wall_ms();
	live_sup = rcv_live_supervisor(scan, ident_check);
	if (scan->n_runs > 0 && (next = calloc(scan->n_runs, sizeof(*next))) == NULL) {
		log_error("recovery: out of memory");
		goto out;
	}

	for (i = 0; i < scan->n_runs; i++) {
		const Berth__Run *run = scan->runs[i];
		struct rcv_facts f;
		enum rcv_action a;

		if (run->id == NULL || run->alias == NULL || run->settled_ms > 0)
			continue;
		if (rcv_state_parse(run->state) == RCV_ST_OTHER)
			continue;
		st->scanned++;
		if (home_run_dir(r->opts.home, run->id, run_dir, sizeof(run_dir)) < 0)
			continue;
		facts_of(r, scan, run, run_dir, now_ms, live_sup, &f);
		a = rcv_decide(&f, now_ms);
		/* What recovery concluded, for `berth trace` (observation). */
		if (a != RCV_NONE && a != RCV_WAIT && a != RCV_CONFIRM)
			ring_global_emit(RING_STATE, NULL, run->ticket, run->id, rcv_action_name(a),
					  f.has_shim ? ident_status_name(f.shim) : "no shim", 0, 0,
					  f.owner_alive ? "owner alive" : "owner gone");
		if (a != RCV_NONE)
			log_debug("run %s: %s, owner %s%s, shim %s, lease %s: %s", run->alias,
				  run->state, run->owner != NULL ? run->owner : "-",
				  f.owner_alive ? " alive" : " gone",
				  f.has_shim ? ident_status_name(f.shim) : "none",
				  f.has_lease && f.lease_expires_ms > now_ms ? "held" : "expired",
				  rcv_action_name(a));
		switch (a) {
		case RCV_NONE:
			break;
		case RCV_WAIT:
			st->waiting++;
			break;
		case RCV_CONFIRM:
			/* Keep the time of the first sighting, so the verdict
			 * is confirmed once it has held long enough. */
			old = pending_find(r->pending, r->npending, run->id);
			snprintf(next[nnext].run, sizeof(next[nnext].run), "%s", run->id);
			next[nnext].first_ms = old != NULL ? old->first_ms : clock_mono_ms();
			nnext++;
			st->pending++;
			break;
		case RCV_ABANDON:
			if (abandon(r, run) > 0)
				st->acted++;
			break;
		case RCV_READOPT:
			if (readopt(r, run, live_sup) > 0)
				st->acted++;
			break;
		case RCV_RECORD_EXIT:
			if (record_exit(r, run, run_dir, f.state == RCV_ST_CLAIMED) > 0)
				st->acted++;
			break;
		case RCV_SETTLE: {
			struct rcv_exit x;

			read_exit(run_dir, run->alias, &x);
			if (settle(r, run, &x, NULL, NULL) >= 0)
				st->acted++;
			break;
		}
		}
	}
	free(r->pending);
	r->pending = next;
	r->npending = nnext;
	next = NULL;
	rc = 0;
out:
	free(next);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}
