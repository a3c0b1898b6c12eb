/*
 * The rpc layer: one Berth__Request, one Berth__Reply, over nng req/rep on
 * ipc://$BERTH_HOME/coordinator.sock (DESIGN §5).
 *
 * Client. A plain REQ socket, dialled without blocking so nng keeps
 * redialling while the coordinator is down. rpc_call() does its own resends
 * instead of nng's: the same packed bytes (the same req_id) are sent again
 * every retry interval and at once when the connection drops, so a
 * coordinator restart is ridden out and every retry is visible to the
 * observer. nng's own resend timer is switched off for rpc_call (it would
 * resend behind our back) and switched on for the asynchronous rpc_send(),
 * where nobody is watching the clock and a dropped connection must still
 * lead to a resend.
 *
 * Server. A REP socket with N contexts, each with its own aio. The aio
 * callbacks run on nng's threads and do nothing but queue the received
 * message and wake an eventfd; the coordinator's loop takes requests with
 * rpc_server_next() and answers with rpc_server_reply(), whose send
 * completion re-arms the context's receive. No decision is ever taken on an
 * nng thread.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "ids.h"
#include "log.h"
#include "rpc.h"

#define RPC_RETRY_MS 1000    /* resend interval of rpc_call */
#define RPC_SLOW_MS 1000     /* rpc_client_on_slow fires after this long */
#define RPC_REPLY_MAX (64 * 1024 * 1024) /* replies (lists) may be large */
#define RPC_SERVER_RECV_MAX (2 * RPC_MAX_MSG) /* beyond: nng drops the pipe */

static rpc_observer_fn rpc_observer;

/* Real monotonic time: tests fake the clock of common/clock.c, and a faked
 * clock must never stall a network timeout. */
static int64_t
rpc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
rpc_errno(int rv)
{
	switch (rv) {
	case 0:
		return 0;
	case NNG_ETIMEDOUT:
		return -ETIMEDOUT;
	case NNG_EAGAIN:
		return -EAGAIN;
	case NNG_ENOMEM:
		return -ENOMEM;
	case NNG_EMSGSIZE:
		return -EMSGSIZE;
	case NNG_ECLOSED:
		return -EBADF;
	case NNG_ECONNREFUSED:
		return -ECONNREFUSED;
	case NNG_ECONNRESET:
		return -ECONNRESET;
	case NNG_EADDRINUSE:
		return -EADDRINUSE;
	case NNG_EPERM:
		return -EPERM;
	default:
		return -EIO;
	}
}

const char *
rpc_verb_name(const Berth__Request *req)
{
	const ProtobufCFieldDescriptor *f;

	if (req == NULL || req->verb_case == BERTH__REQUEST__VERB__NOT_SET)
		return "none";
	/* The oneof's field names are the verb names of the trace. */
	f = protobuf_c_message_descriptor_get_field(&berth__request__descriptor,
						    (unsigned)req->verb_case);
	return f != NULL ? f->name : "unknown";
}

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

/* ------------------------------------------------------------- client */

struct rpc_client {
	nng_socket sock;
	int nng_up;    /* sock is open and dialling */
	int direct;    /* try one plain connection per call first (rpc_call_direct) */
	int held_fd;   /* a direct connection that must outlive its call, or -1 */
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
#define RPC_REDIAL_MS 2000
/* How often the server looks at its listener's error count. */
#define RPC_MEND_MS 500
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

/* Opens a probe connection to an ipc:// URL and sends a REQ peer's half of
 * the SP handshake (0, 'S', 'P', version 0, protocol big-endian, 0, 0).
 * Non-blocking; -1 if there is no listener. */
static int
rpc_probe_open(const char *url)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = url + strlen("ipc://");
	const uint8_t hello[8] = {0, 'S', 'P', 0, NNG_REQ0_SELF >> 8, NNG_REQ0_SELF & 0xff, 0,
				  0};
	int fd;

