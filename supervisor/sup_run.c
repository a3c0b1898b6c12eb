#include <stddef.h>

#include "sup_run.h"

/*
 * The supervisor's run table. A row exists only for the events a state
 * expects; everything else is SUP_ACT_INVALID, which the loop logs loudly as
 * a bug and otherwise ignores.
 *
 * The happy path is the top-down reading of DESIGN §6:
 *   claimed -spawn_ok-> spawned -start_granted-> started -gone-> exited
 *   -exit_granted-> checkpointed -settled-> settled
 * and the side paths keep its two promises: a job never executes before its
 * run is recorded running (a denied start kills the waiting shim and
 * abandons), and every exit is checkpointed by exactly one actor (a denied
 * record_exit means someone else won, and we do nothing more).
 *
 * The tick row of each state is what that state owes the world on every
 * reconcile pass: a run whose answer from the coordinator never came resends
 * the same request (same request id, so the coordinator replays rather than
 * repeats it). Renewing the lease is not in the table: it moves no run, and
 * the reconcile pass does it for every run in every state (sup_loop.c).
 */
struct sup_row {
	enum sup_state state;
	enum sup_event event;
	enum sup_state next;
	enum sup_action action;
};

static const struct sup_row sup_rows[] = {
	{ SUP_CLAIMED, SUP_EV_SPAWN_OK, SUP_SPAWNED, SUP_ACT_START },
	/* Nothing ran, so there is no exit to record: the failure itself is the
	 * checkpoint, and settle names the outcome (failed) and the reason. */
	{ SUP_CLAIMED, SUP_EV_SPAWN_FAILED, SUP_CHECKPOINTED, SUP_ACT_SETTLE },
	/* Out of descriptors, memory or space: not the job's failure, so no
	 * attempt is spent. Nothing ran; the claim is given back. */
	{ SUP_CLAIMED, SUP_EV_SPAWN_DEFERRED, SUP_ABANDONING, SUP_ACT_ABANDON },
	{ SUP_CLAIMED, SUP_EV_TICK, SUP_CLAIMED, SUP_ACT_NONE },

	{ SUP_SPAWNED, SUP_EV_START_GRANTED, SUP_STARTED, SUP_ACT_GO },
	/* Recorded running by a fused claim, but the run cannot be set up
	 * (its directory, its hand-off) for a reason that is not a lack of
	 * resources: nothing ran, and the exit checkpointed without a record
	 * settles it failed with the reason, as a failed spawn does. */
	{ SUP_SPAWNED, SUP_EV_SPAWN_FAILED, SUP_EXITED, SUP_ACT_RECORD_EXIT },
	{ SUP_SPAWNED, SUP_EV_START_DENIED, SUP_ABANDONING, SUP_ACT_KILL_ABANDON },
	/* The shim died on its own before it was told to go. */
	{ SUP_SPAWNED, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON },
	{ SUP_SPAWNED, SUP_EV_TICK, SUP_SPAWNED, SUP_ACT_NONE },

	{ SUP_STARTED, SUP_EV_GONE, SUP_EXITED, SUP_ACT_RECORD_EXIT },
	/* Recorded running, but the shim died before it forked the job (no
	 * started marker): nothing executed, so no attempt is spent. */
	{ SUP_STARTED, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON },
	{ SUP_STARTED, SUP_EV_TICK, SUP_STARTED, SUP_ACT_NONE },
	/* What the shim left cannot be read now (no descriptor left, ...):
	 * taking the record for absent would settle the run orphaned, so
	 * each pass reads again until it can. */
	{ SUP_STARTED, SUP_EV_GONE_UNREAD, SUP_GONE, SUP_ACT_NONE },

	{ SUP_GONE, SUP_EV_GONE, SUP_EXITED, SUP_ACT_RECORD_EXIT },
	{ SUP_GONE, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON },
	{ SUP_GONE, SUP_EV_GONE_UNREAD, SUP_GONE, SUP_ACT_NONE },
	{ SUP_GONE, SUP_EV_TICK, SUP_GONE, SUP_ACT_READ },

	{ SUP_EXITED, SUP_EV_EXIT_GRANTED, SUP_CHECKPOINTED, SUP_ACT_SETTLE },
	/* The checkpoint and the settlement in one decision (DESIGN §4). */
	{ SUP_EXITED, SUP_EV_EXIT_SETTLED, SUP_SETTLED, SUP_ACT_FORGET },
	{ SUP_EXITED, SUP_EV_EXIT_DENIED, SUP_DROPPED, SUP_ACT_FORGET },
	{ SUP_EXITED, SUP_EV_TICK, SUP_EXITED, SUP_ACT_RECORD_EXIT },

	{ SUP_CHECKPOINTED, SUP_EV_SETTLED, SUP_SETTLED, SUP_ACT_FORGET },
	{ SUP_CHECKPOINTED, SUP_EV_TICK, SUP_CHECKPOINTED, SUP_ACT_SETTLE },

	{ SUP_ABANDONING, SUP_EV_ABANDONED, SUP_DROPPED, SUP_ACT_FORGET },
	/* The shim we killed is reaped: expected, nothing to do. */
	{ SUP_ABANDONING, SUP_EV_GONE, SUP_ABANDONING, SUP_ACT_NONE },
	{ SUP_ABANDONING, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_NONE },
	{ SUP_ABANDONING, SUP_EV_GONE_UNREAD, SUP_ABANDONING, SUP_ACT_NONE },
	{ SUP_ABANDONING, SUP_EV_TICK, SUP_ABANDONING, SUP_ACT_ABANDON },
};

