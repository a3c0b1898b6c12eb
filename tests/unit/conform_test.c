/* The trace conformance checker (tests/conform/) on small hand-written
 * homes (conform_fixture.h) whose lives conform: the happy path, a race,
 * abandons and retries, repeats, removals, a crash between COMMIT and the
 * line, a snapshot taken mid-trace, a hand-over; and the few that come
 * close and must not (a removal without remove, an owner that differs);
 * where the home keeps its store. With BERTH_TEST_STORE (a PostgreSQL
 * base URL, tests/pg-server url) every test's store is on PostgreSQL.
 * Lives that do not conform: conform_violation_test.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conform_fixture.h"

/* ------------------------------------------------------------ lives that conform */

static void
test_life_conforms(void **state)
{
	struct cfx *f = *state;
	struct life l;
	uint64_t settle_req;

	life(f, &l);
	settle_req = f->req_id;
	/* Around it: a job's forged settle (refused before the table), a
	 * request that never decoded, a retry answered from its reply. */
	decide(f, NOCOMMIT, "worker", "f0f0f0f0f0f0f0f0", "settle", "", "", "denied",
	       "not_permitted");
	decide(f, NOCOMMIT, "operator", "", "none", "", "", "error", "bad_request");
	f->req_id = settle_req - 1; /* S1's settle again: the reply it had */
	decide(f, NOCOMMIT, "supervisor", S1, "settle", "T1", R1, "replayed", "");
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .aftercare = S1,
				  .claimed = l.claimed,
				  .started = l.started,
				  .ended = l.ended + 1,
				  .settled = l.settled,
				  .has_record = 1,
				  .has_code = 1 });
	conforms(f);
	assert_int_equal(f->st.moves, 4);
	assert_int_equal(f->st.events, 6);
	assert_int_equal(f->st.runs, 1);
}

/* The exit-checkpoint race: recovery checkpoints and settles first, the
 * supervisor's record_exit is denied with the state the winner left. */
static void
test_race_conforms(void **state)
{
	struct cfx *f = *state;
	int64_t c, s, e, z;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	e = granted(f, "recovery", RC, "record_exit", "T1", R1);
	deny(f, "supervisor", S1, "settle", "T1", R1, "not_aftercare_owner");
	z = granted(f, "recovery", RC, "settle", "T1", R1);
	deny(f, "supervisor", S1, "record_exit", "T1", R1, "already_claimed");
	ticket_row(f, 1, "failed", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "failed",
				  .aftercare = RC,
				  .claimed = c,
				  .started = s,
				  .ended = e,
				  .settled = z,
				  .has_record = 1,
				  .has_code = 1,
				  .code = 7 });
	conforms(f);
	assert_int_equal(f->st.denials, 2);
}

/* A claimed run abandoned by recovery (twice: the repeat is granted,
 * nothing done), the ticket claimed again: attempt 2. */
static void
test_abandon_and_retry_conform(void **state)
{
	struct cfx *f = *state;
	int64_t c1, a, c2;

	c1 = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "recovery", RC, "abandon", "T1", R1);
	deny(f, "supervisor", S1, "start", "T1", R1, "not_claimed");
	c2 = granted(f, "supervisor", S2, "claim", "T1", R2);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c1, .settled = a });
	run_row(f,
		&(struct row){
			.id = R2, .attempt = 2, .state = "claimed", .owner = S2, .claimed = c2 });
	conforms(f);
}

/* settle is idempotent: a second one is granted, applies nothing, and
 * the run keeps the time of the first. */
static void
test_settle_repeated_conforms(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	granted(f, "supervisor", S1, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .aftercare = S1,
				  .claimed = l.claimed,
				  .started = l.started,
				  .ended = l.ended,
				  .settled = l.settled,
				  .has_record = 1,
				  .has_code = 1 });
	conforms(f);
}

/* berth remove of a finished ticket, then berth clean of another:
 * both are gone from the database with their runs, and a paused group's
 * claims decided nothing (no events row). */
static void
test_removed_tickets_conform(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	granted(f, "operator", CLI, "remove", "T1", "");
	granted(f, "operator", CLI, "add", "T2", "");
	granted(f, "operator", CLI, "pause", "", "");
	decide(f, NOCOMMIT, "supervisor", S1, "claim", "", "", "denied", "paused");
	granted(f, "operator", CLI, "resume", "", "");
	granted(f, "supervisor", S1, "claim", "T2", R2);
	granted(f, "supervisor", S1, "start", "T2", R2);
	granted(f, "supervisor", S1, "record_exit", "T2", R2);
	granted(f, "supervisor", S1, "settle", "T2", R2);
	granted(f, "operator", CLI, "clean", "", "");
	conforms(f);
}

/* A ticket missing from the database that no remove or clean deleted,
 * and a remove granted for a ticket whose run is still unsettled. */
static void
test_removed_without_remove(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	violates(f, "ticket T1: the trace names it, the database does not have it");
}

static void
test_remove_of_a_live_run(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	granted(f, "operator", CLI, "remove", "T1", "");
	violates(f, "removed a ticket with the unsettled run " R1);
}

/* The coordinator died between the COMMIT of the last decision and its
 * line (a torn half of it in the file): trace_tail holds it, and the
 * checker replays it as the next coordinator would restore it. */
static void
test_crash_before_line_conforms(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = decide(f, TAIL_ONLY, "supervisor", S1, "start", "T1", R1, "granted", "");
	fputs("{\"seq\":4,\"ts_ms\":10", f->trace);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	conforms(f);
	assert_int_equal(f->st.restored, 1);
	assert_int_equal(f->st.moves, 2);
}

