#ifndef BERTH_RPC_SERVER_INT_H
#define BERTH_RPC_SERVER_INT_H
/* Private to proto/rpc_server.c and rpc_mend.c: the server's state and
 * what the listener's mending uses of the server. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <nng/nng.h>

#include "rpc.h"

/* How often the server looks at its listener's error count. */
#define RPC_MEND_MS 500

struct rpc_incoming;

/* One listening address (coordinator.sock, worker.sock) and what
 * rpc_server_mend knows of it. */
struct rpc_listen {
	nng_listener listener;
	char url[PATH_MAX + 8];
	uint64_t errors;       /* the listener's "other" errors, last seen */
	_Atomic uint64_t adds; /* connections it took, ever */
	int probe_fd;          /* rpc_server_mend's probe, or -1 */
	uint64_t probe_adds;   /* adds when it was opened */
	int64_t probe_us;      /* when it was opened */
	int64_t down_us;       /* listening again failed: when to try next, else 0 */
	int64_t down_wait_us;  /* ... the backoff, doubling to RPC_RELISTEN_MAX_MS */
	int64_t short_us;      /* no probe for want of descriptors since, else 0 */
	uint64_t short_adds;   /* adds then */
};

struct rpc_server {
	nng_socket sock;
	struct rpc_listen ls[RPC_LISTEN_MAX];
	_Atomic int nls;
	int64_t mend_checked_us; /* when rpc_server_mend last looked */
	int efd;
	int spare[2];          /* /dev/null, given up to make a probe when out of descriptors */
	int64_t short_seen_us; /* when a probe last wanted a descriptor, else 0 */
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

/* rpc_server.c: listens on l->url. */
int rpc_listen_start(struct rpc_server *s, struct rpc_listen *l);

/* rpc_mend.c: the two spare descriptors, taken (while there are any) and
 * given up. */
void rpc_spares_take(struct rpc_server *s);
void rpc_spares_give(struct rpc_server *s);

#endif
