/* One request, one transaction (coordinator/coord_exec.c): stored replies
 * replayed, nothing stored for a claim that found nothing, the failpoint
 * before COMMIT, pruning, and races between two connections or processes. */
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

static void
test_two_connections_one_claim(void **state)
{
	struct fx *f = *state;
	struct coord_db *other;
	char err[256], id[32], run[40];
	const Berth__Reply *r;

	SKIP_ON_PG_TWO_COORDINATORS();
	snprintf(id, sizeof id, "%s", add(f));
	assert_int_equal(coord_db_open(&other, f->store, &fx_opts, err, sizeof err), 0);
	claim_ok(f, id, run, NULL);
	r = claim_as(f, other, id, 0, "other");
	assert_string_equal(denied(r), "not_ready");
	assert_string_equal(fact(r, "state"), "claimed");
	coord_exec_free(&f->res);
	coord_db_close(other);
}

/* Two processes race to claim the same ticket, each with its own
 * connection: exactly one is granted. */
static void
test_two_processes_one_claim(void **state)
{
	struct fx *f = *state;
	int go[2], i, granted = 0;
	pid_t pids[2];
	char id[32];

	SKIP_ON_PG_TWO_COORDINATORS();
	snprintf(id, sizeof id, "%s", add(f));
	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__Claim c = BERTH__CLAIM__INIT;
			char err[256], b, inst[16];
			int rc;

			close(go[1]);
			if (coord_db_open(&s, f->store, &fx_opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			snprintf(inst, sizeof inst, "proc%d", i);
			c.ticket = id;
			req.verb_case = BERTH__REQUEST__VERB_CLAIM;
			req.claim = &c;
			req.instance = inst;
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, NULL, &res) != 0)
				_exit(3);
			rc = res.reply->result_case == BERTH__REPLY__RESULT_GRANTED  ? 0
			     : res.reply->result_case == BERTH__REPLY__RESULT_DENIED ? 1
										     : 3;
			coord_exec_free(&res);
			coord_db_close(s);
			_exit(rc);
		}
	}
	close(go[0]);
	close(go[1]); /* both children start together */
	for (i = 0; i < 2; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		assert_true(WEXITSTATUS(st) <= 1);
		granted += WEXITSTATUS(st) == 0;
	}
	assert_int_equal(granted, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 1);
}

static void
test_repeated_request_replayed(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "echo", "hi" };
	const Berth__Reply *r;
	struct coord_db *s2;
	char err[256];

	a.n_argv = 2;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.has_req_id = 1;
	req.req_id = 77;
	r = ex(f, &req);
	assert_granted(r);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_false(r->replayed);
	r = ex(f, &req);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_granted(r);
	assert_true(r->replayed);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_int_equal(r->req_id, 77);
	/* and after a restart of the coordinator */
	coord_exec_free(&f->res);
	coord_db_close(f->db);
	assert_int_equal(coord_db_open(&s2, f->store, &fx_opts, err, sizeof err), 0);
	f->db = s2;
	r = ex(f, &req);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 1);
	/* the same request id from another instance is a new request */
	req.instance = "another";
	r = ex(f, &req);
	assert_string_equal(r->granted->add->ticket, "T2");
}

/* Denials are decisions: stored and replayed, also when the world changed
 * in between. */
static void
test_denial_stored(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef m = BERTH__TICKET_REF__INIT;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	m.id = id;
	req.verb_case = BERTH__REQUEST__VERB_HOLD;
	req.hold = &m;
	req.has_req_id = 1;
	req.req_id = 500;
	assert_string_equal(denied(ex(f, &req)), "not_ready");
	assert_granted(abandon(f, run));
	r = ex(f, &req);
	assert_string_equal(denied(r), "not_ready");
	assert_true(r->replayed);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE decision = 'denied'"), 1);
}

/* A claim for the next ticket that finds nothing decides nothing: it is
 * not stored, so the same request may be executed again when work
 * arrives. */
static void
test_nothing_due_not_stored(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	struct addopt later = { .at_ms = T0 + 5000 };
	const Berth__Reply *r;

	add_opt(f, &later);
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	req.has_req_id = 1;
	req.req_id = 900;
	r = ex(f, &req);
	assert_string_equal(denied(r), "nothing_due");
	assert_string_equal(fact(r, "next_due_at"), "1005000");
	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), T0 + 5000);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 1); /* the add */
	clock_fake_set(T0 + 5000);
	r = ex(f, &req);
	assert_granted(r);
	assert_false(r->replayed);
	assert_string_equal(r->granted->claim->ticket, "T1");
	r = ex(f, &req);
	assert_true(r->replayed);
}

