/* A coordinator test's store on sqlite or PostgreSQL: see store_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "store_fixture.h"

static const char *
base_url(void)
{
	const char *u = getenv("BERTH_TEST_STORE");

	return u != NULL && u[0] != '\0' ? u : NULL;
}

int
test_store_pg(void)
{
	return base_url() != NULL;
}

static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Runs one statement on a connection of its own to the base URL. */
static int
pg_admin(const char *sql)
{
	PGconn *c = PQconnectdb(base_url());
	PGresult *r;
	int ok;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "store_fixture: %s: %s", base_url(), PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	PQsetNoticeProcessor(c, quiet, NULL); /* "drop cascades to ..." */
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "store_fixture: %s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

int
test_store_make(struct test_store *ts, const char *dir)
{
	static unsigned counter;
	const char *base = base_url();
	char sql[128];

	memset(ts, 0, sizeof *ts);
	if (base == NULL) {
		snprintf(ts->store, sizeof ts->store, "%s/berth.db", dir);
		return 0;
	}
	/* pid and counter: tests of one binary run one after another, the
	 * binaries at once (ctest -j), all on one server. */
	snprintf(ts->schema, sizeof ts->schema, "t_%ld_%u", (long)getpid(), ++counter);
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s", ts->schema);
	if (pg_admin(sql) != 0)
		return -1;
	snprintf(ts->store, sizeof ts->store, "%s%coptions=-csearch_path%%3D%s", base,
		 strchr(base, '?') != NULL ? '&' : '?', ts->schema);
	return 0;
}

void
test_store_drop(struct test_store *ts)
{
	char sql[128];

	if (ts->schema[0] == '\0')
		return;
	snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", ts->schema);
	(void)pg_admin(sql);
	ts->schema[0] = '\0';
}

static int
peek_pg(const char *store, const char *sql, int64_t *v, char *text, size_t n)
{
	PGconn *c = PQconnectdb(store);
	PGresult *r = NULL;
	int rc = -1;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "store_fixture: %s: %s", store, PQerrorMessage(c));
		goto out;
	}
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "store_fixture: %s: %s", sql, PQresultErrorMessage(r));
		goto out;
	}
	rc = PQntuples(r) > 0;
	if (rc == 1) {
		*v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		if (text != NULL)
			snprintf(text, n, "%s", PQgetvalue(r, 0, 1));
	}
out:
	PQclear(r);
	PQfinish(c);
	return rc;
}

int
test_store_peek(const char *store, const char *sql, int64_t *v, char *text, size_t n)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (strncmp(store, "postgres", 8) == 0)
		return peek_pg(store, sql, v, text, n);
	if (sqlite3_open_v2(store, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "store_fixture: %s: %s: %s\n", store, sql, sqlite3_errmsg(s));
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		if (text != NULL)
			snprintf(text, n, "%s", (const char *)sqlite3_column_text(st, 1));
		rc = 1;
	} else {
		rc = rc == SQLITE_DONE ? 0 : -1;
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(s);
	return rc;
}
