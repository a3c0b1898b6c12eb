/*
 * The rpc client: one Berth__Request, one Berth__Reply, over nng req/rep on
 * ipc://$BERTH_HOME/coordinator.sock (DESIGN §5).
 *
 * A plain REQ socket, dialled without blocking so nng keeps redialling
 * while the coordinator is down. rpc_call() does its own resends instead of
 * nng's: the same packed bytes (the same req_id) are sent again every retry
 * interval and at once when the connection drops, so a coordinator restart
 * is ridden out and every retry is visible to the observer. nng's own
 * resend timer is switched off for rpc_call (it would resend behind our
 * back) and switched on for the asynchronous rpc_send(), where nobody is
 * watching the clock and a dropped connection must still lead to a resend.
 *
 * Short-lived clients (the CLI) take the direct path first: one plain
 * non-blocking AF_UNIX connection per call that speaks nng's SP-over-IPC
 * framing itself (rpc_sp.c), so a CLI call that finds the coordinator up
 * never starts nng (its thread pool and the hand-offs between its threads
 * were most of a CLI call's wall time; docs/PERFORMANCE.md). Anything
 * unusual (no listener, no answer within the retry interval, a dropped
 * connection, bytes that do not parse) ends the direct attempt, and
 * rpc_call carries on through nng with the same bytes and req_id, so a
 * coordinator restart is ridden out exactly as before and nothing is
 * decided twice.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "ids.h"
#include "log.h"
#include "msg.h"
#include "rpc_int.h"

static rpc_observer_fn rpc_observer;

void
rpc_set_observer(rpc_observer_fn fn)
{
	rpc_observer = fn;
}

/* The observer sees the instance the request was sent with: rpc_call()
 * restores the caller's request after packing, so the client's instance is
 * lent to it for the call (the trace matches ring records to decisions by
 * instance and request id). */
static void
rpc_observe(const struct rpc_client *c, const char *event, Berth__Request *req,
	    const Berth__Reply *rep, int64_t latency_us)
{
	char *instance = req->instance;

	if (rpc_observer == NULL)
		return;
	if (req->instance == NULL)
		req->instance = (char *)rpc_client_instance(c);
	rpc_observer(event, req, rep, latency_us);
	req->instance = instance;
}

struct rpc_client {
	nng_socket sock;
	int nng_up;  /* sock is open and dialling */
	int direct;  /* try one plain connection per call first (rpc_call_direct) */
	int held_fd; /* a direct connection that must outlive its call, or -1 */
	char url[PATH_MAX + 8];
	char actor[32];
	char instance[17];
	char *token;
	rpc_slow_fn slow_fn;
	void *slow_arg;
	rpc_abort_fn abort_fn;
	void *abort_arg;

	/* The asynchronous request in flight (rpc_send). */
	nng_aio *send_aio;
	Berth__Request *async_req;
	uint64_t async_id;
	int64_t async_sent_us;

	/* The connection, watched through pipe notifications (nng's threads):
	 * how many pipes are up, and since when there has been none. */
	int redials;
	_Atomic int pipes;
	_Atomic int64_t no_pipe_since_us;
	int64_t redialed_us;
};

/* A connection with no pipe for this long while a request waits is given a
 * new dialer (see rpc_redial_if_stuck). */
#define RPC_REDIAL_MS   2000
#define RPC_REDIALS_MAX 8

/*
 * One instance id and one request-id counter per process, shared by all of
 * its clients: a supervisor with a long-poll claim client and a control
 * client is one sender (one lifeline in the trace, one owner of its runs),
 * and its request ids never collide, so a stored reply is only ever replayed
 * to the request that produced it.
 */
static char rpc_instance[17];
static pthread_once_t rpc_instance_once = PTHREAD_ONCE_INIT;
static int rpc_instance_rc;
static _Atomic uint64_t rpc_last_req_id;

static void
rpc_instance_init(void)
{
	rpc_instance_rc = ids_instance(rpc_instance);
}

