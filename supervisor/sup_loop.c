#include <sys/queue.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "exitrec.h"
#include "failpoint.h"
#include "ident.h"
#include "log.h"
#include "observe.h"
#include "rpc.h"
#include "rpc_observe.h"
#include "sup_loop.h"
#include "sup_run.h"
#include "sup_spawn.h"
#include "ring.h"
#include "util.h"

extern char **environ;

/* How long one synchronous call may ride out an absent coordinator before
 * the loop moves on; an unanswered request is resent (same request id) on
 * the next reconcile pass. */
#define SUP_RPC_TIMEOUT_MS 3000
/* A claim the coordinator holds longer than its wait plus this is resent. */
#define SUP_CLAIM_GRACE_MS 10000

struct sup_run {
	TAILQ_ENTRY(sup_run) entry;
	char id[64];
	char ticket[32];
	char alias[48];
	enum sup_state state;
	pid_t pid;   /* our child, the shim; -1 once reaped or when adopted */
	int pidfd;   /* an adopted shim's pidfd; -1 when none */
	int adopted; /* handed to us by recovery: watched, not waited for */
	int go_fd;   /* write end of the shim's go pipe; -1 once used */
	int have_ident;
	struct ident shim;
	/* The request still owed an answer, resent with the same id so the
	 * coordinator replays instead of deciding twice. */
	uint64_t req_id;
	int req_verb;
	char outcome[16]; /* settle: "" lets the coordinator derive it */
	char reason[PATH_MAX + 512];
};

TAILQ_HEAD(sup_runs, sup_run);

struct sup {
	const struct sup_opts *o;
	/* One client, so that every request of this supervisor carries one
	 * instance: the one that said hello, claims, and so owns our runs. */
	struct rpc_client *rpc;
	const char *instance;
	char url[PATH_MAX + 16];
	char shim_path[PATH_MAX];
	const char *shim_failpoints;
	int sigfd;
	int hello_done;
	int stopping;
	int answered; /* the last call got an answer: the coordinator is there */
	int claim_inflight;
	uint64_t claim_req_id;
	int64_t claim_sent_ms;
	int64_t claim_not_before;
	int64_t next_tick;
	struct sup_runs runs;
};

static void sup_fire(struct sup *s, struct sup_run *r, enum sup_event ev);

/* The client left open at exit (see the end of sup_loop_run). */
static struct rpc_client *sup_unclosed;

static const char *
sup_name(const struct sup_run *r)
{
	return r->alias[0] ? r->alias : r->id;
}

static struct sup_run *
sup_find_id(struct sup *s, const char *id)
{
	struct sup_run *r;

	TAILQ_FOREACH(r, &s->runs, entry)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

static struct sup_run *
sup_find_pid(struct sup *s, pid_t pid)
{
	struct sup_run *r;

	TAILQ_FOREACH(r, &s->runs, entry)
		if (r->pid == pid)
			return r;
	return NULL;
}

static int
sup_busy(struct sup *s)
{
	struct sup_run *r;
	int n = 0;

	TAILQ_FOREACH(r, &s->runs, entry)
		n += sup_run_busy(r->state);
	return n;
}

static struct sup_run *
sup_new(struct sup *s, const char *id, const char *ticket, const char *alias,
	enum sup_state state)
{
	struct sup_run *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("run %s: out of memory", id);
		return NULL;
	}
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->ticket, sizeof(r->ticket), "%s", ticket ? ticket : "");
	snprintf(r->alias, sizeof(r->alias), "%s", alias ? alias : "");
	r->state = state;
	r->pid = -1;
	r->pidfd = -1;
	r->go_fd = -1;
	TAILQ_INSERT_TAIL(&s->runs, r, entry);
	return r;
}

static void
sup_forget(struct sup *s, struct sup_run *r)
{
	TAILQ_REMOVE(&s->runs, r, entry);
	if (r->go_fd != -1)
		close(r->go_fd);
	if (r->pidfd != -1)
		close(r->pidfd);
	free(r);
	/* A slot is free again; a coordinator that said slots_full may
	 * agree now. */
	s->claim_not_before = 0;
}

static void
sup_free_all(struct sup *s)
{
	struct sup_run *r;

	while ((r = TAILQ_FIRST(&s->runs)) != NULL) {
		TAILQ_REMOVE(&s->runs, r, entry);
		if (r->go_fd != -1)
			close(r->go_fd);
		if (r->pidfd != -1)
			close(r->pidfd);
		free(r);
	}
}

/* ------------------------------------------------------------ rpc */

enum { SUP_NOANSWER = -1, SUP_DENIED = 0, SUP_GRANTED = 1 };

