#ifndef BERTH_RPC_INT_H
#define BERTH_RPC_INT_H
/* Private to proto/rpc_client.c, rpc_sp.c, rpc_server.c and rpc_mend.c: what the two
 * halves of the rpc layer and the SP framing share. */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <nng/nng.h>

#include "rpc.h"

#define RPC_RETRY_MS        1000               /* resend interval of rpc_call */
#define RPC_SLOW_MS         1000               /* rpc_client_on_slow fires after this long */
#define RPC_REPLY_MAX       (64 * 1024 * 1024) /* replies (lists) may be large */
#define RPC_SERVER_RECV_MAX (2 * RPC_MAX_MSG)  /* beyond: nng drops the pipe */

/* Real monotonic time: tests fake the clock of common/clock.c, and a faked
 * clock must never stall a network timeout. */
static inline int64_t
rpc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int
rpc_errno(int rv)
{
	switch (rv) {
	case 0: return 0;
	case NNG_ETIMEDOUT: return -ETIMEDOUT;
	case NNG_EAGAIN: return -EAGAIN;
	case NNG_ENOMEM: return -ENOMEM;
	case NNG_EMSGSIZE: return -EMSGSIZE;
	case NNG_ECLOSED: return -EBADF;
	case NNG_ECONNREFUSED: return -ECONNREFUSED;
	case NNG_ECONNRESET: return -ECONNRESET;
	case NNG_EADDRINUSE: return -EADDRINUSE;
	case NNG_EPERM: return -EPERM;
	default: return -EIO;
	}
}

/* ---------------------------------------------- rpc_sp.c: SP over ipc */

/* Opens a connection to an ipc:// URL and sends a REQ peer's half of the
 * SP handshake. Non-blocking; -1 if there is no listener. */
int rpc_sp_probe_open(const char *url);
/* Waits up to wait_ms for the listener's half of the handshake: 1 once it
 * has arrived (the connection may then be closed safely), 0 if not yet, -1
 * if the listener hung up or answered something else. */
int rpc_sp_probe_heard(int fd, int wait_ms);
/* One request over one plain connection speaking the SP framing: 0 with
 * *body (malloc'd, *bodylen bytes: the reply message), or a negative errno.
 * A connection whose listener never completed its half of the handshake by
 * until_us is not closed but handed to *held_fd (when that is -1), since
 * hanging up then is what stops nng 1.5.2's listener. */
int rpc_sp_call(const char *url, const uint8_t *buf, size_t len, uint8_t **body, size_t *bodylen,
		int64_t until_us, int *held_fd);

#endif