	if (strncmp(url, "ipc://", 6) != 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Waits up to wait_ms for the listener's half of the handshake: 1 once it
 * has arrived (the probe may then be closed safely), 0 if not yet, -1 if
 * the listener hung up or answered something else. */
static int
rpc_probe_heard(int fd, int wait_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uint8_t got[8];
	ssize_t n;

	if (poll(&pfd, 1, wait_ms) != 1)
		return 0;
	n = recv(fd, got, sizeof(got), MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0 || (n >= 3 && (got[0] != 0 || got[1] != 'S' || got[2] != 'P')))
		return -1;
	if (n < (ssize_t)sizeof(got)) {
		poll(NULL, 0, 1); /* the rest is on its way */
		return 0;
	}
	return 1;
}

static int
rpc_coordinator_accepts(struct rpc_client *c)
{
	int fd, ok = 0;
	int64_t end = rpc_now_us() + RPC_PROBE_MS * 1000;

	if ((fd = rpc_probe_open(c->url)) < 0)
		return 0;
	/* The 8 bytes may come in pieces; peek until all are there. */
	while ((ok = rpc_probe_heard(fd, 50)) == 0 && rpc_now_us() < end)
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
			  rpc_verb_name(req), len, RPC_MAX_MSG);
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
rpc_slow(struct rpc_client *c, int slow, const Berth__Request *req, int64_t waited_us,
	 int answered)
{
	char what[PATH_MAX + 128];

	if (c->slow_fn == NULL)
		return;
	if (slow)
		snprintf(what, sizeof(what), "no answer from %s yet; retrying %s", c->url,
			 rpc_verb_name(req));
	else
		snprintf(what, sizeof(what), "%s %s after %lld ms", rpc_verb_name(req),
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

/*
 * The direct path, for short-lived clients (the CLI): one plain non-blocking
 * AF_UNIX connection per call that speaks nng's SP-over-IPC framing itself,
 * so a CLI call that finds the coordinator up never starts nng (its thread
 * pool and the hand-offs between its threads were most of a CLI call's wall
 * time; docs/PERFORMANCE.md). The framing (nng's ipc transport, stable since
 * nanomsg): after the 8-byte handshake each message is a type byte 1, a
 * 64-bit big-endian length, then the message; a REQ message starts with a
 * 32-bit big-endian request id with the high bit set, which REP echoes
 * before its reply's body.
 *
 * Anything unusual (no listener, no answer within the retry interval, a
 * dropped connection, bytes that do not parse) ends the direct attempt, and
 * rpc_call carries on through nng with the same bytes and req_id, so a
 * coordinator restart is ridden out exactly as before and nothing is
 * decided twice. The connection is closed only once the coordinator's half
 * of the handshake has arrived (see rpc_coordinator_accepts): otherwise it is
 * held until rpc_client_close.
 */
static int
rpc_fd_wait(int fd, short events, int64_t until_us)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int64_t left;
	int n;

	for (;;) {
		left = (until_us - rpc_now_us() + 999) / 1000;
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int
rpc_fd_read(int fd, void *buf, size_t len, int64_t until_us)
{
	uint8_t *p = buf;
	ssize_t n;
	int err;

	while (len > 0) {
		n = recv(fd, p, len, 0);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if ((err = rpc_fd_wait(fd, POLLIN, until_us)) != 0)
			return err;
	}
	return 0;
}

static int
rpc_fd_write(int fd, struct iovec *iov, int niov, int64_t until_us)
{
	struct msghdr mh = {0};
	ssize_t n;
	int err;

	while (niov > 0) {
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)niov;
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if ((err = rpc_fd_wait(fd, POLLOUT, until_us)) != 0)
				return err;
			continue;
		}
		while (niov > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			niov--;
		}
		if (niov > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static void
rpc_put_be(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t
rpc_get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* One attempt: 0 with *out set, or a negative errno (then fall back). */
static int
rpc_call_direct(struct rpc_client *c, const Berth__Request *req, const uint8_t *buf, size_t len,
		Berth__Reply **out, int64_t until_us)
{
	static _Atomic uint32_t sp_id;
	uint8_t hello[8], head[9], id[4];
	struct iovec iov[3];
	uint8_t *body = NULL;
	uint64_t rlen;
	uint32_t want;
	int fd, err, heard;

	*out = NULL;
	if ((fd = rpc_probe_open(c->url)) < 0)
		return -ECONNREFUSED;
	/* The coordinator's half of the handshake. */
	while ((heard = rpc_probe_heard(fd, 50)) == 0 && rpc_now_us() < until_us)
		;
	if (heard != 1) {
		if (heard == 0)
			c->held_fd = fd; /* never hang up before it has answered */
		else
			close(fd);
		return -ETIMEDOUT;
	}
	if ((err = rpc_fd_read(fd, hello, sizeof(hello), until_us)) != 0 ||
	    rpc_get_be(hello + 4, 2) != NNG_REP0_SELF) {
		close(fd);
		return err != 0 ? err : -EPROTO;
	}

	want = 0x80000000u | ((atomic_fetch_add(&sp_id, 1) + (uint32_t)getpid()) & 0x7fffffffu);
	head[0] = 1;
	rpc_put_be(head + 1, sizeof(id) + len, 8);
	rpc_put_be(id, want, 4);
	iov[0] = (struct iovec){.iov_base = head, .iov_len = sizeof(head)};
	iov[1] = (struct iovec){.iov_base = id, .iov_len = sizeof(id)};
	iov[2] = (struct iovec){.iov_base = (void *)buf, .iov_len = len};
	if ((err = rpc_fd_write(fd, iov, 3, until_us)) != 0)
		goto out;

	/* The reply: frame, the echoed request id, the body. */
	if ((err = rpc_fd_read(fd, head, sizeof(head), until_us)) != 0)
		goto out;
	rlen = rpc_get_be(head + 1, 8);
	if (head[0] != 1 || rlen < sizeof(id) || rlen - sizeof(id) > RPC_REPLY_MAX) {
		err = -EPROTO;
		goto out;
	}
	if ((err = rpc_fd_read(fd, id, sizeof(id), until_us)) != 0)
		goto out;
	if (rpc_get_be(id, 4) != want) {
		err = -EPROTO;
		goto out;
	}
	rlen -= sizeof(id);
	if ((body = malloc(rlen > 0 ? rlen : 1)) == NULL) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = rpc_fd_read(fd, body, rlen, until_us)) != 0)
		goto out;
	if ((*out = rpc_unpack_reply(body, rlen, req->req_id)) == NULL)
		err = -EPROTO;
out:
	free(body);
	close(fd);
	return err;
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
		log_debug("rpc: direct %s to %s: %s; going through nng", rpc_verb_name(req),
			  c->url, strerror(-err));
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
				 rpc_verb_name(req), c->url);
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
		nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO,
				  (nng_duration)((deadline - now < retry_us ? deadline - now
									    : retry_us) /
						 1000 + 1));
		rpc_observe(c, sends == 0 ? "sent" : "retry", req, NULL, now - start);
		sends++;
		rv = nng_send(c->sock, buf, len, 0);
		if (rv == NNG_ETIMEDOUT)
			continue; /* not connected yet: try again */
		if (rv != 0) {
			log_error("rpc: sending %s to %s: %s", rpc_verb_name(req), c->url,
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
		log_error("rpc: receiving the reply to %s from %s: %s", rpc_verb_name(req), c->url,
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

/* ------------------------------------------------------------- reply helpers */

int
rpc_is_granted(const Berth__Reply *r)
{
	return r != NULL && r->result_case == BERTH__REPLY__RESULT_GRANTED;
}

const char *
rpc_denied_reason(const Berth__Reply *r)
{
	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_DENIED || r->denied == NULL)
		return NULL;
	return r->denied->reason != NULL ? r->denied->reason : "";
}

const char *
rpc_fact(const Berth__Reply *r, const char *key)
{
	size_t i;

	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_DENIED || r->denied == NULL)
		return NULL;
	for (i = 0; i < r->denied->n_facts; i++) {
		const Berth__Fact *f = r->denied->facts[i];

		if (f->key != NULL && strcmp(f->key, key) == 0)
			return f->value != NULL ? f->value : "";
	}
	return NULL;
}

void
rpc_describe(const Berth__Reply *r, char *buf, size_t n)
{
	size_t i, off;
	int w;

	if (n == 0)
		return;
	buf[0] = '\0';
	if (r == NULL) {
		snprintf(buf, n, "no reply");
		return;
	}
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED:
		snprintf(buf, n, "granted");
		break;
	case BERTH__REPLY__RESULT_DENIED:
		w = snprintf(buf, n, "denied: %s", rpc_denied_reason(r));
		off = w < 0 ? 0 : (size_t)w;
		for (i = 0; r->denied != NULL && i < r->denied->n_facts && off < n; i++) {
			const Berth__Fact *f = r->denied->facts[i];

			w = snprintf(buf + off, n - off, "%s%s=%s", i == 0 ? " (" : ", ",
				     f->key != NULL ? f->key : "", f->value != NULL ? f->value : "");
			off += w < 0 ? 0 : (size_t)w;
		}
		if (r->denied != NULL && r->denied->n_facts > 0 && off < n)
			snprintf(buf + off, n - off, ")");
		break;
	case BERTH__REPLY__RESULT_ERROR:
		snprintf(buf, n, "error %d: %s", r->error != NULL ? (int)r->error->code : 0,
			 r->error != NULL && r->error->message != NULL ? r->error->message : "");
		break;
	default:
		snprintf(buf, n, "empty reply");
		break;
	}
}

/* ------------------------------------------------------------- server */

enum rpc_ctx_state {
	RPC_CTX_RECV, /* waiting for a request */
	RPC_CTX_BUSY, /* request queued for, or held by, the loop */
	RPC_CTX_SEND, /* reply being sent */
};

/* One nng context: one request in flight. It is the rpc_incoming the loop
 * holds while it decides. */
struct rpc_incoming {
	struct rpc_server *srv;
	nng_ctx ctx;
	nng_aio *aio;
	enum rpc_ctx_state state;
	nng_msg *msg;              /* the request, while BUSY */
	uint32_t pipe;             /* the connection it came on */
	int orphaned;              /* that connection has closed; under mtx */
	struct rpc_incoming *next; /* the ready queue */
};

struct rpc_server {
	nng_socket sock;
	nng_listener listener;
	char url[PATH_MAX + 8];
	uint64_t listen_errors;  /* the listener's "other" errors, last seen */
	int64_t mend_checked_us; /* when rpc_server_mend last looked */
	_Atomic uint64_t adds;   /* connections the socket took, ever */
	int probe_fd;            /* rpc_server_mend's probe, or -1 */
	uint64_t probe_adds;     /* adds when it was opened */
	int64_t probe_us;        /* when it was opened */
	int efd;
	int nctx;
	struct rpc_incoming *ctxs;
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	struct rpc_incoming *head, *tail; /* ready queue, under mtx */
	int sending;                      /* contexts in RPC_CTX_SEND, under mtx */
	int closing;                      /* under mtx */
	uint32_t *pipes;                  /* open connections, under mtx */
	size_t npipes, cappipes;
};

static int
rpc_pipe_live(const struct rpc_server *s, uint32_t id)
{
	size_t i;

	for (i = 0; i < s->npipes; i++)
		if (s->pipes[i] == id)
			return 1;
	return 0;
}

/*
 * Connections coming and going, on nng's threads. A request held by the
 * loop (a parked claim) whose connection closes can never be answered: its
 * sender is gone or will resend on a new connection. Such requests are
 * marked orphaned so the loop can forget them instead of granting work to
 * nobody. A pipe is recorded before it can deliver anything (ADD_PRE) and
 * forgotten after it closed (REM_POST), both under mtx, so a request is
 * marked whichever comes first: its arrival or its connection's end.
 */
static void
rpc_pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct rpc_server *s = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p), *v;
	uint64_t one = 1;
	size_t i;
	int woke = 0;

	pthread_mutex_lock(&s->mtx);
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		if (s->npipes == s->cappipes) {
			size_t cap = s->cappipes ? 2 * s->cappipes : 16;

			if ((v = realloc(s->pipes, cap * sizeof(*v))) == NULL) {
				pthread_mutex_unlock(&s->mtx);
				log_error("rpc: out of memory tracking connections");
				return;
			}
			s->pipes = v;
			s->cappipes = cap;
		}
		s->pipes[s->npipes++] = id;
		atomic_fetch_add(&s->adds, 1);
	} else {
		for (i = 0; i < s->npipes; i++) {
			if (s->pipes[i] == id) {
				s->pipes[i] = s->pipes[--s->npipes];
				break;
			}
		}
		for (i = 0; i < (size_t)s->nctx; i++) {
			struct rpc_incoming *in = &s->ctxs[i];

			if (in->state == RPC_CTX_BUSY && in->pipe == id && !in->orphaned) {
				in->orphaned = 1;
				woke = 1;
			}
		}
	}
	pthread_mutex_unlock(&s->mtx);
	/* Wake the loop, so it forgets the request now rather than at its
	 * deadline. */
	if (woke && write(s->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("rpc: eventfd write: %s", strerror(errno));
}

static void
rpc_ctx_arm(struct rpc_incoming *in)
{
	in->state = RPC_CTX_RECV;
	nng_ctx_recv(in->ctx, in->aio);
}

/* Runs on an nng thread: queue or re-arm, nothing else. */
static void
rpc_ctx_cb(void *arg)
{
	struct rpc_incoming *in = arg;
	struct rpc_server *s = in->srv;
	uint64_t one = 1;
	int rv = nng_aio_result(in->aio);

	if (in->state == RPC_CTX_SEND) {
		if (rv != 0) {
			/* The reply is lost (the client went away); a retry
			 * gets the stored reply. */
			nng_msg_free(nng_aio_get_msg(in->aio));
			nng_aio_set_msg(in->aio, NULL);
		}
		pthread_mutex_lock(&s->mtx);
		s->sending--;
		pthread_cond_broadcast(&s->cond);
		if (s->closing || rv == NNG_ECLOSED) {
			pthread_mutex_unlock(&s->mtx);
			return;
		}
		pthread_mutex_unlock(&s->mtx);
		rpc_ctx_arm(in);
		return;
	}

	if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
		return;
	if (rv != 0) {
		rpc_ctx_arm(in);
		return;
	}
	pthread_mutex_lock(&s->mtx);
	if (s->closing) {
		pthread_mutex_unlock(&s->mtx);
		nng_msg_free(nng_aio_get_msg(in->aio));
		nng_aio_set_msg(in->aio, NULL);
		return;
	}
	in->msg = nng_aio_get_msg(in->aio);
	nng_aio_set_msg(in->aio, NULL);
	in->pipe = (uint32_t)nng_pipe_id(nng_msg_get_pipe(in->msg));
	in->orphaned = !rpc_pipe_live(s, in->pipe);
	in->state = RPC_CTX_BUSY;
	in->next = NULL;
	if (s->tail != NULL)
		s->tail->next = in;
	else
		s->head = in;
	s->tail = in;
	pthread_mutex_unlock(&s->mtx);
	/* Written after the request is queued, so a reader that drained the
	 * eventfd on an empty queue is always woken again. */
	if (write(s->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("rpc: eventfd write: %s", strerror(errno));
}

static int
rpc_ipc_path(const char *url, char *path, size_t n)
{
	if (strncmp(url, "ipc://", 6) != 0)
		return -1;
	if ((size_t)snprintf(path, n, "%s", url + 6) >= n)
		return -1;
	return 0;
}

/* Listens on s->url, the socket private to its owner from the start. */
static int
rpc_server_listen(struct rpc_server *s)
{
	char path[PATH_MAX];
	mode_t old;
	int rv, is_ipc;

	if ((rv = nng_listener_create(&s->listener, s->sock, s->url)) != 0) {
		log_error("rpc: cannot listen on %s: %s", s->url, nng_strerror(rv));
		return -1;
	}
	is_ipc = rpc_ipc_path(s->url, path, sizeof(path)) == 0;
	if (is_ipc)
		nng_listener_set_int(s->listener, NNG_OPT_IPC_PERMISSIONS, 0600);
	/* The socket is created under umask 077, so it is never reachable by
	 * others, not even for the moment before the chmod. */
	old = umask(077);
	rv = nng_listener_start(s->listener, 0);
	umask(old);
	if (rv != 0) {
		log_error("rpc: cannot listen on %s: %s", s->url, nng_strerror(rv));
		nng_listener_close(s->listener);
		return -1;
	}
	if (is_ipc && chmod(path, 0600) != 0) {
		log_error("rpc: chmod 0600 %s: %s", path, strerror(errno));
		nng_listener_close(s->listener);
		return -1;
	}
	s->listen_errors = 0;
	return 0;
}

struct rpc_server *
rpc_server_open(const char *url, int nctx)
{
	struct rpc_server *s;
	int rv, i;

	if (nctx <= 0)
		nctx = 64;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_error("rpc: out of memory");
		return NULL;
	}
	s->efd = -1;
	s->probe_fd = -1;
	pthread_mutex_init(&s->mtx, NULL);
	pthread_cond_init(&s->cond, NULL);
	if ((s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		log_error("rpc: eventfd: %s", strerror(errno));
		goto fail_nosock;
	}
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		log_error("rpc: nng_rep0_open: %s", nng_strerror(rv));
		goto fail_nosock;
	}
	if ((rv = nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_PRE, rpc_pipe_cb, s)) != 0 ||
	    (rv = nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, rpc_pipe_cb, s)) != 0) {
		log_error("rpc: nng_pipe_notify: %s", nng_strerror(rv));
		goto fail;
	}
	/* Oversized requests are received so they can be answered with
	 * ERR_TOO_LARGE; only beyond twice the limit does nng drop the pipe. */
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, RPC_SERVER_RECV_MAX);

	/* The contexts exist before the first connection can: the pipe
	 * callback scans them. */
	if ((s->ctxs = calloc((size_t)nctx, sizeof(*s->ctxs))) == NULL) {
		log_error("rpc: out of memory");
		goto fail;
	}
	for (i = 0; i < nctx; i++) {
		struct rpc_incoming *in = &s->ctxs[i];

		in->srv = s;
		if ((rv = nng_aio_alloc(&in->aio, rpc_ctx_cb, in)) != 0 ||
		    (rv = nng_ctx_open(&in->ctx, s->sock)) != 0) {
			log_error("rpc: cannot open context %d: %s", i, nng_strerror(rv));
			if (in->aio != NULL) {
				nng_aio_free(in->aio);
				in->aio = NULL;
			}
			goto fail;
		}
		s->nctx = i + 1;
	}
	snprintf(s->url, sizeof(s->url), "%s", url);
	if (rpc_server_listen(s) != 0)
		goto fail;

	for (i = 0; i < s->nctx; i++)
		rpc_ctx_arm(&s->ctxs[i]);
	return s;

fail:
	rpc_server_close(s);
	return NULL;
fail_nosock:
	if (s->efd >= 0)
		close(s->efd);
	pthread_mutex_destroy(&s->mtx);
	pthread_cond_destroy(&s->cond);
	free(s);
	return NULL;
}

/*
 * nng 1.5.2 stops a listener for good when a client goes away during the SP
 * handshake so that the listener's half of it fails with EPIPE (see
 * rpc_coordinator_accepts and docs/DECISIONS.md): a client killed right
 * after connecting leaves the coordinator deaf while it looks healthy. Such
 * a failure counts in the listener's "other" errors, as do failures nng
 * survives (the client hung up a moment later: the listener pauses 100 ms
 * and goes on). So a rise of that count is only a suspicion, checked with a
 * probe: a connection that completes the handshake, as a client would. If
 * the socket takes any new connection within RPC_MEND_CHECK_MS, the listener
 * works and nothing is done. If not, the listener is closed and opened again
 * on the same path. Closing it drops the connections it had accepted; their
 * clients reconnect and resend with the same request ids, so nothing is
 * decided twice.
 */
#define RPC_MEND_CHECK_MS 400

static int
rpc_server_relisten(struct rpc_server *s)
{
	log_warn("rpc: the listener stopped after a connection ended during its handshake "
		 "(nng 1.5.2); listening on %s again",
		 s->url);
	nng_listener_close(s->listener);
	return rpc_server_listen(s) == 0 ? 1 : -1;
}

static uint64_t
rpc_listener_errors(struct rpc_server *s)
{
	nng_stat *all, *st, *other;
	uint64_t n = 0;

	if (nng_stats_get(&all) != 0)
		return s->listen_errors;
	if ((st = nng_stat_find_listener(all, s->listener)) != NULL &&
	    (other = nng_stat_find(st, "other")) != NULL)
		n = nng_stat_value(other);
	nng_stats_free(all);
	return n;
}

int
rpc_server_mend(struct rpc_server *s)
{
	int64_t now = rpc_now_us();
	uint64_t n;
	int heard;

	if (s->probe_fd >= 0) {
		if (atomic_load(&s->adds) != s->probe_adds) {
			/* Connections still arrive: the listener works. The
			 * probe's own half has arrived too, or the listener
			 * would not have taken it. */
			close(s->probe_fd);
			s->probe_fd = -1;
			return 0;
		}
		if (now - s->probe_us < RPC_MEND_CHECK_MS * 1000)
			return 0;
		/* Close the probe only once the listener's half of the
		 * handshake has come (a hang-up before it is what stops
		 * nng's listener), or after 5 s when it never will. */
		heard = rpc_probe_heard(s->probe_fd, 0);
		if (heard == 0 && now - s->probe_us < 5000 * 1000)
			return 0;
		close(s->probe_fd);
		s->probe_fd = -1;
		return rpc_server_relisten(s);
	}
	if (now - s->mend_checked_us < RPC_MEND_MS * 1000)
		return 0;
	s->mend_checked_us = now;
	if ((n = rpc_listener_errors(s)) <= s->listen_errors)
		return 0;
	s->listen_errors = n;
	s->probe_adds = atomic_load(&s->adds);
	s->probe_us = now;
	if ((s->probe_fd = rpc_probe_open(s->url)) < 0)
		return rpc_server_relisten(s); /* nobody listens on our path */
	return 0;
}

void
rpc_server_close(struct rpc_server *s)
{
	struct timespec until;
	int i;

	if (s == NULL)
		return;
	/* Let replies already handed to nng go out (bounded), so a parked
	 * claim answered at shutdown reaches its supervisor. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&s->mtx);
	while (s->sending > 0) {
		if (pthread_cond_timedwait(&s->cond, &s->mtx, &until) == ETIMEDOUT)
			break;
	}
	s->closing = 1;
	pthread_mutex_unlock(&s->mtx);

	nng_close(s->sock);
	if (s->probe_fd >= 0)
		close(s->probe_fd);
	for (i = 0; i < s->nctx; i++) {
		/* Waits for a running callback; none runs afterwards. */
		nng_aio_free(s->ctxs[i].aio);
		nng_msg_free(s->ctxs[i].msg);
	}
	free(s->ctxs);
	free(s->pipes);
	if (s->efd >= 0)
		close(s->efd);
	pthread_mutex_destroy(&s->mtx);
	pthread_cond_destroy(&s->cond);
	free(s);
}

