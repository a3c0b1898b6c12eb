/*
 * The coordinator's loop: the one place where a message becomes a decision.
 *
 *	receive -> check the envelope -> execute (coord_exec) -> trace -> reply
 *
 * Requests arrive from nng's threads through the rpc server's queue and are
 * handled here one at a time, on this thread only: the order in which this
 * loop executes them is the arbitration order, and the trace records it.
 *
 * A claim for the next ticket that finds nothing due may wait: it is held
 * (coord_park.h) and executed here again when coord_park says so.
 *
 * Trust is asymmetric (STYLE): a request that cannot be read is answered
 * with an error whoever sent it and the loop lives on; when the sender is a
 * sibling actor that is a bug in that actor, and it is logged as an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_park.h"
#include "coord_sched.h"
#include "coord_server.h"
#include "coord_server_int.h"
#include "coord_settings.h"
#include "coord_trace.h"
#include "coord_verbs.h"
#include "failpoint.h"
#include "ids.h"
#include "log.h"
#include "msg.h"
#include "observe.h"
#include "rpc.h"
#include "util.h"
#include "vec.h"

#define CS_BEAT_MS    1000         /* the loop wakes at least this often (status board) */
#define CS_TRIM_BYTES (256 * 1024) /* a reply this large: give the heap back after it */

const char *
coord_server_url(const struct coord_server *cs)
{
	return cs->url;
}

/* A sibling actor's malformed request is a bug in that actor (STYLE:
 * trust is asymmetric), anyone else's is input. */
static int
cs_sibling(const char *actor)
{
	return coord_role_of(actor) != 0;
}

/* ------------------------------------------------------------- deciding */

static void
cs_obs(enum coord_decision d)
{
	if (d == COORD_GRANTED || d == COORD_REPLAYED)
		observe_count(BOARD_GRANTED);
	else if (d == COORD_DENIED)
		observe_count(BOARD_DENIED);
	else
		observe_count(BOARD_ERRORS);
}

/* Traces a decision the loop makes itself (a refusal, a held claim answered
 * at shutdown); coord_exec's decisions come with their line formatted. */
static void
cs_trace(struct coord_server *cs, const Berth__Request *req, enum coord_decision d,
	 const char *reason, int64_t t0_us)
{
	struct coord_trace_rec rec;

	coord_trace_rec_init(&rec, req, coord_verb_name(req), d, t0_us);
	/* A refused request's names may be anything: only valid ones are
	 * written. */
	if (req != NULL && !coord_envelope_name_ok(req->actor))
		rec.from = NULL;
	if (req != NULL && !coord_envelope_name_ok(req->instance))
		rec.instance = NULL;
	rec.reason = reason;
	coord_trace_write(cs->trace, &rec);
	cs_obs(d);
}

static void cs_flush(struct coord_server *cs);

/* Answers a request that never reached the store. Its line follows those
 * of the requests decided before it, so the group being decided ends
 * first. */
static void
cs_refuse(struct coord_server *cs, struct rpc_incoming *in, const Berth__Request *req, int code,
	  const char *msg, int64_t t0_us)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Error e = BERTH__ERROR__INIT;
	const char *actor = req != NULL && coord_envelope_name_ok(req->actor) ? req->actor : NULL;

	if (cs_sibling(actor))
		log_error("refused a request from %s %s: %s (a bug in that actor)", actor,
			  coord_envelope_name_ok(req->instance) ? req->instance : "?", msg);
	else
		log_warn("refused a request from %s: %s",
			 actor != NULL && actor[0] != '\0' ? actor : "an unknown sender", msg);

	cs_flush(cs);
	rep.has_req_id = 1;
	rep.req_id = req != NULL && req->has_req_id ? req->req_id : 0;
	rep.has_version = 1;
	rep.version = BERTH_PROTOCOL_VERSION;
	rep.result_case = BERTH__REPLY__RESULT_ERROR;
	rep.error = &e;
	e.has_code = 1;
	e.code = (Berth__ErrorCode)code;
	e.message = (char *)msg;
	cs_trace(cs, req, COORD_ERROR, msg_error_name(code), t0_us);
	rpc_server_reply(cs->rpc, in, &rep);
}

