/* The trace conformance checker (tests/conform/) on small hand-written
 * homes (conform_fixture.h) whose lives do not conform: each case names
 * the violation it must be reported as (a move from the wrong state, a
 * wrong denial, a caller the tables do not allow, a decision missing from
 * the trace or the database, rows that differ from the replay). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conform_fixture.h"

/* ------------------------------------------------------------ lives that do not */

static void
test_record_exit_on_claimed_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, e;

	c = add_and_claim(f);
	e = granted(f, "supervisor", S1, "record_exit", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "aftercare",
				  .aftercare = S1,
				  .claimed = c,
				  .ended = e });
	violates(f, "seq 3 record_exit T1 " R1 " granted from supervisor " S1
		    ": granted in state claimed; run_moves.def makes record_exit only from "
		    "running");
	/* One wrong grant, one report: the replay follows what was done. */
	assert_int_equal(f->st.violations, 1);
}

/* Two settles that both applied: the run carries the second's time. */
static void
test_settle_applied_twice(void **state)
{
	struct cfx *f = *state;
	struct life l;
	int64_t again;

	life(f, &l);
	again = granted(f, "recovery", RC, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .aftercare = S1,
				  .claimed = l.claimed,
				  .started = l.started,
				  .ended = l.ended,
				  .settled = again,
				  .has_record = 1,
				  .has_code = 1 });
	violates(f, "the decision that settled it was at");
}

static void
test_start_after_abandon(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "supervisor", S1, "start", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "granted in state aborted; run_moves.def makes start only from claimed");
}

/* A denial the table would not give: record_exit of a running run may be
 * refused only to someone the who column leaves out. */
static void
test_wrong_denial(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	deny(f, "recovery", RC, "record_exit", "T1", R1, "already_claimed");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	violates(f, "state running is one record_exit moves from (running): the only denial is "
		    "not_owner");
}

/* The right reason given to the wrong caller: not_owner to the owner. */
static void
test_denied_to_the_owner(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	deny(f, "supervisor", S1, "start", "T1", R1, "not_owner");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "denied to a caller run_moves.def lets make the move (owner " S1 ")");
}

static void
test_start_by_another_supervisor(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S2, "start", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	violates(f, "granted to a caller run_moves.def does not let make it (owner " S1 ")");
}

/* The reaper settles a claimed run only with a stop request on it. */
static void
reaper_settles(struct cfx *f, int marked)
{
	int64_t c, z;

	c = add_and_claim(f);
	if (marked)
		granted(f, "reaper", RP, "mark_stop", "T1", R1);
	z = granted(f, "reaper", RP, "settle", "T1", R1);
	ticket_row(f, 1, "failed", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "timed_out",
				  .claimed = c,
				  .settled = z,
				  .stop = marked ? "timeout" : NULL });
}

static void
test_reaper_settle_with_stop_conforms(void **state)
{
	reaper_settles(*state, 1);
	conforms(*state);
}

static void
test_reaper_settle_without_stop(void **state)
{
	reaper_settles(*state, 0);
	violates(*state, "settle T1 " R1 " granted from reaper " RP
			 ": granted to a caller run_moves.def does not let make it");
}

static void
test_second_claim_while_live(void **state)
{
	struct cfx *f = *state;
	int64_t c1, c2;

	c1 = add_and_claim(f);
	c2 = granted(f, "supervisor", S2, "claim", "T1", R2);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c1 });
	run_row(f,
		&(struct row){
			.id = R2, .attempt = 2, .state = "claimed", .owner = S2, .claimed = c2 });
	violates(f, "the ticket's run " R1 " is not settled yet");
}

/* The database committed a decision the trace does not have. */
static void
test_decision_missing_from_trace(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	sql(f, "INSERT INTO events (ts_ms, verb, ticket, run, decision, actor, instance)"
	       " VALUES (9999, 'hold', 'T1', NULL, 'granted', 'cli', '" CLI "')");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "event #3 (hold T1  granted from " CLI ") is committed in the database, but "
		    "the trace does not have it");
}

/* The database's run is not where the trace left it. */
static void
test_final_state_differs(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	granted(f, "supervisor", S1, "start", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "run " R1 " is claimed in the database, running by the trace");
	assert_non_null(strstr(f->out, "has started_ms NULL, but the trace granted a start"));
}

static void
test_ticket_claimed_without_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "supervisor", S1, "abandon", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "ticket T1 is claimed in the database, but the trace settled every run of it");
}

static void
test_attempts_differ(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "ticket T1 has 2 attempts in the database, 1 granted claims in the trace");
}

/* An actor verb granted to an operator: the verb table refuses that. */
static void
test_actor_verb_granted_to_operator(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "operator", CLI, "abandon", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "granted to a caller the verb table does not let send abandon");
}

