/* Rows as messages, ids and JSON arrays (coordinator/coord_rows.c): argv
 * and env read back exactly, whichever reader reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "coord_rows.h"

/* argv and env read back exactly as added, whatever bytes they hold (env's
 * values by the claim only: show gives the names); and a stored array in
 * any JSON spelling reads back as sqlite's json_each reads it (the loader
 * decodes the common form itself, the rest through sqlite; none of these
 * holds an '=', so show's names are the whole entries). */
static void
test_argv_env_read_back(void **state)
{
	static const char *const spellings[] = {
		"[\"a\"]",
		"[]",
		" [ \"a\\/b\" , \"\\u00e9\\u20ac\\ud83d\\ude00\" ,\"\\b\\f\\n\\r\\t\\\"\\\\\" ] ",
		"[\"\\u0041\\u0000tail\"]",
		"[\"lone \\ud800 high\", \"lone \\udc00 low\"]",
		"[1, \"x\", null, 2.5]",
		"[\"\xc3\xa9 raw utf-8\", \"\xff not utf-8\"]",
	};
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char ctl[32], *argv[] = { "sh", "-c", "echo \"a\\b\" 'c'\n\t$x",
				  "",   ctl,  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" };
	char *env[] = { "A=1", "Q=\"\\", "U=\xe2\x82\xac" };
	const Berth__Reply *r;
	const Berth__Ticket *t;
	struct coord_st *st;
	size_t i, k;

	for (i = 0; i < 31; i++)
		ctl[i] = (char)(i + 1);
	ctl[31] = '\0';
	a.n_argv = 6;
	a.argv = argv;
	a.n_env = 3;
	a.env = env;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	r = ex(f, &req);
	assert_granted(r);
	t = show(f, "T1");
	assert_int_equal(t->n_argv, 6);
	for (i = 0; i < 6; i++)
		assert_string_equal(t->argv[i], argv[i]);
	/* show names the variables; only a claim hands out their values. */
	assert_int_equal(t->n_env, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(strlen(t->env[i]), 1);
		assert_memory_equal(t->env[i], env[i], 1);
	}
	r = claim(f, "T1");
	assert_granted(r);
	assert_int_equal(r->granted->claim->n_env, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(r->granted->claim->env[i], env[i]);

	/* The spellings are read as sqlite's json_each reads them; some
	 * (NUL, bytes that are not UTF-8) are no PostgreSQL text at all. */
	if (coord_db_kind(f->db) != COORD_STORE_SQLITE)
		return;
	for (k = 0; k < sizeof spellings / sizeof spellings[0]; k++) {
		assert_int_equal(coord_db_exec(f->db,
					       "UPDATE tickets SET argv = ?, env = ? WHERE n = 1",
					       "tt", spellings[k], spellings[k]),
				 1);
		t = show(f, "T1");
		st = coord_db_q(f->db, "SELECT value FROM json_each(?) ORDER BY key", "t",
				spellings[k]);
		assert_non_null(st);
		for (i = 0; coord_db_step(f->db, st) == 1; i++) {
			const char *want = coord_db_coltext(st, 0);

			assert_true(i < t->n_argv);
			assert_true(i < t->n_env);
			assert_string_equal(t->argv[i], want);
			assert_string_equal(t->env[i], want);
		}
		assert_int_equal(t->n_argv, i);
		assert_int_equal(t->n_env, i);
	}
}

/* Ticket ids, aliases and run ids: what parses and what does not. */
static void
test_ids(void **state)
{
	int64_t n, attempt;
	char buf[32];

	(void)state;
	assert_int_equal(coord_rows_ticket_parse("T12", &n), 0);
	assert_int_equal(n, 12);
	assert_int_equal(coord_rows_ticket_parse("t3", &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(coord_rows_ticket_parse("T0", &n), -1);
	assert_int_equal(coord_rows_ticket_parse("T12x", &n), -1);
	assert_int_equal(coord_rows_ticket_parse("T", &n), -1);
	assert_int_equal(coord_rows_ticket_parse("12", &n), -1);
	assert_int_equal(coord_rows_ticket_parse("T99999999999999999999", &n), -1);
	assert_int_equal(coord_rows_ticket_parse(NULL, &n), -1);
	assert_int_equal(coord_rows_alias_parse("T3-r2", &n, &attempt), 0);
	assert_int_equal(n, 3);
	assert_int_equal(attempt, 2);
	assert_int_equal(coord_rows_alias_parse("T3-r0", &n, &attempt), -1);
	assert_int_equal(coord_rows_alias_parse("T3-2", &n, &attempt), -1);
	assert_int_equal(coord_rows_alias_parse("T3", &n, &attempt), -1);
	assert_true(coord_rows_is_hex("0123456789abcdef", 16));
	assert_false(coord_rows_is_hex("0123456789ABCDEF", 16));
	assert_false(coord_rows_is_hex("0123", 16));
	coord_rows_ticket_name(7, buf, sizeof buf);
	assert_string_equal(buf, "T7");
	coord_rows_alias_name(7, 3, buf, sizeof buf);
	assert_string_equal(buf, "T7-r3");
}

/* What coord_rows_json_array writes reads back the same, control bytes,
 * quotes and UTF-8 included. */
static void
test_json_round_trip(void **state)
{
	struct fx *f = *state;
	char ctl[] = "\x01\x1f\t\n", *v[] = { "a b", "\"q\"\\", ctl, "", "\xc3\xa9" };
	char *json = coord_rows_json_array(v, 5), **out;
	size_t n, i;

	assert_int_equal(coord_rows_json_list(f->db, json, &out, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_string_equal(out[i], v[i]);
		free(out[i]);
	}
	free(out);
	free(json);
	assert_int_equal(coord_rows_json_list(f->db, NULL, &out, &n), 0);
	assert_int_equal(n, 0);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_env_read_back, setup, teardown),
		cmocka_unit_test(test_ids),
		cmocka_unit_test_setup_teardown(test_json_round_trip, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