/* Answers a request whose reply coord_exec could not build (out of
 * memory): its decision, if any, is stored, and the sender's retry gets it. */
static void
cs_unbuilt(struct coord_server *cs, struct coord_pending *p)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Error e = BERTH__ERROR__INIT;

	log_error("%s %llu from %s: coord_exec could not build a reply", coord_verb_name(p->req),
		  (unsigned long long)p->req->req_id, p->req->actor);
	rep.has_req_id = 1;
	rep.req_id = p->req->req_id;
	rep.has_version = 1;
	rep.version = BERTH_PROTOCOL_VERSION;
	rep.result_case = BERTH__REPLY__RESULT_ERROR;
	rep.error = &e;
	e.has_code = 1;
	e.code = BERTH__ERROR_CODE__ERR_STORAGE;
	e.message = "the coordinator could not build a reply";
	observe_count(BOARD_ERRORS);
	rpc_server_reply(cs->rpc, p->in, &rep);
}

/* Failpoint, reply: the end of every decided request, once its group
 * has committed and its lines are in the trace. */
static void
cs_finish(struct coord_server *cs, struct rpc_incoming *in, const Berth__Request *req,
	  const struct coord_result *res)
{
	cs_obs(res->decision);
	if (res->committed) {
		switch (fp_hit("coordinator.after_commit")) {
		case FP_DROP:
		case FP_ERROR:
			log_warn(
				"failpoint coordinator.after_commit: not answering %s %llu from %s",
				coord_verb_name(req), (unsigned long long)req->req_id, req->actor);
			rpc_server_drop(cs->rpc, in);
			return;
		case FP_PASS: break;
		}
	}
	rpc_server_reply_raw(cs->rpc, in, res->packed, res->packed_len);
}

/* The group's lines, in decision order, in one write: before any reply
 * and before the after_commit failpoint, since the decisions are durable
 * from COMMIT on and the trace shows them even when a reply is then lost. */
static void
cs_trace_group(struct coord_server *cs)
{
	char *all = NULL;
	size_t i, len = 0, n;
	uint64_t seq = 0;

	for (i = 0; i < cs->nslots; i++) {
		const struct coord_result *res = &cs->slots[i].res;

		if (res->line == NULL)
			continue;
		if (len == 0)
			seq = res->seq;
		n = strlen(res->line);
		if ((all = realloc(all, len + n + 1)) == NULL) {
			log_error("trace: out of memory joining a group's lines; they are lost");
			return;
		}
		memcpy(all + len, res->line, n + 1);
		len += n;
	}
	if (all != NULL)
		coord_trace_append(cs->trace, seq, all);
	free(all);
}

/*
 * Ends the group being decided (DESIGN §4, group commit): one COMMIT for
 * every request in it, then its lines, then each answer in decision order
 * (a claim that found nothing and may wait is held instead). Nothing of
 * the group is answered before its COMMIT.
 */
static void
cs_flush(struct coord_server *cs)
{
	struct cs_slot *sl;
	size_t i;

	if (cs->nslots == 0)
		return;
	coord_exec_group_end(&cs->group);
	cs_trace_group(cs);
	for (i = 0; i < cs->nslots; i++) {
		sl = &cs->slots[i];
		if (!sl->built) {
			cs_unbuilt(cs, sl->p);
			coord_exec_free(&sl->res);
			coord_pending_free(sl->p);
			continue;
		}
		if (sl->may_park && sl->res.decided_nothing) {
			coord_park_hold(&cs->park, sl->p, sl->res.packed, sl->res.packed_len);
			coord_exec_free(&sl->res);
			continue;
		}
		/* Only the packed bytes are sent: the decoded reply (tens of
		 * megabytes for a long list) goes before nng copies them. */
		if (sl->res.reply != NULL) {
			berth__reply__free_unpacked(sl->res.reply, NULL);
			sl->res.reply = NULL;
		}
		if (sl->res.packed_len >= CS_TRIM_BYTES)
			cs->trim = 2;
		cs_finish(cs, sl->p->in, sl->p->req, &sl->res);
		coord_exec_free(&sl->res);
		coord_pending_free(sl->p);
	}
	cs->nslots = 0;
}