static void
test_replay_of_nothing(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	decide(f, NOCOMMIT, "operator", CLI, "hold", "T1", "", "replayed", "");
	ticket_row(f, 1, "ready", 0);
	violates(f, "replays a decision the trace never committed");
}

static void
test_seq_gap(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	f->seq++;
	decide(f, NOCOMMIT, "operator", CLI, "list", "", "", "granted", "");
	ticket_row(f, 1, "ready", 0);
	violates(f, "seq 2 is missing");
}

static void
test_settle_denied_on_settled_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	deny(f, "recovery", RC, "settle", "T1", R1, "not_aftercare_owner");
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "denied in state aborted, where the handler grants it (or errs)");
}

/* A run settled from claimed has an outcome the trace does not name; a
 * later abandon granted says it was aborted, and the database must agree. */
static void
test_abandon_says_aborted(void **state)
{
	struct cfx *f = *state;
	int64_t c, z;

	c = add_and_claim(f);
	z = granted(f, "recovery", RC, "settle", "T1", R1);
	granted(f, "recovery", RC, "abandon", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "orphaned", .claimed = c, .settled = z });
	violates(f, "run " R1 " is orphaned in the database; an abandon of it was granted");
}

static void
test_run_nobody_claimed(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	ticket_row(f, 1, "claimed", 0);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = 5 });
	violates(f, "run " R1 " (claimed) is in the database, but no traced claim created it");
}

static void
test_exit_record_facts(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	ticket_row(f, 1, "succeeded", 1);
	/* A record without a code or signal, and a success that is none. */
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .aftercare = S1,
				  .claimed = l.claimed,
				  .started = l.started,
				  .ended = l.ended,
				  .settled = l.settled,
				  .has_record = 1 });
	violates(f, "run " R1 ": has_record 1 with exit_code NULL and signal NULL");
	assert_non_null(strstr(f->out, "run " R1 " succeeded without a recorded exit 0"));
}

static void
test_cancel_misses_live_run(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	granted(f, "operator", CLI, "cancel", "T1", "");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "granted without a stop on the ticket's unsettled run " R1);
}

static void
test_worker_verb_on_settled_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "worker", "0f0f0f0f0f0f0f0f", "heartbeat", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "heartbeat T1 " R1 " granted from worker 0f0f0f0f0f0f0f0f: granted for a run "
		    "that is aborted");
}

/* ------------------------------------------------------------ fused verbs */

/* A denied verb makes no fused move: a settle fused to a record_exit that
 * lost the race is a violation, though the settle alone would be judged
 * by its own move. */
static void
test_fused_after_a_denial(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	granted(f, "supervisor", S1, "start", "T1", R1);
	granted(f, "recovery", RC, "record_exit", "T1", R1);
	deny(f, "supervisor", S1, "record_exit", "T1", R1, "already_claimed");
	f->fused = "record_exit";
	deny(f, "supervisor", S1, "settle", "T1", R1, "not_aftercare_owner");
	violates(f, "a fused settle after its record_exit was denied");
}

/* Only a FUSE line's pair is fused, only right after its request's line,
 * and on that request's run. */
static void
test_fused_only_as_the_table_says(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	f->fused = "claim";
	granted(f, "supervisor", S1, "renew", "T1", R1);
	violates(f, "fused to claim, which no FUSE line lets carry renew");
}

static void
test_fused_line_follows_its_request(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	decide(f, NOCOMMIT, "operator", CLI, "show", "T1", "", "granted", "");
	f->fused = "claim";
	f->req_id--; /* the claim's req_id, but the line before is the show */
	granted(f, "supervisor", S1, "start", "T1", R1);
	violates(f, "fused to claim, but the line before is not that request's claim");
}

static void
test_fused_on_another_run(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	granted(f, "operator", CLI, "add", "T2", "");
	granted(f, "supervisor", S1, "claim", "T1", R1);
	f->fused = "claim";
	granted(f, "supervisor", S1, "start", "T2", R2);
	violates(f, "fused to claim of run " R1 ", but moves run " R2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fused_after_a_denial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_only_as_the_table_says, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_line_follows_its_request, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fused_on_another_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaper_settle_with_stop_conforms, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_on_claimed_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_applied_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_after_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_denial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_to_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_by_another_supervisor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaper_settle_without_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_claim_while_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decision_missing_from_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_final_state_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ticket_claimed_without_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attempts_differ, setup, teardown),
		cmocka_unit_test_setup_teardown(test_actor_verb_granted_to_operator, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_of_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seq_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_denied_on_settled_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_says_aborted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_nobody_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_record_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_misses_live_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_verb_on_settled_run, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
