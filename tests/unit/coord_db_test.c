/* The database (coordinator/coord_db.c): opening migrates an old schema
 * and refuses a newer one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "coord_fixture.h"
#include "coord_schema.h"

static void
test_newer_schema_refused(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2 = NULL;
	char err[256], want[32];

	/* Where each backend keeps its schema's version. */
	assert_int_equal(sql_run(f, coord_db_kind(f->db) == COORD_STORE_SQLITE
					    ? "PRAGMA user_version=99"
					    : "UPDATE berth_schema SET version = 99"),
			 0);
	/* The coordinator goes first: a PostgreSQL store takes one at a time. */
	coord_exec_free(&f->res);
	coord_db_close(f->db);
	f->db = NULL;
	assert_int_equal(coord_db_open(&s2, f->store, &fx_opts, err, sizeof err), -1);
	assert_null(s2);
	assert_non_null(strstr(err, "99"));
	snprintf(want, sizeof want, "version %d", COORD_SCHEMA_VERSION);
	assert_non_null(strstr(err, want));
}

/* One coordinator per host on a PostgreSQL store: a second one of the same
 * host is refused while the first is open (a reader is not), and one that
 * closes its store frees it for the next at once, every time. */
static void
test_one_coordinator_per_host(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2 = NULL;
	struct coord_db_opts ro = fx_opts;
	char err[256];
	int i;

	if (!test_store_pg())
		skip();
	assert_int_equal(coord_db_open(&s2, f->store, &fx_opts, err, sizeof err), -1);
	assert_null(s2);
	assert_non_null(strstr(err, "another coordinator of host"));
	ro.reader = 1;
	assert_int_equal(coord_db_open(&s2, f->store, &ro, err, sizeof err), 0);
	coord_db_close(s2);
	s2 = NULL;
	coord_exec_free(&f->res);
	for (i = 0; i < 20; i++) {
		coord_db_close(f->db);
		f->db = NULL;
		if (coord_db_open(&f->db, f->store, &fx_opts, err, sizeof err) != 0)
			fail_msg("opening again, time %d: %s", i + 1, err);
	}
}

/* An old database at version v (made by the migrations up to v), holding
 * what rows sql writes; the fixture's database is replaced by it. */
static void
old_db(struct fx *f, int64_t v, const char *sql)
{
	sqlite3 *raw;
	char err[256];

	/* The migrations from old versions are sqlite's alone: a PostgreSQL
	 * store begins at COORD_SCHEMA_PG_FIRST, made whole. */
	if (test_store_pg())
		skip();
	coord_exec_free(&f->res);
	coord_db_close(f->db);
	f->db = NULL;
	unlink(f->store);
	assert_int_equal(sqlite3_open(f->store, &raw), SQLITE_OK);
	if (coord_schema_migrate_to(raw, f->store, v, err, sizeof err) != 0)
		fail_msg("version %lld: %s", (long long)v, err);
	if (sqlite3_exec(raw, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(raw));
	sqlite3_close(raw);
}

static void
reopen(struct fx *f)
{
	char err[256];

	if (coord_db_open(&f->db, f->store, &fx_opts, err, sizeof err) != 0)
		fail_msg("migration: %s", err);
	assert_int_equal(sql_int(f, "PRAGMA user_version"), COORD_SCHEMA_VERSION);
}

/* A version 1 database is migrated forward when opened (through every
 * later version). */
static void
test_migrates_v1(void **state)
{
	struct fx *f = *state;

	old_db(f, 1,
	       "INSERT INTO tickets (argv, state, created_ms, updated_ms)"
	       " VALUES ('[\"true\"]', 'ready', 1, 1);"
	       "INSERT INTO activations (ticket, kind, due_ms, state, created_ms)"
	       " VALUES (1, 'now', 1, 'queued', 1);"
	       "INSERT INTO requests VALUES ('5e5e', 1, 0, 'add', 'granted', NULL, 'T1', NULL,"
	       " x'00');"
	       "INSERT INTO seats (item, seat_key, owner, acquired_ms, heartbeat_ms)"
	       " VALUES ('s', 's', 'alice@h', 1, 1);");
	reopen(f);
	assert_int_equal(sql_int(f, "SELECT tree_seat FROM tickets"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM trace_tail"), 0);
	assert_int_equal(sql_int(f, "SELECT isolate FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT after_any FROM tickets"), 0);
	/* An old stored reply is kept, and answers nobody (sender ''). */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE sender = ''"), 1);
	/* a seat of an older schema: no kind, no task, nothing in flight */
	assert_int_equal(sql_int(f, "SELECT task FROM seats"), 0);
	assert_false(seat_show(f, "s")->in_flight);
	assert_false(seat_show(f, "s")->task);
	/* version 8: the shim's stragglers and disk_full, NULL until settled */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM pragma_table_info('runs')"
				    " WHERE name IN ('stragglers', 'disk_full')"),
			 2);
	assert_granted(claim(f, "T1"));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE aftercare_owner IS NULL"), 1);
}

/* Version 10 (placement): tickets and hosts of version 9 ask for and
 * offer nothing, and are claimed as before; tickets_ready is made again
 * with the placement columns. */
static void
test_migrates_v9_placement(void **state)
{
	struct fx *f = *state;

	old_db(f, 9,
	       "INSERT INTO tickets (argv, state, created_ms, updated_ms)"
	       " VALUES ('[\"true\"]', 'ready', 1, 1);"
	       "INSERT INTO activations (ticket, kind, due_ms, state, created_ms)"
	       " VALUES (1, 'now', 1, 'queued', 1);"
	       "INSERT INTO hosts (host, epoch, ttl_ms, renewed_ms, expires_ms)"
	       " VALUES ('old', 3, 3000, 1, 2);");
	reopen(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets WHERE host_wanted = ''"
				    " AND labels = ''"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM hosts WHERE labels = ''"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM pragma_index_info('tickets_ready')"), 4);
	assert_int_equal(show(f, "T1")->n_labels, 0);
	assert_granted(claim(f, NULL));
}

