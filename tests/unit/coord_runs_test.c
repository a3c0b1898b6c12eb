/* The coordination verbs (coordinator/coord_runs.c): one test per guard
 * of DESIGN §4 and DECISIONS.md, through coord_exec_request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "clock.h"
#include "coord_ctx.h"
#include "coord_sched.h"
#include "ids.h"

static void
test_record_exit_once(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	r = record_exit(f, run, 1, 0, 0);
	assert_string_equal(denied(r), "already_claimed");
	assert_string_equal(fact(r, "state"), "aftercare");
	assert_granted(settle(f, run, ""));
	r = record_exit(f, run, 0, 0, 0);
	assert_string_equal(denied(r), "already_claimed");
	assert_string_equal(fact(r, "state"), "succeeded");
	r = record_exit(f, "0123456789abcdef0123456789abcdef", 1, 0, 0);
	assert_string_equal(fact(r, "state"), "absent");
}

static void
test_start_denied_with_state(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(start(f, run));
	r = start(f, run);
	assert_string_equal(denied(r), "not_claimed");
	assert_string_equal(fact(r, "state"), "running");
	r = start(f, "ffffffffffffffffffffffffffffffff");
	assert_string_equal(denied(r), "not_claimed");
	assert_string_equal(fact(r, "state"), "absent");
	assert_int_equal(sql_int(f, "SELECT pid FROM runs"), 4242);
}

/* Claim at 2 000 with a 60 000 ms lease; at 90 000 renew is denied and
 * readopt granted until 150 000; renew at 100 000 is granted until
 * 160 000. */
static void
test_lease_timeline(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	clock_fake_set(1000);
	snprintf(id, sizeof id, "%s", add(f));
	clock_fake_set(2000);
	r = claim_as(f, f->db, id, 60000, NULL);
	assert_granted(r);
	assert_int_equal(r->granted->claim->lease_expires_ms, 62000);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	assert_granted(start(f, run));

	clock_fake_set(62000); /* strict: expires_at > now */
	assert_string_equal(denied(renew(f, id, run)), "lease_not_held");
	clock_fake_set(90000);
	assert_string_equal(denied(renew(f, id, run)), "lease_not_held");
	r = readopt(f, id, run, NULL);
	assert_granted(r);
	assert_int_equal(r->granted->lease->expires_ms, 150000);
	clock_fake_set(100000);
	r = renew(f, id, run);
	assert_granted(r);
	assert_int_equal(r->granted->lease->expires_ms, 160000);
	assert_int_equal(sql_int(f, "SELECT expires_ms FROM leases"), 160000);
}

static void
test_readopt_refuses_settled(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	/* A run is handed only to a supervisor that said hello. */
	assert_string_equal(denied(readopt(f, id, run, "sup2")), "unknown_owner");
	assert_granted(hello_as(f, "sup2", "supervisor", NULL));
	assert_granted(readopt(f, id, run, "sup2"));
	assert_string_equal(sql_int(f, "SELECT owner = 'sup2' FROM runs") == 1 ? "y" : "n", "y");
	assert_granted(settle(f, run, ""));
	assert_string_equal(denied(readopt(f, id, run, "sup3")), "lease_not_held");
	assert_string_equal(denied(readopt(f, NULL, run, NULL)), "lease_not_held");
}

/* A supervisor re-arms its own lapsed lease with readopt (its renewal is
 * denied once the lease ran out), for itself only: a run another instance
 * owns, or a new owner other than itself, is denied lease_not_held, and
 * the run is left as it was. Recovery's readopt hands a run on. */
