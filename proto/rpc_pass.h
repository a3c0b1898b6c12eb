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
};

/* Sends req; 0 with *rep set, -1 when no answer came now or earlier in the
 * pass (logged, naming verb and what). An error reply is returned to the
 * caller, which knows which errors it expects. */
int rpc_pass_call(struct rpc_pass *p, Berth__Request *req, Berth__Reply **rep,
		  const char *verb, const char *what);
/* Says hello with this process's identity, as a pass of its own. 0 when
 * granted, -1 otherwise (logged). */
int rpc_pass_hello(struct rpc_pass *p);

#endif
