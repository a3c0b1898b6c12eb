/* The schema and its migrations (coordinator/coord_schema.c): the state
 * names the schema's CHECKs and the SQL literals spell are those of
 * proto/states.c, a newer schema is refused, an old one migrated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coord_schema.h"
#include "states.h"

struct sfx {
	char dir[64];
	char path[128];
	sqlite3 *db;
};

static int
setup(void **state)
{
	struct sfx *f = calloc(1, sizeof *f);
	char err[256];

	snprintf(f->dir, sizeof f->dir, "/tmp/coord_schema_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/berth.db", f->dir);
	assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
	assert_int_equal(coord_schema_migrate(f->db, f->path, err, sizeof err), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct sfx *f = *state;
	char cmd[128];

	sqlite3_close(f->db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The CREATE statement of table, as sqlite keeps it (malloc'd). */
static char *
table_sql(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st;
	char *sql = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE name = ?", -1,
					    &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		sql = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	assert_non_null(sql);
	return sql;
}

/* The names in the which-th "state IN (...)" list of sql, "|"-joined
 * into out: "ready|held|...". */
static void
in_list(const char *sql, int which, char *out, size_t len)
{
	const char *p = sql, *end;
	size_t n = 0;

	for (; which >= 0; which--) {
		assert_non_null(p = strstr(p, "state IN"));
		p += strlen("state IN");
	}
	assert_non_null(p = strchr(p, '('));
	assert_non_null(end = strchr(p, ')'));
	out[0] = '\0';
	for (p++; p < end; p++) {
		if (*p == '\'' || *p == ' ')
			continue;
		assert_true(n + 1 < len);
		out[n++] = *p == ',' ? '|' : *p;
	}
	out[n] = '\0';
}

/* The names of states.h, "|"-joined, in enum order; with live_only, only
 * the states of a run not yet settled. */
static void
run_names(char *out, size_t len, int live_only)
{
	int s;

	out[0] = '\0';
	for (s = 0; s < RUN_NSTATES; s++) {
		if (live_only && !run_state_live((enum run_state)s))
			continue;
		if (out[0] != '\0')
			strncat(out, "|", len - strlen(out) - 1);
		strncat(out, run_state_name((enum run_state)s), len - strlen(out) - 1);
	}
}

static void
test_check_lists_are_the_states(void **state)
{
	struct sfx *f = *state;
	char got[256], want[256];
	char *sql;
	int s;

	sql = table_sql(f->db, "tickets");
	in_list(sql, 0, got, sizeof got);
	want[0] = '\0';
	for (s = 0; s < TICKET_NSTATES; s++) {
		if (s > 0)
			strcat(want, "|");
		strcat(want, ticket_state_name((enum ticket_state)s));
	}
	assert_string_equal(got, want);
	free(sql);

	sql = table_sql(f->db, "runs");
	in_list(sql, 0, got, sizeof got);
	run_names(want, sizeof want, 0);
	assert_string_equal(got, want);
	/* "nonterminal <=> settled_ms IS NULL" names the live states. */
	in_list(sql, 1, got, sizeof got);
	run_names(want, sizeof want, 1);
	assert_string_equal(got, want);
	free(sql);
}

static void
assert_literal(const char *sql, const char *name)
{
	char want[64];

	snprintf(want, sizeof want, "'%s'", name);
	assert_string_equal(sql, want);
}

/* Every statement in coordinator/ that names a state does so through
 * these. */
static void
test_sql_literals_are_the_states(void **state)
{
	(void)state;
	assert_literal(SQL_TICKET_READY, ticket_state_name(TICKET_READY));
	assert_literal(SQL_TICKET_HELD, ticket_state_name(TICKET_HELD));
	assert_literal(SQL_TICKET_CLAIMED, ticket_state_name(TICKET_CLAIMED));
	assert_literal(SQL_TICKET_SUCCEEDED, ticket_state_name(TICKET_SUCCEEDED));
	assert_literal(SQL_TICKET_FAILED, ticket_state_name(TICKET_FAILED));
	assert_literal(SQL_TICKET_CANCELLED, ticket_state_name(TICKET_CANCELLED));
	assert_literal(SQL_TICKET_DEPENDENCY_FAILED, ticket_state_name(TICKET_DEPENDENCY_FAILED));
	assert_literal(SQL_RUN_CLAIMED, run_state_name(RUN_CLAIMED));
	assert_literal(SQL_RUN_RUNNING, run_state_name(RUN_RUNNING));
	assert_literal(SQL_RUN_AFTERCARE, run_state_name(RUN_AFTERCARE));
	assert_literal(SQL_RUN_SUCCEEDED, run_state_name(RUN_SUCCEEDED));
	assert_literal(SQL_RUN_FAILED, run_state_name(RUN_FAILED));
	assert_literal(SQL_RUN_TIMED_OUT, run_state_name(RUN_TIMED_OUT));
	assert_literal(SQL_RUN_CANCELLED, run_state_name(RUN_CANCELLED));
	assert_literal(SQL_RUN_ORPHANED, run_state_name(RUN_ORPHANED));
	assert_literal(SQL_RUN_ABORTED, run_state_name(RUN_ABORTED));
	assert_literal(SQL_STOP_CANCEL, stop_reason_name(STOP_CANCEL));
	assert_literal(SQL_STOP_TIMEOUT, stop_reason_name(STOP_TIMEOUT));
}

/* The activations' states are the coordinator's own: the literals equal
 * the schema's CHECK. */
static void
test_activation_literals_match_schema(void **state)
{
	struct sfx *f = *state;
	char got[128], want[128];
	char *sql = table_sql(f->db, "activations");

	in_list(sql, 0, got, sizeof got);
	snprintf(want, sizeof want, "%s|%s|%s", SQL_ACT_QUEUED, SQL_ACT_COMPLETED,
		 SQL_ACT_CANCELLED);
	for (char *p = want, *q = want;; p++) {
		if (*p != '\'')
			*q++ = *p;
		if (*p == '\0')
			break;
	}
	assert_string_equal(got, want);
	free(sql);
}

/* Opening again migrates nothing and keeps the version. */
static void
test_migrate_twice(void **state)
{
	struct sfx *f = *state;
	char err[256];
	sqlite3_stmt *st;

	assert_int_equal(coord_schema_migrate(f->db, f->path, err, sizeof err), 0);
	assert_int_equal(sqlite3_prepare_v2(f->db, "PRAGMA user_version", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), COORD_SCHEMA_VERSION);
	sqlite3_finalize(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_check_lists_are_the_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sql_literals_are_the_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_activation_literals_match_schema, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrate_twice, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
