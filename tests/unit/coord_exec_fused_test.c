/* A request's fused verb and its parts (coordinator/coord_exec.c): a claim
 * that starts its run, an exit that settles, each decided under its own
 * guard in the request's transaction; parts decided as if sent alone. Apart
 * from coord_exec_test.c (stored replies, races, the trace line) to keep
 * each file to one of the transaction's features. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "coord_trace.h"
#include "clock.h"
#include "coord_sched.h"
#include "failpoint.h"

/* ------------------------------------------------------------- fused verbs */

/* A claim carrying the waiting shim's identity creates its run and starts
 * it in one transaction: running with that shim before the reply leaves,
 * start's own answer in Reply.fused, an event and a line for each. */
static void
test_fused_claim_starts_the_run(void **state)
{
	struct fx *f = *state;
	struct coord_exec_trace tr = { 3, coord_trace_now_us() };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	const Berth__Reply *r;
	char run[40], token[80], *kept, *second;
	uint64_t seq;

	add(f);
	r = claim_shim(f, NULL);
	assert_granted(r);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(r->fused->req_id, r->req_id);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	snprintf(token, sizeof token, "%s", r->granted->claim->token);
	assert_int_equal(sql_int(f,
				 "SELECT count(*) FROM runs WHERE state = 'running' AND pid = 4242"
				 " AND start_time = 99 AND pgid = 4242 AND started_ms IS NOT NULL"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'claim'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 1);
	/* One stored reply, the claim's, with start's answer in it and no
	 * token; a replay derives the token again. */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'claim'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'start'"), 0);
	berth__request__init(&req);
	id.boot_id = "boot";
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = 4242;
	id.start_time = 99;
	id.pgid = 4242;
	c.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	req.has_req_id = 1;
	req.req_id = f->req_id - 1;
	r = ex(f, &req);
	assert_true(r->replayed);
	assert_string_equal(r->granted->claim->run_id, run);
	assert_string_equal(r->granted->claim->token, token);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);

	/* Traced as two decisions, in order: the claim's, then start's,
	 * which says which request carried it; both kept with the commit. */
	add(f);
	coord_exec_free(&f->res);
	c.shim = &id;
	req.has_req_id = 1;
	req.req_id = 700;
	req.actor = "test";
	req.instance = "test";
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.nlines, 2);
	assert_int_equal(f->res.seq, 3);
	assert_non_null(strstr(f->res.line, "{\"seq\":3,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"claim\""));
	second = strchr(f->res.line, '\n') + 1;
	assert_non_null(strstr(second, "{\"seq\":4,"));
	assert_non_null(strstr(second, "\"verb\":\"start\""));
	assert_non_null(strstr(second, "\"fused\":\"claim\""));
	assert_non_null(strstr(second, "\"req_id\":700"));
	assert_true(strstr(f->res.line, "\"fused\"") >= second); /* the claim's line has none */
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 3);
	assert_string_equal(kept, f->res.line);
	free(kept);
}

/* A denied claim starts nothing: no fused answer, no run. */
static void
test_fused_claim_denied_starts_nothing(void **state)
{
	struct fx *f = *state;
	struct addopt held = { .hold = 1 };
	const Berth__Reply *r;
	char id[32];

	snprintf(id, sizeof id, "%s", add_opt(f, &held));
	r = claim_shim(f, id);
	assert_string_equal(denied(r), "not_ready");
	assert_null(r->fused);
	r = claim_shim(f, NULL);
	assert_string_equal(denied(r), "nothing_due");
	assert_null(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 0);
}

/* record_exit carrying the aftercare facts checkpoints the exit and
 * settles the run in one transaction: the outcome from the exit, the
 * capture facts kept, the lease gone, the ticket moved on. */
