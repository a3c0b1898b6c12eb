/* The moves of a run's state (coordinator/coord_moves.c over
 * proto/run_moves.def): one test per row, each stating today's guard in
 * its own words and trying the one guarded UPDATE from every state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coord_db.h"
#include "coord_moves.h"
#include "coord_verbs.h"
#include "states.h"
#include "store_fixture.h"

struct mfx {
	char dir[64];
	struct test_store ts;
	struct coord_db *db;
};

static int
setup(void **state)
{
	struct mfx *f = calloc(1, sizeof *f);
	struct coord_db_opts o = { .sync_full = 1 };
	char err[256];

	snprintf(f->dir, sizeof f->dir, "/tmp/coord_moves_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(test_store_make(&f->ts, f->dir), 0);
	o.key_dir = f->dir;
	if (coord_db_open(&f->db, f->ts.store, &o, err, sizeof err) != 0)
		fail_msg("coord_db_open %s: %s", f->ts.store, err);
	assert_int_equal(
		coord_db_script(f->db,
				"INSERT INTO tickets (n, argv, state, created_ms, updated_ms)"
				" VALUES (1, '[\"true\"]', 'claimed', 1, 1)"),
		0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct mfx *f = *state;
	char cmd[128];

	coord_db_close(f->db);
	test_store_drop(&f->ts);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A run in state s (settled when terminal); its id into id. */
static void
run_in(struct mfx *f, enum run_state s, char id[40])
{
	static int attempt;
	char sql[512];

	snprintf(id, 40, "%032x", ++attempt);
	snprintf(sql, sizeof sql,
		 "INSERT INTO runs (id, ticket, attempt, state, token_hash, claimed_ms, settled_ms)"
		 " VALUES ('%s', 1, %d, '%s', 'h', 1, %s)",
		 id, attempt, run_state_name(s), run_state_terminal(s) ? "5" : "NULL");
	assert_int_equal(coord_db_script(f->db, sql), 0);
}

static char *
col(struct mfx *f, const char *id, const char *column)
{
	struct coord_st *st;
	char sql[128], *v;

	snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id = ?", column);
	assert_non_null(st = coord_db_q_once(f->db, sql, "t", id));
	assert_int_equal(coord_db_step(f->db, st), 1);
	v = coord_db_col(st, 0);
	coord_db_free(st);
	return v;
}

static void
assert_col(struct mfx *f, const char *id, const char *column, const char *want)
{
	char *v = col(f, id, column);

	if (want == NULL)
		assert_null(v);
	else
		assert_string_equal(v, want);
	free(v);
}

/*
 * Checks row m against what the coordinator does today: it leaves exactly
 * the states in from, reaches to (or every outcome for OUTCOME), and its
 * UPDATE moves a run in each allowed state, writing w, and leaves a run in
 * any other state as it was.
 */
static void
check_row(struct mfx *f, const struct coord_move *m, unsigned from, enum run_state to,
	  const struct coord_move_set *w)
{
	char id[40];
	int s;

	assert_non_null(m);
	assert_false(coord_moves_allows(m, RUN_ABSENT));
	for (s = 0; s < RUN_NSTATES; s++) {
		int allowed = (from & (1u << s)) != 0;

		assert_int_equal(coord_moves_allows(m, (enum run_state)s), allowed);
		run_in(f, (enum run_state)s, id);
		assert_int_equal(coord_moves_apply(f->db, m, id, (enum run_state)s, to, w),
				 allowed);
		assert_col(f, id, "state", run_state_name(allowed ? to : (enum run_state)s));
		if (allowed) {
			/* The guard: a run that is not in the state judged is
			 * not moved again. */
			assert_int_equal(coord_moves_apply(f->db, m, id, (enum run_state)s, to, w),
					 0);
		}
	}
}

#define S(st) (1u << RUN_##st)
#define V(v)  BERTH__REQUEST__VERB_##v

/* start: claimed -> running, denied not_claimed{state}; the shim's
 * identity and started_ms are written. */
