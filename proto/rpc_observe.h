#ifndef BERTH_RPC_OBSERVE_H
#define BERTH_RPC_OBSERVE_H

/* Records every request this process sends, every reply, retry and timeout
 * in the trace ring and the board counters (DESIGN §9). Call once after
 * observe_attach() or observe_attach_ring() (common/observe.h); observation only. */
void rpc_observe_install(void);

#endif