int
rpc_server_fd(struct rpc_server *s)
{
	return s->efd;
}

struct rpc_incoming *
rpc_server_next(struct rpc_server *s)
{
	struct rpc_incoming *in;
	uint64_t n;

	pthread_mutex_lock(&s->mtx);
	if ((in = s->head) != NULL) {
		s->head = in->next;
		if (s->head == NULL)
			s->tail = NULL;
		in->next = NULL;
	}
	/* Drain only when the queue is empty: the fd stays readable while a
	 * request waits, whatever the caller does. */
	if (s->head == NULL && read(s->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("rpc: eventfd read: %s", strerror(errno));
	pthread_mutex_unlock(&s->mtx);
	return in;
}

int
rpc_incoming_orphaned(struct rpc_server *s, const struct rpc_incoming *in)
{
	int gone;

	pthread_mutex_lock(&s->mtx);
	gone = in->orphaned;
	pthread_mutex_unlock(&s->mtx);
	return gone;
}

const uint8_t *
rpc_incoming_data(const struct rpc_incoming *in, size_t *len)
{
	*len = nng_msg_len(in->msg);
	return nng_msg_body(in->msg);
}

int
rpc_server_reply_raw(struct rpc_server *s, struct rpc_incoming *in, const uint8_t *buf,
		     size_t len)
{
	nng_msg *m;
	int rv;

	if ((rv = nng_msg_alloc(&m, len)) != 0) {
		log_error("rpc: cannot allocate a reply of %zu bytes: %s", len, nng_strerror(rv));
		rpc_server_drop(s, in);
		return rpc_errno(rv);
	}
	if (len > 0)
		memcpy(nng_msg_body(m), buf, len);
	nng_msg_free(in->msg);
	in->msg = NULL;
	pthread_mutex_lock(&s->mtx);
	s->sending++;
	pthread_mutex_unlock(&s->mtx);
	in->state = RPC_CTX_SEND;
	nng_aio_set_msg(in->aio, m);
	nng_ctx_send(in->ctx, in->aio);
	return 0;
}

int
rpc_server_reply(struct rpc_server *s, struct rpc_incoming *in, const Berth__Reply *r)
{
	size_t len = berth__reply__get_packed_size(r);
	uint8_t *buf;
	int rv;

	if ((buf = malloc(len > 0 ? len : 1)) == NULL) {
		log_error("rpc: out of memory packing a reply of %zu bytes", len);
		rpc_server_drop(s, in);
		return -ENOMEM;
	}
	berth__reply__pack(r, buf);
	rv = rpc_server_reply_raw(s, in, buf, len);
	free(buf);
	return rv;
}

void
rpc_server_drop(struct rpc_server *s, struct rpc_incoming *in)
{
	(void)s;
	nng_msg_free(in->msg);
	in->msg = NULL;
	/* A REP context that receives again forgets the unanswered request. */
	rpc_ctx_arm(in);
}