static void
test_move_start(void **state)
{
	struct mfx *f = *state;
	const struct coord_move *m = coord_moves_find(V(START), RUN_CLAIMED);
	struct coord_move_set w = { .has_shim = 1,
				    .boot_id = "boot",
				    .pid = 42,
				    .start_time = 7,
				    .pgid = 42,
				    .started_ms = 100 };
	char id[40];

	assert_string_equal(m->denial, "not_claimed");
	assert_int_equal(m->who, MOVE_WHO_OWNER);
	assert_string_equal(m->who_denial, "not_owner");
	assert_ptr_equal(coord_moves_find(V(START), RUN_RUNNING), m);
	assert_true(coord_moves_reaches(m, RUN_RUNNING));
	assert_false(coord_moves_reaches(m, RUN_AFTERCARE));
	check_row(f, m, S(CLAIMED), RUN_RUNNING, &w);
	run_in(f, RUN_CLAIMED, id);
	assert_int_equal(coord_moves_apply(f->db, m, id, RUN_CLAIMED, RUN_RUNNING, &w), 1);
	assert_col(f, id, "pid", "42");
	assert_col(f, id, "boot_id", "boot");
	assert_col(f, id, "started_ms", "100");
	assert_col(f, id, "heartbeat_ms", "100");
	assert_col(f, id, "ended_ms", NULL);
}

/* record_exit: running -> aftercare, the exit checkpoint, denied
 * already_claimed{state}; the record as the caller saw it is written. */
static void
test_move_record_exit(void **state)
{
	struct mfx *f = *state;
	const struct coord_move *m = coord_moves_find(V(RECORD_EXIT), RUN_RUNNING);
	struct coord_move_set w = { .has_exit = 1,
				    .has_record = 1,
				    .has_code = 1,
				    .code = 3,
				    .ended_ms = 200,
				    .checkpointer = "5e5e" };
	char id[40];

	assert_string_equal(m->denial, "already_claimed");
	assert_int_equal(m->who, MOVE_WHO_OWNER | MOVE_WHO_RECOVERY);
	assert_true(coord_moves_reaches(m, RUN_AFTERCARE));
	assert_false(coord_moves_reaches(m, RUN_FAILED));
	check_row(f, m, S(RUNNING), RUN_AFTERCARE, &w);
	run_in(f, RUN_RUNNING, id);
	assert_int_equal(coord_moves_apply(f->db, m, id, RUN_RUNNING, RUN_AFTERCARE, &w), 1);
	assert_col(f, id, "aftercare_owner", "5e5e");
	assert_col(f, id, "has_record", "1");
	assert_col(f, id, "exit_code", "3");
	assert_col(f, id, "signal", NULL);
	assert_col(f, id, "ended_ms", "200");
	assert_col(f, id, "pid", NULL);
}

/* abandon: claimed or running (never executed: the caller has checked) ->
 * aborted, from its owner or recovery (DESIGN §4); an aftercare is not
 * abandonable: its job ran. */
static void
test_move_abandon(void **state)
{
	struct mfx *f = *state;
	const struct coord_move *m = coord_moves_find(V(ABANDON), RUN_CLAIMED);
	struct coord_move_set w = { .settled_ms = 300, .reason = "spawn failed" };
	char id[40];

	assert_string_equal(m->denial, "not_abandonable");
	assert_int_equal(m->who, MOVE_WHO_OWNER | MOVE_WHO_RECOVERY);
	assert_false(coord_moves_allows(m, RUN_AFTERCARE));
	assert_true(coord_moves_reaches(m, RUN_ABORTED));
	assert_false(coord_moves_reaches(m, RUN_FAILED));
	check_row(f, m, S(CLAIMED) | S(RUNNING), RUN_ABORTED, &w);
	run_in(f, RUN_RUNNING, id);
	assert_int_equal(coord_moves_apply(f->db, m, id, RUN_RUNNING, RUN_ABORTED, &w), 1);
	assert_col(f, id, "settled_ms", "300");
	assert_col(f, id, "reason", "spawn failed");
}

/* settle: any run not settled -> its outcome; no denial (a settled run is
 * granted applied=false); what aftercare found is written. */