static void
rpc_pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct rpc_client *c = arg;

	if (ev == NNG_PIPE_EV_ADD_POST)
		atomic_fetch_add(&c->pipes, 1);
	else if (atomic_fetch_sub(&c->pipes, 1) == 1)
		atomic_store(&c->no_pipe_since_us, rpc_now_us());
}

static struct rpc_client *
rpc_client_alloc(const char *url, const char *actor)
{
	struct rpc_client *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_error("rpc: out of memory");
		return NULL;
	}
	snprintf(c->url, sizeof(c->url), "%s", url);
	snprintf(c->actor, sizeof(c->actor), "%s", actor);
	pthread_once(&rpc_instance_once, rpc_instance_init);
	memcpy(c->instance, rpc_instance, sizeof(c->instance));
	if (rpc_instance_rc != 0) {
		log_error("rpc: cannot make an instance id");
		free(c);
		return NULL;
	}
	return c;
}

/* Opens the REQ socket and starts dialling, once. */
static int
rpc_nng_up(struct rpc_client *c)
{
	int rv;

	if (c->nng_up)
		return 0;
	if ((rv = nng_req0_open(&c->sock)) != 0) {
		log_error("rpc: nng_req0_open: %s", nng_strerror(rv));
		return rpc_errno(rv);
	}
	/* Reconnect fast: a restarted coordinator should be found within a
	 * fraction of the retry interval. */
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 20);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 250);
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, RPC_REPLY_MAX);
	/* Non-blocking: the coordinator may be down or restarting; nng keeps
	 * trying in the background and a send waits for the connection. */
	atomic_store(&c->no_pipe_since_us, rpc_now_us());
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, rpc_pipe_event, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, rpc_pipe_event, c);
	if ((rv = nng_dial(c->sock, c->url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		log_error("rpc: cannot dial %s: %s", c->url, nng_strerror(rv));
		nng_close(c->sock);
		return rpc_errno(rv);
	}
	c->nng_up = 1;
	return 0;
}

uint64_t
rpc_next_req_id(void)
{
	return ++rpc_last_req_id;
}

struct rpc_client *
rpc_client_open(const char *url, const char *actor)
{
	struct rpc_client *c = rpc_client_alloc(url, actor);

	if (c == NULL)
		return NULL;
	c->held_fd = -1;
	if (rpc_nng_up(c) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

struct rpc_client *
rpc_client_open_direct(const char *url, const char *actor)
{
	struct rpc_client *c = rpc_client_alloc(url, actor);

	if (c != NULL) {
		c->held_fd = -1;
		c->direct = strncmp(url, "ipc://", 6) == 0;
	}
	return c;
}

/*
 * nng 1.5.2 stops a dialer or a listener for good when a connection ends
 * during the SP handshake by a write that fails with EPIPE: the transport
 * maps EPIPE to NNG_ECLOSED and the core reads that as "closed by the user"
 * (nanomsg/nng#1518, fixed in 1.6.0; see docs/DECISIONS.md). On the client's
 * side that happens when the coordinator dies just after accepting our
 * connection: the client would then wait forever on a coordinator that is
 * back up. So: while a request waits, no pipe has existed for RPC_REDIAL_MS,
 * and the coordinator's socket completes an SP handshake (it is up; our
 * dialer is the one stuck), add a new dialer. A request queued on the socket
 * goes out on the new connection, with the same bytes and request id, so
 * nothing is decided twice. The old dialer is left alone: closing it can
 * block inside nng, and a stuck dialer costs nothing. RPC_REDIALS_MAX bounds
 * how many a client ever adds.
 *
 * The probe must not trip the same bug in the coordinator: a plain connect
 * and close makes the coordinator's handshake write fail with EPIPE and
 * stops its listener. So it speaks the handshake itself, as a REQ peer, and
 * closes only after the coordinator's half has arrived. A probe still
 * unanswered after RPC_PROBE_MS (a stalled coordinator) is held open until
 * the client closes; should it end before the coordinator wrote its half,
 * the coordinator mends its listener (rpc_server_mend).
 */
#define RPC_PROBE_MS 1000

static int
rpc_coordinator_accepts(struct rpc_client *c)
{
	int fd, ok = 0;
	int64_t end = rpc_now_us() + RPC_PROBE_MS * 1000;

	if ((fd = rpc_sp_probe_open(c->url)) < 0)
		return 0;
	/* The 8 bytes may come in pieces; peek until all are there. */
	while ((ok = rpc_sp_probe_heard(fd, 50)) == 0 && rpc_now_us() < end)
		;
	if (ok == 0 && c->held_fd < 0)
		c->held_fd = fd; /* never hang up before it has answered */
	else
		close(fd);
	return ok == 1;
}

static void
rpc_redial_if_stuck(struct rpc_client *c)
{
	int64_t now = rpc_now_us();
	nng_dialer d;
	int rv;

	if (!c->nng_up || c->redials >= RPC_REDIALS_MAX || atomic_load(&c->pipes) > 0 ||
	    now - atomic_load(&c->no_pipe_since_us) < RPC_REDIAL_MS * 1000 ||
	    now - c->redialed_us < RPC_REDIAL_MS * 1000)
		return;
	c->redialed_us = now;
	if (!rpc_coordinator_accepts(c))
		return; /* the coordinator is down: nng's dialer keeps trying */
	if ((rv = nng_dial(c->sock, c->url, &d, NNG_FLAG_NONBLOCK)) != 0) {
		log_warn("rpc: redialling %s: %s", c->url, nng_strerror(rv));
		return;
	}
	c->redials++;
	log_info("rpc: no connection to %s for %d ms while it accepts: dialled again", c->url,
		 RPC_REDIAL_MS);
}

/* Forgets an asynchronous request still waiting for a connection. */
static void
rpc_async_reset(struct rpc_client *c)
{
	nng_msg *m;

	if (c->send_aio == NULL)
		return;
	nng_aio_cancel(c->send_aio);
	nng_aio_wait(c->send_aio);
	/* A send that did not complete leaves its message with us. */
	if ((m = nng_aio_get_msg(c->send_aio)) != NULL) {
		nng_aio_set_msg(c->send_aio, NULL);
		nng_msg_free(m);
	}
}

void
rpc_client_close(struct rpc_client *c)
{
	if (c == NULL)
		return;
	rpc_async_reset(c);
	if (c->nng_up)
		nng_close(c->sock);
	if (c->held_fd >= 0)
		close(c->held_fd);
	if (c->send_aio != NULL)
		nng_aio_free(c->send_aio);
	if (c->async_req != NULL)
		berth__request__free_unpacked(c->async_req, NULL);
	free(c->token);
	free(c);
}

int
rpc_client_uses_nng(const struct rpc_client *c)
{
	return c->nng_up;
}

const char *
rpc_client_instance(const struct rpc_client *c)
{
	return c->instance;
}

void
rpc_client_set_token(struct rpc_client *c, const char *token)
{
	free(c->token);
	c->token = token != NULL ? strdup(token) : NULL;
}

void
rpc_client_on_slow(struct rpc_client *c, rpc_slow_fn fn, void *arg)
{
	c->slow_fn = fn;
	c->slow_arg = arg;
}

void
rpc_client_on_abort(struct rpc_client *c, rpc_abort_fn fn, void *arg)
{
	c->abort_fn = fn;
	c->abort_arg = arg;
}

int
rpc_stop_signal_pending(void *arg)
{
	sigset_t pending;

	(void)arg;
	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/*
 * Fills the envelope and packs req into a malloc'd buffer. The strings are
 * borrowed only for packing and restored afterwards, so the caller's struct
 * never points into ours; the request id stays set, so calling again with
 * the same req is a retry of the same request.
 */
static int
rpc_pack_request(struct rpc_client *c, Berth__Request *req, uint8_t **out, size_t *outlen)
{
	char *actor = req->actor, *instance = req->instance, *token = req->token;
	protobuf_c_boolean has_version = req->has_version;
	uint32_t version = req->version;
	size_t len;
	uint8_t *buf;

	if (!req->has_req_id || req->req_id == 0) {
		req->req_id = ++rpc_last_req_id;
		req->has_req_id = 1;
	}
	req->has_version = 1;
	req->version = BERTH_PROTOCOL_VERSION;
	req->actor = c->actor;
	req->instance = c->instance;
	if (req->token == NULL)
		req->token = c->token;

	len = berth__request__get_packed_size(req);
	if (len > RPC_MAX_MSG) {
		log_error("rpc: %s request of %zu bytes is over the %d byte limit",
			  msg_verb_name(req), len, RPC_MAX_MSG);
		buf = NULL;
	} else if ((buf = malloc(len > 0 ? len : 1)) != NULL) {
		berth__request__pack(req, buf);
	} else {
		log_error("rpc: out of memory packing %zu bytes", len);
	}

	req->actor = actor;
	req->instance = instance;
	req->token = token;
	req->has_version = has_version;
	req->version = version;
	if (buf == NULL)
		return len > RPC_MAX_MSG ? -EMSGSIZE : -ENOMEM;
	*out = buf;
	*outlen = len;
	return 0;
}

/* Decodes a reply for request id; NULL (and freed) when it is not ours. A
 * reply with req_id 0 is the server's answer to bytes it could not read as
 * a request at all, and it is ours: REQ matches replies to requests. */
static Berth__Reply *
rpc_unpack_reply(const void *buf, size_t len, uint64_t id)
{
	Berth__Reply *r;

	if ((r = berth__reply__unpack(NULL, len, buf)) == NULL) {
		log_warn("rpc: discarding a reply of %zu bytes that does not decode", len);
		return NULL;
	}
	if (r->req_id != id && !(r->req_id == 0 && r->result_case == BERTH__REPLY__RESULT_ERROR)) {
		log_debug("rpc: discarding a reply to request %llu while waiting for %llu",
			  (unsigned long long)r->req_id, (unsigned long long)id);
		berth__reply__free_unpacked(r, NULL);
		return NULL;
	}
	return r;
}

static void
rpc_slow(struct rpc_client *c, int slow, const Berth__Request *req, int64_t waited_us, int answered)
{
	char what[PATH_MAX + 128];

	if (c->slow_fn == NULL)
		return;
	if (slow)
		snprintf(what, sizeof(what), "no answer from %s yet; retrying %s", c->url,
			 msg_verb_name(req));
	else
		snprintf(what, sizeof(what), "%s %s after %lld ms", msg_verb_name(req),
			 answered ? "answered" : "gave up", (long long)(waited_us / 1000));
	c->slow_fn(c->slow_arg, slow, what);
}

/* How long to wait before resending: a claim the coordinator may hold open
 * for wait_ms is not resent while it is legitimately held. */
static int64_t
rpc_retry_ms(const Berth__Request *req)
{
	if (req->verb_case == BERTH__REQUEST__VERB_CLAIM && req->claim != NULL)
		return (int64_t)req->claim->wait_ms + RPC_RETRY_MS;
	return RPC_RETRY_MS;
}

/* One attempt on the direct path: 0 with *out set, or a negative errno
 * (then rpc_call falls back to nng). */
static int
rpc_call_direct(struct rpc_client *c, const Berth__Request *req, const uint8_t *buf, size_t len,
		Berth__Reply **out, int64_t until_us)
{
	uint8_t *body;
	size_t bodylen;
	int err;

	*out = NULL;
	if ((err = rpc_sp_call(c->url, buf, len, &body, &bodylen, until_us, &c->held_fd)) != 0)
		return err;
	*out = rpc_unpack_reply(body, bodylen, req->req_id);
	free(body);
	return *out != NULL ? 0 : -EPROTO;
}

int
rpc_call(struct rpc_client *c, Berth__Request *req, Berth__Reply **reply, int timeout_ms)
{
	uint8_t *buf = NULL;
	size_t len;
	int64_t start, deadline, next_send, now, retry_us;
	int rv, err, sends = 0, slow = 0;
	Berth__Reply *r = NULL;

	*reply = NULL;
	if ((err = rpc_pack_request(c, req, &buf, &len)) != 0)
		return err;
	rpc_async_reset(c);
	retry_us = rpc_retry_ms(req) * 1000;
	start = rpc_now_us();
	deadline = timeout_ms > 0 ? start + (int64_t)timeout_ms * 1000 : INT64_MAX;

	if (c->direct) {
		rpc_observe(c, "sent", req, NULL, 0);
		sends++;
		err = rpc_call_direct(c, req, buf, len, &r,
				      deadline - start < retry_us ? deadline : start + retry_us);
		if (r != NULL)
			goto done;
		/* From now on this client goes through nng. */
		c->direct = 0;
		log_debug("rpc: direct %s to %s: %s; going through nng", msg_verb_name(req), c->url,
			  strerror(-err));
	}
	if ((err = rpc_nng_up(c)) != 0) {
		free(buf);
		return err;
	}
	/* Our own resends only (see the top of the file). */
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);

	for (;;) {
		now = rpc_now_us();
		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		if (c->abort_fn != NULL && c->abort_fn(c->abort_arg)) {
			log_info("rpc: %s to %s given up: the process is stopping",
				 msg_verb_name(req), c->url);
			err = -ECANCELED;
			break;
		}
		if (!slow && sends > 0 && now - start > RPC_SLOW_MS * 1000) {
			slow = 1;
			rpc_slow(c, 1, req, now - start, 0);
		}

		rpc_redial_if_stuck(c);
		/* Send (again). While the coordinator is down the send waits
		 * for a connection; wait in slices so retries stay visible. */
		nng_socket_set_ms(
			c->sock, NNG_OPT_SENDTIMEO,
			(nng_duration)((deadline - now < retry_us ? deadline - now : retry_us) /
					       1000 +
				       1));
		rpc_observe(c, sends == 0 ? "sent" : "retry", req, NULL, now - start);
		sends++;
		rv = nng_send(c->sock, buf, len, 0);
		if (rv == NNG_ETIMEDOUT)
			continue; /* not connected yet: try again */
		if (rv != 0) {
			log_error("rpc: sending %s to %s: %s", msg_verb_name(req), c->url,
				  nng_strerror(rv));
			err = rpc_errno(rv);
			break;
		}
		next_send = rpc_now_us() + retry_us;

		/* Wait for our reply until the next resend is due. */
		for (;;) {
			void *in = NULL;
			size_t inlen = 0;
			int64_t until = next_send < deadline ? next_send : deadline;

			now = rpc_now_us();
			if (now >= until) {
				rv = NNG_ETIMEDOUT;
				break;
			}
			nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO,
					  (nng_duration)((until - now) / 1000 + 1));
			rv = nng_recv(c->sock, &in, &inlen, NNG_FLAG_ALLOC);
			if (rv != 0)
				break;
			r = rpc_unpack_reply(in, inlen, req->req_id);
			nng_free(in, inlen);
			if (r != NULL)
				break;
			/* Not ours; the REQ state machine is done with this
			 * request, so resend. */
			rv = NNG_ESTATE;
			break;
		}
		if (r != NULL) {
			err = 0;
			break;
		}
		if (rv == NNG_ETIMEDOUT)
			continue; /* resend: the same bytes, the same req_id */
		if (rv == NNG_ECONNRESET || rv == NNG_ESTATE || rv == NNG_ECANCELED) {
			/* The connection dropped under the request: resend as
			 * soon as there is a new one, but never spin against a
			 * peer that accepts and hangs up at once. */
			poll(NULL, 0, 50);
			continue;
		}
		log_error("rpc: receiving the reply to %s from %s: %s", msg_verb_name(req), c->url,
			  nng_strerror(rv));
		err = rpc_errno(rv);
		break;
	}

done:
	now = rpc_now_us();
	if (r != NULL)
		rpc_observe(c, "reply", req, r, now - start);
	else if (err == -ETIMEDOUT)
		rpc_observe(c, "timeout", req, NULL, now - start);
	if (slow)
		rpc_slow(c, 0, req, now - start, r != NULL);
	free(buf);
	*reply = r;
	return err;
}

int
rpc_send(struct rpc_client *c, Berth__Request *req)
{
	uint8_t *buf = NULL;
	size_t len;
	nng_msg *m;
	int rv, err;

	if ((err = rpc_nng_up(c)) != 0)
		return err;
	if ((err = rpc_pack_request(c, req, &buf, &len)) != 0)
		return err;
	if (c->send_aio == NULL && (rv = nng_aio_alloc(&c->send_aio, NULL, NULL)) != 0) {
		log_error("rpc: nng_aio_alloc: %s", nng_strerror(rv));
		free(buf);
		return rpc_errno(rv);
	}
	rpc_async_reset(c);
	if ((rv = nng_msg_alloc(&m, len)) != 0) {
		log_error("rpc: cannot allocate %zu bytes: %s", len, nng_strerror(rv));
		free(buf);
		return rpc_errno(rv);
	}
	memcpy(nng_msg_body(m), buf, len);
	if (c->async_req != NULL)
		berth__request__free_unpacked(c->async_req, NULL);
	/* Our copy for the observer, with the envelope as it was sent. */
	c->async_req = berth__request__unpack(NULL, len, buf);
	c->async_id = req->req_id;
	c->async_sent_us = rpc_now_us();
	free(buf);

	/* Nobody resends for us here: let nng resend the same bytes after the
	 * retry interval, and at once when the connection drops. */
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, (nng_duration)rpc_retry_ms(req));
	/* Queued in the socket until a connection exists; never blocks. */
	nng_aio_set_msg(c->send_aio, m);
	nng_aio_set_timeout(c->send_aio, NNG_DURATION_INFINITE);
	nng_send_aio(c->sock, c->send_aio);
	rpc_observe(c, "sent", c->async_req, NULL, 0);
	return 0;
}

int
rpc_fd(struct rpc_client *c)
{
	int fd = -1, rv;

	if (rpc_nng_up(c) != 0)
		return -1;
	if ((rv = nng_socket_get_int(c->sock, NNG_OPT_RECVFD, &fd)) != 0) {
		log_error("rpc: cannot get the receive fd: %s", nng_strerror(rv));
		return -1;
	}
	return fd;
}

int
rpc_try_recv(struct rpc_client *c, Berth__Reply **reply)
{
	void *in = NULL;
	size_t inlen = 0;
	Berth__Reply *r;
	int rv;

	*reply = NULL;
	if (!c->nng_up)
		return -EAGAIN; /* nothing was ever sent */
	for (;;) {
		rv = nng_recv(c->sock, &in, &inlen, NNG_FLAG_ALLOC | NNG_FLAG_NONBLOCK);
		if (rv == NNG_EAGAIN || rv == NNG_ETIMEDOUT) {
			rpc_redial_if_stuck(c);
			return -EAGAIN;
		}
		if (rv == NNG_ESTATE)
			return -EAGAIN; /* nothing in flight */
		if (rv != 0) {
			log_warn("rpc: receiving from %s: %s", c->url, nng_strerror(rv));
			return rpc_errno(rv);
		}
		r = rpc_unpack_reply(in, inlen, c->async_id);
		nng_free(in, inlen);
		if (r != NULL)
			break;
		/* REQ drops replies to abandoned requests itself; a reply
		 * naming another request ends this one: the caller resends. */
		return -EPROTO;
	}
	rpc_observe(c, "reply", c->async_req, r, rpc_now_us() - c->async_sent_us);
	*reply = r;
	return 0;
}