/*
 * Decides p's request in the group being decided, to be answered when
 * the group ends, or held again then (when may_park and it decided
 * nothing). A read has a group of its own (it sees only what is
 * committed), so the group before it ends first. p is consumed.
 */
static void
cs_exec(struct coord_server *cs, struct coord_pending *p, int may_park)
{
	struct cs_slot *sl;
	int reads = coord_verb_reads(p->req);

	if (!coord_exec_group_fits(&cs->group, p->req))
		cs_flush(cs);
	if (cs->nslots == 0)
		coord_exec_group_seq(&cs->group, coord_trace_seq(cs->trace) + 1);
	coord_mem_grow(&cs->slots, cs->nslots, &cs->capslots, sizeof *cs->slots, 16);
	sl = &cs->slots[cs->nslots++];
	memset(sl, 0, sizeof *sl);
	sl->p = p;
	sl->may_park = may_park;
	sl->built = coord_exec_group_add(&cs->group, p->req, &p->who, p->t0_us, may_park,
					 &sl->res) == 0;
	if (sl->res.wake)
		cs->wake = cs->wake_others = 1;
	if (reads)
		cs_flush(cs);
}

/* Decides a request that passed the envelope check; req is consumed. */
static void
cs_handle(struct coord_server *cs, struct rpc_incoming *in, Berth__Request *req, int64_t t0)
{
	const struct coord_verb *v = coord_verb_find(req->verb_case);
	struct coord_pending *p;
	int64_t wait_ms;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		cs_refuse(cs, in, req, BERTH__ERROR_CODE__ERR_STORAGE, "out of memory", t0);
		berth__request__free_unpacked(req, NULL);
		return;
	}
	p->in = in;
	p->req = req;
	p->t0_us = t0;
	/* Who asks: the socket it came on and its peer's credentials, never
	 * the actor it names (DESIGN §1). */
	coord_callers_classify(cs->callers, rpc_incoming_listener(in) == cs->worker_listener,
			       rpc_incoming_peer(in), rpc_incoming_pipe(in), &p->who);
	if (v != NULL && (v->flags & COORD_VERB_PARKS))
		coord_park_drop_same(&cs->park, cs->rpc, p);
	if ((wait_ms = coord_verb_wait_ms(req)) > 0)
		p->deadline_us = t0 + wait_ms * 1000;
	cs_exec(cs, p, wait_ms > 0);
}

/* One request taken from the rpc server's queue. */
struct cs_item {
	struct rpc_incoming *in;
	Berth__Request *req; /* NULL once superseded by a later copy */
	int64_t t0_us;
};

/* Copies of one request: the same request id, instance and actor, from
 * the same process (another process naming them is another sender). */
static int
cs_same_request(const struct rpc_incoming *ia, const Berth__Request *a,
		const struct rpc_incoming *ib, const Berth__Request *b)
{
	return a->req_id == b->req_id && strcmp(a->instance, b->instance) == 0 &&
	       strcmp(a->actor, b->actor) == 0 &&
	       rpc_incoming_peer(ia)->pid == rpc_incoming_peer(ib)->pid;
}

/* The envelope check: 0 with *req set, or -1 when the request was refused
 * (answered; it decides nothing). */
static int
cs_accept(struct coord_server *cs, struct rpc_incoming *in, Berth__Request **req, int64_t t0)
{
	const uint8_t *data;
	char msg[256];
	size_t len;
	int code;

	data = rpc_incoming_data(in, &len);
	if ((code = coord_envelope_check(data, len, req, msg, sizeof(msg))) == 0)
		return 0;
	cs_refuse(cs, in, *req, code, msg, t0);
	if (*req != NULL)
		berth__request__free_unpacked(*req, NULL);
	*req = NULL;
	return -1;
}

