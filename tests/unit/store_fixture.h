#ifndef BERTH_STORE_FIXTURE_H
#define BERTH_STORE_FIXTURE_H
/* Where a coordinator test keeps its store (DESIGN §13): a sqlite file in
 * the test's temporary directory, or, when BERTH_TEST_STORE holds a
 * PostgreSQL base URL (tests/pg-server url), a fresh schema of the test's
 * own on that server, dropped after. The same tests run on both backends
 * (ctest's unit_<name> and unit_pg_<name>). */
#include <stddef.h>
#include <stdint.h>

struct test_store {
	char store[512]; /* what coord_db_open takes: a path or a URL */
	char schema[64]; /* PostgreSQL: the schema made for the test; "" for sqlite */
};

/* 1 when the tests run against PostgreSQL (BERTH_TEST_STORE is set). */
int test_store_pg(void);
/* A test that opens a second deciding connection on its store (two
 * coordinators at once) skips on PostgreSQL: one coordinator per store
 * there for now (coord_store_pg.c's owner lock; DESIGN §13's hosts are not
 * built yet). */
#define SKIP_ON_PG_TWO_COORDINATORS() \
	do {                          \
		if (test_store_pg())  \
			skip();       \
	} while (0)
/* Makes a fresh store for a test whose temporary directory is dir: the
 * sqlite file dir/berth.db (not created yet), or a new empty schema on
 * BERTH_TEST_STORE's server with a URL whose search_path is that schema.
 * 0, or -1 with a message on stderr. */
int test_store_make(struct test_store *ts, const char *dir);
/* Drops what test_store_make made on PostgreSQL (the schema, CASCADE);
 * nothing for sqlite (the directory goes with the test's). */
void test_store_drop(struct test_store *ts);

/* Reads the first row sql selects on a read-only connection of its own to
 * store (what is committed, whoever holds a transaction open): column 0 as
 * an integer into *v and, with text, column 1 into text. 1 a row, 0 none,
 * -1 an error (on stderr). */
int test_store_peek(const char *store, const char *sql, int64_t *v, char *text, size_t n);

#endif