/* While the group runs, a line past the snapshot's last decision was
 * decided after the database was read: not judged. Once the group is
 * down, a committing line the database does not have is a lost decision. */
static void
test_snapshot_bounds_the_replay(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	decide(f, NOCOMMIT, "supervisor", S1, "start", "T1", R1, "granted", "");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	assert_int_equal(check(f, 0), 0);
	assert_int_equal(f->st.lines, 2);
	violates(f, "a committed decision past the database's last one (seq 2)");
}

/* Recovery hands a live run to a restarted supervisor (readopt names the
 * new owner, the trace does not): the owner is learnt from its first
 * owner's move, and must be the database's. */
static void
handover(struct cfx *f, const char *db_owner)
{
	int64_t c, s, e, z;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	granted(f, "recovery", RC, "readopt", "T1", R1);
	granted(f, "supervisor", S2, "renew", "T1", R1);
	e = granted(f, "supervisor", S2, "record_exit", "T1", R1);
	z = granted(f, "supervisor", S2, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .owner = db_owner,
				  .aftercare = S2,
				  .claimed = c,
				  .started = s,
				  .ended = e,
				  .settled = z,
				  .has_record = 1,
				  .has_code = 1 });
}

static void
test_handover_conforms(void **state)
{
	handover(*state, S2);
	conforms(*state);
}

static void
test_handover_owner_must_match(void **state)
{
	handover(*state, S1);
	violates(*state, "is owned by '" S1 "' in the database, by " S2 " in the trace");
}

/* A home where nothing was decided conforms. */
static void
test_empty_home(void **state)
{
	struct cfx *f = *state;

	conforms(f);
	assert_int_equal(f->st.lines, 0);
}

/* ------------------------------------------------------------ the store */

/* A home on PostgreSQL (DESIGN §13) names its store in HOME/store; the
 * checker reads that store, not a berth.db beside it (here one with the
 * schema and none of the decisions). Only with BERTH_TEST_STORE. */
static void
test_store_file_names_the_store(void **state)
{
	struct cfx *f = *state;
	struct coord_db *decoy;
	char err[256];
	int64_t c;

	if (!test_store_pg())
		skip();
	c = add_and_claim(f);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	snprintf(f->path, sizeof f->path, "%s/berth.db", f->dir);
	if (coord_db_open(&decoy, f->path, NULL, err, sizeof err) != 0)
		fail_msg("%s", err);
	coord_db_close(decoy);
	conforms(f);
	assert_int_equal(f->st.events, 2);
	assert_int_equal(f->st.runs, 1);
	assert_int_equal(f->st.tickets, 1);
}

/* A store file that names nothing cannot be read: an error, not a home
 * that decided nothing. */
static void
test_store_file_empty(void **state)
{
	struct cfx *f = *state;
	FILE *sf;

	add_and_claim(f);
	snprintf(f->path, sizeof f->path, "%s/store", f->dir);
	assert_non_null(sf = fopen(f->path, "w"));
	fputs("\n", sf);
	assert_int_equal(fclose(sf), 0);
	assert_int_equal(check(f, 1), -1);
}
/* ------------------------------------------------------------ fused verbs */

/* The fast path (DESIGN §4): a claim carrying its waiting shim starts the
 * run in the same decision, a record_exit carrying the aftercare settles
 * it; each fused verb has its own line, with its request's req_id and
 * "fused", right after that request's. The two lines of the exit's
 * request are one group in trace_tail, as the coordinator keeps them.
 * With crashed, the coordinator died between that group's COMMIT and its
 * write: both lines are restored from trace_tail, in order. */
static void
fused_life(struct cfx *f, int crashed)
{
	int commits = crashed ? TAIL_ONLY : COMMIT;
	int64_t c, s, e, z;

	granted(f, "operator", CLI, "add", "T1", "");
	c = granted(f, "supervisor", S1, "claim", "T1", R1);
	f->fused = "claim";
	f->same_group = 1;
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	e = decide(f, commits, "supervisor", S1, "record_exit", "T1", R1, "granted", "");
	f->fused = "record_exit";
	f->same_group = 1;
	z = decide(f, commits, "supervisor", S1, "settle", "T1", R1, "granted", "");
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1,
				  .state = "succeeded",
				  .aftercare = S1,
				  .claimed = c,
				  .started = s,
				  .ended = e,
				  .settled = z,
				  .has_record = 1,
				  .has_code = 1 });
}

static void
test_fused_life_conforms(void **state)
{
	struct cfx *f = *state;

	fused_life(f, 0);
	conforms(f);
	assert_int_equal(f->st.moves, 4);
	assert_int_equal(f->st.events, 5);
	assert_int_equal(f->st.snapshot_seq, 5);
	assert_int_equal(f->st.restored, 0);
}

static void
test_fused_group_restored_conforms(void **state)
{
	struct cfx *f = *state;

	fused_life(f, 1);
	conforms(f);
	assert_int_equal(f->st.restored, 1);
	assert_int_equal(f->st.lines, 5);
	assert_int_equal(f->st.moves, 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fused_life_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_group_restored_conforms, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_life_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_removed_tickets_conform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_removed_without_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_of_a_live_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_and_retry_conform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_repeated_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_before_line_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_bounds_the_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handover_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handover_owner_must_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_file_names_the_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_file_empty, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