/*
 * A synchronous call on the client abandons the claim the coordinator may be
 * holding for us (one request in flight per client). The claim is sent
 * again afterwards with the same request id: the coordinator replaces the
 * held copy, and a grant that happened in between is replayed from its
 * stored reply, never lost and never decided twice.
 */
static void
sup_claim_interrupt(struct sup *s)
{
	if (s->claim_inflight) {
		s->claim_inflight = 0;
		s->claim_not_before = 0;
	}
}

/*
 * One synchronous call on behalf of run r (may be NULL). Returns
 * SUP_GRANTED or SUP_DENIED with *rep set, or SUP_NOANSWER (logged) when the
 * call must be tried again later. An error reply that retrying cannot cure
 * (the request itself is wrong) counts as a denial: it is a bug, logged
 * loudly, and the run must not loop on it forever.
 */
static int
sup_call(struct sup *s, struct sup_run *r, Berth__Request *req, Berth__Reply **rep,
	 const char *verb)
{
	char desc[256];
	int rc;

	*rep = NULL;
	if (r != NULL && r->req_id != 0 && r->req_verb == (int)req->verb_case) {
		req->has_req_id = 1;
		req->req_id = r->req_id;
	}
	sup_claim_interrupt(s);
	rc = rpc_call(s->rpc, req, rep, SUP_RPC_TIMEOUT_MS);
	if (rc < 0) {
		s->answered = 0;
		log_warn("run %s: %s: no answer from the coordinator (%s)",
			 r ? sup_name(r) : "-", verb, strerror(-rc));
		if (r != NULL && req->has_req_id) {
			r->req_id = req->req_id;
			r->req_verb = (int)req->verb_case;
		}
		return SUP_NOANSWER;
	}
	s->answered = 1;
	if (r != NULL)
		r->req_id = 0;
	if ((*rep)->result_case == BERTH__REPLY__RESULT_ERROR) {
		Berth__ErrorCode code = (*rep)->error ? (*rep)->error->code : 0;

		msg_describe(*rep, desc, sizeof(desc));
		if (code == BERTH__ERROR_CODE__ERR_STORAGE || code == BERTH__ERROR_CODE__ERR_BUSY) {
			log_warn("run %s: %s: %s", r ? sup_name(r) : "-", verb, desc);
			berth__reply__free_unpacked(*rep, NULL);
			*rep = NULL;
			return SUP_NOANSWER;
		}
		log_error("run %s: %s refused as malformed: %s", r ? sup_name(r) : "-", verb, desc);
		return SUP_DENIED;
	}
	return msg_is_granted(*rep) ? SUP_GRANTED : SUP_DENIED;
}

static void
sup_reply_free(Berth__Reply *rep)
{
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
}

static void
sup_ident_to_proto(const struct ident *id, Berth__Ident *p, char *boot)
{
	snprintf(boot, 40, "%s", id->boot_id);
	p->boot_id = boot;
	p->has_pid = 1;
	p->pid = id->pid;
	p->has_start_time = 1;
	p->start_time = id->start_time;
	p->has_pgid = 1;
	p->pgid = id->pgid;
}

static void
sup_ident_from_proto(const Berth__Ident *p, struct ident *id)
{
	memset(id, 0, sizeof(*id));
	if (p == NULL)
		return;
	snprintf(id->boot_id, sizeof(id->boot_id), "%s", p->boot_id ? p->boot_id : "");
	id->pid = p->pid;
	id->start_time = p->start_time;
	id->pgid = p->pgid;
}

/* ------------------------------------------------------------ run files */

static int
sup_run_path(struct sup *s, struct sup_run *r, const char *file, char *buf, size_t n)
{
	char dir[PATH_MAX];

	if (home_run_dir(s->o->home, r->id, dir, sizeof(dir)) < 0)
		return -1;
	if ((size_t)snprintf(buf, n, "%s%s%s", dir, file ? "/" : "", file ? file : "") >= n)
		return -1;
	return 0;
}

/* The shim's spawn_error line, if it wrote one: the run could not be
 * executed, so it settles failed with that reason. */
static int
sup_read_spawn_error(struct sup *s, struct sup_run *r)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	if (sup_run_path(s, r, "spawn_error", path, sizeof(path)) == -1)
		return 0;
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(r->reason, 1, sizeof(r->reason) - 1, f);
	fclose(f);
	r->reason[n] = '\0';
	while (n > 0 && (r->reason[n - 1] == '\n' || r->reason[n - 1] == '\r'))
		r->reason[--n] = '\0';
	snprintf(r->outcome, sizeof(r->outcome), "failed");
	return 1;
}