static void
test_readopt_by_supervisor_only_its_own(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	clock_fake_set(1000);
	assert_granted(hello_as(f, "sup1", "supervisor", NULL));
	assert_granted(hello_as(f, "sup2", "supervisor", NULL));
	snprintf(id, sizeof id, "%s", add(f));
	r = claim_as(f, f->db, id, 10000, "sup1");
	assert_granted(r);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	assert_granted(start(f, run));
	clock_fake_set(20000); /* the lease ran out at 11 000 */
	assert_string_equal(denied(renew(f, id, run)), "lease_not_held");
	assert_string_equal(denied(readopt_as(f, "supervisor", "sup2", NULL, run, NULL)),
			    "lease_not_held");
	assert_string_equal(denied(readopt_as(f, "supervisor", "sup2", NULL, run, "sup2")),
			    "lease_not_held");
	assert_string_equal(denied(readopt_as(f, "supervisor", "sup1", NULL, run, "sup2")),
			    "lease_not_held");
	assert_int_equal(sql_int(f, "SELECT expires_ms FROM leases"), 11000);
	assert_int_equal(sql_int(f, "SELECT owner = 'sup1' FROM runs"), 1);
	r = readopt_as(f, "supervisor", "sup1", NULL, run, "sup1");
	assert_granted(r);
	assert_true(r->granted->lease->expires_ms > 20000);
	r = readopt_as(f, "supervisor", "sup1", NULL, run, NULL);
	assert_granted(r);
	assert_int_equal(sql_int(f, "SELECT owner = 'sup1' FROM runs"), 1);
	/* recovery hands the run to another supervisor */
	assert_granted(readopt_as(f, "recovery", "rcv", NULL, run, "sup2"));
	assert_int_equal(sql_int(f, "SELECT owner = 'sup2' FROM runs"), 1);
	assert_string_equal(denied(readopt_as(f, "supervisor", "sup1", NULL, run, NULL)),
			    "lease_not_held");
}

/* The exit checkpoint records the capture facts with the exit: a run
 * whose settle never comes still shows its output size and whether the
 * capture is complete; a settle that carries them again has the last
 * word, one that does not keeps them. */
static void
test_record_exit_keeps_capture_facts(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	const Berth__Ticket *t;
	char id[32], run[40];

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(start(f, run));
	m.run_id = run;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	m.exit_code = 0;
	m.has_output_bytes = 1;
	m.output_bytes = 1234;
	m.has_capture_complete = m.capture_complete = 1;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	assert_granted(ex(f, &req));
	t = show(f, id);
	assert_string_equal(t->runs[0]->state, "aftercare");
	assert_true(t->runs[0]->has_output_bytes);
	assert_int_equal(t->runs[0]->output_bytes, 1234);
	assert_true(t->runs[0]->has_capture_complete && t->runs[0]->capture_complete);
	/* settle without the facts keeps them */
	assert_granted(settle(f, run, ""));
	t = show(f, id);
	assert_string_equal(t->runs[0]->state, "succeeded");
	assert_int_equal(t->runs[0]->output_bytes, 1234);
	assert_true(t->runs[0]->capture_complete);
}

static void
test_renew_refuses_other_runs_lease(void **state)
{
	struct fx *f = *state;
	char a[32], b[32], ra[40], rb[40];

	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	claim_ok(f, a, ra, NULL);
	claim_ok(f, b, rb, NULL);
	assert_string_equal(denied(renew(f, a, rb)), "lease_not_held");
	assert_string_equal(denied(readopt(f, b, ra, NULL)), "lease_not_held");
	assert_granted(renew(f, a, ra));
}

static void
test_settle_twice_applied_once(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	r = settle(f, run, "");
	assert_granted(r);
	assert_true(r->granted->settle->applied);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
	assert_string_equal(r->granted->settle->ticket_state, "succeeded");
	r = settle(f, run, "failed");
	assert_granted(r);
	assert_false(r->granted->settle->applied);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE settled_ms IS NOT NULL"), 1);
}

/* An over-long reason (they come from actors: spawn errors, signals) is cut
 * to COORD_TEXT_MAX bytes at a character boundary, never refused: a refused
 * settle would leave the run unsettled. */
