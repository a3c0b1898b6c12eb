/*
 * Facts <-> messages (proto/msg.c): a process identity survives the round
 * trip and a missing pgid is the pid's own group (the one rule every actor
 * reads identities by); the exit checkpoint and the aftercare of a settle
 * are made of what the run left; a reply calling our request malformed or
 * of another version is told from every other error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "berth_limits.h"
#include "msg.h"

static void
test_ident_round_trip(void **state)
{
	struct ident id = { .boot_id = "b0-07", .pid = 4242, .start_time = 99, .pgid = 4240 }, back;
	Berth__Ident m = BERTH__IDENT__INIT;

	msg_ident_to(&id, &m);
	assert_string_equal(m.boot_id, "b0-07");
	assert_true(m.has_pid && m.has_start_time && m.has_pgid);
	assert_int_equal(msg_ident_from(&m, &back), 0);
	assert_string_equal(back.boot_id, id.boot_id);
	assert_int_equal(back.pid, id.pid);
	assert_int_equal(back.start_time, id.start_time);
	assert_int_equal(back.pgid, id.pgid);
}

/* The one pgid rule: absent or not positive means the pid's own group. */
static void
test_pgid_rule(void **state)
{
	Berth__Ident m = BERTH__IDENT__INIT;
	struct ident id;

	m.has_pid = 1;
	m.pid = 77;
	assert_int_equal(msg_ident_from(&m, &id), 0);
	assert_int_equal(id.pgid, 77);
	assert_string_equal(id.boot_id, ""); /* unknown boot: not compared */
	m.has_pgid = 1;
	m.pgid = 0;
	assert_int_equal(msg_ident_from(&m, &id), 0);
	assert_int_equal(id.pgid, 77);
	m.pgid = -5;
	assert_int_equal(msg_ident_from(&m, &id), 0);
	assert_int_equal(id.pgid, 77);
	m.pgid = 70;
	assert_int_equal(msg_ident_from(&m, &id), 0);
	assert_int_equal(id.pgid, 70);
}

static void
test_no_identity(void **state)
{
	Berth__Ident m = BERTH__IDENT__INIT;
	struct ident id;

	memset(&id, 0x5a, sizeof(id));
	assert_int_equal(msg_ident_from(NULL, &id), -1);
	assert_int_equal(id.pid, 0);
	assert_int_equal(msg_ident_from(&m, &id), -1); /* no pid */
	m.has_pid = 1;
	m.pid = 0;
	assert_int_equal(msg_ident_from(&m, &id), -1);
}

static void
test_record_exit(void **state)
{
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT, none = BERTH__RECORD_EXIT__INIT;
	struct aftercare a;
	char run[] = "abc";

	memset(&a, 0, sizeof(a));
	a.has_record = 1;
	a.rec.has_signal = 1;
	a.rec.signal = 9;
	a.rec.ended_ms = 123;
	a.has_output = 1;
	a.output_bytes = 42;
	a.capture_complete = 1;
	msg_record_exit(&re, run, &a);
	/* The capture facts go with the checkpoint. */
	assert_true(re.has_output_bytes);
	assert_int_equal(re.output_bytes, 42);
	assert_true(re.has_capture_complete && re.capture_complete);
	assert_string_equal(re.run_id, "abc");
	assert_true(re.has_has_record && re.has_record);
	assert_false(re.has_exit_code);
	assert_true(re.has_signal);
	assert_int_equal(re.signal, 9);
	assert_true(re.has_ended_ms);
	assert_int_equal(re.ended_ms, 123);
	/* No record: the run is orphaned, and nothing else is claimed. */
	memset(&a, 0, sizeof(a));
	a.exit_present = 1; /* a damaged record is none */
	msg_record_exit(&none, run, &a);
	assert_true(none.has_has_record);
	assert_false(none.has_record);
	assert_false(none.has_exit_code || none.has_signal || none.has_ended_ms);
	/* ... but what was captured is said: no output file, not complete. */
	assert_false(none.has_output_bytes);
	assert_true(none.has_capture_complete);
	assert_false(none.capture_complete);
}

