/* recovery's rule table (recovery/rcv_decide.c): one test per row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rcv_decide.h"

#define NOW 1000000

/* A run whose owner is dead and whose lease is still valid: recovery must
 * look at it anyway (owner death is decided by identity, not by clock). */
static struct rcv_facts
base(enum rcv_state st)
{
	struct rcv_facts f = { 0 };

	f.state = st;
	f.has_lease = 1;
	f.lease_expires_ms = NOW + 5000;
	f.owner_alive = 0;
	f.has_shim = st != RCV_ST_CLAIMED;
	f.started = st != RCV_ST_CLAIMED; /* a started run's shim wrote its marker */
	f.started_age_ms = 60000;
	f.shim = IDENT_MATCHES;
	f.have_supervisor = 1;
	return f;
}

static void
test_owner_alive_lease_held_is_not_ours(void **state)
{
	enum rcv_state sts[] = { RCV_ST_CLAIMED, RCV_ST_RUNNING, RCV_ST_AFTERCARE };
	enum ident_status shims[] = { IDENT_MATCHES, IDENT_GONE, IDENT_UNVERIFIABLE };
	size_t i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			struct rcv_facts f = base(sts[i]);

			f.owner_alive = 1;
			f.shim = shims[j];
			assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
		}
}

static void
test_terminal_state_never_ours(void **state)
{
	struct rcv_facts f = base(RCV_ST_OTHER);

	f.has_lease = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
	assert_int_equal(rcv_state_parse("succeeded"), RCV_ST_OTHER);
	assert_int_equal(rcv_state_parse(NULL), RCV_ST_OTHER);
	assert_int_equal(rcv_state_parse("claimed"), RCV_ST_CLAIMED);
	assert_int_equal(rcv_state_parse("running"), RCV_ST_RUNNING);
	assert_int_equal(rcv_state_parse("aftercare"), RCV_ST_AFTERCARE);
}

static void
test_running_alive_owner_dead_readopts(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	assert_int_equal(rcv_decide(&f, NOW), RCV_READOPT);
}

static void
test_running_unverifiable_counts_as_alive(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.shim = IDENT_UNVERIFIABLE;
	assert_int_equal(rcv_decide(&f, NOW), RCV_READOPT);
}

static void
test_running_alive_without_supervisor_waits(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.have_supervisor = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
}

static void
test_running_alive_owner_alive_lease_expired_left_to_owner(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	/* A stopped or slow supervisor still watches its live job. */
	f.owner_alive = 1;
	f.lease_expires_ms = NOW;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
}

static void
test_running_dead_owner_dead_records_exit(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.shim = IDENT_GONE; /* dead, reused pid, or another boot */
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
	/* Even without a live supervisor: settling needs none. */
	f.have_supervisor = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
}

static void
test_running_dead_owner_alive_lease_expired_records_exit(void **state)
{
	/* The exit-checkpoint race: the owner is paused past its lease. */
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.owner_alive = 1;
	f.shim = IDENT_GONE;
	f.lease_expires_ms = NOW; /* expires_at > now is the live lease */
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
	f.lease_expires_ms = NOW + 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
}

static void
test_running_without_lease_row_is_expired(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.owner_alive = 1;
	f.shim = IDENT_GONE;
	f.has_lease = 0;
	f.lease_expires_ms = NOW + 100000;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
}

static void
test_running_without_shim_identity_is_dead(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.has_shim = 0;
	f.shim = IDENT_MATCHES; /* ignored without an identity */
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
}

static void
test_running_shim_died_before_go_abandoned(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	/* Start granted, the supervisor died before the go: the shim died
	 * with it and never wrote the marker. The job never executed. */
	f.shim = IDENT_GONE;
	f.started = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_ABANDON);
	/* A record without a marker is still a record: checkpoint it. */
	f.has_exit_record = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
	/* Without a recorded shim identity nobody can say it is gone. */
	f.has_exit_record = 0;
	f.has_shim = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
}

static void
test_running_shim_alive_without_marker_is_not_abandoned(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.started = 0; /* shim alive, go about to be sent */
	assert_int_equal(rcv_decide(&f, NOW), RCV_READOPT);
}

static void
test_claimed_owner_dead_needs_confirmation(void **state)
{
	struct rcv_facts f = base(RCV_ST_CLAIMED);

	assert_int_equal(rcv_decide(&f, NOW), RCV_CONFIRM);
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_ABANDON);
}

static void
test_claimed_owner_alive_lease_expired_waits(void **state)
{
	struct rcv_facts f = base(RCV_ST_CLAIMED);

	f.owner_alive = 1;
	f.lease_expires_ms = NOW - 1;
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
}

static void
test_claimed_own_instance_abandons(void **state)
{
	struct rcv_facts f = base(RCV_ST_CLAIMED);

	f.owner_alive = 1;
	f.owner_is_self = 1;
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_ABANDON);
}

