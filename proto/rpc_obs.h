#ifndef BERTH_RPC_OBS_H
#define BERTH_RPC_OBS_H

/* Records every request this process sends, every reply, retry and timeout
 * in the trace ring and the board counters (DESIGN §9). Call once after
 * obs_attach() or obs_attach_ring() (common/obs.h); observation only. */
void rpc_obs_install(void);

#endif
