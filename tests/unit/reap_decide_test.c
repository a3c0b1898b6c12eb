/* the reaper's rule table (reaper/reap_decide.c): one test per row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reap_decide.h"

#define NOW       10000000
#define GRACE     2000
#define RETENTION 100000

static const struct reap_params P = { NOW, GRACE, RETENTION };

static struct reap_facts
running(void)
{
	struct reap_facts f = { 0 };

	f.running = 1;
	f.has_shim = 1;
	f.shim = IDENT_MATCHES;
	f.job_alive = 1;
	f.claimed_ms = NOW - 60000;
	f.started_ms = NOW - 50000;
	return f;
}

static struct reap_facts
settled(void)
{
	struct reap_facts f = running();

	f.running = 0;
	f.settled = 1;
	f.settled_ms = NOW - 10 * GRACE;
	f.job_alive = 0;
	f.shim = IDENT_GONE;
	return f;
}

static void
test_plain_running_run_left_alone(void **state)
{
	struct reap_facts f = running();

	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.timeout_ms = 60000; /* not yet due */
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_stop_request_sends_term_first(void **state)
{
	struct reap_facts f = running();

	f.stop_requested = 1;
	assert_int_equal(reap_decide(&f, &P), REAP_TERM);
}

static void
test_kill_only_after_grace(void **state)
{
	struct reap_facts f = running();

	f.stop_requested = 1;
	f.term_sent_ms = NOW - GRACE + 1;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.term_sent_ms = NOW - GRACE;
	assert_int_equal(reap_decide(&f, &P), REAP_KILL);
}

static void
test_no_kill_when_group_gone(void **state)
{
	struct reap_facts f = running();

	f.stop_requested = 1;
	f.term_sent_ms = NOW - 10 * GRACE;
	f.job_alive = 0;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_reused_or_unverifiable_leader_never_signalled(void **state)
{
	struct reap_facts f = running();

	f.stop_requested = 1;
	f.shim = IDENT_GONE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.shim = IDENT_UNVERIFIABLE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.term_sent_ms = NOW - 10 * GRACE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.has_shim = 0;
	f.shim = IDENT_MATCHES;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_timeout_marks_stop(void **state)
{
	struct reap_facts f = running();

	f.timeout_ms = 1000;
	f.started_ms = NOW - 1000; /* started + timeout < now is the rule */
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.started_ms = NOW - 1001;
	assert_int_equal(reap_decide(&f, &P), REAP_MARK_TIMEOUT);
}

static void
test_timeout_not_marked_when_job_already_ended(void **state)
{
	struct reap_facts f = running();

	f.timeout_ms = 1000;
	f.shim = IDENT_GONE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.started_ms = 0; /* unknown start */
	f.shim = IDENT_MATCHES;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_timeout_with_stop_already_recorded_goes_to_kill_sequence(void **state)
{
	struct reap_facts f = running();

	f.timeout_ms = 1000;
	f.stop_requested = 1;
	assert_int_equal(reap_decide(&f, &P), REAP_TERM);
}

static void
test_claimed_with_stop_settled_after_grace(void **state)
{
	struct reap_facts f = { 0 };

	f.claimed = 1;
	f.stop_requested = 1;
	f.claimed_ms = NOW - GRACE + 1;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.claimed_ms = NOW - GRACE;
	assert_int_equal(reap_decide(&f, &P), REAP_SETTLE_STOPPED);
	f.stop_requested = 0;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_aftercare_left_alone(void **state)
{
	struct reap_facts f = running();

	f.running = 0; /* aftercare */
	f.stop_requested = 1;
	f.timeout_ms = 1;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_straggler_group_killed_only_with_matching_leader(void **state)
{
	struct reap_facts f = settled();

	f.shim = IDENT_MATCHES;
	f.job_alive = 1;
	assert_int_equal(reap_decide(&f, &P), REAP_STRAGGLER);
	/* A lingering shim alone (its record not yet on disk) is ended too. */
	f.job_alive = 0;
	assert_int_equal(reap_decide(&f, &P), REAP_STRAGGLER);
	f.job_alive = 1;
	f.shim = IDENT_GONE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.shim = IDENT_UNVERIFIABLE;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_straggler_waits_for_grace_after_settle(void **state)
{
	struct reap_facts f = settled();

	f.shim = IDENT_MATCHES;
	f.job_alive = 1;
	f.settled_ms = NOW - GRACE + 1; /* the shim is still on its way out */
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_data_removed_after_retention(void **state)
{
	struct reap_facts f = settled();

	f.data_present = 1;
	f.settled_ms = NOW - RETENTION;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
	f.settled_ms = NOW - RETENTION - 1;
	assert_int_equal(reap_decide(&f, &P), REAP_REMOVE_DATA);
	f.data_present = 0;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

static void
test_unsettled_data_never_removed(void **state)
{
	struct reap_facts f = running();

	f.data_present = 1;
	f.settled_ms = 0;
	f.started_ms = NOW - 10 * RETENTION;
	assert_int_equal(reap_decide(&f, &P), REAP_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_running_run_left_alone),
		cmocka_unit_test(test_stop_request_sends_term_first),
		cmocka_unit_test(test_kill_only_after_grace),
		cmocka_unit_test(test_no_kill_when_group_gone),
		cmocka_unit_test(test_reused_or_unverifiable_leader_never_signalled),
		cmocka_unit_test(test_timeout_marks_stop),
		cmocka_unit_test(test_timeout_not_marked_when_job_already_ended),
		cmocka_unit_test(test_timeout_with_stop_already_recorded_goes_to_kill_sequence),
		cmocka_unit_test(test_claimed_with_stop_settled_after_grace),
		cmocka_unit_test(test_aftercare_left_alone),
		cmocka_unit_test(test_straggler_group_killed_only_with_matching_leader),
		cmocka_unit_test(test_straggler_waits_for_grace_after_settle),
		cmocka_unit_test(test_data_removed_after_retention),
		cmocka_unit_test(test_unsettled_data_never_removed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
