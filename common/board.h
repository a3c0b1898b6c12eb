#ifndef BERTH_BOARD_H
#define BERTH_BOARD_H
#include <stddef.h>
#include <stdint.h>

/* The status board (DESIGN §9): POSIX shared memory named after $BERTH_HOME
 * (shm.h), one slot per actor. Observation only: losing it loses no
 * decision. Every actor updates its own slot from its loop; `berth status`
 * reads the board even while the coordinator is down. */

#define BOARD_SLOTS 8

/* An actor's state on its slot: the actor's own, not a run's (the words
 * overlap proto/states.h's; the vocabularies do not). */
#define BOARD_STARTING "starting" /* attached, not yet in its loop */
#define BOARD_RUNNING  "running"
#define BOARD_STOPPING "stopping"
#define BOARD_STOPPED  "stopped" /* a graceful exit */
#define BOARD_FAILED   "failed"  /* exited with an error: the launcher restarts it */

struct board_slot {
	char actor[16]; /* "coordinator", "supervisor", ... ; "" = free */
	char instance[17];
	char state[16]; /* BOARD_STARTING, BOARD_RUNNING, ... */
	int32_t pid;
	uint64_t start_time; /* field 22 of /proc/<pid>/stat */
	int64_t started_ms;
	int64_t heartbeat_ms; /* wall ms of the last update from the loop */
	uint32_t restarts;    /* times another process took this actor's slot */
	uint32_t slots_total; /* supervisor: --slots */
	uint32_t slots_used;
	uint64_t sent, granted, denied, errors, timeouts;
};

struct board;

/* Opens the board of home (create=1, the actors: creating it when missing,
 * and saying once in the log when the existing one is not ours; create=0,
 * readers: only one that exists, quietly). NULL when there is none to use
 * (shm.h says why). */
struct board *board_open(const char *home, int create);
void board_close(struct board *b);
/* This process's slot for actor, taken over from a previous process of the
 * same actor (restarts counted). Fields are written with relaxed atomics.
 * NULL with errno ESTALE when the board was removed meanwhile (board_leave
 * of the group's last actor): open it again. */
struct board_slot *board_attach(struct board *b, const char *actor, const char *instance);
void board_beat(struct board_slot *s, const char *state);
/* A graceful exit: the final state, and when no other actor of the group is
 * left (by identity, or stopped), the home's board and ring are removed.
 * 1 when this was the last actor. */
int board_leave(struct board *b, struct board_slot *s, const char *state);
/* A consistent copy of every used slot; returns how many. */
int board_read(struct board *b, struct board_slot *out, int max);
/* 1 when the slot's process is gone (identity) or its heartbeat is older
 * than stale_ms. */
int board_slot_stale(const struct board_slot *s, int64_t now_ms, int64_t stale_ms);

/* The counters the rpc observer bumps (proto/rpc_observe.c). */
enum board_counter { BOARD_SENT, BOARD_GRANTED, BOARD_DENIED, BOARD_ERRORS, BOARD_TIMEOUTS };
/* Bumps one counter of the slot (relaxed atomic); s may be NULL. */
void board_count(struct board_slot *s, enum board_counter which);
/* Supervisor: its --slots and how many are in use; s may be NULL. */
void board_set_slots(struct board_slot *s, uint32_t total, uint32_t used);

#endif
