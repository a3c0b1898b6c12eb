#ifndef BERTH_COORD_MOVES_H
#define BERTH_COORD_MOVES_H
#include <stdint.h>
#include "berth.pb-c.h"
#include "states.h"

/* The moves of a run's state: proto/run_moves.def as a table, and the one
 * guarded UPDATE that makes a move. Bottom floor: this file knows the
 * runs table, not the verbs' handlers. */

struct coord_db;

/* The to-state "the run's outcome" (OUTCOME in run_moves.def). */
#define COORD_MOVE_OUTCOME ((enum run_state)RUN_NSTATES)

/* Who may make a move (run_moves.def's who column). */
enum coord_move_who {
	MOVE_WHO_OWNER = 1 << 0,        /* the run's owner (a supervisor instance) */
	MOVE_WHO_RECOVERY = 1 << 1,     /* the group's recovery */
	MOVE_WHO_STOP_REAPER = 1 << 2,  /* the reaper, for a run with a stop request */
	MOVE_WHO_CHECKPOINTER = 1 << 3, /* the instance granted the run's record_exit */
	MOVE_WHO_HEIR = 1 << 4,         /* recovery, once that instance is gone */
};

struct coord_move {
	Berth__Request__VerbCase verb;
	unsigned from;          /* 1u << enum run_state: the states it leaves */
	enum run_state to;      /* or COORD_MOVE_OUTCOME */
	const char *denial;     /* a run in none of the verb's from states */
	unsigned who;           /* enum coord_move_who bits */
	const char *who_denial; /* anyone else */
	int fence;              /* a FENCE line: only of a fenced run */
};

/* The move verb makes of a run in state s: the verb's line whose from
 * holds s, else its first line (whose denial then answers); NULL for a verb
 * that makes none. */
const struct coord_move *coord_moves_find(Berth__Request__VerbCase verb, enum run_state s);
/* The i-th move (0, 1, ...), NULL past the last: for tests and tools. */
const struct coord_move *coord_moves_row(size_t i);

/* A FUSE line: a request of verb whose message carries field makes, once
 * granted, the move of then on the same run in the same transaction
 * (run_moves.def's header says the rules). */
struct coord_fuse {
	Berth__Request__VerbCase verb;
	const char *field; /* the field of verb's message, as berth.proto names it */
	Berth__Request__VerbCase then;
};

/* verb's FUSE line, NULL when it has none. */
const struct coord_fuse *coord_moves_fuse(Berth__Request__VerbCase verb);
/* The i-th FUSE line, NULL past the last: for tests and tools. */
const struct coord_fuse *coord_moves_fuse_row(size_t i);
/* The state a granted verb creates its run in (a CREATE line), RUN_ABSENT
 * for a verb that creates none. */
enum run_state coord_moves_created(Berth__Request__VerbCase verb);

/* A CREATE line. */
struct coord_create {
	Berth__Request__VerbCase verb;
	enum run_state to;
};
/* 1 when m leaves state s (never for RUN_ABSENT). */
int coord_moves_allows(const struct coord_move *m, enum run_state s);
/* 1 when m may end in to: its to-state, or any outcome for OUTCOME. */
int coord_moves_reaches(const struct coord_move *m, enum run_state to);

/* What a move writes besides the state; a field not "has" is left as it
 * is. */
struct coord_move_set {
	int has_shim; /* start: the shim's identity (boot_id may be NULL) */
	const char *boot_id;
	int64_t pid, start_time, pgid;
	int64_t started_ms; /* start: started_ms and heartbeat_ms, 0 unset */
	int has_exit;       /* record_exit: the exit record as the caller saw it */
	int has_record;
	int has_code;
	int64_t code;
	int has_signal;
	int64_t signal;
	int64_t ended_ms;         /* 0 unset */
	const char *checkpointer; /* record_exit: who owns the aftercare now */
	int64_t settled_ms;       /* the move settles the run: 0 unset */
	const char *reason;       /* NULL unset */
	int has_output_bytes;
	int64_t output_bytes;
	int has_capture_complete;
	int capture_complete;
	int has_stragglers; /* settle: descendants the shim ended */
	int64_t stragglers;
	int has_disk_full; /* settle: the output's file system was full */
	int disk_full;
};

/* Moves run run_id, which the caller read in state from, to state to by m,
 * writing w: the one guarded UPDATE (still in from, not settled). 1 moved,
 * 0 not (m does not leave from or reach to, or the guard found the run
 * elsewhere), -1 on error. */
int coord_moves_apply(struct coord_db *db, const struct coord_move *m, const char *run_id,
		      enum run_state from, enum run_state to, const struct coord_move_set *w);

#endif