static void
test_fused_exit_settles(void **state)
{
	struct fx *f = *state;
	struct addopt retry = { .retries = 1 };
	const Berth__Reply *r;
	char run[40], id[32];

	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	r = exit_settle(f, run, 0, NULL);
	assert_granted(r);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(r->fused->granted->payload_case, BERTH__GRANTED__PAYLOAD_SETTLE);
	assert_true(r->fused->granted->settle->applied);
	assert_string_equal(r->fused->granted->settle->outcome, "succeeded");
	assert_string_equal(r->fused->granted->settle->ticket_state, "succeeded");
	assert_int_equal(sql_int(f,
				 "SELECT count(*) FROM runs WHERE state = 'succeeded' AND"
				 " exit_code = 0 AND output_bytes = 12 AND capture_complete = 1 AND"
				 " settled_ms IS NOT NULL AND aftercare_owner = 'test'"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'settle'"), 1);

	/* A failure with a retry left: failed, the ticket ready again. */
	snprintf(id, sizeof id, "%s", add_opt(f, &retry));
	assert_granted(claim_shim(f, id));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	r = exit_settle(f, run, 3, NULL);
	assert_string_equal(r->fused->granted->settle->outcome, "failed");
	assert_string_equal(r->fused->granted->settle->ticket_state, "ready");
}

/* The checkpoint still decides the race: when recovery checkpointed the
 * exit first, the supervisor's record_exit is denied and settles nothing. */
static void
test_fused_exit_denied_settles_nothing(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;
	char run[40];

	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	f->as_instance = "rcv";
	f->as_actor = "recovery";
	assert_granted(record_exit(f, run, 1, 0, 0));
	f->as_instance = NULL;
	f->as_actor = NULL;
	r = exit_settle(f, run, 0, NULL);
	assert_string_equal(denied(r), "already_claimed");
	assert_null(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare' AND"
				    " settled_ms IS NULL AND aftercare_owner = 'rcv'"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'settle'"), 0);
}

/* The fused settle is answered on its own: one that names another run, or
 * an outcome that is none, is its own input error; the checkpoint stands,
 * and a settle sent after it settles the run. */
static void
test_fused_settle_error_keeps_the_checkpoint(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	const Berth__Reply *r;
	char run[40], run2[40];

	add(f);
	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	assert_granted(claim_shim(f, NULL));
	snprintf(run2, sizeof run2, "%s", f->res.reply->granted->claim->run_id);
	m.run_id = run;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	se.run_id = run2;
	m.settle = &se;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(errcode(r->fused), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);

	berth__request__init(&req);
	m.run_id = run2;
	se.run_id = NULL;
	se.outcome = "sideways";
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(errcode(r->fused), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare'"), 2);
	r = settle(f, run2, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
}

/* ------------------------------------------------------------- parts */

/* One request with parts: this run's exit and settlement, and the next
 * run's claim, each decided as if sent alone and answered in Reply.then;
 * a repeat replays each from its own stored reply. */
static void
test_parts_decided_in_order(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, part = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Request *parts[] = { &part };
	const Berth__Reply *r;
	char run[40], next[40];

	add(f);
	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	m.run_id = run;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	m.settle = &se;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	req.has_req_id = 1;
	req.req_id = 800;
	id.boot_id = "boot";
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = 4343;
	id.start_time = 7;
	id.pgid = 4343;
	c.shim = &id;
	c.has_wait_ms = 1;
	c.wait_ms = 5000; /* a part is never held */
	part.verb_case = BERTH__REQUEST__VERB_CLAIM;
	part.claim = &c;
	part.has_req_id = 1;
	part.req_id = 801;
	req.n_then = 1;
	req.then = parts;
	ex(f, &req);
	assert_true(f->res.committed);
	r = sent(f);
	assert_int_equal(r->req_id, 800);
	assert_granted(r);
	assert_granted(r->fused);
	assert_string_equal(r->fused->granted->settle->outcome, "succeeded");
	assert_int_equal(r->n_then, 1);
	assert_int_equal(r->then[0]->req_id, 801);
	assert_granted(r->then[0]);
	assert_granted(r->then[0]->fused);
	snprintf(next, sizeof next, "%s", r->then[0]->granted->claim->run_id);
	assert_int_equal(
		sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running' AND pid = 4343"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE req_id IN (800, 801)"), 2);

	/* The repeat: both replayed, nothing decided twice. */
	ex(f, &req);
	r = sent(f);
	assert_true(r->replayed);
	assert_int_equal(r->n_then, 1);
	assert_true(r->then[0]->replayed);
	assert_string_equal(r->then[0]->granted->claim->run_id, next);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 2);

	/* Nothing due: the claim part is answered at once, not held. */
	m.run_id = next;
	req.req_id = 802;
	part.req_id = 803;
	ex(f, &req);
	assert_false(f->res.decided_nothing);
	r = sent(f);
	assert_granted(r);
	assert_string_equal(denied(r->then[0]), "nothing_due");
}

/* A part that fails or is denied takes nothing from the others. */
static void
test_parts_stand_alone(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, p1 = BERTH__REQUEST__INIT,
		       p2 = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT, a2 = BERTH__ADD__INIT;
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	Berth__Request *parts[] = { &p1, &p2 };
	char *argv[] = { "true" };
	const Berth__Reply *r;

	a.n_argv = a2.n_argv = 1;
	a.argv = a2.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	ref.id = "T9";
	p1.verb_case = BERTH__REQUEST__VERB_HOLD;
	p1.hold = &ref;
	p1.has_req_id = 1;
	p1.req_id = 901;
	p2.verb_case = BERTH__REQUEST__VERB_ADD;
	p2.add = &a2;
	p2.has_req_id = 1;
	p2.req_id = 902;
	req.n_then = 2;
	req.then = parts;
	ex(f, &req);
	r = sent(f);
	assert_granted(r);
	assert_int_equal(r->n_then, 2);
	assert_int_equal(errcode(r->then[0]), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	assert_granted(r->then[1]);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fused_claim_starts_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_claim_denied_starts_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fused_exit_settles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_exit_denied_settles_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fused_settle_error_keeps_the_checkpoint, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_parts_decided_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parts_stand_alone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
