#ifndef BERTH_COORD_DB_H
#define BERTH_COORD_DB_H
#include <stddef.h>
#include <stdint.h>
#include "labels.h"

/* The coordinator's store (DESIGN §3, §13): one connection, owned by one
 * thread of one process, with its schema brought up to date, a cache of
 * prepared statements and the helpers every query uses. One interface,
 * two backends: sqlite (a file in the home, the embedded default) and
 * PostgreSQL (a postgresql:// URL, libpq). Every statement is written once,
 * in the SQL both speak. The bottom floor: nothing here knows a verb. */

struct coord_db;
/* One cached statement, bound and stepped through its rows. */
struct coord_st;

enum coord_store_kind { COORD_STORE_SQLITE = 1, COORD_STORE_POSTGRESQL = 2 };

struct coord_db_opts {
	int sync_full;            /* sqlite: 1 synchronous=FULL (default), 0 NORMAL */
	int64_t default_lease_ms; /* claim/renew/readopt with lease_ms 0 */
	int64_t backoff_base_ms;  /* retry backoff: base * 2^(failures-1) ... */
	int64_t backoff_max_ms;   /* ... capped here */
	/* Where coordinator.key is kept: NULL beside a sqlite file; a
	 * PostgreSQL store needs it (the home). */
	const char *key_dir;
	/* 1: a reader beside the coordinator (a checker, a tool), which
	 * decides nothing: PostgreSQL's one-coordinator lock is not taken. */
	int reader;
	/* PostgreSQL: the host the coordinator decides for, one coordinator
	 * per host and store (NULL: tests without a host). */
	const char *host_id;
};

/* The host this coordinator decides for (DESIGN §13): its id, its boot,
 * its lease's TTL, the epoch it holds, and when (this host's monotonic
 * clock) the store last renewed its lease. Kept with the connection, read
 * by the verbs (coord_hosts.c). */
#define COORD_HOST_MAX 64
struct coord_host {
	char id[COORD_HOST_MAX + 1];
	char boot_id[40];
	/* What it offers to placed tickets (--labels), joined by commas: ""
	 * none (docs/MANY-HOSTS.md "Placement"). */
	char labels[LABELS_JOINED_MAX];
	int64_t ttl_ms;
	int64_t epoch;        /* 0: not registered yet */
	int64_t renewed_mono; /* clock_mono_ms of the last renewal; 0 never */
	int64_t retry_mono;   /* after a failed renewal: not again before this */
	int failing;          /* renewals failed since the last that worked */
	/* Other hosts whose lease was live at the last renewal: with none,
	 * claims are not decided apart (coord_db_begin_claims). */
	int64_t others;
	int64_t counted_mono; /* when others was counted */
};
struct coord_host *coord_db_host(struct coord_db *db);

/* 1 when store names a PostgreSQL database (postgresql:// or
 * postgres://), 0 when it is a sqlite file's path. */
int coord_db_is_url(const char *store);

/* Opens (creating and migrating) the store: a sqlite file's path or a
 * PostgreSQL URL. -1 with a message in err, a newer schema among the
 * reasons. */
int coord_db_open(struct coord_db **out, const char *store, const struct coord_db_opts *o,
		  char *err, size_t errlen);
void coord_db_close(struct coord_db *db);
enum coord_store_kind coord_db_kind(const struct coord_db *db);
const struct coord_db_opts *coord_db_opts(const struct coord_db *db);
/* The key a run's worker token is derived from (IDS_KEY_LEN bytes, kept in
 * coordinator.key beside the database or in key_dir). */
const uint8_t *coord_db_key(const struct coord_db *db);
/* Wakes between coordinators on one store (DESIGN §13): a decision that
 * may make held claims eligible (a ticket added, a slot freed) wakes every
 * other host's held claims too. The fd to poll for such a wake (-1: none,
 * sqlite), whether one came (drained), and sending one. */
int coord_db_wake_fd(struct coord_db *db);
int coord_db_woken(struct coord_db *db);
void coord_db_wake_others(struct coord_db *db);
/* What the store is, for people: "sqlite PATH" or "postgresql URL", a
 * password in the URL shown as ***. */
const char *coord_db_where(const struct coord_db *db);
/* The last error the store reported, for messages. */
const char *coord_db_errmsg(struct coord_db *db);

