/*
 * The rpc server: a REP socket with N contexts, each with its own aio. The
 * aio callbacks run on nng's threads and do nothing but queue the received
 * message and wake an eventfd; the coordinator's loop takes requests with
 * rpc_server_next() and answers with rpc_server_reply(), whose send
 * completion re-arms the context's receive. No decision is ever taken on an
 * nng thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "log.h"
#include "rpc_int.h"
#include "rpc_server_int.h"

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
	int listener;              /* the index of the listener it came through, or -1 */
	struct rpc_peer peer;      /* the credentials of that connection's peer */
	int orphaned;              /* that connection has closed; under mtx */
	struct rpc_incoming *next; /* the ready queue */
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

/* Which of our listeners l is; -1 for none (a dialer, or closed). */
static int
rpc_listener_index(struct rpc_server *s, nng_listener l)
{
	int i, n = atomic_load(&s->nls);

	for (i = 0; i < n; i++)
		if (nng_listener_id(s->ls[i].listener) == nng_listener_id(l))
			return i;
	return -1;
}

/* The peer of pipe p, as the kernel saw it when it connected (SO_PEERCRED,
 * which nng reports for ipc pipes). Unknown on anything but ipc. */
static void
rpc_peer_read(nng_pipe p, struct rpc_peer *peer)
{
	uint64_t pid = 0, uid = 0, gid = 0;

	memset(peer, 0, sizeof(*peer));
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0 ||
	    nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &uid) != 0 ||
	    nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_GID, &gid) != 0)
		return;
	peer->known = 1;
	peer->pid = (pid_t)pid;
	peer->uid = (uid_t)uid;
	peer->gid = (gid_t)gid;
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
	int woke = 0, li;

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
		if ((li = rpc_listener_index(s, nng_pipe_listener(p))) >= 0)
			atomic_fetch_add(&s->ls[li].adds, 1);
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
	nng_pipe pipe;

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
	pipe = nng_msg_get_pipe(in->msg);
	in->pipe = (uint32_t)nng_pipe_id(pipe);
	in->listener = rpc_listener_index(s, nng_pipe_listener(pipe));
	rpc_peer_read(pipe, &in->peer);
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

/* Listens on l->url, the socket private to its owner from the start. */
int
rpc_listen_start(struct rpc_server *s, struct rpc_listen *l)
{
	char path[PATH_MAX];
	mode_t old;
	int rv, is_ipc;

	if ((rv = nng_listener_create(&l->listener, s->sock, l->url)) != 0) {
		log_error("rpc: cannot listen on %s: %s", l->url, nng_strerror(rv));
		return -1;
	}
	is_ipc = rpc_ipc_path(l->url, path, sizeof(path)) == 0;
	if (is_ipc)
		nng_listener_set_int(l->listener, NNG_OPT_IPC_PERMISSIONS, 0600);
	/* The socket is created under umask 077, so it is never reachable by
	 * others, not even for the moment before the chmod. */
	old = umask(077);
	rv = nng_listener_start(l->listener, 0);
	umask(old);
	if (rv != 0) {
		log_error("rpc: cannot listen on %s: %s", l->url, nng_strerror(rv));
		nng_listener_close(l->listener);
		return -1;
	}
	if (is_ipc && chmod(path, 0600) != 0) {
		log_error("rpc: chmod 0600 %s: %s", path, strerror(errno));
		nng_listener_close(l->listener);
		return -1;
	}
	l->errors = 0;
	return 0;
}

int
rpc_server_listen(struct rpc_server *s, const char *url)
{
	int n = atomic_load(&s->nls);
	struct rpc_listen *l;

	if (n == RPC_LISTEN_MAX) {
		log_error("rpc: cannot listen on %s: already on %d addresses", url, n);
		return -1;
	}
	l = &s->ls[n];
	memset(l, 0, sizeof(*l));
	l->probe_fd = -1;
	snprintf(l->url, sizeof(l->url), "%s", url);
	if (rpc_listen_start(s, l) != 0)
		return -1;
	atomic_store(&s->nls, n + 1);
	return n;
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
	s->spare[0] = s->spare[1] = -1;
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
	if (rpc_server_listen(s, url) != 0)
		goto fail;

	for (i = 0; i < s->nctx; i++)
		rpc_ctx_arm(&s->ctxs[i]);
	rpc_spares_take(s);
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
	rpc_spares_give(s);
	for (i = 0; i < atomic_load(&s->nls); i++)
		if (s->ls[i].probe_fd >= 0)
			close(s->ls[i].probe_fd);
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
rpc_server_reply_raw(struct rpc_server *s, struct rpc_incoming *in, const uint8_t *buf, size_t len)
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

int
rpc_incoming_listener(const struct rpc_incoming *in)
{
	return in->listener;
}

const struct rpc_peer *
rpc_incoming_peer(const struct rpc_incoming *in)
{
	return &in->peer;
}

uint32_t
rpc_incoming_pipe(const struct rpc_incoming *in)
{
	return in->pipe;
}
