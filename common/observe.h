#ifndef BERTH_OBSERVE_H
#define BERTH_OBSERVE_H
#include <stdint.h>
#include "board.h"

/* Observation glue for an actor's main (DESIGN §9): opens the status board
 * and the trace ring of home, takes this process's board slot, and records
 * every fired failpoint in the ring. Observation only: a failure is logged
 * and the actor runs on without it (every observe_* call is then a no-op).
 * The rpc side lives in proto/rpc_observe.h (berth_common does not link
 * proto). */

/* Actors: board slot + ring, both made when missing. 0, or -1 when neither
 * could be opened. */
int observe_attach(const char *home, const char *actor, const char *instance);
/* Clients (the CLI, workers, shims, recovery's first pass): the ring only,
 * when the group made one; no board slot. */
int observe_attach_ring(const char *home, const char *actor, const char *instance);
/* From the loop: heartbeat now, and the state when not NULL (BOARD_RUNNING,
 * BOARD_STOPPING, ...: board.h). */
void observe_beat(const char *state);
void observe_count(enum board_counter which);
/* Supervisor: --slots and how many are in use. */
void observe_set_slots(uint32_t total, uint32_t used);
/* Exit: the final state (BOARD_STOPPED for a graceful one, BOARD_FAILED), then
 * closes everything. The last actor of the group to stop gracefully removes
 * the home's board and ring (board_leave). */
void observe_detach(const char *state);
/* This process's slot, or NULL. */
struct board_slot *observe_slot(void);

#endif