static void
test_settle_cuts_a_long_reason(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle m = BERTH__SETTLE__INIT;
	char id[32], run[40], *reason = malloc(3 * COORD_TEXT_MAX + 1);
	size_t i;

	assert_non_null(reason);
	for (i = 0; i < 3 * COORD_TEXT_MAX; i += 3)
		memcpy(reason + i, "\xc3\xa9x", 3); /* "éx": a 2-byte character */
	reason[3 * COORD_TEXT_MAX] = '\0';
	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 1, run);
	m.run_id = run;
	m.outcome = "failed";
	m.reason = reason;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &m;
	assert_granted(ex(f, &req));
	/* 4096 bytes of "éx"... end inside an "é" (4096 = 3 * 1365 + 1), so
	 * the cut backs up to 4095 bytes, then the 3-byte ellipsis. */
	{
		/* read as bytes here: the engines count characters */
		struct coord_st *st = coord_db_q_once(f->db, "SELECT reason FROM runs", "");
		const char *kept;

		assert_int_equal(coord_db_step(f->db, st), 1);
		kept = coord_db_coltext(st, 0);
		assert_int_equal(strlen(kept), COORD_TEXT_MAX - 1 + 3);
		assert_string_equal(kept + strlen(kept) - 3, "\xe2\x80\xa6");
		coord_db_free(st);
	}
	free(reason);
}

static void
test_abandon_keeps_attempt(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Ticket *t;
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(abandon(f, run));
	assert_granted(abandon(f, run)); /* idempotent */
	t = show(f, id);
	assert_string_equal(t->state, "ready");
	assert_int_equal(t->attempts, 1);
	assert_int_equal(t->n_runs, 1);
	assert_string_equal(t->runs[0]->state, "aborted");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	r = claim(f, id);
	assert_granted(r);
	assert_int_equal(r->granted->claim->attempt, 2);
	assert_string_equal(r->granted->claim->alias, "T1-r2");
	/* aborted spends no budget: retries=0 still allows the next run */
	assert_int_equal(sql_int(f, "SELECT bad_runs FROM tickets"), 0);
}

static void
test_outcome_derivation(void **state)
{
	struct fx *f = *state;
	static const struct {
		int has_record, code, sig;
		const char *stop, *outcome;
	} cases[] = {
		{ 1, 0, 0, NULL, "succeeded" },     { 1, 3, 0, NULL, "failed" },
		{ 1, 0, 9, NULL, "failed" },        { 0, 0, 0, NULL, "orphaned" },
		{ 1, 0, 0, "cancel", "cancelled" }, { 1, 1, 0, "timeout", "timed_out" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char id[32], run[40];
		const Berth__Reply *r;

		snprintf(id, sizeof id, "%s", add(f));
		claim_ok(f, id, run, NULL);
		assert_granted(start(f, run));
		if (cases[i].stop)
			assert_granted(mark_stop(f, run, cases[i].stop));
		assert_granted(
			record_exit(f, run, cases[i].has_record, cases[i].code, cases[i].sig));
		r = settle(f, run, NULL);
		assert_granted(r);
		assert_string_equal(r->granted->settle->outcome, cases[i].outcome);
	}
	/* a claimed run settled without an outcome never executed */
	{
		char id[32], run[40];
		const Berth__Reply *r;

		snprintf(id, sizeof id, "%s", add(f));
		claim_ok(f, id, run, NULL);
		r = settle(f, run, NULL);
		assert_string_equal(r->granted->settle->outcome, "aborted");
		assert_string_equal(r->granted->settle->ticket_state, "ready");
		assert_int_equal(errcode(settle(f, "0123456789abcdef0123456789abcdef", NULL)),
				 BERTH__ERROR_CODE__ERR_NOT_FOUND);
	}
}

static void
test_scan_and_hello(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	char a[32], b[32], ra[40], rb[40];
	const Berth__Reply *r;

	id.boot_id = "b";
	id.has_pid = 1;
	id.pid = 10;
	h.ident = &id;
	h.has_slots = 1;
	h.slots = 1;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	req.instance = "sup";
	req.actor = "supervisor";
	assert_granted(ex(f, &req));
	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	r = claim_as(f, f->db, NULL, 0, "sup");
	assert_granted(r);
	snprintf(ra, sizeof ra, "%s", r->granted->claim->run_id);
	/* one slot: the second claim is refused while the first is unsettled */
	r = claim_as(f, f->db, NULL, 0, "sup");
	assert_string_equal(denied(r), "slots_full");
	assert_string_equal(fact(r, "running"), "1");
	claim_ok(f, b, rb, NULL);
	assert_granted(start(f, rb));
	assert_granted(record_exit(f, rb, 1, 0, 0));
	clock_fake_set(T0 + 50);
	assert_granted(settle(f, rb, NULL));

	berth__request__init(&req);
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	assert_string_equal(r->granted->scan->runs[0]->id, ra);
	assert_string_equal(r->granted->scan->runs[0]->owner, "sup");
	assert_int_equal(r->granted->scan->runs[0]->lease_expires_ms, T0 + 60000);
	assert_int_equal(r->granted->scan->n_actors, 1);
	assert_int_equal(r->granted->scan->actors[0]->ident->pid, 10);
	sc.has_settled = 1;
	sc.settled = 1;
	sc.has_settled_since_ms = 1;
	sc.settled_since_ms = T0 + 50;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 2);
	sc.settled_since_ms = T0 + 51;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	sc.settled_since_ms = 0;
	sc.has_settled_before_ms = 1;
	sc.settled_before_ms = T0 + 50;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	/* read-only verbs store nothing */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'scan'"), 0);
}