static void
test_claimed_started_marker_is_an_executed_run(void **state)
{
	struct rcv_facts f = base(RCV_ST_CLAIMED);

	f.started = 1;
	f.started_age_ms = RCV_MARKER_SETTLE_MS;
	assert_int_equal(rcv_decide(&f, NOW), RCV_CONFIRM);
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
	/* Never abandoned, even with a live owner whose lease ran out. */
	f.owner_alive = 1;
	f.lease_expires_ms = NOW - 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_RECORD_EXIT);
}

static void
test_claimed_fresh_marker_waits(void **state)
{
	struct rcv_facts f = base(RCV_ST_CLAIMED);

	f.started = 1;
	f.started_age_ms = RCV_MARKER_SETTLE_MS - 1;
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
	f.started_age_ms = -50; /* marker newer than the scan */
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
}

static void
test_aftercare_owner_dead_settles(void **state)
{
	struct rcv_facts f = base(RCV_ST_AFTERCARE);

	assert_int_equal(rcv_decide(&f, NOW), RCV_SETTLE);
	f.has_lease = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_SETTLE);
}

/* A lapsed lease never hands an aftercare on: its owner is paused or
 * slow, not dead (DESIGN §4, issue 10). */
static void
test_aftercare_owner_alive_lease_expired_left_to_owner(void **state)
{
	struct rcv_facts f = base(RCV_ST_AFTERCARE);

	f.owner_alive = 1;
	f.lease_expires_ms = NOW - 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
	f.lease_expires_ms = NOW - 3600 * 1000;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
}

static void
test_aftercare_owner_alive_no_lease_left_to_owner(void **state)
{
	struct rcv_facts f = base(RCV_ST_AFTERCARE);

	f.owner_alive = 1;
	f.has_lease = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_NONE);
}

static void
test_aftercare_of_our_own_lost_reply_settles(void **state)
{
	struct rcv_facts f = base(RCV_ST_AFTERCARE);

	f.owner_alive = 1;
	f.owner_is_self = 1;
	f.has_lease = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_SETTLE);
}

/* What a run left that cannot be read now (no descriptor left) decides
 * nothing: recovery waits rather than take the record for absent, in every
 * state where it would act on it. A live shim still needs no reading. */
static void
test_unreadable_run_dir_waits(void **state)
{
	struct rcv_facts f = base(RCV_ST_RUNNING);

	f.unreadable = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_READOPT);
	f.shim = IDENT_GONE;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
	f.started = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT); /* not abandoned */
	f = base(RCV_ST_AFTERCARE);
	f.unreadable = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
	f = base(RCV_ST_CLAIMED);
	f.unreadable = 1;
	f.confirmed = 1;
	assert_int_equal(rcv_decide(&f, NOW), RCV_WAIT);
	f.unreadable = 0;
	assert_int_equal(rcv_decide(&f, NOW), RCV_ABANDON);
}

static void
test_action_names(void **state)
{
	assert_string_equal(rcv_action_name(RCV_READOPT), "readopt");
	assert_string_equal(rcv_action_name(RCV_RECORD_EXIT), "record_exit");
	assert_string_equal(rcv_action_name(RCV_ABANDON), "abandon");
	assert_string_equal(rcv_action_name(RCV_SETTLE), "settle");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_alive_lease_held_is_not_ours),
		cmocka_unit_test(test_terminal_state_never_ours),
		cmocka_unit_test(test_running_alive_owner_dead_readopts),
		cmocka_unit_test(test_running_unverifiable_counts_as_alive),
		cmocka_unit_test(test_running_alive_without_supervisor_waits),
		cmocka_unit_test(test_running_alive_owner_alive_lease_expired_left_to_owner),
		cmocka_unit_test(test_running_dead_owner_dead_records_exit),
		cmocka_unit_test(test_running_dead_owner_alive_lease_expired_records_exit),
		cmocka_unit_test(test_running_without_lease_row_is_expired),
		cmocka_unit_test(test_running_without_shim_identity_is_dead),
		cmocka_unit_test(test_running_shim_died_before_go_abandoned),
		cmocka_unit_test(test_running_shim_alive_without_marker_is_not_abandoned),
		cmocka_unit_test(test_claimed_owner_dead_needs_confirmation),
		cmocka_unit_test(test_claimed_owner_alive_lease_expired_waits),
		cmocka_unit_test(test_claimed_own_instance_abandons),
		cmocka_unit_test(test_claimed_started_marker_is_an_executed_run),
		cmocka_unit_test(test_claimed_fresh_marker_waits),
		cmocka_unit_test(test_aftercare_owner_dead_settles),
		cmocka_unit_test(test_aftercare_owner_alive_lease_expired_left_to_owner),
		cmocka_unit_test(test_aftercare_owner_alive_no_lease_left_to_owner),
		cmocka_unit_test(test_aftercare_of_our_own_lost_reply_settles),
		cmocka_unit_test(test_unreadable_run_dir_waits),
		cmocka_unit_test(test_action_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
