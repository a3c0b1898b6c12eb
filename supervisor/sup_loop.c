/*
 * The supervisor's one loop (DESIGN §6): poll over the signalfd (SIGCHLD,
 * SIGTERM, SIGINT), the claim's reply fd and adopted shims' pidfds, with the
 * next deadline (the reconcile pass, the claim); then dispatch. What a run
 * does is the run table's (sup_act.c); the claim is sup_claim.c's.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor.h"
#include "clock.h"
#include "exitrec.h"
#include "ident.h"
#include "log.h"
#include "msg.h"
#include "observe.h"
#include "rpc_observe.h"
#include "states.h"
#include "sup_int.h"
#include "sup_spawn.h"
#include "util.h"

/* The clients left open at exit (see the end of sup_loop_run). */
static struct rpc_client *sup_unclosed[2];

/* ------------------------------------------------------------ reconcile */

static void
sup_hello(struct sup *s)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep = NULL;
	struct ident me;
	char desc[256];
	int rc;

	if (ident_self(&me) < 0) {
		log_error("cannot read my own process identity");
		return;
	}
	msg_ident_to(&me, &id);
	h.ident = &id;
	h.has_slots = 1;
	h.slots = (uint32_t)s->o->slots;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	if ((rc = rpc_call(s->rpc, &req, &rep, SUP_RPC_TIMEOUT_MS)) < 0) {
		log_warn("hello: no answer from the coordinator (%s)", strerror(-rc));
		return;
	}
	if (msg_reply_is_bug(rep)) {
		msg_describe(rep, desc, sizeof(desc));
		log_error(
			"bug: the coordinator refused our hello as malformed: %s; exiting for the "
			"launcher to restart us",
			desc);
		s->broken = 1;
	} else if (msg_is_granted(rep)) {
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
 * had (none left in the budget, none to open, or the shim cannot be told
 * from a stranger now). Gone already: checkpoint its exit now. Only a shim
 * judged gone is ever treated as gone: one that cannot be read counts as
 * alive, and the next pass looks again (DESIGN §7). */
static void
sup_adopt(struct sup *s, const Berth__Run *x)
{
	struct sup_run *r;
	enum ident_status st;

	if ((r = sup_runs_new(s, x->id, x->ticket, x->alias, SUP_STARTED)) == NULL)
		return;
	r->adopted = 1;
	r->have_ident = 1;
	msg_ident_from(x->shim, &r->shim);
	st = ident_check(&r->shim);
	if (st == IDENT_MATCHES && s->pidfds < s->pidfd_budget &&
	    (r->pidfd = sup_pidfd_open(r->shim.pid)) != -1) {
		/* The pid could have been reused between the check and the
		 * open: with the pidfd held, the check settles it. */
		st = ident_check(&r->shim);
		if (st != IDENT_MATCHES) {
			close(r->pidfd);
			r->pidfd = -1;
		} else
			s->pidfds++;
	}
	log_info("run %s: adopted, shim %d %s%s", sup_runs_name(r), (int)r->shim.pid,
		 ident_status_name(st), r->pidfd != -1 ? " (pidfd)" : " (identity polled)");
	if (st == IDENT_GONE)
		sup_act_gone(s, r);
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
	if (sup_act_call(s, NULL, &req, &rep, "scan") != SUP_GRANTED ||
	    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SCAN) {
		sup_act_reply_free(rep);
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
		    strcmp(x->owner, s->instance) != 0 || sup_runs_find_id(s, x->id) != NULL)
			continue;
		/* Running with a shim still in our pool: a fused claim whose
		 * answer is on its way (or will be replayed to the claim's
		 * resend). The claim hands it over; adopting it here would
		 * leave that shim waiting for a hand-off forever. */
		if (x->shim != NULL && x->shim->has_pid && sup_ahead_has(s, x->shim->pid))
			continue;
		/* A run of ours in aftercare that we do not watch had its exit
		 * checkpointed by someone else (our record_exit was denied):
		 * it is theirs to settle, and we do nothing more for it. */
		if (run_state_parse(x->state) == RUN_RUNNING) {
			sup_adopt(s, x);
		} else if (run_state_parse(x->state) == RUN_CLAIMED && x->has_claimed_ms &&
			   x->claimed_ms < old) {
			if ((r = sup_runs_new(s, x->id, x->ticket, x->alias, SUP_ABANDONING)) !=
			    NULL) {
				snprintf(r->reason, sizeof(r->reason), "claim answer lost");
				log_warn("run %s: claimed by us but never received: abandon",
					 sup_runs_name(r));
				sup_act_fire(s, r, SUP_EV_TICK);
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
		/* The renewal pass: every run we supervise, in whatever state
		 * it is not done with (aftercare too), so its lease's expiry
		 * is true while it lives. It decides nothing. */
		sup_act_renew(s, r);
		if (!s->answered)
			break;
		if (r->state == SUP_STARTED && r->adopted && r->pidfd == -1 &&
		    ident_check(&r->shim) == IDENT_GONE) {
			sup_act_gone(s, r);
			continue;
		}
		sup_act_fire(s, r, SUP_EV_TICK);
	}
	if (s->hello_done && s->answered)
		sup_scan(s);
	s->next_tick = clock_mono_ms() + s->o->tick_ms;
}

/* ------------------------------------------------------------ status */

/* The status socket (struct sup). The write end is moved to >= 10 so that
 * the spawn's dup2 onto fd 3 and 4 cannot clobber it; the read end hears
 * the sender's pid (SO_PASSCRED). A shim's send waits up to 5 s for room
 * while we are busy; after that its record on disk is what counts. */
static int
sup_status_open(struct sup *s)
{
	struct timeval tmo = { 5, 0 };
	int sv[2], on = 1;

	s->status_rd = s->status_wr = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_error("status socket: %s", strerror(errno));
		return -1;
	}
	s->status_rd = sv[0];
	if ((s->status_wr = fcntl(sv[1], F_DUPFD_CLOEXEC, 10)) == -1 ||
	    setsockopt(s->status_rd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == -1 ||
	    setsockopt(s->status_wr, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo)) == -1 ||
	    fcntl(s->status_rd, F_SETFL, O_NONBLOCK) == -1) {
		log_error("status socket: %s", strerror(errno));
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	return 0;
}

/* One status message, if one is waiting: 1 read (whatever it held), 0 none. */
static int
sup_status_one(struct sup *s)
{
	char buf[EXITREC_STATUS_MAX], cbuf[CMSG_SPACE(sizeof(struct ucred))], id[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct exit_record rec;
	struct cmsghdr *c;
	struct sup_run *r;
	pid_t from = 0;
	ssize_t n;
	int durable;

	if ((n = recvmsg(s->status_rd, &mh, MSG_DONTWAIT)) <= 0) {
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			log_warn("status socket: %s", strerror(errno));
		return 0;
	}
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
			from = ((struct ucred *)(void *)CMSG_DATA(c))->pid;
	if (exitrec_status_parse(buf, (size_t)n, id, sizeof(id), &rec, &durable) != 0) {
		log_error("bug: a malformed status message from pid %d (%zd bytes)", (int)from, n);
		return 1;
	}
	/* A run already settled from its record on disk (its shim was reaped
	 * with another's, before this came) needs it no more. */
	if ((r = sup_runs_find_id(s, id)) == NULL) {
		log_debug("status for run %s from pid %d: not watched (settled)", id, (int)from);
		return 1;
	}
	/* Only the shim we spawned for that run is believed. */
	if (r->adopted || r->pid <= 0 || r->pid != from) {
		log_warn("status for run %s from pid %d: not a shim of ours for it (ignored)", id,
			 (int)from);
		return 1;
	}
	r->status = rec;
	r->has_status = 1;
	log_debug("run %s: status from shim %d: %s %d%s", sup_runs_name(r), (int)from,
		  rec.has_signal ? "signal" : "exit", rec.has_signal ? rec.signal : rec.code,
		  durable ? "" : " (not on disk)");
	/* Its record did not reach the disk: the shim stays to try again, so
	 * we checkpoint from the status now, without waiting for it. */
	if (!durable && r->state == SUP_STARTED) {
		log_warn("run %s: the shim could not write the exit record (disk full?): the exit "
			 "is checkpointed from its status",
			 sup_runs_name(r));
		r->pid = -1;
		sup_act_gone(s, r);
	}
	return 1;
}

static void
sup_status_drain(struct sup *s)
{
	int n;

	for (n = 0; n < 256 && sup_status_one(s); n++)
		;
}

/* ------------------------------------------------------------ signals */

static void
sup_reap(struct sup *s)
{
	struct sup_run *r;
	int status;
	pid_t pid;

	/* A shim sends its status before it exits: whatever it sent is read
	 * before its death is handled. */
	sup_status_drain(s);

	/* One SIGCHLD may stand for many children: reap until none is left. */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((r = sup_runs_find_pid(s, pid)) == NULL) {
			if (!sup_ahead_reaped(s, pid))
				log_debug("reaped %d (no run)", (int)pid);
			continue;
		}
		if (WIFSIGNALED(status))
			log_info("run %s: shim %d killed by signal %d", sup_runs_name(r), (int)pid,
				 WTERMSIG(status));
		else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			log_info("run %s: shim %d exited %d", sup_runs_name(r), (int)pid,
				 WEXITSTATUS(status));
		/* What it sent may have come after the drain above; read
		 * while it is still known as this run's shim (a status that
		 * says its record is not on disk handles the run itself). */
		sup_status_drain(s);
		if ((r = sup_runs_find_pid(s, pid)) == NULL)
			continue;
		r->pid = -1;
		/* The next run's shim, spawned while this one's exit is
		 * checkpointed and settled rather than after. */
		sup_ahead_fill(s, 1);
		sup_act_gone(s, r);
	}
}

static void
sup_signals(struct sup *s)
{
	int chld;

	if (actor_signals_read(s->sigfd, &chld)) {
		log_info("stop claiming and exit; running jobs keep running");
		s->stopping = 1;
	}
	if (chld)
		sup_reap(s);
}

/* ------------------------------------------------------------ loop */

static int
sup_timeout(struct sup *s)
{
	int64_t now = clock_mono_ms(), until = s->next_tick, claim = sup_claim_deadline(s);

	if (claim < until)
		until = claim;
	if (until <= now)
		return 0;
	return until - now > INT_MAX ? INT_MAX : (int)(until - now);
}

static int
sup_poll(struct sup *s)
{
	struct pollfd *pfd;
	struct sup_run **owner, *r;
	size_t n = 0, cap = 3, i;
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
	pfd[n++] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = s->status_rd, .events = POLLIN };
	if (s->claim_inflight)
		pfd[n++] = (struct pollfd){ .fd = rpc_fd(s->claim_rpc), .events = POLLIN };
	TAILQ_FOREACH(r, &s->runs, entry) {
		if (r->pidfd != -1) {
			owner[n] = r;
			pfd[n++] = (struct pollfd){ .fd = r->pidfd, .events = POLLIN };
		}
	}
	rc = poll(pfd, n, sup_timeout(s));
	if (rc == -1 && errno != EINTR) {
		log_error("poll: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	if (pfd[1].revents)
		sup_status_drain(s);
	if (pfd[0].revents)
		sup_signals(s);
	sup_claim_recv(s);
	/* An adopted shim is gone. The runs handled here are only those whose
	 * pidfd fired; each event can only free its own run. */
	for (i = 0; i < n; i++) {
		if (owner[i] == NULL || !pfd[i].revents)
			continue;
		r = owner[i];
		close(r->pidfd);
		r->pidfd = -1;
		s->pidfds--;
		sup_act_gone(s, r);
	}
out:
	free(pfd);
	free(owner);
	return rc;
}

/* How many pidfds adoption may hold: the descriptor limit less a spare
 * (SUP_FD_SPARE) for everything else. Under `ulimit -n 20` that is none:
 * every adopted shim is then watched by polling its identity. */
static void
sup_fd_budget(struct sup *s)
{
	struct rlimit rl;

	s->pidfd_budget = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur > SUP_FD_SPARE)
		s->pidfd_budget = (int)(rl.rlim_cur - SUP_FD_SPARE);
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		s->pidfd_budget = 1 << 20;
}

/* The two clients of this supervisor (struct sup). SIGTERM ends a request
 * waiting on a coordinator that does not answer (within a second), so
 * stopping never waits out its timeout; whatever it was deciding, recovery
 * finishes as after a crash. */
static int
sup_clients_open(struct sup *s)
{
	if ((s->rpc = rpc_client_open(s->url, "supervisor")) == NULL ||
	    (s->claim_rpc = rpc_client_open(s->url, "supervisor")) == NULL)
		return -1;
	rpc_client_on_abort(s->rpc, rpc_stop_signal_pending, NULL);
	rpc_client_on_abort(s->claim_rpc, rpc_stop_signal_pending, NULL);
	s->instance = rpc_client_instance(s->rpc);
	return 0;
}

int
sup_loop_run(const struct sup_opts *o)
{
	static const int chld[] = { SIGCHLD, 0 };
	struct sup s;
	int rc = 1, usage;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.slots = o->slots;
	s.sigfd = -1;
	s.status_rd = s.status_wr = -1;
	TAILQ_INIT(&s.runs);
	s.shim_failpoints = getenv("BERTH_FAILPOINTS_SHIM");
	if (home_socket_url(o->home, s.url, sizeof(s.url)) < 0 ||
	    home_worker_url(o->home, s.worker_url, sizeof(s.worker_url)) < 0 ||
	    sup_spawn_shim_path(s.shim_path, sizeof(s.shim_path)) == -1) {
		log_error("cannot build the socket url or the shim path");
		return 1;
	}
	if (access(s.shim_path, X_OK) == -1)
		log_warn("%s: %s (every spawn will fail)", s.shim_path, strerror(errno));
	/* SIGCHLD too: a reaped shim is an event of the loop. */
	if ((s.sigfd = actor_init(o->home, chld, &usage)) == -1)
		return usage ? 2 : 1;
	if (sup_clients_open(&s) < 0 || sup_status_open(&s) < 0)
		goto out;
	sup_fd_budget(&s);
	log_info("supervisor %s: home %s, %d slot%s, lease %d ms, tick %d ms%s%s", s.instance,
		 o->home, o->slots, o->slots == 1 ? "" : "s", o->lease_ms, o->tick_ms,
		 o->isolate ? ", every job isolated" : "",
		 o->no_ahead ? ", shims spawned after their claims" : "");

	observe_attach(o->home, "supervisor", s.instance);
	rpc_observe_install();
	observe_set_slots((uint32_t)o->slots, 0);
	observe_beat(BOARD_RUNNING);

	sup_tick(&s);
	while (!s.stopping && !s.broken) {
		observe_set_slots((uint32_t)s.slots, (uint32_t)sup_runs_busy(&s));
		observe_beat(NULL);
		sup_claim_then(&s);
		sup_ahead_fill(&s, 0);
		sup_claim_send(&s);
		if (sup_poll(&s) == -1)
			goto out;
		if (!s.stopping && !s.broken && clock_mono_ms() >= s.next_tick)
			sup_tick(&s);
	}
	if (s.broken)
		goto out;
	sup_claim_withdraw(&s);
	rc = 0;
out:
	observe_detach(rc == 0 ? BOARD_STOPPED : BOARD_FAILED);
	sup_ahead_free(&s);
	sup_runs_free(&s);
	if (s.then_rep != NULL)
		berth__reply__free_unpacked(s.then_rep, NULL);
	/* The clients are not closed: with a request still queued for a
	 * coordinator that has gone away, nng 1.5.2's nng_close() waits
	 * forever, and a graceful stop must never hang. The process is
	 * exiting and the sockets go with it (the clients are kept
	 * reachable, not leaked). */
	sup_unclosed[0] = s.rpc;
	sup_unclosed[1] = s.claim_rpc;
	if (s.sigfd != -1)
		close(s.sigfd);
	if (s.status_rd != -1)
		close(s.status_rd);
	if (s.status_wr != -1)
		close(s.status_wr);
	return rc;
}
