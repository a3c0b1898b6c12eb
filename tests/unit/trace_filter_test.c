/*
 * berth trace's filters (cli/trace_filter.c) on the synthetic race of
 * trace_fixture.c: a run prefix, a run alias, a ticket, an actor, a verb,
 * --no-reads, and what counts as routine traffic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "ring.h"
#include "trace_fixture.h"

static void
test_filters(void **state)
{
	struct trace_ev v[16];
	struct trace_filter f;
	size_t i, n = race(v);
	int hits;

	/* A run prefix. */
	trace_filter_init(&f, "5e2f", NULL, NULL, NULL);
	for (i = 0, hits = 0; i < n; i++) {
		trace_filter_see(&f, &v[i]);
		hits += trace_filter_match(&f, &v[i]);
	}
	assert_int_equal(hits, 7); /* claim start record_exit x2 settle x2 kill */

	/* The alias T1-r2 is the second distinct run of T1: RUN2. */
	trace_filter_init(&f, "T1-r2", NULL, NULL, NULL);
	for (i = 0, hits = 0; i < n; i++) {
		trace_filter_see(&f, &v[i]);
		if (trace_filter_match(&f, &v[i])) {
			hits++;
			assert_string_equal(v[i].run, RUN2);
		}
	}
	assert_int_equal(hits, 1);
	trace_filter_init(&f, "T1-r1", NULL, NULL, NULL);
	for (i = 0, hits = 0; i < n; i++) {
		trace_filter_see(&f, &v[i]);
		hits += trace_filter_match(&f, &v[i]);
	}
	assert_int_equal(hits, 7);
	/* The failpoint (no run of its own) comes along: its process
	 * (pid 100) already worked on the run. */
	v[1].pid = 100;
	v[3].pid = 100;
	trace_filter_init(&f, NULL, "T1", NULL, NULL);
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, 10); /* all but B's hello and the show of T9 */
	v[3].pid = 200;
	trace_filter_init(&f, NULL, "T1", NULL, NULL);
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, 9);
	v[1].pid = v[3].pid = 0;
	/* Not an alias of a ticket that has no such attempt: nothing. */
	trace_filter_init(&f, "T1-r3", NULL, NULL, NULL);
	for (i = 0, hits = 0; i < n; i++) {
		trace_filter_see(&f, &v[i]);
		hits += trace_filter_match(&f, &v[i]);
	}
	assert_int_equal(hits, 0);

	/* Ticket, actor (name or instance prefix), verb, combined. */
	trace_filter_init(&f, NULL, "T1", "supervisor", "record_exit");
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, 1);
	trace_filter_init(&f, NULL, NULL, "77aa", NULL);
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, 3);
	trace_filter_init(&f, NULL, NULL, NULL, NULL);
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, (int)n);
	/* --no-reads drops the one show. */
	f.no_reads = 1;
	for (i = 0, hits = 0; i < n; i++)
		hits += trace_filter_match(&f, &v[i]);
	assert_int_equal(hits, (int)n - 1);
}

/* Routine traffic is what an idle group does all the time; anything that
 * went wrong or was never decided is not. */
static void
test_routine(void **state)
{
	struct trace_ev e;

	e = mk(0, 0, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "granted", "", "");
	assert_true(trace_filter_routine(&e));
	e = mk(0, 0, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "denied", "lease_not_held", "");
	assert_false(trace_filter_routine(&e));
	e = mk(0, 0, 1, "reaper", REC, "scan", "", "", "granted", "", "");
	assert_true(trace_filter_routine(&e));
	e = mk(0, 0, 1, "reaper", REC, "seat_reap", "", "", "granted", "reaped", "");
	assert_true(trace_filter_routine(&e));
	e = mk(0, 0, 1, "supervisor", SUP_A, "claim", "T1", RUN1, "granted", "", "");
	assert_false(trace_filter_routine(&e));
	e = mk(0, 0, 1, "cli", "c1", "show", "T9", "", "error", "not found", "");
	assert_false(trace_filter_routine(&e));
	e = mk(1, RING_SENT, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "", "", "");
	assert_false(trace_filter_routine(&e));
	e = mk(1, RING_REPLY, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "granted", "", "");
	assert_true(trace_filter_routine(&e));
	e = mk(1, RING_STATE, 1, "supervisor", SUP_A, "", "T1", RUN1, "", "", "started");
	assert_false(trace_filter_routine(&e));
	/* The happy path echoes its decisions; the job ending and any other
	 * turn are news. */
	e = mk(1, RING_STATE, 1, "supervisor", SUP_A, "", "T1", RUN1, "", "", "");
	snprintf(e.text, sizeof(e.text), "spawned -start_granted-> started");
	assert_true(trace_filter_routine(&e));
	snprintf(e.text, sizeof(e.text), "checkpointed -settled-> settled");
	assert_true(trace_filter_routine(&e));
	snprintf(e.text, sizeof(e.text), "started -gone-> exited");
	assert_false(trace_filter_routine(&e));
	snprintf(e.text, sizeof(e.text), "exited -exit_denied-> dropped");
	assert_false(trace_filter_routine(&e));
	snprintf(e.from, sizeof(e.from), "recovery");
	snprintf(e.text, sizeof(e.text), "spawned -start_granted-> started");
	assert_false(trace_filter_routine(&e));
	e = mk(1, RING_SENT, 1, "supervisor", SUP_A, "claim", "", "", "", "", "");
	assert_true(trace_filter_routine(&e));
	e = mk(0, 0, 1, "supervisor", SUP_A, "claim", "", "", "denied", "nothing_due", "");
	assert_true(trace_filter_routine(&e));
	e = mk(0, 0, 1, "supervisor", SUP_A, "claim", "T1", "", "denied", "seat_conflict", "");
	assert_false(trace_filter_routine(&e));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_routine),
	};

	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
