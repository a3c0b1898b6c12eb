#ifndef BERTH_COORD_DB_H
#define BERTH_COORD_DB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The coordinator's database (DESIGN §3): one sqlite connection, owned by
 * one thread of one process, with its pragmas, its schema brought up to
 * date, a cache of prepared statements and the helpers every query uses.
 * The bottom floor: nothing here knows a verb. */

struct coord_db;

struct coord_db_opts {
	int sync_full;            /* 1: synchronous=FULL (default), 0: NORMAL */
	int64_t default_lease_ms; /* claim/renew/readopt with lease_ms 0 */
	int64_t backoff_base_ms;  /* retry backoff: base * 2^(failures-1) ... */
	int64_t backoff_max_ms;   /* ... capped here */
};

/* Opens (creating and migrating: coord_schema_migrate) the database at
 * path. -1 with a message in err, a newer schema among the reasons. */
int coord_db_open(struct coord_db **out, const char *path, const struct coord_db_opts *o, char *err,
		  size_t errlen);
void coord_db_close(struct coord_db *db);
const struct coord_db_opts *coord_db_opts(const struct coord_db *db);
/* The key a run's worker token is derived from (IDS_KEY_LEN bytes, kept in
 * coordinator.key beside the database). */
const uint8_t *coord_db_key(const struct coord_db *db);
/* The raw handle, for the last insert's rowid, error messages and tests. */
sqlite3 *coord_db_handle(struct coord_db *db);

/* A cached prepared statement (the SQL literal's address is its key),
 * reset and with its bindings cleared, bound from fmt: 'i' int64, 't'
 * text (NULL binds NULL), 'n' NULL (no argument), 'o' an optional int64
 * given as (int present, int64_t value). NULL on failure (logged). */
sqlite3_stmt *coord_db_q(struct coord_db *db, const char *sql, const char *fmt, ...);
/* Steps st: 1 a row, 0 done, -1 an error (logged). */
int coord_db_step(struct coord_db *db, sqlite3_stmt *st);
/* Executes one SQL statement to completion: the number of rows it
 * changed, or -1. */
int coord_db_exec(struct coord_db *db, const char *sql, const char *fmt, ...);
/* One integer from the first row: 1 found, 0 no row, -1 error. */
int coord_db_int(struct coord_db *db, int64_t *out, const char *sql, const char *fmt, ...);
/* Resets every cached statement, so none keeps a read snapshot open
 * between requests. */
void coord_db_reset_all(struct coord_db *db);
/* Rolls back the open transaction, if any (logged on failure). */
void coord_db_rollback(struct coord_db *db);
/* 1 while a transaction is open (sqlite rolls one back by itself after
 * some I/O errors: its decisions are then gone). */
int coord_db_in_txn(struct coord_db *db);
/* A savepoint inside the open transaction (they nest): 0, or -1 (logged). */
int coord_db_savepoint(struct coord_db *db);
/* Keeps what was done since the innermost savepoint: 0, or -1 (logged). */
int coord_db_release(struct coord_db *db);
/* Undoes what was done since the innermost savepoint and drops it
 * (logged on failure; nothing to do when the transaction is gone). */
void coord_db_rollback_to(struct coord_db *db);

/* 1, and remembered, when every ms have passed since it last said 1:
 * housekeeping (pruning old stored replies) done now and then. */
int coord_db_housekeeping_due(struct coord_db *db, int64_t now, int64_t every);

/* A column as a fresh string; NULL for SQL NULL. */
char *coord_db_col(sqlite3_stmt *st, int i);
/* "" for SQL NULL, else the column text (valid until the next step). */
const char *coord_db_coltext(sqlite3_stmt *st, int i);
/* 1 when column i is not NULL, with its value in *v. */
int coord_db_colint(sqlite3_stmt *st, int i, int64_t *v);

#endif
