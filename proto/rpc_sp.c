/*
 * nng's SP framing over ipc, spoken by hand: the probes that work around
 * nng 1.5.2 stopping a dialer or listener for good, and the CLI's direct
 * path that answers a call without starting nng.
 *
 * The handshake is 8 bytes each way: 0, 'S', 'P', version 0, the protocol
 * number big-endian, 0, 0. After it each message is a type byte 1, a 64-bit
 * big-endian length, then the message; a REQ message starts with a 32-bit
 * big-endian request id with the high bit set, which REP echoes before its
 * reply's body (nng's ipc transport, stable since nanomsg).
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "rpc_int.h"

#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

int
rpc_sp_probe_open(const char *url)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = url + strlen("ipc://");
	const uint8_t hello[8] = { 0, 'S', 'P', 0, NNG_REQ0_SELF >> 8, NNG_REQ0_SELF & 0xff, 0, 0 };
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

int
rpc_sp_probe_heard(int fd, int wait_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
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

/* Blocking-with-deadline I/O on a non-blocking socket: 0, -ETIMEDOUT once
 * until_us has passed, or another -errno. */
static int
sp_fd_wait(int fd, short events, int64_t until_us)
{
	struct pollfd pfd = { .fd = fd, .events = events };
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
sp_fd_read(int fd, void *buf, size_t len, int64_t until_us)
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
		if ((err = sp_fd_wait(fd, POLLIN, until_us)) != 0)
			return err;
	}
	return 0;
}

static int
sp_fd_write(int fd, struct iovec *iov, int niov, int64_t until_us)
{
	struct msghdr mh = { 0 };
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
			if ((err = sp_fd_wait(fd, POLLOUT, until_us)) != 0)
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
sp_put_be(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t
sp_get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

int
rpc_sp_call(const char *url, const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen,
	    int64_t until_us, int *held_fd)
{
	static _Atomic uint32_t sp_id;
	uint8_t hello[8], head[9], id[4];
	struct iovec iov[3];
	uint8_t *body = NULL;
	uint64_t rlen;
	uint32_t want;
	int fd, err, heard;

	*out = NULL;
	*outlen = 0;
	if ((fd = rpc_sp_probe_open(url)) < 0)
		return -ECONNREFUSED;
	/* The coordinator's half of the handshake. */
	while ((heard = rpc_sp_probe_heard(fd, 50)) == 0 && rpc_now_us() < until_us)
		;
	if (heard != 1) {
		if (heard == 0 && *held_fd < 0)
			*held_fd = fd; /* never hang up before it has answered */
		else
			close(fd);
		return -ETIMEDOUT;
	}
	if ((err = sp_fd_read(fd, hello, sizeof(hello), until_us)) != 0 ||
	    sp_get_be(hello + 4, 2) != NNG_REP0_SELF) {
		close(fd);
		return err != 0 ? err : -EPROTO;
	}

	want = 0x80000000u | ((atomic_fetch_add(&sp_id, 1) + (uint32_t)getpid()) & 0x7fffffffu);
	head[0] = 1;
	sp_put_be(head + 1, sizeof(id) + len, 8);
	sp_put_be(id, want, 4);
	iov[0] = (struct iovec){ .iov_base = head, .iov_len = sizeof(head) };
	iov[1] = (struct iovec){ .iov_base = id, .iov_len = sizeof(id) };
	iov[2] = (struct iovec){ .iov_base = (void *)buf, .iov_len = len };
	if ((err = sp_fd_write(fd, iov, 3, until_us)) != 0)
		goto out;

	/* The reply: frame, the echoed request id, the body. */
	if ((err = sp_fd_read(fd, head, sizeof(head), until_us)) != 0)
		goto out;
	rlen = sp_get_be(head + 1, 8);
	if (head[0] != 1 || rlen < sizeof(id) || rlen - sizeof(id) > RPC_REPLY_MAX) {
		err = -EPROTO;
		goto out;
	}
	if ((err = sp_fd_read(fd, id, sizeof(id), until_us)) != 0)
		goto out;
	if (sp_get_be(id, 4) != want) {
		err = -EPROTO;
		goto out;
	}
	rlen -= sizeof(id);
	if ((body = malloc(rlen > 0 ? rlen : 1)) == NULL) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = sp_fd_read(fd, body, rlen, until_us)) != 0)
		goto out;
	*out = body;
	*outlen = rlen;
	body = NULL;
out:
	free(body);
	close(fd);
	return err;
}