/*
 * The shim is gone: what does it leave? An exit record, a spawn error or a
 * started marker all mean the job was (or was tried to be) executed, and the
 * exit is checkpointed. None of them means the shim died before it forked the
 * job, so nothing executed and the run is abandoned (no attempt spent).
 */
static void
sup_gone(struct sup *s, struct sup_run *r)
{
	struct exit_record rec;
	char dir[PATH_MAX];
	enum sup_event ev = SUP_EV_GONE_UNSTARTED;

	if (sup_run_path(s, r, NULL, dir, sizeof(dir)) == 0 &&
	    (exitrec_read(dir, &rec) == 0 || sup_read_spawn_error(s, r) ||
	     exitrec_started(dir) == 1))
		ev = SUP_EV_GONE;
	sup_fire(s, r, ev);
}

/* ------------------------------------------------------------ actions */

static enum sup_event
sup_act_start(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Start st = BERTH__START__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep;
	char boot[40], desc[256];
	int rc;

	if (fp_hit("supervisor.after_spawn") != FP_PASS) {
		log_warn("run %s: failpoint supervisor.after_spawn: start not sent", sup_name(r));
		return SUP_EV_START_DENIED;
	}
	if ((rc = ident_read(r->pid, &r->shim)) < 0) {
		log_error("run %s: cannot read the shim's identity (pid %d): %s", sup_name(r),
			  (int)r->pid, strerror(-rc));
		return SUP_EV_START_DENIED;
	}
	/* Spawned as a session leader, the shim leads its own group. */
	r->shim.pgid = r->pid;
	r->have_ident = 1;
	sup_ident_to_proto(&r->shim, &id, boot);
	st.run_id = r->id;
	st.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_START;
	req.start = &st;
	if (fp_hit("supervisor.before_start") != FP_PASS) {
		log_warn("run %s: failpoint supervisor.before_start: start not sent", sup_name(r));
		return SUP_EV_START_DENIED;
	}
	rc = sup_call(s, NULL, &req, &rep, "start");
	if (rc == SUP_GRANTED) {
		sup_reply_free(rep);
		/* Recorded running but not yet told to go: a failure here
		 * leaves a job that never executed, which is abandoned. */
		if (fp_hit("supervisor.after_start") != FP_PASS) {
			log_warn("run %s: failpoint supervisor.after_start: no go", sup_name(r));
			return SUP_EV_START_DENIED;
		}
		return SUP_EV_START_GRANTED;
	}
	if (rc == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_warn("run %s: start %s", sup_name(r), desc);
	}
	sup_reply_free(rep);
	/* No answer is treated as a denial: abandon is allowed whether or not
	 * the start was applied, and the shim never got its go. */
	return SUP_EV_START_DENIED;
}

static enum sup_event
sup_act_go(struct sup *s, struct sup_run *r)
{
	/* If the shim already died, the write fails (EPIPE, ignored as a
	 * signal) and its reaping tells what it left. */
	if (write(r->go_fd, "g", 1) != 1)
		log_warn("run %s: go to shim %d: %s", sup_name(r), (int)r->pid, strerror(errno));
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
	rc = sup_call(s, r, &req, &rep, "abandon");
	sup_reply_free(rep);
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
			log_error("run %s: kill shim group %d: %s", sup_name(r), (int)r->shim.pgid,
				  strerror(-rc));
	} else if (r->pid > 0 && kill(r->pid, SIGKILL) == -1 && errno != ESRCH) {
		log_error("run %s: kill shim %d: %s", sup_name(r), (int)r->pid, strerror(errno));
	}
	if (r->go_fd != -1) {
		close(r->go_fd);
		r->go_fd = -1;
	}
	snprintf(r->reason, sizeof(r->reason), "start denied");
	return sup_act_abandon(s, r);
}

