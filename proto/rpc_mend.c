/*
 * The listener's mending (nng 1.5.2): the probe that checks a listener
 * whose error count rose, listening again with backoff, and the spare
 * descriptors that tell a stopped listener from a starved one. Apart from
 * rpc_server.c (contexts, the ready queue, replies) because it is a
 * workaround with its own state; the loop calls it through
 * rpc_server_mend, and it shares the server's state (rpc_server_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include <nng/nng.h>

#include "log.h"
#include "rpc_int.h"
#include "rpc_server_int.h"

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

#define RPC_RELISTEN_MAX_MS 5000

/* Out of descriptors (or memory): the listener is not broken for that. nng
 * retries its accepts (every 100 ms), and the connections already open are
 * served all along; only our own probe could not be made. */
static int
rpc_short_of_resources(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

/*
 * Out of descriptors, a stopped listener and a starved one look alike: no
 * connection is taken. Two spare descriptors, held while there are any to
 * hold, tell them apart: given up, one makes the probe and one is for the
 * listener to accept it. Without them (taken by connections since), the
 * listener is trusted: closing a starved one would drop every connection it
 * serves, and one that cannot be opened again would leave nothing. The
 * check is made again each turn (the errors that raised the suspicion are
 * kept unread) and the spares are taken back once no listener is short.
 */
#define RPC_SHORT_WATCH_MS 60000

void
rpc_spares_take(struct rpc_server *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->spare[i] < 0)
			s->spare[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void
rpc_spares_give(struct rpc_server *s)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (s->spare[i] >= 0)
			close(s->spare[i]);
		s->spare[i] = -1;
	}
}

/* The probe, giving up the spares when there is no descriptor for it: its
 * descriptor, or -1 with errno set. */
static int
rpc_probe_open(struct rpc_server *s, const char *url)
{
	int fd;

	if ((fd = rpc_sp_probe_open(url)) >= 0 || !rpc_short_of_resources(errno))
		return fd;
	s->short_seen_us = rpc_now_us();
	if (s->spare[0] < 0)
		return fd;
	rpc_spares_give(s);
	log_warn("rpc: out of descriptors; two spares given up to check the listener on %s", url);
	return rpc_sp_probe_open(url);
}

/* Listening again; when that fails (no descriptor for the new listener) it
 * is tried again with backoff, the open connections served meanwhile: 1
 * listening again, 0 not yet. */
static int
rpc_relisten_try(struct rpc_server *s, struct rpc_listen *l, int64_t now)
{
	if (rpc_listen_start(s, l) == 0) {
		if (l->down_us != 0)
			log_warn("rpc: listening on %s again", l->url);
		l->down_us = l->down_wait_us = 0;
		return 1;
	}
	l->down_wait_us = l->down_wait_us == 0 ? 100 * 1000 : 2 * l->down_wait_us;
	if (l->down_wait_us > RPC_RELISTEN_MAX_MS * 1000)
		l->down_wait_us = RPC_RELISTEN_MAX_MS * 1000;
	l->down_us = now + l->down_wait_us;
	log_error("rpc: cannot listen on %s now; trying again in %lld ms (open connections are "
		  "still served)",
		  l->url, (long long)(l->down_wait_us / 1000));
	return 0;
}

static int
rpc_relisten(struct rpc_server *s, struct rpc_listen *l, int64_t now)
{
	log_warn("rpc: the listener stopped after a connection ended during its handshake "
		 "(nng 1.5.2); listening on %s again",
		 l->url);
	nng_listener_close(l->listener);
	return rpc_relisten_try(s, l, now);
}

static uint64_t
rpc_listener_errors(struct rpc_listen *l)
{
	nng_stat *all, *st, *other;
	uint64_t n = 0;

	if (nng_stats_get(&all) != 0)
		return l->errors;
	if ((st = nng_stat_find_listener(all, l->listener)) != NULL &&
	    (other = nng_stat_find(st, "other")) != NULL)
		n = nng_stat_value(other);
	nng_stats_free(all);
	return n;
}

/* One listener's turn of rpc_server_mend: 1 listened again, 0 nothing to
 * do (or listening again failed and waits for its next try). */
static int
rpc_mend_one(struct rpc_server *s, struct rpc_listen *l, int64_t now, int look)
{
	uint64_t n;
	int heard;

	if (l->down_us != 0)
		return now >= l->down_us ? rpc_relisten_try(s, l, now) : 0;
	if (l->probe_fd >= 0) {
		if (atomic_load(&l->adds) != l->probe_adds) {
			/* Connections still arrive: the listener works. The
			 * probe's own half has arrived too, or the listener
			 * would not have taken it. */
			close(l->probe_fd);
			l->probe_fd = -1;
			return 0;
		}
		if (now - l->probe_us < RPC_MEND_CHECK_MS * 1000)
			return 0;
		/* Close the probe only once the listener's half of the
		 * handshake has come (a hang-up before it is what stops
		 * nng's listener), or after 5 s when it never will. */
		heard = rpc_sp_probe_heard(l->probe_fd, 0);
		if (heard == 0 && now - l->probe_us < 5000 * 1000)
			return 0;
		close(l->probe_fd);
		l->probe_fd = -1;
		return rpc_relisten(s, l, now);
	}
	if (!look)
		return 0;
	n = rpc_listener_errors(l);
	if (l->short_us != 0 && atomic_load(&l->adds) != l->short_adds) {
		/* Out of descriptors, but taking connections: it works. */
		l->short_us = 0;
		l->errors = n;
		return 0;
	}
	/* For RPC_SHORT_WATCH_MS after a shortage every listener is probed
	 * each turn, errors or not: connections nng accepted while out of
	 * descriptors can stop a listener without a further error to see. */
	if (l->short_us == 0 && n <= l->errors &&
	    (s->short_seen_us == 0 || now - s->short_seen_us > RPC_SHORT_WATCH_MS * 1000))
		return 0;
	l->probe_adds = atomic_load(&l->adds);
	l->probe_us = now;
	if ((l->probe_fd = rpc_probe_open(s, l->url)) >= 0) {
		l->errors = n;
		l->short_us = 0;
		return 0;
	}
	if (!rpc_short_of_resources(errno))
		return rpc_relisten(s, l, now); /* nobody listens on our path */
	/* No probe for want of descriptors: the errors are most likely
	 * accepts that failed for the same reason. Looked at again each
	 * turn, the errors kept unread. */
	if (l->short_us == 0) {
		l->short_us = now;
		l->short_adds = l->probe_adds;
	}
	return 0;
}

int
rpc_server_mend(struct rpc_server *s)
{
	int64_t now = rpc_now_us();
	int i, rc, rv = 0, short_of = 0, look = now - s->mend_checked_us >= RPC_MEND_MS * 1000;

	if (look)
		s->mend_checked_us = now;
	for (i = 0; i < atomic_load(&s->nls); i++) {
		if ((rc = rpc_mend_one(s, &s->ls[i], now, look)) < 0)
			return -1;
		rv |= rc;
		if (s->ls[i].down_us != 0 || s->ls[i].short_us != 0)
			short_of = 1;
	}
	/* The spares again, once no listener wants a descriptor itself. */
	if (look && !short_of)
		rpc_spares_take(s);
	return rv;
}
