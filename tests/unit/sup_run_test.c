/* The supervisor's run table (supervisor/sup_run.c): every transition of
 * DESIGN §6 is named, the side paths keep its promises, and an event a state
 * does not expect changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sup_run.h"

static void
expect_step(enum sup_state from, enum sup_event ev, enum sup_state to, enum sup_action act)
{
	struct sup_step st = sup_run_step(from, ev);

	if (st.next != to || st.action != act)
		fail_msg("%s -%s-> expected %s/%s, got %s/%s", sup_run_state_name(from),
			 sup_run_event_name(ev), sup_run_state_name(to), sup_run_action_name(act),
			 sup_run_state_name(st.next), sup_run_action_name(st.action));
}

/* The happy path, claimed to settled, one named step each. */
static void
test_happy_path(void **state)
{
	expect_step(SUP_CLAIMED, SUP_EV_SPAWN_OK, SUP_SPAWNED, SUP_ACT_START);
	expect_step(SUP_SPAWNED, SUP_EV_START_GRANTED, SUP_STARTED, SUP_ACT_GO);
	expect_step(SUP_STARTED, SUP_EV_GONE, SUP_EXITED, SUP_ACT_RECORD_EXIT);
	expect_step(SUP_EXITED, SUP_EV_EXIT_GRANTED, SUP_CHECKPOINTED, SUP_ACT_SETTLE);
	expect_step(SUP_CHECKPOINTED, SUP_EV_SETTLED, SUP_SETTLED, SUP_ACT_FORGET);
}

/* The fast path (DESIGN §4): a fused claim creates the run running with a
 * shim spawned ahead, so the run enters the table as spawned and its start
 * is granted at once (the go is the hand-off); record_exit carries the
 * settle, and its grant settles the run: no checkpointed state between. */
static void
test_fast_path(void **state)
{
	expect_step(SUP_SPAWNED, SUP_EV_START_GRANTED, SUP_STARTED, SUP_ACT_GO);
	expect_step(SUP_STARTED, SUP_EV_GONE, SUP_EXITED, SUP_ACT_RECORD_EXIT);
	expect_step(SUP_EXITED, SUP_EV_EXIT_SETTLED, SUP_SETTLED, SUP_ACT_FORGET);
	/* The shim named by a held claim died before the grant: the running
	 * run never executed and is given back. */
	expect_step(SUP_SPAWNED, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON);
	/* A fused claim's run that cannot be set up fails: its exit is
	 * checkpointed without a record, then settled failed. */
	expect_step(SUP_SPAWNED, SUP_EV_SPAWN_FAILED, SUP_EXITED, SUP_ACT_RECORD_EXIT);
	/* Settled in one decision from nowhere else. */
	assert_int_equal(sup_run_step(SUP_STARTED, SUP_EV_EXIT_SETTLED).action, SUP_ACT_INVALID);
	assert_int_equal(sup_run_step(SUP_CHECKPOINTED, SUP_EV_EXIT_SETTLED).action,
			 SUP_ACT_INVALID);
	assert_string_equal(sup_run_event_name(SUP_EV_EXIT_SETTLED), "exit_settled");
}

/* Walking the table with the events of a run's life ends settled, and every
 * state on the way but the last still holds a slot. */
static void
test_walk_holds_slot_until_settled(void **state)
{
	static const enum sup_event life[] = {
		SUP_EV_SPAWN_OK, SUP_EV_START_GRANTED, SUP_EV_TICK,
		SUP_EV_GONE,     SUP_EV_EXIT_GRANTED,  SUP_EV_SETTLED
	};
	enum sup_state s = SUP_CLAIMED;
	size_t i;

	for (i = 0; i < sizeof(life) / sizeof(life[0]); i++) {
		struct sup_step st;

		assert_true(sup_run_busy(s));
		st = sup_run_step(s, life[i]);
		assert_int_not_equal(st.action, SUP_ACT_INVALID);
		s = st.next;
	}
	assert_int_equal(s, SUP_SETTLED);
	assert_false(sup_run_busy(s));
	assert_true(sup_run_terminal(s));
}

/* A job never executes before its run is recorded running: a denied (or
 * unanswered) start kills the waiting shim and abandons; it never says go. */
static void
test_start_denied_kills_and_abandons(void **state)
{
	expect_step(SUP_SPAWNED, SUP_EV_START_DENIED, SUP_ABANDONING, SUP_ACT_KILL_ABANDON);
	expect_step(SUP_ABANDONING, SUP_EV_ABANDONED, SUP_DROPPED, SUP_ACT_FORGET);
	/* The killed shim's reaping is expected and does nothing. */
	expect_step(SUP_ABANDONING, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_NONE);
	expect_step(SUP_ABANDONING, SUP_EV_GONE, SUP_ABANDONING, SUP_ACT_NONE);
	/* An abandon without an answer is resent on the next pass. */
	expect_step(SUP_ABANDONING, SUP_EV_TICK, SUP_ABANDONING, SUP_ACT_ABANDON);
}

/* A shim that could not be spawned: nothing ran, the run settles (failed,
 * with the reason) without an exit checkpoint. */
static void
test_spawn_failed_settles(void **state)
{
	expect_step(SUP_CLAIMED, SUP_EV_SPAWN_FAILED, SUP_CHECKPOINTED, SUP_ACT_SETTLE);
}

/* A shim gone without having forked the job: abandoned, not checkpointed,
 * so no attempt is spent. */
static void
test_gone_unstarted_abandons(void **state)
{
	expect_step(SUP_STARTED, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON);
	expect_step(SUP_SPAWNED, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON);
}

/* A denied record_exit means another actor won the checkpoint: the run is
 * dropped without aftercare or settle. */
