#ifndef BERTH_RPC_PASS_H
#define BERTH_RPC_PASS_H
#include "rpc.h"

/* The requests of one pass of an actor that works in passes (recovery, the
 * reaper). Once the coordinator has not answered one, the rest of the pass
 * is skipped rather than waited out request by request: the next pass
 * finds every run again. Clear unreachable when a pass begins. */
struct rpc_pass {
	struct rpc_client *client;
	int timeout_ms;
	int unreachable; /* a request of this pass got no answer */
	int broken;      /* the coordinator found one of our requests malformed */
};

/* The client of a pass actor: a connection to home's coordinator that
 * gives up a request once SIGTERM or SIGINT is pending, with this process
 * on the observation side (board slot and ring when board is set, else the
 * ring only) and every exchange recorded there. NULL on failure (logged). */
struct rpc_client *rpc_pass_client(const char *home, const char *actor, int board);

/* Sends req; 0 with *rep set, -1 when no answer came now or earlier in the
 * pass (logged, naming verb and what). An error reply is returned to the
 * caller, which knows which errors it expects; but one that says the
 * request itself is malformed or of another protocol version is our bug,
 * not the coordinator's: it is logged as one, sets broken, and the pass
 * ends (-1) so that the actor exits for the launcher to restart it (trust
 * is asymmetric, STYLE.md). */
int rpc_pass_call(struct rpc_pass *p, Berth__Request *req, Berth__Reply **rep, const char *verb,
		  const char *what);
/* Says hello with this process's identity, as a pass of its own. 0 when
 * granted, -1 otherwise (logged). */
int rpc_pass_hello(struct rpc_pass *p);

#endif
