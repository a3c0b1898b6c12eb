/* When work runs (coordinator/coord_sched.c): the ticket_next table, one
 * test per row, each stating the rule in its own words; then retry
 * backoff, --after, --every and when held claims wake, through the verbs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "coord_fixture.h"
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
		EACH(budget)
			EACH(periodic)
				assert_next((enum run_state)s, 1, budget, periodic, 0,
					    TICKET_CANCELLED, COORD_THEN_CANCEL, COORD_BAD_KEEP);
}

/* A periodic ticket that succeeded waits for its next firing, with a fresh
 * budget (a cancel that came too late changes nothing). */
static void
test_next_succeeded_periodic(void **state)
{
	int cancel, budget;

	(void)state;
	EACH(cancel)
		EACH(budget)
			assert_next(RUN_SUCCEEDED, cancel, budget, 1, 1, TICKET_READY,
				    COORD_THEN_EVERY, COORD_BAD_RESET);
}

/* A one-off ticket that succeeded has succeeded. */
static void
test_next_succeeded_once(void **state)
{
	int cancel, budget;

	(void)state;
	EACH(cancel)
		EACH(budget)
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
	EACH(budget)
		EACH(periodic)
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
	EACH(budget)
		EACH(periodic)
			assert_next(RUN_ABORTED, 0, budget, periodic, 4, TICKET_READY,
				    COORD_THEN_REQUEUE, COORD_BAD_KEEP);
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

/* --retries 2: two bad outcomes go back to ready after 1 s then 2 s; the
 * third is final. */
static void
test_retry_backoff(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .retries = 2 };
	char id[32], run[40];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	snprintf(id, sizeof id, "%s", add_opt(f, &o));
	run_to_exit(f, id, 1, run);
	r = settle(f, run, NULL);
	assert_string_equal(r->granted->settle->ticket_state, "ready");
	t = show(f, id);
	assert_int_equal(t->next_due_ms, T0 + 1000);
	assert_string_equal(denied(claim(f, id)), "nothing_due");
	clock_fake_set(T0 + 1000);
	run_to_exit(f, id, 1, run);
	assert_string_equal(settle(f, run, NULL)->granted->settle->ticket_state, "ready");
	assert_int_equal(show(f, id)->next_due_ms, T0 + 1000 + 2000);
	clock_fake_set(T0 + 3000);
	run_to_exit(f, id, 1, run);
	assert_string_equal(settle(f, run, NULL)->granted->settle->ticket_state, "failed");
	t = show(f, id);
	assert_int_equal(t->attempts, 3);
	assert_int_equal(t->n_runs, 3);
	assert_string_equal(t->runs[0]->alias, "T1-r1");
	assert_string_equal(t->runs[2]->state, "failed");
	assert_int_equal(t->runs[2]->exit_code, 1);
	/* retry: a fresh budget, due now */
	r = ticket_verb(f, BERTH__REQUEST__VERB_RETRY, id);
	assert_granted(r);
	assert_string_equal(r->granted->ticket->state, "ready");
	assert_int_equal(sql_int(f, "SELECT bad_runs FROM tickets"), 0);
	assert_granted(claim(f, id));
	assert_string_equal(fact(ticket_verb(f, BERTH__REQUEST__VERB_RETRY, id), "state"),
			    "claimed");
}

static void
test_backoff_capped(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .retries = 30 };
	char id[32], run[40];
	int i;

	snprintf(id, sizeof id, "%s", add_opt(f, &o));
	for (i = 0; i < 12; i++) {
		clock_fake_set(T0 + 10000000LL * i);
		run_to_exit(f, id, 1, run);
		assert_granted(settle(f, run, NULL));
	}
	assert_int_equal(show(f, id)->next_due_ms, T0 + 10000000LL * 11 + 300000);
}

/* --after: blocked until the dependency succeeds; a failed dependency
 * leaves it blocked and says by what. */
static void
test_after_dependency(void **state)
{
	struct fx *f = *state;
	struct addopt dep = { .after = "T1" };
	char run[40];
	const Berth__Ticket *t;

	add(f);           /* T1 */
	add_opt(f, &dep); /* T2 after T1 */
	add(f);           /* T3 */
	add_opt(f, &dep); /* T4 after T1 */
	run_to_exit(f, "T1", 0, run);
	assert_string_equal(show(f, "T2")->state, "blocked");
	assert_granted(settle(f, run, NULL));
	assert_string_equal(show(f, "T2")->state, "ready");
	assert_string_equal(claim(f, NULL)->granted->claim->ticket, "T2");

	/* a failing dependency */
	{
		struct addopt dep3 = { .after = "T3" };
		char r3[40];

		add_opt(f, &dep3); /* T5 after T3 */
		run_to_exit(f, "T3", 2, r3);
		assert_granted(settle(f, r3, NULL));
		t = show(f, "T5");
		assert_string_equal(t->state, "dependency_failed");
		assert_string_equal(t->dependency, "T3");
		assert_string_equal(t->waiting, "dependency T3 failed");
	}
}

/* A failed or cancelled dependency ends its dependents (and theirs)
 * dependency_failed, never blocked forever; --after-any runs anyway; a
 * ticket added after a dependency that already failed ends at once; a
 * retry of the dependency re-arms them all, except one still behind
 * another dependency that failed. */