/* A cached prepared statement (the SQL literal's address is its key),
 * done with its last use, bound from fmt: 'i' int64, 't' text (NULL binds
 * NULL), 'n' NULL (no argument), 'o' an optional int64 given as (int
 * present, int64_t value), 'b' a blob given as (const void *, size_t).
 * Placeholders are '?'. NULL on failure (logged). */
struct coord_st *coord_db_q(struct coord_db *db, const char *sql, const char *fmt, ...);
/* The same for SQL that is not a literal (tests, tools): prepared afresh,
 * not cached; free it with coord_db_free. */
struct coord_st *coord_db_q_once(struct coord_db *db, const char *sql, const char *fmt, ...);
void coord_db_free(struct coord_st *st);
/* Steps st: 1 a row, 0 done, -1 an error (logged). */
int coord_db_step(struct coord_db *db, struct coord_st *st);
/* Done with st before its rows ran out (no read stays open). */
void coord_db_done(struct coord_st *st);
/* Executes one SQL statement to completion: the number of rows it
 * changed, or -1. */
int coord_db_exec(struct coord_db *db, const char *sql, const char *fmt, ...);
/* One integer from the first row: 1 found, 0 no row, -1 error. */
int coord_db_int(struct coord_db *db, int64_t *out, const char *sql, const char *fmt, ...);
/* Several statements, no parameters, not cached (schema, tests): 0 or -1
 * with the store's message in coord_db_errmsg. */
int coord_db_script(struct coord_db *db, const char *sql);
/* Resets every cached statement, so none keeps a read snapshot open
 * between requests. */
void coord_db_reset_all(struct coord_db *db);
/* Opens the transaction a group of requests is decided in; write 1 takes
 * the write lock at once (sqlite's BEGIN IMMEDIATE). 0 or -1. */
int coord_db_begin(struct coord_db *db, int write);
/* Opens a write transaction for claims of the next ticket alone, which a
 * store shared by hosts lets decide beside other hosts' claims: each such
 * claim picks its ticket with FOR UPDATE SKIP LOCKED and calls
 * coord_db_serial before it judges a seat or writes anything. Elsewhere,
 * and while no other host's lease was live at this host's last renewal
 * (a group of claims apart would be one more COMMIT, and there is nobody
 * to claim beside), coord_db_begin(db, 1). 0 or -1. */
int coord_db_begin_claims(struct coord_db *db);
/* 1 while a transaction of coord_db_begin_claims is open on a store that
 * decides claims side by side. */
int coord_db_claims(const struct coord_db *db);
/* In such a transaction, waits for the claims beside it to commit first
 * and keeps them waiting until this one ends (the seats they judge, and
 * the events' and the global trace's ids in commit order); once per
 * transaction, and nothing in any other. 0, or -1 when the lock could not
 * be had. */
int coord_db_serial(struct coord_db *db);
int coord_db_commit(struct coord_db *db);
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

/* Counts n tickets added, for coord_db_tend_stats. */
void coord_db_added(struct coord_db *db, int64_t n);
/* After a COMMIT: on a store whose planner needs statistics (PostgreSQL)
 * and once the tickets added since they were last made are 500 or more,
 * and a quarter or more of those added before, they are made again. */
void coord_db_tend_stats(struct coord_db *db);

/* 1, and remembered, when every ms have passed since it last said 1:
 * housekeeping (pruning old stored replies) done now and then. */
int coord_db_housekeeping_due(struct coord_db *db, int64_t now, int64_t every);

/* Columns of st's current row, numbered from 0. */
int coord_db_isnull(struct coord_st *st, int i);
/* 0 for NULL; a boolean column reads 1 or 0. */
int64_t coord_db_i64(struct coord_st *st, int i);
/* A column as a fresh string; NULL for SQL NULL. */
char *coord_db_col(struct coord_st *st, int i);
/* "" for SQL NULL, else the column text (valid until the next step). */
const char *coord_db_coltext(struct coord_st *st, int i);
/* 1 when column i is not NULL, with its value in *v. */
int coord_db_colint(struct coord_st *st, int i, int64_t *v);
/* A blob column's bytes (valid until the next step), its length in *len;
 * NULL with *len 0 for NULL or empty. */
const void *coord_db_blob(struct coord_st *st, int i, size_t *len);

#endif