static void
test_failpoint_before_commit(void **state)
{
	struct fx *f = *state;
	char err[256];
	const Berth__Reply *r;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };

	assert_int_equal(fp_init("coordinator.before_commit=1*error", f->dir, err, sizeof err), 0);
	a.n_argv = 1;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.has_req_id = 1;
	req.req_id = 3;
	r = ex(f, &req);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_STORAGE);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 0);
	/* the retry of the same request succeeds once */
	r = ex(f, &req);
	assert_granted(r);
	assert_false(r->replayed);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 1);
}

/* Stored replies are kept a day, then pruned. */
static void
test_old_replies_pruned(void **state)
{
	struct fx *f = *state;

	add(f);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 2);
	clock_fake_set(T0 + 23 * 3600 * 1000LL);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 3);
	clock_fake_set(T0 + 25 * 3600 * 1000LL);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events"), 4);
}

/* The exit-checkpoint race as it happens: the supervisor and recovery, two
 * processes with their own connections, both send record_exit for one
 * run. Exactly one is granted; the other learns "aftercare". */
static void
test_record_exit_race_two_processes(void **state)
{
	struct fx *f = *state;
	int go[2], i, granted = 0, aftercare = 0;
	pid_t pids[2];
	char id[32], run[40];

	SKIP_ON_PG_TWO_COORDINATORS();
	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(start(f, run));
	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
			char err[256], b;
			int rc = 3;

			close(go[1]);
			if (coord_db_open(&s, f->store, &fx_opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			m.run_id = run;
			m.has_has_record = m.has_record = 1;
			m.has_exit_code = 1;
			m.exit_code = i;
			req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
			req.record_exit = &m;
			req.instance = i ? "recovery" : "supervisor";
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, NULL, &res) == 0) {
				const Berth__Reply *r = res.reply;

				if (r->result_case == BERTH__REPLY__RESULT_GRANTED)
					rc = 0;
				else if (r->result_case == BERTH__REPLY__RESULT_DENIED &&
					 strcmp(r->denied->reason, "already_claimed") == 0 &&
					 r->denied->n_facts == 1 &&
					 strcmp(r->denied->facts[0]->value, "aftercare") == 0)
					rc = 1;
				coord_exec_free(&res);
			}
			coord_db_close(s);
			_exit(rc);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < 2; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		granted += WEXITSTATUS(st) == 0;
		aftercare += WEXITSTATUS(st) == 1;
	}
	assert_int_equal(granted, 1);
	assert_int_equal(aftercare, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'record_exit'"), 2);
}

/* The decision's trace line is formatted once, in coord_exec: with the seq
 * and arrival time the caller gives, and a committed decision keeps that
 * very line in its transaction. A read, a denial that decided nothing and
 * a replay get a line too, but keep none. */
static void
test_trace_line_once(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, list = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	struct coord_exec_trace tr = { 7, coord_trace_now_us() };
	char *argv[] = { "true" }, *kept;
	uint64_t seq;

	a.n_argv = 1;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.actor = "test";
	req.instance = "test";
	req.has_req_id = 1;
	req.req_id = 42;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.decision, COORD_GRANTED);
	assert_true(f->res.committed);
	assert_int_equal(f->res.seq, 7);
	assert_non_null(f->res.line);
	assert_non_null(strstr(f->res.line, "{\"seq\":7,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"add\""));
	assert_non_null(strstr(f->res.line, "\"ticket\":\"T1\""));
	assert_non_null(strstr(f->res.line, "\"decision\":\"granted\""));
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 7);
	assert_string_equal(kept, f->res.line);
	free(kept);

	list.verb_case = BERTH__REQUEST__VERB_STATUS;
	list.actor = "test";
	list.instance = "test";
	list.has_req_id = 1;
	list.req_id = 43;
	tr.seq = 8;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &list, NULL, &tr, &f->res), 0);
	assert_false(f->res.committed);
	assert_non_null(strstr(f->res.line, "{\"seq\":8,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"status\""));

	tr.seq = 9;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_false(f->res.committed);
	assert_non_null(strstr(f->res.line, "\"decision\":\"replayed\""));
	assert_non_null(strstr(f->res.line, "\"ticket\":\"T1\""));
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 7);
	free(kept);
}

/* The result says what happened, for the server to act on without reading
 * the reply again: committed or not, decided nothing (may be held), wake. */
static void
test_typed_result(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;

	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(f->res.decision, COORD_DENIED);
	assert_true(f->res.decided_nothing);
	assert_false(f->res.committed);
	assert_null(f->res.line); /* no coord_exec_trace: no line */
	add(f);
	assert_true(f->res.committed);
	assert_true(f->res.wake);
	assert_false(f->res.decided_nothing);
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a; /* no argv */
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(f->res.decision, COORD_ERROR);
	assert_false(f->res.committed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_connections_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_request_replayed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denial_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_due_not_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failpoint_before_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_replies_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_race_two_processes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trace_line_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_result, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