static enum sup_event
sup_act_record_exit(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT;
	struct exit_record rec;
	Berth__Reply *rep;
	char dir[PATH_MAX], desc[256];
	int rc;

	if (fp_hit("supervisor.before_record_exit") != FP_PASS) {
		log_warn("run %s: failpoint supervisor.before_record_exit: not sent", sup_name(r));
		return SUP_NEVENTS;
	}
	re.run_id = r->id;
	if (sup_run_path(s, r, NULL, dir, sizeof(dir)) == 0 && exitrec_read(dir, &rec) == 0) {
		re.has_has_record = 1;
		re.has_record = 1;
		if (rec.has_code) {
			re.has_exit_code = 1;
			re.exit_code = rec.code;
		}
		if (rec.has_signal) {
			re.has_signal = 1;
			re.signal = rec.signal;
		}
		re.has_ended_ms = 1;
		re.ended_ms = rec.ended_ms;
	} else {
		re.has_has_record = 1;
		re.has_record = 0;
	}
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &re;
	rc = sup_call(s, r, &req, &rep, "record_exit");
	if (rc == SUP_NOANSWER)
		return SUP_NEVENTS;
	if (rc == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_info("run %s: record_exit %s: another actor settles it", sup_name(r), desc);
		sup_reply_free(rep);
		return SUP_EV_EXIT_DENIED;
	}
	sup_reply_free(rep);
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
	struct exit_record rec;
	struct stat sb;
	Berth__Reply *rep;
	char dir[PATH_MAX], path[PATH_MAX];
	int rc, have_rec = 0, have_out = 0;

	if (fp_hit("supervisor.before_settle") != FP_PASS) {
		log_warn("run %s: failpoint supervisor.before_settle: not sent", sup_name(r));
		return SUP_NEVENTS;
	}
	/* Aftercare: what the run left behind. Capture is complete when the
	 * shim recorded the exit (it outlived the job) and the output file is
	 * there to be read. */
	if (sup_run_path(s, r, NULL, dir, sizeof(dir)) == 0) {
		have_rec = exitrec_read(dir, &rec) == 0;
		if (r->outcome[0] == '\0')
			sup_read_spawn_error(s, r);
		if (sup_run_path(s, r, "output.log", path, sizeof(path)) == 0 &&
		    stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
			have_out = 1;
			se.has_output_bytes = 1;
			se.output_bytes = sb.st_size;
		}
	}
	se.run_id = r->id;
	se.outcome = r->outcome;
	se.has_capture_complete = 1;
	se.capture_complete = have_rec && have_out;
	if (r->reason[0] != '\0')
		se.reason = r->reason;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &se;
	rc = sup_call(s, r, &req, &rep, "settle");
	if (rc == SUP_NOANSWER)
		return SUP_NEVENTS;
	if (rc == SUP_GRANTED && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_SETTLE) {
		Berth__SettleGranted *g = rep->granted->settle;

		log_info("run %s: settled %s%s, ticket %s%s%s", sup_name(r),
			 g->outcome ? g->outcome : "?", g->applied ? "" : " (already)",
			 g->ticket_state ? g->ticket_state : "?", r->reason[0] ? ": " : "",
			 r->reason);
	}
	sup_reply_free(rep);
	return SUP_EV_SETTLED;
}

static enum sup_event
sup_act_renew(struct sup *s, struct sup_run *r)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Renew rn = BERTH__RENEW__INIT;
	Berth__Reply *rep;
	char desc[256];

	rn.ticket = r->ticket;
	rn.run_id = r->id;
	if (s->o->lease_ms > 0) {
		rn.has_lease_ms = 1;
		rn.lease_ms = (uint32_t)s->o->lease_ms;
	}
	req.verb_case = BERTH__REQUEST__VERB_RENEW;
	req.renew = &rn;
	/* A statement of fact, not an authority: a denial is logged and
	 * decides nothing (liveness is the process identity's business). */
	if (sup_call(s, NULL, &req, &rep, "renew") == SUP_DENIED) {
		msg_describe(rep, desc, sizeof(desc));
		log_warn("run %s: renew %s", sup_name(r), desc);
	}
	sup_reply_free(rep);
	return SUP_NEVENTS;
}

static enum sup_event
sup_act(struct sup *s, struct sup_run *r, enum sup_action a)
{
	switch (a) {
	case SUP_ACT_START:
		return sup_act_start(s, r);
	case SUP_ACT_GO:
		return sup_act_go(s, r);
	case SUP_ACT_KILL_ABANDON:
		return sup_act_kill_abandon(s, r);
	case SUP_ACT_ABANDON:
		return sup_act_abandon(s, r);
	case SUP_ACT_RECORD_EXIT:
		return sup_act_record_exit(s, r);
	case SUP_ACT_SETTLE:
		return sup_act_settle(s, r);
	case SUP_ACT_RENEW:
		return sup_act_renew(s, r);
	case SUP_ACT_NONE:
	case SUP_ACT_FORGET:
	case SUP_ACT_INVALID:
		break;
	}
	return SUP_NEVENTS;
}

/*
 * The one place a run changes state: the table decides, the action runs,
 * and the action's outcome is the next event, until an action leaves the run
 * waiting for the world.
 */
