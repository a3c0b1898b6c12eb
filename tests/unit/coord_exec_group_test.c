/* Group commit (coordinator/coord_exec.c): several requests in one
 * transaction, a savepoint each; a failing request or COMMIT, and which
 * requests may share a group. Apart from coord_exec_test.c (one request's
 * transaction) because it drives the group calls directly. */
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

/* ------------------------------------------------------------- groups */

/* Several requests in one transaction, a savepoint each: one that fails
 * rolls back only itself; one COMMIT keeps the rest, and every line of
 * the group, in order. */
static void
test_group_rolls_back_only_the_failing_request(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	struct coord_result res[3];
	Berth__Request req[3];
	Berth__Claim c[2];
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" }, *kept;
	uint64_t seq;
	int i;

	add(f);
	add(f);
	/* The second claim's run cannot be inserted: its request fails. */
	/* Each engine spells a trigger that refuses a row its own way (on
	 * PostgreSQL it lives in the test's schema, dropped with it). */
	assert_int_equal(
		sql_run(f,
			coord_db_kind(f->db) == COORD_STORE_SQLITE
				? "CREATE TEMP TRIGGER boom BEFORE INSERT ON runs WHEN NEW.ticket = 2"
				  " BEGIN SELECT RAISE(ABORT, 'boom'); END"
				: "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql"
				  " AS $$BEGIN RAISE EXCEPTION 'boom'; END$$;"
				  "CREATE TRIGGER boom BEFORE INSERT ON runs FOR EACH ROW"
				  " WHEN (NEW.ticket = 2) EXECUTE FUNCTION boom()"),
		0);
	a.n_argv = 1;
	a.argv = argv;
	for (i = 0; i < 3; i++) {
		berth__request__init(&req[i]);
		req[i].actor = "test";
		req[i].instance = "test";
		req[i].has_req_id = 1;
		req[i].req_id = 1000 + i;
	}
	for (i = 0; i < 2; i++) {
		berth__claim__init(&c[i]);
		c[i].ticket = i == 0 ? "T1" : "T2";
		req[i].verb_case = BERTH__REQUEST__VERB_CLAIM;
		req[i].claim = &c[i];
	}
	req[2].verb_case = BERTH__REQUEST__VERB_ADD;
	req[2].add = &a;
	coord_exec_group_init(&g, f->db, 1, 20);
	for (i = 0; i < 3; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	/* Nothing is durable yet, and nothing answered. */
	assert_int_equal(coord_exec_group_end(&g), 0);
	assert_int_equal(res[0].decision, COORD_GRANTED);
	assert_int_equal(res[1].decision, COORD_ERROR);
	assert_false(res[1].committed);
	assert_int_equal(res[2].decision, COORD_GRANTED);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 3);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE req_id >= 1000"), 2);
	for (i = 0; i < 3; i++) {
		char want[32];

		assert_int_equal(res[i].seq, 20 + i);
		snprintf(want, sizeof want, "{\"seq\":%d,", 20 + i);
		assert_non_null(strstr(res[i].line, want));
	}
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 20);
	assert_int_equal(strlen(kept),
			 strlen(res[0].line) + strlen(res[1].line) + strlen(res[2].line));
	free(kept);
	for (i = 0; i < 3; i++)
		coord_exec_free(&res[i]);
	coord_exec_group_free(&g);
}

/* A group whose COMMIT fails (the failpoint's error) loses every decision
 * it was to keep: each of its requests is answered with a storage error,
 * its lines made again in order, and a retry decides them once. */
static void
test_group_commit_failure_answers_every_request(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	struct coord_result res[2];
	Berth__Request req[2];
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" }, err[256];
	int i;

	assert_int_equal(fp_init("coordinator.before_commit=1*error", f->dir, err, sizeof err), 0);
	a.n_argv = 1;
	a.argv = argv;
	for (i = 0; i < 2; i++) {
		berth__request__init(&req[i]);
		req[i].actor = "test";
		req[i].instance = "test";
		req[i].has_req_id = 1;
		req[i].req_id = 50 + i;
		req[i].verb_case = BERTH__REQUEST__VERB_ADD;
		req[i].add = &a;
	}
	coord_exec_group_init(&g, f->db, 1, 1);
	for (i = 0; i < 2; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	assert_int_equal(coord_exec_group_end(&g), -1);
	for (i = 0; i < 2; i++) {
		Berth__Reply *r = berth__reply__unpack(NULL, res[i].packed_len, res[i].packed);

		assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_STORAGE);
		assert_int_equal(r->req_id, 50 + i);
		berth__reply__free_unpacked(r, NULL);
		assert_false(res[i].committed);
		assert_int_equal(res[i].nlines, 1);
		assert_int_equal(res[i].seq, 1 + i);
		assert_non_null(strstr(res[i].line, "\"decision\":\"error\""));
		coord_exec_free(&res[i]);
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	assert_int_equal(coord_exec_group_end(&g), 0);
	assert_int_equal(res[0].seq, 3); /* the seqs go on */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 2);
	for (i = 0; i < 2; i++)
		coord_exec_free(&res[i]);
	coord_exec_group_free(&g);
}

/* A read has a group of its own, and a group of decisions that keep
 * nothing costs no commit. */
static void
test_group_fits(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	Berth__Request add = BERTH__REQUEST__INIT, status = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;

	add.verb_case = BERTH__REQUEST__VERB_ADD;
	add.add = &a;
	status.verb_case = BERTH__REQUEST__VERB_STATUS;
	coord_exec_group_init(&g, f->db, 0, 1);
	assert_true(coord_exec_group_fits(&g, &add));
	assert_true(coord_exec_group_fits(&g, &status));
	g.n = 1;
	g.reads = 0;
	assert_true(coord_exec_group_fits(&g, &add));
	assert_false(coord_exec_group_fits(&g, &status));
	g.reads = 1;
	assert_false(coord_exec_group_fits(&g, &add));
	g.n = 0;
	coord_exec_group_free(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_group_rolls_back_only_the_failing_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_failure_answers_every_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_fits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