/*
 * Takes everything queued, then decides it in arrival order. A sender
 * waiting for a reply resends the same request (same actor, instance and
 * req_id) every second, and only its latest copy can still be answered (a
 * REQ socket discards replies to a superseded send). So copies queued
 * together are decided once: at the first copy's place in the order, as the
 * latest copy (its context, its arrival time); the earlier contexts are
 * dropped. Without this every copy of a slow read (a list of 100 000
 * tickets) was built again, and the builds piled up for replies nobody
 * would read. A copy that arrives while its original is being decided is
 * decided once more after it: a read is built again, a decision replays its
 * stored reply.
 */
static void
cs_serve_queued(struct coord_server *cs)
{
	struct cs_item *items = NULL;
	struct rpc_incoming *in, *late = NULL;
	Berth__Request *req;
	size_t n = 0, cap = 0, i, j;
	int64_t t0;

	while ((in = rpc_server_next(cs->rpc)) != NULL) {
		if (vec_grow(&items, &cap, n + 1, sizeof(*items)) == -1) {
			/* Out of memory: what we hold first, then this one
			 * alone; the rest waits for the next turn. */
			late = in;
			break;
		}
		t0 = coord_trace_now_us();
		if (cs_accept(cs, in, &req, t0) != 0)
			continue;
		items[n].in = in;
		items[n].req = req;
		items[n].t0_us = t0;
		n++;
	}
	for (i = 0; i < n; i++) {
		if (items[i].req == NULL)
			continue;
		for (j = i + 1; j < n; j++) {
			if (items[j].req == NULL ||
			    !cs_same_request(items[i].in, items[i].req, items[j].in, items[j].req))
				continue;
			rpc_server_drop(cs->rpc, items[i].in);
			berth__request__free_unpacked(items[i].req, NULL);
			items[i].in = items[j].in;
			items[i].req = items[j].req;
			items[i].t0_us = items[j].t0_us; /* a parked claim's wait, too */
			items[j].req = NULL;
		}
		cs_handle(cs, items[i].in, items[i].req, items[i].t0_us);
	}
	free(items);
	t0 = coord_trace_now_us();
	if (late != NULL && cs_accept(cs, late, &req, t0) == 0)
		cs_handle(cs, late, req, t0);
}

/* Executes every held claim again, in arrival order. With final set,
 * only those whose wait is over, for the last time. */
static void
cs_retry_parked(struct coord_server *cs, int final)
{
	int64_t now = coord_trace_now_us();
	struct coord_pending *list = coord_park_take(&cs->park, final, now), *p;

	while ((p = list) != NULL) {
		list = p->next;
		p->next = NULL;
		cs_exec(cs, p, !final && p->deadline_us > now);
	}
}

/* How long poll may sleep: the next held claim's deadline, the next
 * activation falling due, the next safety-net retry, the next heartbeat. */
static int
cs_timeout(struct coord_server *cs)
{
	int64_t wall, host = coord_hosts_due_in(cs->db, clock_mono_ms());
	int ms;

	if (cs->wake)
		return 0;
	if (cs->park.head == NULL) {
		ms = CS_BEAT_MS;
	} else {
		wall = clock_wall_ms();
		ms = coord_park_sleep_ms(&cs->park, coord_trace_now_us(), wall,
					 coord_sched_next_wake(cs->db, wall), CS_BEAT_MS);
	}
	return host < ms ? (int)host : ms;
}