static void
sup_fire(struct sup *s, struct sup_run *r, enum sup_event ev)
{
	struct sup_step st;

	while (ev != SUP_NEVENTS) {
		st = sup_run_step(r->state, ev);
		if (st.action == SUP_ACT_INVALID) {
			log_error("run %s: event %s unexpected in state %s (ignored)", sup_name(r),
				  sup_run_event_name(ev), sup_run_state_name(r->state));
			return;
		}
		if (st.next != r->state) {
			char text[80];

			snprintf(text, sizeof(text), "%s -%s-> %s", sup_run_state_name(r->state),
				 sup_run_event_name(ev), sup_run_state_name(st.next));
			log_info("run %s: %s", sup_name(r), text);
			ring_global_emit(RING_STATE, NULL, r->ticket, r->id, NULL, NULL, 0, 0,
					  text);
		}
		r->state = st.next;
		if (st.action == SUP_ACT_FORGET) {
			sup_forget(s, r);
			return;
		}
		ev = sup_act(s, r, st.action);
	}
}

/* ------------------------------------------------------------ claims */

static void
sup_spawn_run(struct sup *s, struct sup_run *r, const Berth__ClaimGranted *g)
{
	struct sup_spawn_req sr;
	char dir[PATH_MAX], err[512];
	int rc;

	if (fp_hit("supervisor.after_claim") != FP_PASS) {
		snprintf(r->reason, sizeof(r->reason), "failpoint supervisor.after_claim");
		goto failed;
	}
	if (snprintf(dir, sizeof(dir), "%s/runs", s->o->home) >= (int)sizeof(dir) ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST) ||
	    sup_run_path(s, r, NULL, dir, sizeof(dir)) == -1 ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST)) {
		snprintf(r->reason, sizeof(r->reason), "mkdir %s: %s", dir, strerror(errno));
		goto failed;
	}
	memset(&sr, 0, sizeof(sr));
	sr.shim_path = s->shim_path;
	sr.home = s->o->home;
	sr.run_id = r->id;
	sr.workdir = g->workdir ? g->workdir : "";
	sr.argv = g->argv;
	sr.argc = g->n_argv;
	sr.ticket_env = g->env;
	sr.nenv = g->n_env;
	sr.token = g->token ? g->token : "";
	sr.socket_url = s->url;
	sr.shim_failpoints = s->shim_failpoints;
	sr.job_umask = s->o->job_umask;
	/* The group's default or the ticket's wish: either isolates. */
	sr.isolate = s->o->isolate || (g->has_isolate && g->isolate);
	if ((rc = sup_spawn_shim(&sr, environ, &r->pid, &r->go_fd, err, sizeof(err))) < 0) {
		snprintf(r->reason, sizeof(r->reason), "%s", err);
		goto failed;
	}
	log_info("run %s: shim %d for %s in %s%s", sup_name(r), (int)r->pid, g->argv[0],
		 sr.workdir[0] ? sr.workdir : ".", sr.isolate ? ", isolated" : "");
	sup_fire(s, r, SUP_EV_SPAWN_OK);
	return;
failed:
	log_error("run %s: cannot spawn: %s", sup_name(r), r->reason);
	snprintf(r->outcome, sizeof(r->outcome), "failed");
	sup_fire(s, r, SUP_EV_SPAWN_FAILED);
}

static void
sup_claim_granted(struct sup *s, const Berth__ClaimGranted *g)
{
	struct sup_run *r;

	if (g->run_id == NULL || g->run_id[0] == '\0') {
		log_error("claim granted without a run id");
		return;
	}
	if (sup_find_id(s, g->run_id) != NULL) {
		log_error("run %s: claimed again while supervised (ignored)", g->run_id);
		return;
	}
	if ((r = sup_new(s, g->run_id, g->ticket, g->alias, SUP_CLAIMED)) == NULL)
		return;
	log_info("run %s: claimed (ticket %s, attempt %u)", sup_name(r), r->ticket,
		 (unsigned)g->attempt);
	if (g->n_argv == 0) {
		snprintf(r->reason, sizeof(r->reason), "empty command");
		snprintf(r->outcome, sizeof(r->outcome), "failed");
		sup_fire(s, r, SUP_EV_SPAWN_FAILED);
		return;
	}
	sup_spawn_run(s, r, g);
}

static void
sup_claim_send(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	int64_t now = clock_mono_ms();
	int rc;

	/* A claim already sent and interrupted is always resolved, even with
	 * every slot busy: a grant it may have had must reach us (and, if it
	 * did not happen, the coordinator now says slots_full). */
	if (s->stopping || !s->hello_done || s->claim_inflight || now < s->claim_not_before ||
	    (sup_busy(s) >= s->o->slots && s->claim_req_id == 0))
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
	 * grant that happened meanwhile is replayed to us, not lost. */
	if (s->claim_req_id != 0) {
		req.has_req_id = 1;
		req.req_id = s->claim_req_id;
	}
	if ((rc = rpc_send(s->rpc, &req)) < 0) {
		log_warn("claim: cannot send: %s", strerror(-rc));
		s->claim_not_before = now + 1000;
		return;
	}
	if (req.has_req_id)
		s->claim_req_id = req.req_id;
	log_debug("claim %llu sent (%d of %d slots busy)", (unsigned long long)s->claim_req_id,
		  sup_busy(s), s->o->slots);
	s->claim_inflight = 1;
	s->claim_sent_ms = now;
}

