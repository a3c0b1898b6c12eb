/* The moves of a run's state: see coord_moves.h and proto/run_moves.def. */
#include <stddef.h>

#include "coord_db.h"
#include "coord_moves.h"

/* run_moves.def's spelling: a from state as its bit, a to state as its
 * enum (RUN_##to), OUTCOME as COORD_MOVE_OUTCOME. Defined only around the
 * table. */
#define CLAIMED      (1u << RUN_CLAIMED)
#define RUNNING      (1u << RUN_RUNNING)
#define AFTERCARE    (1u << RUN_AFTERCARE)
#define SUCCEEDED    (1u << RUN_SUCCEEDED)
#define FAILED       (1u << RUN_FAILED)
#define TIMED_OUT    (1u << RUN_TIMED_OUT)
#define CANCELLED    (1u << RUN_CANCELLED)
#define ORPHANED     (1u << RUN_ORPHANED)
#define ABORTED      (1u << RUN_ABORTED)
#define LOST         (1u << RUN_LOST)
#define RUN_OUTCOME  COORD_MOVE_OUTCOME
#define OWNER        MOVE_WHO_OWNER
#define RECOVERY     MOVE_WHO_RECOVERY
#define STOP_REAPER  MOVE_WHO_STOP_REAPER
#define CHECKPOINTER MOVE_WHO_CHECKPOINTER
#define HEIR         MOVE_WHO_HEIR