static void
test_settle_aftercare(void **state)
{
	Berth__Settle se = BERTH__SETTLE__INIT, bare = BERTH__SETTLE__INIT;
	struct aftercare a;

	memset(&a, 0, sizeof(a));
	a.has_output = 1;
	a.output_bytes = 5;
	a.capture_complete = 1;
	msg_settle_aftercare(&se, &a);
	assert_true(se.has_output_bytes);
	assert_int_equal(se.output_bytes, 5);
	assert_true(se.has_capture_complete && se.capture_complete);
	memset(&a, 0, sizeof(a));
	msg_settle_aftercare(&bare, &a);
	assert_false(bare.has_output_bytes); /* no file: no size claimed */
	assert_true(bare.has_capture_complete);
	assert_false(bare.capture_complete);
}

/* Every limit of proto/berth_limits.h, at and just past it. */
static void
test_add_limits(void **state)
{
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[3] = { "sh", "-c", NULL }, *env[1], why[160], *big = malloc(BERTH_ARG_MAX + 2);
	char name[BERTH_NAME_MAX + 2], *many[BERTH_AFTER_MAX + 1];
	char **wide = calloc(16, sizeof(char *));
	size_t i;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', BERTH_ARG_MAX);
	big[BERTH_ARG_MAX] = '\0';
	argv[2] = big;
	a.argv = argv;
	a.n_argv = 3;
	assert_int_equal(msg_add_limits(&a, why, sizeof why), 0);
	big[BERTH_ARG_MAX] = 'x';
	big[BERTH_ARG_MAX + 1] = '\0';
	assert_int_equal(msg_add_limits(&a, why, sizeof why), -1);
	assert_non_null(strstr(why, "argument 3"));
	big[BERTH_ARG_MAX] = '\0';
	env[0] = big;
	a.env = env;
	a.n_env = 1;
	assert_int_equal(msg_add_limits(&a, why, sizeof why), 0);
	/* Eight entries of the most one may be: over the total. */
	for (i = 0; i < 8; i++)
		wide[i] = big;
	a.env = wide;
	a.n_env = 8;
	assert_int_equal(msg_add_limits(&a, why, sizeof why), -1);
	assert_non_null(strstr(why, "together at most"));
	a.n_env = 0;
	memset(name, 'n', sizeof name);
	name[BERTH_NAME_MAX] = '\0';
	a.name = name;
	assert_int_equal(msg_add_limits(&a, why, sizeof why), 0);
	name[BERTH_NAME_MAX] = 'n';
	name[BERTH_NAME_MAX + 1] = '\0';
	assert_int_equal(msg_add_limits(&a, why, sizeof why), -1);
	assert_non_null(strstr(why, "--name"));
	a.name = NULL;
	for (i = 0; i <= BERTH_AFTER_MAX; i++)
		many[i] = "T1";
	a.after = many;
	a.n_after = BERTH_AFTER_MAX + 1;
	assert_int_equal(msg_add_limits(&a, why, sizeof why), -1);
	assert_non_null(strstr(why, "--after"));
	free(big);
	free(wide);
}

static void
test_reply_is_bug(void **state)
{
	Berth__Reply r = BERTH__REPLY__INIT;
	Berth__Error e = BERTH__ERROR__INIT;
	int code;

	assert_false(msg_reply_is_bug(NULL));
	assert_false(msg_reply_is_bug(&r));
	r.result_case = BERTH__REPLY__RESULT_ERROR;
	assert_false(msg_reply_is_bug(&r)); /* an error without its message */
	r.error = &e;
	for (code = 0; code <= BERTH__ERROR_CODE__ERR_BUSY; code++) {
		e.code = code;
		assert_int_equal(msg_reply_is_bug(&r),
				 code == BERTH__ERROR_CODE__ERR_MALFORMED ||
					 code == BERTH__ERROR_CODE__ERR_VERSION);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ident_round_trip), cmocka_unit_test(test_pgid_rule),
		cmocka_unit_test(test_no_identity),      cmocka_unit_test(test_record_exit),
		cmocka_unit_test(test_settle_aftercare), cmocka_unit_test(test_reply_is_bug),
		cmocka_unit_test(test_add_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
