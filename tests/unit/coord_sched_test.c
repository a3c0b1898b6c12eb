/* When work runs (coordinator/coord_sched.c): the ticket_next table, one
 * test per row, each stating the rule in its own words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coord_sched.h"
#include "states.h"

static const enum run_state bad_outcomes[] = { RUN_FAILED, RUN_TIMED_OUT, RUN_ORPHANED };

/* Every combination of the two inputs a row may not care about. */
#define EACH(v) for (v = 0; v < 2; v++)

static void
assert_next(enum run_state outcome, int cancel, int budget, int periodic, size_t row,
	    enum ticket_state next, enum coord_then then, enum coord_bad bad)
{
	const struct coord_ticket_next *t =
		coord_sched_ticket_next(outcome, cancel, budget, periodic);

	assert_non_null(t);
	assert_ptr_equal(t, coord_sched_ticket_next_row(row));
	assert_int_equal(t->next, next);
	assert_int_equal(t->then, then);
	assert_int_equal(t->bad, bad);
}

/* A cancel request wins over a retry or a re-queue, whatever the run's end
 * (but a success): the ticket is cancelled with its queued activations. */
static void
test_next_cancel_wins(void **state)
{
	int s, budget, periodic;

	(void)state;
	for (s = RUN_SUCCEEDED + 1; s < RUN_NSTATES; s++)
		EACH(budget) EACH(periodic)
			assert_next((enum run_state)s, 1, budget, periodic, 0, TICKET_CANCELLED,
				    COORD_THEN_CANCEL, COORD_BAD_KEEP);
}

/* A periodic ticket that succeeded waits for its next firing, with a fresh
 * budget (a cancel that came too late changes nothing). */
static void
test_next_succeeded_periodic(void **state)
{
	int cancel, budget;

	(void)state;
	EACH(cancel) EACH(budget)
		assert_next(RUN_SUCCEEDED, cancel, budget, 1, 1, TICKET_READY, COORD_THEN_EVERY,
			    COORD_BAD_RESET);
}

/* A one-off ticket that succeeded has succeeded. */
static void
test_next_succeeded_once(void **state)
{
	int cancel, budget;

	(void)state;
	EACH(cancel) EACH(budget)
		assert_next(RUN_SUCCEEDED, cancel, budget, 0, 2, TICKET_SUCCEEDED,
			    COORD_THEN_NOTHING, COORD_BAD_RESET);
}

/* A run cancelled without a cancel request (settled so by its caller)
 * cancels its ticket all the same. */
static void
test_next_cancelled(void **state)
{
	int budget, periodic;

	(void)state;
	EACH(budget) EACH(periodic)
		assert_next(RUN_CANCELLED, 0, budget, periodic, 3, TICKET_CANCELLED,
			    COORD_THEN_CANCEL, COORD_BAD_KEEP);
}

/* An aborted run never executed: ready again, no budget spent, its own
 * activation queued again. */
static void
test_next_aborted(void **state)
{
	int budget, periodic;

	(void)state;
	EACH(budget) EACH(periodic)
		assert_next(RUN_ABORTED, 0, budget, periodic, 4, TICKET_READY, COORD_THEN_REQUEUE,
			    COORD_BAD_KEEP);
}

/* failed, timed_out and orphaned spend the budget; while attempts are
 * left, a retry is queued after the backoff. */
static void
test_next_retry(void **state)
{
	size_t i;
	int periodic;

	(void)state;
	for (i = 0; i < 3; i++)
		EACH(periodic)
			assert_next(bad_outcomes[i], 0, 1, periodic, 5, TICKET_READY,
				    COORD_THEN_BACKOFF, COORD_BAD_SPEND);
}

/* A periodic ticket out of budget skips to its next firing with a fresh
 * budget rather than stopping. */
static void
test_next_periodic_out_of_budget(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_next(bad_outcomes[i], 0, 0, 1, 6, TICKET_READY, COORD_THEN_EVERY,
			    COORD_BAD_RESET);
}

/* A one-off ticket out of budget has failed. */
static void
test_next_failed_for_good(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_next(bad_outcomes[i], 0, 0, 0, 7, TICKET_FAILED, COORD_THEN_NOTHING,
			    COORD_BAD_SPEND);
}

/* Only an outcome moves a ticket on; the table has the eight rows above. */
static void
test_next_only_outcomes(void **state)
{
	(void)state;
	assert_null(coord_sched_ticket_next(RUN_CLAIMED, 0, 1, 0));
	assert_null(coord_sched_ticket_next(RUN_RUNNING, 1, 1, 0));
	assert_null(coord_sched_ticket_next(RUN_AFTERCARE, 0, 0, 1));
	assert_null(coord_sched_ticket_next(RUN_ABSENT, 0, 0, 0));
	assert_non_null(coord_sched_ticket_next_row(7));
	assert_null(coord_sched_ticket_next_row(8));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_cancel_wins),
		cmocka_unit_test(test_next_succeeded_periodic),
		cmocka_unit_test(test_next_succeeded_once),
		cmocka_unit_test(test_next_cancelled),
		cmocka_unit_test(test_next_aborted),
		cmocka_unit_test(test_next_retry),
		cmocka_unit_test(test_next_periodic_out_of_budget),
		cmocka_unit_test(test_next_failed_for_good),
		cmocka_unit_test(test_next_only_outcomes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