static void
sup_claim_recv(struct sup *s)
{
	Berth__Reply *rep = NULL;
	int64_t now = clock_mono_ms();
	const char *reason;
	char desc[256];
	int rc;

	if (!s->claim_inflight)
		return;
	if ((rc = rpc_try_recv(s->rpc, &rep)) == -EAGAIN)
		return;
	s->claim_inflight = 0;
	if (rc < 0) {
		log_warn("claim: %s", strerror(-rc));
		s->claim_not_before = now + 1000;
		return;
	}
	s->claim_req_id = 0;
	if (msg_is_granted(rep) && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM) {
		sup_claim_granted(s, rep->granted->claim);
	} else if ((reason = msg_denied_reason(rep)) != NULL) {
		if (strcmp(reason, "nothing_due") == 0) {
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
		log_error("claim: %s", desc);
		s->claim_not_before = now + 1000;
	}
	berth__reply__free_unpacked(rep, NULL);
}

/*
 * On a graceful stop, the claim the coordinator may be holding for us must
 * not be granted after we are gone (the run would wait for recovery). It is
 * sent once more with the same request id and no wait: the coordinator
 * replaces the held copy and answers at once. A grant, then or earlier, is
 * abandoned: the job never ran, so no attempt is spent.
 */
static void
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
	if ((rc = rpc_call(s->rpc, &req, &rep, 1000)) < 0) {
		log_info("stop: the held claim could not be withdrawn (%s)", strerror(-rc));
		s->claim_inflight = 1; /* a request may still be queued: see below */
		return;
	}
	s->claim_req_id = 0;
	if (msg_is_granted(rep) && rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM &&
	    rep->granted->claim->run_id != NULL) {
		const Berth__ClaimGranted *g = rep->granted->claim;

		if ((r = sup_new(s, g->run_id, g->ticket, g->alias, SUP_ABANDONING)) != NULL) {
			snprintf(r->reason, sizeof(r->reason), "supervisor stopping");
			log_info("run %s: claimed as we stop: abandon", sup_name(r));
			sup_fire(s, r, SUP_EV_TICK);
		}
	}
	berth__reply__free_unpacked(rep, NULL);
}

/* ------------------------------------------------------------ reconcile */

static void
sup_hello(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep = NULL;
	struct ident me;
	char boot[40], desc[256];
	int rc;

	if (ident_self(&me) < 0) {
		log_error("cannot read my own process identity");
		return;
	}
	sup_ident_to_proto(&me, &id, boot);
	h.ident = &id;
	h.has_slots = 1;
	h.slots = (uint32_t)s->o->slots;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	if ((rc = rpc_call(s->rpc, &req, &rep, SUP_RPC_TIMEOUT_MS)) < 0) {
		log_warn("hello: no answer from the coordinator (%s)", strerror(-rc));
		return;
	}
	if (msg_is_granted(rep)) {
		s->hello_done = 1;
		log_info("hello: instance %s, %d slot%s", s->instance, s->o->slots,
			 s->o->slots == 1 ? "" : "s");
	} else {
		msg_describe(rep, desc, sizeof(desc));
		log_error("hello: %s", desc);
	}
	berth__reply__free_unpacked(rep, NULL);
}

static int
sup_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* A running run recovery readopted for us: watch its shim by pidfd (it is
 * not our child), or by polling its identity each pass when no pidfd can be
 * had. Gone already: checkpoint its exit now. */
static void
sup_adopt(struct sup *s, const Berth__Run *x)
{
	struct sup_run *r;
	enum ident_status st;

	if ((r = sup_new(s, x->id, x->ticket, x->alias, SUP_STARTED)) == NULL)
		return;
	r->adopted = 1;
	r->have_ident = 1;
	sup_ident_from_proto(x->shim, &r->shim);
	st = ident_check(&r->shim);
	if (st == IDENT_MATCHES && (r->pidfd = sup_pidfd_open(r->shim.pid)) != -1) {
		/* The pid could have been reused between the check and the
		 * open: with the pidfd held, the check settles it. */
		if (ident_check(&r->shim) != IDENT_MATCHES) {
			close(r->pidfd);
			r->pidfd = -1;
			st = IDENT_GONE;
		}
	}
	log_info("run %s: adopted, shim %d %s%s", sup_name(r), (int)r->shim.pid,
		 ident_status_name(st), r->pidfd != -1 ? " (pidfd)" : "");
	if (st == IDENT_GONE)
		sup_gone(s, r);
}