/* Version 7 rebuilds tickets for the state dependency_failed: every row
 * and reference survives, a removed ticket's number is never given again,
 * the engine refuses a state it does not know, and a ticket an earlier
 * version left blocked forever behind a failed dependency (and its own
 * dependent) ends dependency_failed naming it. */
static void
test_migrates_v6_dependency_failed(void **state)
{
	struct fx *f = *state;
	const Berth__Ticket *t;

	old_db(f, 6,
	       "INSERT INTO tickets (n, argv, state, created_ms, updated_ms) VALUES"
	       " (1, '[\"false\"]', 'failed', 1, 1), (2, '[\"true\"]', 'ready', 1, 1),"
	       " (3, '[\"true\"]', 'held', 1, 1), (4, '[\"true\"]', 'ready', 1, 1),"
	       " (9, '[\"gone\"]', 'succeeded', 1, 1);"
	       "DELETE FROM tickets WHERE n = 9;"
	       "INSERT INTO ticket_deps (ticket, dep) VALUES (2, 1), (3, 2);"
	       "INSERT INTO activations (ticket, kind, due_ms, state, created_ms)"
	       " VALUES (2, 'now', 1, 'queued', 1), (4, 'now', 1, 'queued', 1);");
	reopen(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 4);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations"), 2);
	t = show(f, "T2");
	assert_string_equal(t->state, "dependency_failed");
	assert_string_equal(t->dependency, "T1");
	assert_string_equal(t->waiting, "dependency T1 failed");
	t = show(f, "T3");
	assert_string_equal(t->state, "dependency_failed");
	assert_string_equal(t->dependency, "T2");
	assert_string_equal(show(f, "T4")->state, "ready");
	assert_int_equal(sql_int(f, "PRAGMA foreign_keys"), 1);
	assert_int_equal(sql_run(f, "UPDATE tickets SET state = 'bogus' WHERE n = 4"), -1);
	assert_non_null(strstr(coord_db_errmsg(f->db), "constraint"));
	/* T9 was the highest number ever given: the next is T10. */
	assert_string_equal(add(f), "T10");
}

/* The helpers every query uses: bindings of each format, changed rows
 * counted, one integer read, a cached statement reused. */
static void
test_helpers(void **state)
{
	struct fx *f = *state;
	static const char q_ins[] = "INSERT INTO trace_tail (id, seq, line) VALUES (1, ?, ?)";
	static const char q_upd[] =
		"UPDATE trace_tail SET seq = coalesce(?, seq), line = ? WHERE id = 1";
	static const char q_seq[] = "SELECT seq FROM trace_tail WHERE id = ?";
	struct coord_st *st;
	int64_t v = 0;

	assert_int_equal(coord_db_exec(f->db, q_ins, "it", (int64_t)5, "x"), 1);
	assert_int_equal(coord_db_int(f->db, &v, q_seq, "i", (int64_t)1), 1);
	assert_int_equal(v, 5);
	/* 'o' absent binds NULL: the coalesce keeps 5. */
	assert_int_equal(coord_db_exec(f->db, q_upd, "ot", 0, (int64_t)9, "y"), 1);
	assert_int_equal(coord_db_int(f->db, &v, q_seq, "i", (int64_t)1), 1);
	assert_int_equal(v, 5);
	assert_int_equal(coord_db_exec(f->db, q_upd, "ot", 1, (int64_t)9, "z"), 1);
	assert_int_equal(coord_db_int(f->db, &v, q_seq, "i", (int64_t)1), 1);
	assert_int_equal(v, 9);
	assert_int_equal(coord_db_int(f->db, &v, q_seq, "i", (int64_t)2), 0);
	/* A NOT NULL column refuses 't' NULL: an error, not a crash. */
	assert_int_equal(coord_db_exec(f->db, q_upd, "nt", NULL), -1);
	st = coord_db_q(f->db, q_seq, "i", (int64_t)1);
	assert_ptr_equal(coord_db_q(f->db, q_seq, "i", (int64_t)1), st);
	assert_int_equal(coord_db_step(f->db, st), 1);
	assert_string_equal(coord_db_coltext(st, 0), "9");
	coord_db_reset_all(f->db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_coordinator_per_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v9_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v6_dependency_failed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_helpers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
