/* The database (coordinator/coord_db.c): opening migrates an old schema
 * and refuses a newer one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "coord_schema.h"

static void
test_newer_schema_refused(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2 = NULL;
	char err[256], want[32];

	assert_int_equal(sqlite3_exec(coord_db_handle(f->db), "PRAGMA user_version=99", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	assert_int_equal(coord_db_open(&s2, f->path, &fx_opts, err, sizeof err), -1);
	assert_null(s2);
	assert_non_null(strstr(err, "99"));
	snprintf(want, sizeof want, "version %d", COORD_SCHEMA_VERSION);
	assert_non_null(strstr(err, want));
}

/* A version 1 database is migrated forward when opened (through every
 * later version). */
static void
test_migrates_v1(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2;
	char err[256];

	add(f);
	assert_string_equal(outcome(seat_acquire(f, "s", "alice@h", NULL)), "acquired");
	assert_int_equal(sqlite3_exec(coord_db_handle(f->db),
				      "ALTER TABLE tickets DROP COLUMN tree_seat;"
				      "ALTER TABLE tickets DROP COLUMN isolate;"
				      "DROP TABLE trace_tail;"
				      "ALTER TABLE runs DROP COLUMN aftercare_owner;"
				      "DROP TABLE requests;"
				      "CREATE TABLE requests (instance TEXT NOT NULL,"
				      " req_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL,"
				      " verb TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT,"
				      " ticket TEXT, run TEXT, reply BLOB NOT NULL,"
				      " PRIMARY KEY (instance, req_id)) WITHOUT ROWID;"
				      "INSERT INTO requests VALUES ('5e5e', 1, 0, 'add', 'granted',"
				      " NULL, 'T1', NULL, x'00');"
				      "ALTER TABLE seats DROP COLUMN kind;"
				      "ALTER TABLE seats DROP COLUMN state;"
				      "ALTER TABLE seats DROP COLUMN task;"
				      "ALTER TABLE seats DROP COLUMN in_flight_ms;"
				      "ALTER TABLE seats DROP COLUMN in_flight_ttl_ms;"
				      "ALTER TABLE seats DROP COLUMN in_flight_boot_id;"
				      "ALTER TABLE seats DROP COLUMN in_flight_pid;"
				      "ALTER TABLE seats DROP COLUMN in_flight_start_time;"
				      "ALTER TABLE seats DROP COLUMN stop_by;"
				      "PRAGMA user_version=1;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	coord_exec_free(&f->res);
	coord_db_close(f->db);
	assert_int_equal(coord_db_open(&s2, f->path, &fx_opts, err, sizeof err), 0);
	f->db = s2;
	assert_int_equal(sql_int(f, "PRAGMA user_version"), COORD_SCHEMA_VERSION);
	assert_int_equal(sql_int(f, "SELECT tree_seat FROM tickets"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM trace_tail"), 0);
	assert_int_equal(sql_int(f, "SELECT isolate FROM tickets"), 0);
	/* An old stored reply is kept, and answers nobody (sender ''). */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE sender = ''"), 1);
	/* a seat of an older schema: no kind, no task, nothing in flight */
	assert_int_equal(sql_int(f, "SELECT task FROM seats"), 0);
	assert_false(seat_show(f, "s")->in_flight);
	assert_false(seat_show(f, "s")->task);
	assert_granted(claim(f, "T1"));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE aftercare_owner IS NULL"), 1);
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
	sqlite3_stmt *st;
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
		cmocka_unit_test_setup_teardown(test_migrates_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_helpers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