static const struct coord_move moves[] = {
#define MOVE(verb, from, to, denial, who, who_denial) \
	{ BERTH__REQUEST__VERB_##verb, (from), RUN_##to, #denial, (who), #who_denial, 0 },
#define FENCE(verb, from, to, denial, who, who_denial) \
	{ BERTH__REQUEST__VERB_##verb, (from), RUN_##to, #denial, (who), #who_denial, 1 },
#define CREATE(verb, to)
#define FUSE(verb, field, then)
#include "run_moves.def"
#undef MOVE
#undef FENCE
#undef CREATE
#undef FUSE
};

static const struct coord_fuse fuses[] = {
#define MOVE(verb, from, to, denial, who, who_denial)
#define FENCE(verb, from, to, denial, who, who_denial)
#define CREATE(verb, to)
#define FUSE(verb, field, then) \
	{ BERTH__REQUEST__VERB_##verb, #field, BERTH__REQUEST__VERB_##then },
#include "run_moves.def"
#undef MOVE
#undef FENCE
#undef CREATE
#undef FUSE
};

static const struct coord_create creates[] = {
#define MOVE(verb, from, to, denial, who, who_denial)
#define FENCE(verb, from, to, denial, who, who_denial)
#define CREATE(verb, to) { BERTH__REQUEST__VERB_##verb, RUN_##to },
#define FUSE(verb, field, then)
#include "run_moves.def"
#undef MOVE
#undef FENCE
#undef CREATE
#undef FUSE
};

#undef CLAIMED
#undef RUNNING
#undef AFTERCARE
#undef SUCCEEDED
#undef FAILED
#undef TIMED_OUT
#undef CANCELLED
#undef ORPHANED
#undef ABORTED
#undef LOST
#undef RUN_OUTCOME
#undef OWNER
#undef RECOVERY
#undef STOP_REAPER
#undef CHECKPOINTER
#undef HEIR

#define NMOVES   (sizeof moves / sizeof moves[0])
#define NFUSES   (sizeof fuses / sizeof fuses[0])
#define NCREATES (sizeof creates / sizeof creates[0])

const struct coord_fuse *
coord_moves_fuse(Berth__Request__VerbCase verb)
{
	size_t i;

	for (i = 0; i < NFUSES; i++)
		if (fuses[i].verb == verb)
			return &fuses[i];
	return NULL;
}

const struct coord_fuse *
coord_moves_fuse_row(size_t i)
{
	return i < NFUSES ? &fuses[i] : NULL;
}

enum run_state
coord_moves_created(Berth__Request__VerbCase verb)
{
	size_t i;

	for (i = 0; i < NCREATES; i++)
		if (creates[i].verb == verb)
			return creates[i].to;
	return RUN_ABSENT;
}

const struct coord_move *
coord_moves_find(Berth__Request__VerbCase verb, enum run_state s)
{
	const struct coord_move *first = NULL;
	size_t i;

	for (i = 0; i < NMOVES; i++) {
		if (moves[i].verb != verb)
			continue;
		if (coord_moves_allows(&moves[i], s))
			return &moves[i];
		if (first == NULL)
			first = &moves[i];
	}
	return first;
}

const struct coord_move *
coord_moves_row(size_t i)
{
	return i < NMOVES ? &moves[i] : NULL;
}

int
coord_moves_allows(const struct coord_move *m, enum run_state s)
{
	return s >= 0 && s < RUN_NSTATES && (m->from & (1u << s)) != 0;
}

int
coord_moves_reaches(const struct coord_move *m, enum run_state to)
{
	if (m->to == COORD_MOVE_OUTCOME)
		return run_state_terminal(to);
	return to == m->to;
}

/*
 * One UPDATE for every move, guarded by the state the handler judged and
 * settled_ms IS NULL, inside the request's IMMEDIATE transaction. The SET
 * list is the columns the move writes (coalesce keeps a value the move
 * leaves unset): sqlite maintains the partial indexes on settled_ms and
 * owner for a statement that writes those columns, even to their own
 * value, so start and record_exit, the job path's moves, write only
 * theirs. The parameters are numbered alike in every variant.
 */
/* aftercare_owner (?19, record_exit's) carries no index: every variant
 * may write it; and naming the highest number, it gives every variant all
 * the lower ones to bind. */
#define MOVE_SET "UPDATE runs SET state = ?1, aftercare_owner = coalesce(?19, aftercare_owner)"
#define MOVE_SHIM                                                            \
	", boot_id = coalesce(?2, boot_id), pid = coalesce(?3, pid),"        \
	" start_time = coalesce(?4, start_time), pgid = coalesce(?5, pgid)," \
	" started_ms = coalesce(?6, started_ms), heartbeat_ms = coalesce(?6, heartbeat_ms)"
#define MOVE_EXIT                                                                       \
	", has_record = coalesce(?7, has_record), exit_code = coalesce(?8, exit_code)," \
	" signal = coalesce(?9, signal), ended_ms = coalesce(?10, ended_ms)"
#define MOVE_SETTLE                                                                 \
	", settled_ms = coalesce(?11, settled_ms), reason = coalesce(?12, reason)," \
	" stragglers = coalesce(?15, stragglers), disk_full = coalesce(?16, disk_full)"
/* The capture facts come with the exit checkpoint, and again with settle. */
#define MOVE_CAPTURE                                    \
	", output_bytes = coalesce(?13, output_bytes)," \
	" capture_complete = coalesce(?14, capture_complete)"
#define MOVE_WHERE " WHERE id = ?17 AND state = ?18 AND settled_ms IS NULL"

static const char *
moves_sql(const struct coord_move_set *w)
{
	static const char q_shim[] = MOVE_SET MOVE_SHIM MOVE_WHERE;
	static const char q_exit[] = MOVE_SET MOVE_EXIT MOVE_CAPTURE MOVE_WHERE;
	static const char q_settle[] = MOVE_SET MOVE_SETTLE MOVE_CAPTURE MOVE_WHERE;
	static const char q_all[] =
		MOVE_SET MOVE_SHIM MOVE_EXIT MOVE_SETTLE MOVE_CAPTURE MOVE_WHERE;
	int shim = w->has_shim || w->started_ms != 0, exit = w->has_exit || w->ended_ms != 0;
	int settle =
		w->settled_ms != 0 || w->reason != NULL || w->has_stragglers || w->has_disk_full;
	int capture = w->has_output_bytes || w->has_capture_complete;

	if (shim + exit + settle > 1 || (shim && capture))
		return q_all;
	return shim ? q_shim : exit ? q_exit : settle || capture ? q_settle : q_all;
}

int
coord_moves_apply(struct coord_db *db, const struct coord_move *m, const char *run_id,
		  enum run_state from, enum run_state to, const struct coord_move_set *w)
{
	int rc;

	if (!coord_moves_allows(m, from) || !coord_moves_reaches(m, to))
		return 0;
	rc = coord_db_exec(db, moves_sql(w), "ttoooooooootoooottt", run_state_name(to),
			   w->has_shim ? w->boot_id : NULL, w->has_shim, w->pid, w->has_shim,
			   w->start_time, w->has_shim, w->pgid, w->started_ms != 0, w->started_ms,
			   w->has_exit, (int64_t)w->has_record, w->has_exit && w->has_code, w->code,
			   w->has_exit && w->has_signal, w->signal, w->ended_ms != 0, w->ended_ms,
			   w->settled_ms != 0, w->settled_ms, w->reason, w->has_output_bytes,
			   w->output_bytes, w->has_capture_complete, (int64_t)w->capture_complete,
			   w->has_stragglers, w->stragglers, w->has_disk_full,
			   (int64_t)w->disk_full, run_id, run_state_name(from), w->checkpointer);
	return rc < 0 ? -1 : rc;
}