static void
test_move_settle(void **state)
{
	struct mfx *f = *state;
	const struct coord_move *m = coord_moves_find(V(SETTLE), RUN_AFTERCARE);
	const struct coord_move *mc = coord_moves_find(V(SETTLE), RUN_CLAIMED);
	struct coord_move_set w = { .settled_ms = 400,
				    .has_output_bytes = 1,
				    .output_bytes = 9,
				    .has_capture_complete = 1,
				    .capture_complete = 1 };
	char id[40];
	int s;

	assert_ptr_not_equal(m, mc);
	/* A running run has no aftercare to settle: the first line's denial. */
	assert_ptr_equal(coord_moves_find(V(SETTLE), RUN_RUNNING), mc);
	assert_string_equal(m->denial, "not_aftercare_owner");
	assert_string_equal(mc->denial, "not_aftercare_owner");
	/* An aftercare is settled by its owner, or by recovery once that
	 * owner is dead; a claimed run (never started) by its owner (a spawn
	 * that failed), recovery (a start the store lost), or the reaper when
	 * a stop was asked. */
	assert_int_equal(m->who, MOVE_WHO_CHECKPOINTER | MOVE_WHO_HEIR);
	assert_int_equal(mc->who, MOVE_WHO_OWNER | MOVE_WHO_RECOVERY | MOVE_WHO_STOP_REAPER);
	assert_int_equal(m->to, COORD_MOVE_OUTCOME);
	for (s = 0; s < RUN_NSTATES; s++)
		assert_int_equal(coord_moves_reaches(m, (enum run_state)s),
				 run_state_terminal((enum run_state)s));
	check_row(f, m, S(AFTERCARE), RUN_FAILED, &w);
	check_row(f, mc, S(CLAIMED), RUN_SUCCEEDED, &w);
	run_in(f, RUN_AFTERCARE, id);
	/* Not an outcome: refused before any UPDATE. */
	assert_int_equal(coord_moves_apply(f->db, m, id, RUN_AFTERCARE, RUN_RUNNING, &w), 0);
	assert_int_equal(coord_moves_apply(f->db, m, id, RUN_AFTERCARE, RUN_SUCCEEDED, &w), 1);
	assert_col(f, id, "output_bytes", "9");
	assert_col(f, id, "capture_complete", "1");
	assert_col(f, id, "settled_ms", "400");
}

/* Five lines for four verbs, each made by a verb of the table that
 * mutates, a verb's lines leaving disjoint states; no other verb moves a
 * run's state. */
static void
test_moves_table(void **state)
{
	const struct coord_move *m;
	size_t i;
	int s;

	(void)state;
	for (i = 0; (m = coord_moves_row(i)) != NULL; i++) {
		const struct coord_verb *v = coord_verb_find(m->verb);

		assert_non_null(v);
		assert_true(v->flags & COORD_VERB_MUTATES);
		for (s = 0; s < RUN_NSTATES; s++)
			if (coord_moves_allows(m, (enum run_state)s))
				assert_ptr_equal(coord_moves_find(m->verb, (enum run_state)s), m);
	}
	assert_int_equal(i, 6);
	assert_null(coord_moves_find(V(CLAIM), RUN_CLAIMED));
}

/* The FUSE and CREATE lines: each fusion names a verb with a row, a field
 * its message has, and a fused verb with MOVE lines and a maker in the
 * verb table; only claim creates a run, claimed. */
static void
test_fuse_and_create_lines(void **state)
{
	const ProtobufCFieldDescriptor *fd, *ff;
	const struct coord_fuse *fu;
	size_t i;
	int s, moves;

	(void)state;
	for (i = 0; (fu = coord_moves_fuse_row(i)) != NULL; i++) {
		assert_non_null(coord_verb_find(fu->verb));
		assert_non_null(coord_verb_find(fu->then));
		assert_ptr_equal(coord_moves_fuse(fu->verb), fu);
		fd = protobuf_c_message_descriptor_get_field(&berth__request__descriptor,
							     (unsigned)fu->verb);
		assert_non_null(fd);
		assert_int_equal(fd->type, PROTOBUF_C_TYPE_MESSAGE);
		ff = protobuf_c_message_descriptor_get_field_by_name(fd->descriptor, fu->field);
		assert_non_null(ff);
		for (moves = 0, s = 0; s < RUN_NSTATES; s++)
			moves += coord_moves_allows(coord_moves_find(fu->then, (enum run_state)s),
						    (enum run_state)s);
		assert_true(moves > 0);
		assert_true(coord_verb_fuses(fu->verb, fu->then));
	}
	assert_int_equal(i, 2);
	assert_int_equal(coord_moves_fuse(V(CLAIM))->then, V(START));
	assert_string_equal(coord_moves_fuse(V(CLAIM))->field, "shim");
	assert_int_equal(coord_moves_fuse(V(RECORD_EXIT))->then, V(SETTLE));
	assert_string_equal(coord_moves_fuse(V(RECORD_EXIT))->field, "settle");
	assert_null(coord_moves_fuse(V(START)));
	assert_int_equal(coord_moves_created(V(CLAIM)), RUN_CLAIMED);
	assert_int_equal(coord_moves_created(V(START)), RUN_ABSENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_move_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_record_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_settle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moves_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuse_and_create_lines, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