/* What the shim recorded beyond the exit (stragglers it ended, a full
 * disk) is kept with the run and shown; a run settled without them shows
 * none (NULL, not 0). */
static void
test_settle_keeps_shim_facts(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle m = BERTH__SETTLE__INIT;
	const Berth__Ticket *t;
	char run[40], run2[40];

	add(f);
	add(f);
	run_to_exit(f, "T1", 0, run);
	m.run_id = run;
	m.outcome = "";
	m.has_capture_complete = 1;
	m.capture_complete = 0;
	m.has_stragglers = 1;
	m.stragglers = 3;
	m.has_disk_full = 1;
	m.disk_full = 1;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &m;
	assert_granted(ex(f, &req));
	t = show(f, "T1");
	assert_string_equal(t->state, "succeeded");
	assert_true(t->runs[0]->has_stragglers);
	assert_int_equal(t->runs[0]->stragglers, 3);
	assert_true(t->runs[0]->has_disk_full && t->runs[0]->disk_full);
	assert_false(t->runs[0]->capture_complete);
	run_to_exit(f, "T2", 4, run2);
	assert_granted(settle(f, run2, ""));
	t = show(f, "T2");
	assert_false(t->runs[0]->has_stragglers);
	assert_false(t->runs[0]->has_disk_full);
	assert_int_equal(t->runs[0]->exit_code, 4);
}

/* What the trace says of a decision besides its verdict: the exit a
 * record_exit reports and the run's lease as it found it (so a diagram
 * can show that recovery acted on an expired lease), the outcome and the
 * ticket's next state of a settle, a renewal's new expiry. */
static void
test_trace_details(void **state)
{
	struct fx *f = *state;
	char run[40];

	add(f);
	claim_ok(f, "T1", run, NULL);
	assert_granted(start(f, run));
	assert_granted(renew(f, "T1", run));
	assert_true(f->res.lease_expires_ms > 0);
	assert_true(f->res.lease_renewed_ms > 0 &&
		    f->res.lease_renewed_ms < f->res.lease_expires_ms);
	assert_string_equal(f->res.lease_owner, "test");
	assert_granted(record_exit(f, run, 1, 7, 0));
	assert_string_equal(f->res.detail, "exit 7");
	assert_true(f->res.lease_expires_ms > 0);
	assert_string_equal(f->res.lease_owner, "test");
	assert_string_equal(denied(record_exit(f, run, 1, 7, 0)), "already_claimed");
	assert_string_equal(f->res.detail, "exit 7");
	assert_granted(settle(f, run, NULL));
	assert_string_equal(f->res.detail, "failed; ticket failed");
	assert_granted(settle(f, run, NULL));
	assert_string_equal(f->res.detail, "already settled: failed; ticket failed");
	/* The lease is gone with the settle: nothing to say of it any more. */
	assert_int_equal(f->res.lease_expires_ms, 0);
	add(f);
	claim_ok(f, "T2", run, NULL);
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, 0, 9));
	assert_string_equal(f->res.detail, "signal 9");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_exit_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_denied_with_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readopt_refuses_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readopt_by_supervisor_only_its_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_keeps_capture_facts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_renew_refuses_other_runs_lease, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_settle_twice_applied_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_cuts_a_long_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_keeps_attempt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outcome_derivation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_and_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_keeps_shim_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_details, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