static void
sup_scan(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	Berth__Reply *rep;
	Berth__ScanReply *sr;
	int64_t old;
	size_t i;

	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	if (sup_call(s, NULL, &req, &rep, "scan") != SUP_GRANTED ||
	    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SCAN) {
		sup_reply_free(rep);
		return;
	}
	sr = rep->granted->scan;
	/* A claim granted this long ago without its answer reaching us (we
	 * would be supervising it) was lost on the way. */
	old = (sr->has_now_ms ? sr->now_ms : clock_wall_ms()) -
	      (s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS + 2 * (int64_t)s->o->tick_ms);
	for (i = 0; i < sr->n_runs; i++) {
		const Berth__Run *x = sr->runs[i];
		struct sup_run *r;

		if (x->id == NULL || x->owner == NULL || x->state == NULL ||
		    strcmp(x->owner, s->instance) != 0 || sup_find_id(s, x->id) != NULL)
			continue;
		/* A run of ours in aftercare that we do not watch had its exit
		 * checkpointed by someone else (our record_exit was denied):
		 * it is theirs to settle, and we do nothing more for it. */
		if (strcmp(x->state, "running") == 0) {
			sup_adopt(s, x);
		} else if (strcmp(x->state, "claimed") == 0 && x->has_claimed_ms &&
			   x->claimed_ms < old) {
			if ((r = sup_new(s, x->id, x->ticket, x->alias, SUP_ABANDONING)) != NULL) {
				snprintf(r->reason, sizeof(r->reason), "claim answer lost");
				log_warn("run %s: claimed by us but never received: abandon",
					 sup_name(r));
				sup_fire(s, r, SUP_EV_TICK);
			}
		}
	}
	berth__reply__free_unpacked(rep, NULL);
}

static void
sup_tick(struct sup *s)
{
	struct sup_run *r, *next;

	if (!s->hello_done)
		sup_hello(s);
	/* While the coordinator does not answer, one call per pass is enough
	 * to find out: the rest waits for the next pass, so a stop request
	 * is not kept waiting behind a timeout per run. */
	s->answered = 1;
	for (r = TAILQ_FIRST(&s->runs); r != NULL && s->answered; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->state == SUP_STARTED && r->adopted && r->pidfd == -1 &&
		    ident_check(&r->shim) == IDENT_GONE) {
			sup_gone(s, r);
			continue;
		}
		sup_fire(s, r, SUP_EV_TICK);
	}
	if (s->hello_done && s->answered)
		sup_scan(s);
	s->next_tick = clock_mono_ms() + s->o->tick_ms;
}

/* ------------------------------------------------------------ signals */

static void
sup_reap(struct sup *s)
{
	struct sup_run *r;
	int status;
	pid_t pid;

	/* One SIGCHLD may stand for many children: reap until none is left. */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((r = sup_find_pid(s, pid)) == NULL) {
			log_debug("reaped %d (no run)", (int)pid);
			continue;
		}
		if (WIFSIGNALED(status))
			log_info("run %s: shim %d killed by signal %d", sup_name(r), (int)pid,
				 WTERMSIG(status));
		else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			log_info("run %s: shim %d exited %d", sup_name(r), (int)pid,
				 WEXITSTATUS(status));
		r->pid = -1;
		sup_gone(s, r);
	}
}

static void
sup_signals(struct sup *s)
{
	struct signalfd_siginfo si;
	int chld = 0;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			chld = 1;
		} else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_info("signal %d: stop claiming and exit; running jobs keep running",
				 (int)si.ssi_signo);
			s->stopping = 1;
		}
	}
	if (chld)
		sup_reap(s);
}