struct sup_step
sup_run_step(enum sup_state state, enum sup_event event)
{
	struct sup_step st = { state, SUP_ACT_INVALID };
	size_t i;

	for (i = 0; i < sizeof(sup_rows) / sizeof(sup_rows[0]); i++) {
		if (sup_rows[i].state == state && sup_rows[i].event == event) {
			st.next = sup_rows[i].next;
			st.action = sup_rows[i].action;
			break;
		}
	}
	return st;
}

int
sup_run_busy(enum sup_state state)
{
	return !sup_run_terminal(state);
}

int
sup_run_terminal(enum sup_state state)
{
	return state == SUP_SETTLED || state == SUP_DROPPED;
}

const char *
sup_run_state_name(enum sup_state s)
{
	static const char *names[] = {
		[SUP_CLAIMED] = "claimed", [SUP_SPAWNED] = "spawned",
		[SUP_STARTED] = "started", [SUP_GONE] = "gone",
		[SUP_EXITED] = "exited",   [SUP_CHECKPOINTED] = "checkpointed",
		[SUP_SETTLED] = "settled", [SUP_ABANDONING] = "abandoning",
		[SUP_DROPPED] = "dropped",
	};

	if ((unsigned)s >= SUP_NSTATES)
		return "?";
	return names[s];
}

const char *
sup_run_event_name(enum sup_event e)
{
	static const char *names[] = {
		[SUP_EV_SPAWN_OK] = "spawn_ok",
		[SUP_EV_SPAWN_FAILED] = "spawn_failed",
		[SUP_EV_SPAWN_DEFERRED] = "spawn_deferred",
		[SUP_EV_START_GRANTED] = "start_granted",
		[SUP_EV_START_DENIED] = "start_denied",
		[SUP_EV_GONE] = "gone",
		[SUP_EV_GONE_UNSTARTED] = "gone_unstarted",
		[SUP_EV_GONE_UNREAD] = "gone_unread",
		[SUP_EV_EXIT_GRANTED] = "exit_granted",
		[SUP_EV_EXIT_SETTLED] = "exit_settled",
		[SUP_EV_EXIT_DENIED] = "exit_denied",
		[SUP_EV_SETTLED] = "settled",
		[SUP_EV_ABANDONED] = "abandoned",
		[SUP_EV_TICK] = "tick",
	};

	if ((unsigned)e >= SUP_NEVENTS)
		return "?";
	return names[e];
}

const char *
sup_run_action_name(enum sup_action a)
{
	static const char *names[] = {
		[SUP_ACT_NONE] = "none",
		[SUP_ACT_START] = "start",
		[SUP_ACT_GO] = "go",
		[SUP_ACT_KILL_ABANDON] = "kill_abandon",
		[SUP_ACT_ABANDON] = "abandon",
		[SUP_ACT_READ] = "read",
		[SUP_ACT_RECORD_EXIT] = "record_exit",
		[SUP_ACT_SETTLE] = "settle",
		[SUP_ACT_FORGET] = "forget",
		[SUP_ACT_INVALID] = "invalid",
	};

	if ((unsigned)a > SUP_ACT_INVALID)
		return "?";
	return names[a];
}
