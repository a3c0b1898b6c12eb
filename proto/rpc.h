#ifndef BERTH_RPC_H
#define BERTH_RPC_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "berth.pb-c.h"
#include "msg.h"
#include "states.h" /* BERTH_PROTOCOL_VERSION */

/* berth's rpc layer: nng req/rep over ipc://$BERTH_HOME/coordinator.sock
 * carrying one Berth__Request and one Berth__Reply (DESIGN §5). */

#define RPC_MAX_MSG (4 * 1024 * 1024) /* larger requests are refused */

/* ------------------------------------------------------------- client */

struct rpc_client;

/* Opens a REQ socket and dials url without blocking (nng keeps redialling
 * while the coordinator is down). actor is "supervisor", "cli", ...; the
 * instance id is generated here. NULL on failure (logged). */
struct rpc_client *rpc_client_open(const char *url, const char *actor);
/* The same for short-lived clients (the CLI): each rpc_call first tries one
 * plain connection that speaks the SP framing itself, without starting nng;
 * only when that fails (coordinator down, slow, restarting) does the client
 * open its nng socket and carry on as rpc_client_open's would. */
struct rpc_client *rpc_client_open_direct(const char *url, const char *actor);
/* 1 once the client has opened its nng socket (always, unless direct). */
int rpc_client_uses_nng(const struct rpc_client *c);
void rpc_client_close(struct rpc_client *c);
const char *rpc_client_instance(const struct rpc_client *c);
/* Optional worker token sent with every request. */
void rpc_client_set_token(struct rpc_client *c, const char *token);
/* Called once when a call has been retrying for more than a second, and once
 * when it finally gets an answer (the CLI says so on stderr). */
typedef void (*rpc_slow_fn)(void *arg, int slow, const char *what);
void rpc_client_on_slow(struct rpc_client *c, rpc_slow_fn fn, void *arg);
/* Asked before every send and resend of rpc_call (at least once a second
 * while it waits): nonzero ends the call with -ECANCELED. */
typedef int (*rpc_abort_fn)(void *arg);
void rpc_client_on_abort(struct rpc_client *c, rpc_abort_fn fn, void *arg);
/* An rpc_abort_fn for a process that takes SIGTERM and SIGINT through a
 * signalfd (blocked, so pending until read): nonzero once one is pending. */
int rpc_stop_signal_pending(void *arg);

/* Observation hook: called on the client's thread for every request sent,
 * reply received, retry and timeout (the trace ring records these). event is
 * "sent" | "reply" | "retry" | "timeout"; rep is NULL except for "reply". */
typedef void (*rpc_observer_fn)(const char *event, const Berth__Request *req,
				const Berth__Reply *rep, int64_t latency_us);
void rpc_set_observer(rpc_observer_fn fn);

/* A fresh request id from the process's counter (the one rpc_call draws
 * from), for the parts of a request (Request.then). */
uint64_t rpc_next_req_id(void);

/* Sends req and waits for its reply. Fills the envelope (version, actor,
 * instance) and assigns a fresh req_id unless req->req_id is already set
 * (has_req_id). Waits up to timeout_ms in total, resending the same req_id
 * every retry interval (1 s, or sooner when the connection drops), so a
 * coordinator restart is ridden out. Returns 0 with *reply set (free with
 * berth__reply__free_unpacked(reply, NULL)), -ETIMEDOUT, or another -errno.
 * timeout_ms <= 0 waits without limit. req keeps the assigned req_id, so
 * calling again with the same req retries the same request. A claim with
 * wait_ms is resent only after wait_ms + the retry interval. */
int rpc_call(struct rpc_client *c, Berth__Request *req, Berth__Reply **reply, int timeout_ms);

/* Asynchronous form for the long-poll claim: rpc_send() starts a request,
 * rpc_fd() becomes readable when something arrived, rpc_try_recv() returns 0
 * with the reply, -EAGAIN when nothing yet. Only one request in flight per
 * client; sending again abandons the previous one. */
int rpc_send(struct rpc_client *c, Berth__Request *req);
int rpc_fd(struct rpc_client *c);
int rpc_try_recv(struct rpc_client *c, Berth__Reply **reply);

/* ------------------------------------------------------------- server */

struct rpc_server;
struct rpc_incoming; /* one received request, owned by the server until answered */

/* The credentials of the process at the other end of a connection, as the
 * kernel recorded them when it connected (SO_PEERCRED). known is 0 when the
 * transport reports none. */
struct rpc_peer {
	int known;
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

#define RPC_LISTEN_MAX 4

/* Listens on url with nctx nng contexts (requests in flight at once). The
 * contexts' callbacks run on nng's threads and only queue the message and
 * wake rpc_server_fd(); everything else happens on the caller's thread. */
struct rpc_server *rpc_server_open(const char *url, int nctx);
/* Listens on one more url, sharing the contexts: the listener's index
 * (rpc_server_open's url is 0), or -1. A request says which listener it
 * came through, so one server can tell its sockets apart. */
int rpc_server_listen(struct rpc_server *s, const char *url);
void rpc_server_close(struct rpc_server *s);
/* Call from the loop at least once a second: opens the listener again when
 * nng 1.5.2 has stopped it (see rpc_server.c). 1 if it did, 0 if nothing
 * was needed or listening again failed for now (out of descriptors: it is
 * tried again with backoff while the open connections are served); -1 is
 * no longer returned. */
int rpc_server_mend(struct rpc_server *s);
int rpc_server_fd(struct rpc_server *s);
/* Next queued request or NULL; drains the wake-up fd. */
struct rpc_incoming *rpc_server_next(struct rpc_server *s);
const uint8_t *rpc_incoming_data(const struct rpc_incoming *in, size_t *len);
/* 1 when the connection the request came on has closed: no reply can reach
 * its sender (who resends on a new connection if it is still there). The
 * server fd wakes when a held request becomes orphaned. */
int rpc_incoming_orphaned(struct rpc_server *s, const struct rpc_incoming *in);
/* The index of the listener the request came through (-1 if unknown), the
 * credentials of its sender, and its connection's id (stable while the
 * connection lasts, never reused by nng while the socket is open). */
int rpc_incoming_listener(const struct rpc_incoming *in);
const struct rpc_peer *rpc_incoming_peer(const struct rpc_incoming *in);
uint32_t rpc_incoming_pipe(const struct rpc_incoming *in);
/* Sends the reply (asynchronously) and frees in. */
int rpc_server_reply(struct rpc_server *s, struct rpc_incoming *in, const Berth__Reply *r);
/* Sends pre-packed reply bytes (a stored reply) and frees in. */
int rpc_server_reply_raw(struct rpc_server *s, struct rpc_incoming *in, const uint8_t *buf,
			 size_t len);
/* Forgets in without replying (a dropped message; the context is re-armed). */
void rpc_server_drop(struct rpc_server *s, struct rpc_incoming *in);

#endif
