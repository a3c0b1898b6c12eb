/* states: the vocabulary and the one exit -> outcome rule, a test per rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "states.h"

static void
test_run_names_round_trip(void **state)
{
	int s;

	for (s = 0; s < RUN_NSTATES; s++)
		assert_int_equal(run_state_parse(run_state_name((enum run_state)s)), s);
	assert_string_equal(run_state_name(RUN_ABSENT), "absent");
	assert_string_equal(run_state_name(RUN_NSTATES), "absent");
	assert_int_equal(run_state_parse("absent"), RUN_ABSENT);
	assert_int_equal(run_state_parse(""), RUN_ABSENT);
	assert_int_equal(run_state_parse(NULL), RUN_ABSENT);
	assert_int_equal(run_state_parse("Running"), RUN_ABSENT);
}

/* The spellings the schema's CHECKs, the wire and the trace carry. */
static void
test_run_names_are_the_wire_names(void **state)
{
	assert_string_equal(run_state_name(RUN_CLAIMED), "claimed");
	assert_string_equal(run_state_name(RUN_RUNNING), "running");
	assert_string_equal(run_state_name(RUN_AFTERCARE), "aftercare");
	assert_string_equal(run_state_name(RUN_SUCCEEDED), "succeeded");
	assert_string_equal(run_state_name(RUN_FAILED), "failed");
	assert_string_equal(run_state_name(RUN_TIMED_OUT), "timed_out");
	assert_string_equal(run_state_name(RUN_CANCELLED), "cancelled");
	assert_string_equal(run_state_name(RUN_ORPHANED), "orphaned");
	assert_string_equal(run_state_name(RUN_ABORTED), "aborted");
}

static void
test_terminal_and_live_split_the_states(void **state)
{
	int s;

	for (s = 0; s < RUN_NSTATES; s++)
		assert_int_equal(run_state_terminal((enum run_state)s),
				 !run_state_live((enum run_state)s));
	assert_true(run_state_live(RUN_AFTERCARE));
	assert_true(run_state_terminal(RUN_ABORTED));
	assert_false(run_state_terminal(RUN_ABSENT));
	assert_false(run_state_live(RUN_ABSENT));
}

static void
test_ticket_names(void **state)
{
	int s;

	for (s = 0; s < TICKET_NSTATES; s++)
		assert_int_equal(ticket_state_parse(ticket_state_name((enum ticket_state)s)), s);
	assert_string_equal(ticket_state_name(TICKET_READY), "ready");
	assert_string_equal(ticket_state_name(TICKET_HELD), "held");
	assert_string_equal(ticket_state_name(TICKET_CANCELLED), "cancelled");
	assert_int_equal(ticket_state_parse("blocked"), TICKET_ABSENT);
	assert_true(ticket_state_final(TICKET_FAILED));
	assert_string_equal(ticket_state_name(TICKET_DEPENDENCY_FAILED), "dependency_failed");
	assert_true(ticket_state_final(TICKET_DEPENDENCY_FAILED));
	assert_false(ticket_state_final(TICKET_READY));
	assert_false(ticket_state_final(TICKET_CLAIMED));
}

static void
test_stop_reasons(void **state)
{
	assert_string_equal(stop_reason_name(STOP_NONE), "");
	assert_string_equal(stop_reason_name(STOP_CANCEL), "cancel");
	assert_string_equal(stop_reason_name(STOP_TIMEOUT), "timeout");
	assert_int_equal(stop_reason_parse("cancel"), STOP_CANCEL);
	assert_int_equal(stop_reason_parse("timeout"), STOP_TIMEOUT);
	assert_int_equal(stop_reason_parse(""), STOP_NONE);
	assert_int_equal(stop_reason_parse(NULL), STOP_NONE);
	assert_int_equal(stop_reason_parse("kill"), STOP_NONE);
}

static struct run_end
exited(int code)
{
	struct run_end e;

	memset(&e, 0, sizeof(e));
	e.state = RUN_AFTERCARE;
	e.has_record = 1;
	e.has_code = 1;
	e.code = code;
	return e;
}

static void
test_outcome_exit_zero_succeeded(void **state)
{
	struct run_end e = exited(0);

	assert_int_equal(run_outcome(&e), RUN_SUCCEEDED);
}

static void
test_outcome_nonzero_failed(void **state)
{
	struct run_end e = exited(3);

	assert_int_equal(run_outcome(&e), RUN_FAILED);
}

static void
test_outcome_signal_failed(void **state)
{
	struct run_end e = exited(0);

	e.has_code = 0;
	e.has_signal = 1;
	e.signal = 9;
	assert_int_equal(run_outcome(&e), RUN_FAILED);
}

static void
test_outcome_no_record_orphaned(void **state)
{
	struct run_end e = exited(0);

	e.has_record = 0;
	e.has_code = 0;
	assert_int_equal(run_outcome(&e), RUN_ORPHANED);
}

static void
test_outcome_claimed_aborted(void **state)
{
	struct run_end e;

	memset(&e, 0, sizeof(e));
	e.state = RUN_CLAIMED;
	assert_int_equal(run_outcome(&e), RUN_ABORTED);
}

/* A stop request wins over the exit: a cancelled job that exited 0 in its
 * SIGTERM handler was still cancelled. */
static void
test_outcome_cancel_wins(void **state)
{
	struct run_end e = exited(0);

	e.stop = STOP_CANCEL;
	assert_int_equal(run_outcome(&e), RUN_CANCELLED);
	e.state = RUN_CLAIMED;
	assert_int_equal(run_outcome(&e), RUN_CANCELLED);
}

static void
test_outcome_timeout_wins(void **state)
{
	struct run_end e = exited(0);

	e.stop = STOP_TIMEOUT;
	e.has_record = 0;
	assert_int_equal(run_outcome(&e), RUN_TIMED_OUT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_names_round_trip),
		cmocka_unit_test(test_run_names_are_the_wire_names),
		cmocka_unit_test(test_terminal_and_live_split_the_states),
		cmocka_unit_test(test_ticket_names),
		cmocka_unit_test(test_stop_reasons),
		cmocka_unit_test(test_outcome_exit_zero_succeeded),
		cmocka_unit_test(test_outcome_nonzero_failed),
		cmocka_unit_test(test_outcome_signal_failed),
		cmocka_unit_test(test_outcome_no_record_orphaned),
		cmocka_unit_test(test_outcome_claimed_aborted),
		cmocka_unit_test(test_outcome_cancel_wins),
		cmocka_unit_test(test_outcome_timeout_wins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