static void
test_dependency_failed(void **state)
{
	struct fx *f = *state;
	struct addopt on1 = { .after = "T1" }, on2 = { .after = "T2" };
	struct addopt any1 = { .after = "T1", .after_any = 1 }, on5 = { .after = "T5" };
	char run[40];
	const Berth__Reply *r;

	add(f);            /* T1 */
	add_opt(f, &on1);  /* T2 after T1 */
	add_opt(f, &on2);  /* T3 after T2 */
	add_opt(f, &any1); /* T4 after any end of T1 */
	add(f);            /* T5 */
	add_opt(f, &on5);  /* T6 after T5 */
	assert_string_equal(show(f, "T4")->state, "blocked");
	assert_string_equal(show(f, "T4")->waiting, "blocked: waiting for T1 to finish (ready)");
	run_to_exit(f, "T1", 3, run);
	assert_granted(settle(f, run, NULL));
	assert_string_equal(show(f, "T1")->state, "failed");
	assert_string_equal(show(f, "T2")->state, "dependency_failed");
	assert_string_equal(show(f, "T2")->dependency, "T1");
	assert_string_equal(show(f, "T3")->state, "dependency_failed");
	assert_string_equal(show(f, "T3")->dependency, "T2");
	/* --after-any: T1 has finished, so T4 runs. */
	assert_string_equal(show(f, "T4")->state, "ready");
	assert_true(show(f, "T4")->after_any);
	/* Nothing dependency_failed is ever claimed. */
	r = claim(f, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->claim->ticket, "T4");
	r = claim(f, "T2");
	assert_string_equal(denied(r), "not_ready");
	/* Added after a failed dependency: ends at once. */
	assert_string_equal(add_opt(f, &on1), "T7");
	assert_string_equal(show(f, "T7")->state, "dependency_failed");
	/* A cancelled dependency (not running) does the same. */
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, "T5"));
	assert_string_equal(show(f, "T6")->state, "dependency_failed");
	assert_string_equal(show(f, "T6")->waiting, "dependency T5 cancelled");
	/* The dependent itself cannot be retried: its dependency is. */
	r = ticket_verb(f, BERTH__REQUEST__VERB_RETRY, "T2");
	assert_string_equal(denied(r), "not_ready");
	/* Retrying T1 re-arms T2, T3 and T7: blocked again, behind T1. */
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_RETRY, "T1"));
	assert_string_equal(show(f, "T2")->state, "blocked");
	assert_null(show(f, "T2")->dependency);
	assert_string_equal(show(f, "T3")->state, "blocked");
	assert_string_equal(show(f, "T7")->state, "blocked");
	/* ... and once T1 succeeds, T2 runs. */
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	assert_string_equal(show(f, "T2")->state, "ready");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets WHERE"
				    " (failed_dep IS NOT NULL) != (state = 'dependency_failed')"),
			 0);
}

/* A ticket after two dependencies stays dependency_failed when only one
 * of the two that failed is retried. */
static void
test_dependency_failed_two(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" }, *after[] = { "T1", "T2" }, run[40];

	add(f); /* T1 */
	add(f); /* T2 */
	a.n_argv = 1;
	a.argv = argv;
	a.n_after = 2;
	a.after = after;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_granted(ex(f, &req)); /* T3 after T1 and T2 */
	run_to_exit(f, "T1", 1, run);
	assert_granted(settle(f, run, NULL));
	run_to_exit(f, "T2", 1, run);
	assert_granted(settle(f, run, NULL));
	assert_string_equal(show(f, "T3")->dependency, "T1");
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_RETRY, "T1"));
	assert_string_equal(show(f, "T3")->state, "dependency_failed");
	assert_string_equal(show(f, "T3")->dependency, "T2");
}

/* --every: after a long downtime it fires once, and the next firing is in
 * the future. */
static void
test_every_collapses_missed(void **state)
{
	struct fx *f = *state;
	struct addopt ev = { .every_ms = 60000 };
	char run[40];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	add_opt(f, &ev);
	run_to_exit(f, "T1", 0, run);
	r = settle(f, run, NULL);
	assert_string_equal(r->granted->settle->ticket_state, "ready");
	t = show(f, "T1");
	assert_int_equal(t->next_due_ms, T0 + 60000);
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");

	clock_fake_set(T0 + 10 * 60000 + 5000); /* ten intervals missed */
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	t = show(f, "T1");
	assert_int_equal(t->next_due_ms, T0 + 11 * 60000);
	assert_int_equal(t->attempts, 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE state = 'queued'"), 1);
}

/* A claim parked behind a seat is tried again when the seat's TTL lapses,
 * and then it runs. */
static void
test_next_due_includes_seat_lapse(void **state)
{
	struct fx *f = *state;
	struct seatopt outside = { .workdir = "/w", .ttl_ms = 30000 };
	struct addopt o = { .workdir = "/w" };

	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), INT64_MAX);
	assert_string_equal(outcome(seat_acquire(f, "S", "alice@h", &outside)), "acquired");
	add_opt(f, &o);
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), T0 + 30001);
	clock_fake_set(T0 + 30001);
	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), INT64_MAX);
	assert_granted(claim(f, NULL));
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
		cmocka_unit_test_setup_teardown(test_retry_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_dependency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dependency_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dependency_failed_two, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_collapses_missed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_due_includes_seat_lapse, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