static void
test_exit_denied_drops(void **state)
{
	struct sup_step st = sup_run_step(SUP_EXITED, SUP_EV_EXIT_DENIED);

	assert_int_equal(st.next, SUP_DROPPED);
	assert_int_equal(st.action, SUP_ACT_FORGET);
	assert_true(sup_run_terminal(st.next));
	assert_false(sup_run_busy(st.next));
}

/* What each state owes the reconcile pass. */
static void
test_tick_rows(void **state)
{
	expect_step(SUP_STARTED, SUP_EV_TICK, SUP_STARTED, SUP_ACT_NONE);
	expect_step(SUP_EXITED, SUP_EV_TICK, SUP_EXITED, SUP_ACT_RECORD_EXIT);
	expect_step(SUP_CHECKPOINTED, SUP_EV_TICK, SUP_CHECKPOINTED, SUP_ACT_SETTLE);
	expect_step(SUP_CLAIMED, SUP_EV_TICK, SUP_CLAIMED, SUP_ACT_NONE);
	expect_step(SUP_SPAWNED, SUP_EV_TICK, SUP_SPAWNED, SUP_ACT_NONE);
	expect_step(SUP_GONE, SUP_EV_TICK, SUP_GONE, SUP_ACT_READ);
}

/* Out of descriptors: a gone shim whose record cannot be read waits and
 * reads again (never orphaned for want of a descriptor), and a spawn that
 * lacks one gives the claim back (no attempt spent), never fails the run. */
static void
test_exhaustion_rows(void **state)
{
	expect_step(SUP_STARTED, SUP_EV_GONE_UNREAD, SUP_GONE, SUP_ACT_NONE);
	expect_step(SUP_GONE, SUP_EV_GONE_UNREAD, SUP_GONE, SUP_ACT_NONE);
	expect_step(SUP_GONE, SUP_EV_GONE, SUP_EXITED, SUP_ACT_RECORD_EXIT);
	expect_step(SUP_GONE, SUP_EV_GONE_UNSTARTED, SUP_ABANDONING, SUP_ACT_ABANDON);
	expect_step(SUP_ABANDONING, SUP_EV_GONE_UNREAD, SUP_ABANDONING, SUP_ACT_NONE);
	expect_step(SUP_CLAIMED, SUP_EV_SPAWN_DEFERRED, SUP_ABANDONING, SUP_ACT_ABANDON);
	assert_true(sup_run_busy(SUP_GONE));
}

/* Events a state does not expect are invalid and leave the state alone; in
 * particular nothing ever leaves a terminal state, and a go is only ever
 * sent from spawned. */
static void
test_unexpected_events_invalid(void **state)
{
	int s, e;

	for (s = 0; s < SUP_NSTATES; s++) {
		for (e = 0; e < SUP_NEVENTS; e++) {
			struct sup_step st = sup_run_step((enum sup_state)s, (enum sup_event)e);

			if (sup_run_terminal((enum sup_state)s))
				assert_int_equal(st.action, SUP_ACT_INVALID);
			if (st.action == SUP_ACT_INVALID)
				assert_int_equal(st.next, s);
			if (st.action == SUP_ACT_GO) {
				assert_int_equal(s, SUP_SPAWNED);
				assert_int_equal(e, SUP_EV_START_GRANTED);
			}
			/* An exit is checkpointed only for a run recorded
			 * running: started, or (a fused claim) spawned and
			 * failing to be set up, which settles it failed. */
			if (st.action == SUP_ACT_RECORD_EXIT)
				assert_true(s == SUP_STARTED || s == SUP_GONE || s == SUP_EXITED ||
					    (s == SUP_SPAWNED && e == SUP_EV_SPAWN_FAILED));
		}
	}
	expect_step(SUP_CLAIMED, SUP_EV_GONE, SUP_CLAIMED, SUP_ACT_INVALID);
	expect_step(SUP_STARTED, SUP_EV_START_GRANTED, SUP_STARTED, SUP_ACT_INVALID);
	expect_step(SUP_CHECKPOINTED, SUP_EV_EXIT_DENIED, SUP_CHECKPOINTED, SUP_ACT_INVALID);
	expect_step(SUP_SPAWNED, SUP_EV_GONE, SUP_SPAWNED, SUP_ACT_INVALID);
}

/* Every state, event and action has a name (they appear in the log). */
static void
test_names(void **state)
{
	int i;

	for (i = 0; i < SUP_NSTATES; i++)
		assert_string_not_equal(sup_run_state_name((enum sup_state)i), "?");
	for (i = 0; i < SUP_NEVENTS; i++)
		assert_string_not_equal(sup_run_event_name((enum sup_event)i), "?");
	for (i = 0; i <= SUP_ACT_INVALID; i++)
		assert_string_not_equal(sup_run_action_name((enum sup_action)i), "?");
	assert_string_equal(sup_run_state_name(SUP_CHECKPOINTED), "checkpointed");
	assert_string_equal(sup_run_state_name(SUP_NSTATES), "?");
	assert_string_equal(sup_run_event_name(SUP_NEVENTS), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_happy_path),
		cmocka_unit_test(test_fast_path),
		cmocka_unit_test(test_walk_holds_slot_until_settled),
		cmocka_unit_test(test_start_denied_kills_and_abandons),
		cmocka_unit_test(test_spawn_failed_settles),
		cmocka_unit_test(test_gone_unstarted_abandons),
		cmocka_unit_test(test_exit_denied_drops),
		cmocka_unit_test(test_tick_rows),
		cmocka_unit_test(test_exhaustion_rows),
		cmocka_unit_test(test_unexpected_events_invalid),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