/* Held claims: departures, wake-ups, due work, deadlines. */
static void
cs_tend_parked(struct coord_server *cs)
{
	int retry;

	coord_park_drop_orphans(&cs->park, cs->rpc);
	if (cs->park.head == NULL) {
		cs->wake = 0;
		return;
	}
	retry = coord_park_retry_now(&cs->park, cs->wake, coord_trace_now_us(), clock_wall_ms());
	cs->wake = 0;
	if (retry)
		cs_retry_parked(cs, 0);
	if (coord_park_expired(&cs->park, coord_trace_now_us()))
		cs_retry_parked(cs, 1);
}

/* ------------------------------------------------------------- the loop */

/*
 * A large reply is built from many small allocations (a list of 45 000
 * tickets: ~25 MB of decoded reply for ~3 MB packed). Freed, they stay in
 * malloc's heap, below allocations that outlive them, and the process kept
 * ~30 MB resident at rest after one `berth list` at 100 000 tickets.
 * malloc_trim gives the free pages back. Twice: after the turn that built
 * the reply, and after the next one, when nng has sent and freed its copy
 * of the bytes.
 */
static void
cs_trim(struct coord_server *cs)
{
	if (cs->trim == 0)
		return;
	cs->trim--;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

int
coord_server_run(struct coord_server *cs, int stopfd)
{
	struct pollfd pfd[3];
	struct rpc_incoming *in;
	struct coord_pending *p, *next;
	int n, rv = 0;

	pfd[0].fd = rpc_server_fd(cs->rpc);
	pfd[0].events = POLLIN;
	pfd[1].fd = stopfd;
	pfd[1].events = POLLIN;
	observe_beat("running");
	log_info("serving %s (pid %d)", cs->url, (int)getpid());
	for (;;) {
		/* Another host's coordinator on the store may wake ours. */
		pfd[2].fd = coord_db_wake_fd(cs->db);
		pfd[2].events = POLLIN;
		pfd[2].revents = 0;
		n = poll(pfd, pfd[2].fd >= 0 ? 3 : 2, cs_timeout(cs));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			rv = -1;
			break;
		}
		observe_beat(NULL);
		if (pfd[1].revents != 0)
			break;
		if (rpc_server_mend(cs->rpc) < 0) {
			log_error("cannot listen on %s again; stopping so the launcher restarts "
				  "the coordinator",
				  cs->url);
			rv = -1;
			break;
		}
		if (pfd[2].fd >= 0 && pfd[2].revents != 0 && coord_db_woken(cs->db))
			cs->wake = 1;
		/* What arrived and the held claims it may have made eligible
		 * are decided in one group: one COMMIT, then every answer. */
		cs_serve_queued(cs);
		cs_tend_parked(cs);
		cs_flush(cs);
		if (cs->wake_others) {
			coord_db_wake_others(cs->db);
			cs->wake_others = 0;
		}
		/* This host's lease (DESIGN §13), between groups. */
		if (coord_hosts_tend(cs->db, clock_mono_ms(), 0) != 0)
			log_warn("cannot renew the host lease: %s", coord_db_errmsg(cs->db));
		/* Lines the trace file refused (a full disk) are written as
		 * soon as it takes them, at the latest one beat later. */
		coord_trace_flush(cs->trace);
		cs_trim(cs);
	}

	/* Stop taking requests: what is still queued is not answered (its
	 * sender retries with the same req_id and reaches the next
	 * coordinator); held claims are answered nothing_due so their
	 * supervisors need not wait out their timeouts. */
	observe_beat("stopping");
	n = 0;
	while ((in = rpc_server_next(cs->rpc)) != NULL) {
		rpc_server_drop(cs->rpc, in);
		n++;
	}
	if (n > 0)
		log_info("stopping: %d queued request(s) left for their senders to retry", n);
	for (p = coord_park_take(&cs->park, 0, 0); p != NULL; p = next) {
		next = p->next;
		cs_trace(cs, p->req, COORD_DENIED, "nothing_due", p->t0_us);
		if (p->last != NULL)
			rpc_server_reply_raw(cs->rpc, p->in, p->last, p->last_len);
		else
			rpc_server_drop(cs->rpc, p->in);
		coord_pending_free(p);
	}
	return rv;
}