static int
sup_signals_open(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1) {
		log_error("sigprocmask: %s", strerror(errno));
		return -1;
	}
	if ((fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		log_error("signalfd: %s", strerror(errno));
		return -1;
	}
	/* A go byte to a dead shim must fail with EPIPE, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

/* ------------------------------------------------------------ loop */

static int
sup_timeout(struct sup *s)
{
	int64_t now = clock_mono_ms(), until = s->next_tick;

	if (s->claim_inflight && s->claim_sent_ms + s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS < until)
		until = s->claim_sent_ms + s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS;
	if (!s->claim_inflight && s->hello_done && s->claim_not_before > now &&
	    s->claim_not_before < until && (sup_busy(s) < s->o->slots || s->claim_req_id != 0))
		until = s->claim_not_before;
	if (until <= now)
		return 0;
	return until - now > INT_MAX ? INT_MAX : (int)(until - now);
}

static int
sup_poll(struct sup *s)
{
	struct pollfd *pfd;
	struct sup_run **owner, *r;
	size_t n = 0, cap = 2, i;
	int rc;

	TAILQ_FOREACH(r, &s->runs, entry)
		cap += r->pidfd != -1;
	pfd = calloc(cap, sizeof(*pfd));
	owner = calloc(cap, sizeof(*owner));
	if (pfd == NULL || owner == NULL) {
		log_error("poll: out of memory");
		free(pfd);
		free(owner);
		return -1;
	}
	pfd[n++] = (struct pollfd){.fd = s->sigfd, .events = POLLIN};
	if (s->claim_inflight)
		pfd[n++] = (struct pollfd){.fd = rpc_fd(s->rpc), .events = POLLIN};
	TAILQ_FOREACH(r, &s->runs, entry) {
		if (r->pidfd != -1) {
			owner[n] = r;
			pfd[n++] = (struct pollfd){.fd = r->pidfd, .events = POLLIN};
		}
	}
	rc = poll(pfd, n, sup_timeout(s));
	if (rc == -1 && errno != EINTR) {
		log_error("poll: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	if (pfd[0].revents)
		sup_signals(s);
	if (s->claim_inflight) {
		sup_claim_recv(s);
		if (s->claim_inflight && clock_mono_ms() > s->claim_sent_ms + s->o->claim_wait_ms +
								SUP_CLAIM_GRACE_MS) {
			log_warn("claim: no answer in %d ms, asking again",
				 s->o->claim_wait_ms + SUP_CLAIM_GRACE_MS);
			s->claim_inflight = 0;
		}
	}
	/* An adopted shim is gone. The runs handled here are only those whose
	 * pidfd fired; each event can only free its own run. */
	for (i = 0; i < n; i++) {
		if (owner[i] == NULL || !pfd[i].revents)
			continue;
		r = owner[i];
		close(r->pidfd);
		r->pidfd = -1;
		sup_gone(s, r);
	}
out:
	free(pfd);
	free(owner);
	return rc;
}

int
sup_loop_run(const struct sup_opts *o)
{
	struct sup s;
	char err[256];
	int rc = 1;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.sigfd = -1;
	TAILQ_INIT(&s.runs);
	s.shim_failpoints = getenv("BERTH_FAILPOINTS_SHIM");
	if (fp_init_env(o->home, err, sizeof(err)) < 0) {
		log_error("BERTH_FAILPOINTS: %s", err);
		return 2;
	}
	if (home_socket_url(o->home, s.url, sizeof(s.url)) < 0 ||
	    sup_spawn_shim_path(s.shim_path, sizeof(s.shim_path)) == -1) {
		log_error("cannot build the socket url or the shim path");
		return 1;
	}
	if (access(s.shim_path, X_OK) == -1)
		log_warn("%s: %s (every spawn will fail)", s.shim_path, strerror(errno));
	if ((s.sigfd = sup_signals_open()) == -1)
		return 1;
	if ((s.rpc = rpc_client_open(s.url, "supervisor")) == NULL)
		goto out;
	/* SIGTERM ends a request waiting on a coordinator that does not
	 * answer (within a second), so stopping never waits out its timeout;
	 * whatever it was deciding, recovery finishes as after a crash. */
	rpc_client_on_abort(s.rpc, rpc_stop_signal_pending, NULL);
	s.instance = rpc_client_instance(s.rpc);
	log_info("supervisor %s: home %s, %d slot%s, lease %d ms, tick %d ms%s", s.instance,
		 o->home, o->slots, o->slots == 1 ? "" : "s", o->lease_ms, o->tick_ms,
		 o->isolate ? ", every job isolated" : "");

	observe_attach(o->home, "supervisor", s.instance);
	rpc_observe_install();
	observe_set_slots((uint32_t)o->slots, 0);
	observe_beat("running");

	sup_tick(&s);
	while (!s.stopping) {
		observe_set_slots((uint32_t)o->slots, (uint32_t)sup_busy(&s));
		observe_beat(NULL);
		sup_claim_send(&s);
		if (sup_poll(&s) == -1)
			goto out;
		if (!s.stopping && clock_mono_ms() >= s.next_tick)
			sup_tick(&s);
	}
	sup_claim_withdraw(&s);
	rc = 0;
out:
	observe_detach(rc == 0 ? "stopped" : "failed");
	sup_free_all(&s);
	/* The client is not closed: with a request still queued for a
	 * coordinator that has gone away, nng 1.5.2's nng_close() waits
	 * forever, and a graceful stop must never hang. The process is
	 * exiting and the socket goes with it (the client is kept reachable,
	 * not leaked). */
	sup_unclosed = s.rpc;
	if (s.sigfd != -1)
		close(s.sigfd);
	return rc;
}
