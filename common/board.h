#ifndef BERTH_BOARD_H
#define BERTH_BOARD_H
#include <stddef.h>
#include <stdint.h>

/* The status board (DESIGN §9): POSIX shared memory named after $BERTH_HOME,
 * one slot per actor. Observation only: losing it loses no decision. Every
 * actor updates its own slot from its loop; `berth status` reads the board
 * even while the coordinator is down. */

#define BOARD_SLOTS 8

struct board_slot {
	char actor[16];       /* "coordinator", "supervisor", ... ; "" = free */
	char instance[17];
	char state[16];       /* "starting", "running", "stopping", "stopped" */
	int32_t pid;
	uint64_t start_time;  /* field 22 of /proc/<pid>/stat */
	int64_t started_ms;
	int64_t heartbeat_ms; /* wall ms of the last update from the loop */
	uint32_t restarts;    /* times another process took this actor's slot */
	uint32_t slots_total; /* supervisor: --slots */
	uint32_t slots_used;
	uint64_t sent, granted, denied, errors, timeouts;
};

struct board;

/* "/berth-<16 hex of a hash of the absolute home>" into buf. */
void board_name(const char *home, char *buf, size_t n);
/* Opens (create=1: creating if missing) the board of home. NULL on failure. */
struct board *board_open(const char *home, int create);
void board_close(struct board *b);
/* This process's slot for actor, taken over from a previous process of the
 * same actor (restarts counted). Fields are written with relaxed atomics. */
struct board_slot *board_attach(struct board *b, const char *actor, const char *instance);
void board_beat(struct board_slot *s, const char *state);
/* A consistent copy of every used slot; returns how many. */
int board_read(struct board *b, struct board_slot *out, int max);
/* 1 when the slot's process is gone (identity) or its heartbeat is older
 * than stale_ms. */
int board_slot_stale(const struct board_slot *s, int64_t now_ms, int64_t stale_ms);

/* Additions (observation glue). */
enum board_counter { BOARD_SENT, BOARD_GRANTED, BOARD_DENIED, BOARD_ERRORS, BOARD_TIMEOUTS };
/* Bumps one counter of the slot (relaxed atomic); s may be NULL. */
void board_count(struct board_slot *s, enum board_counter which);
/* Supervisor: its --slots and how many are in use; s may be NULL. */
void board_set_slots(struct board_slot *s, uint32_t total, uint32_t used);
/* Removes the board segment of home (tests, a full uninstall): 0 or -1. */
int board_unlink(const char *home);
/* The absolute, resolved path of home (what names and owns its segments). */
void board_home_path(const char *home, char *buf, size_t n);
/* Removes the board and ring segments whose recorded home no longer exists
 * (the long-lived actors call it once at their start, from observe_attach).
 * Returns how many were removed. */
int board_gc(void);
#define BOARD_SHM_MAGIC 0x42525442u /* "BTRB" */

#endif
