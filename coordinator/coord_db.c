/* The coordinator's sqlite connection: see coord_db.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_schema.h"
#include "ids.h"
#include "log.h"

/* The statements are a fixed set of literals, fewer than this. */
#define DB_STMT_CACHE 256

struct coord_db {
	sqlite3 *db;
	struct coord_db_opts o;
	struct {
		const char *sql; /* the literal's address is the key */
		sqlite3_stmt *st;
	} cache[DB_STMT_CACHE];
	int ncache;
	int64_t housekept_ms;
	uint8_t key[IDS_KEY_LEN]; /* the worker tokens' key (ids_token_for) */
};

static int
db_bindv(sqlite3 *db, sqlite3_stmt *st, const char *fmt, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 0; fmt && fmt[i] && rc == SQLITE_OK; i++) {
		switch (fmt[i]) {
		case 'i': rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t)); break;
		case 't': {
			const char *t = va_arg(ap, const char *);

			rc = t ? sqlite3_bind_text(st, i + 1, t, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, i + 1);
			break;
		}
		case 'n': rc = sqlite3_bind_null(st, i + 1); break;
		case 'o': {
			int present = va_arg(ap, int);
			int64_t v = va_arg(ap, int64_t);

			rc = present ? sqlite3_bind_int64(st, i + 1, v)
				     : sqlite3_bind_null(st, i + 1);
			break;
		}
		default: log_error("coord_db: bad bind format '%c'", fmt[i]); abort();
		}
	}
	if (rc != SQLITE_OK) {
		log_error("coord_db: bind: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static sqlite3_stmt *
db_prepare(struct coord_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int i;

	for (i = 0; i < db->ncache; i++) {
		if (db->cache[i].sql == sql) {
			st = db->cache[i].st;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return st;
		}
	}
	if (sqlite3_prepare_v3(db->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
	    SQLITE_OK) {
		log_error("coord_db: prepare: %s: %s", sqlite3_errmsg(db->db), sql);
		return NULL;
	}
	if (db->ncache == DB_STMT_CACHE) {
		/* Evicting one could finalize a statement a caller is still
		 * stepping. */
		log_error("coord_db: statement cache full (%d): raise DB_STMT_CACHE",
			  DB_STMT_CACHE);
		abort();
	}
	db->cache[db->ncache].sql = sql;
	db->cache[db->ncache].st = st;
	db->ncache++;
	return st;
}

/* The cached statement for sql, bound from fmt and ap. */
static sqlite3_stmt *
db_bound(struct coord_db *db, const char *sql, const char *fmt, va_list ap)
{
	sqlite3_stmt *st;

	if ((st = db_prepare(db, sql)) == NULL)
		return NULL;
	return db_bindv(db->db, st, fmt, ap) == 0 ? st : NULL;
}

sqlite3_stmt *
coord_db_q(struct coord_db *db, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;

	va_start(ap, fmt);
	st = db_bound(db, sql, fmt, ap);
	va_end(ap);
	return st;
}

int
coord_db_step(struct coord_db *db, sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_error("coord_db: step: %s: %s", sqlite3_errmsg(db->db), sqlite3_sql(st));
	return -1;
}

/* Runs sql bound from fmt and ap: with out, the first row's first column
 * into *out (1 a row, 0 none); without, to completion (the number of rows
 * changed). -1 on error. */
static int
db_vrun(struct coord_db *db, int64_t *out, const char *sql, const char *fmt, va_list ap)
{
	sqlite3_stmt *st;
	int rc;

	if ((st = db_bound(db, sql, fmt, ap)) == NULL)
		return -1;
	if (out != NULL) {
		if ((rc = coord_db_step(db, st)) == 1)
			*out = sqlite3_column_int64(st, 0);
	} else {
		while ((rc = coord_db_step(db, st)) == 1)
			;
		if (rc == 0)
			rc = sqlite3_changes(db->db);
	}
	sqlite3_reset(st);
	return rc;
}

int
coord_db_exec(struct coord_db *db, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_vrun(db, NULL, sql, fmt, ap);
	va_end(ap);
	return rc;
}

int
coord_db_int(struct coord_db *db, int64_t *out, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_vrun(db, out, sql, fmt, ap);
	va_end(ap);
	return rc;
}

void
coord_db_reset_all(struct coord_db *db)
{
	int i;

	for (i = 0; i < db->ncache; i++)
		sqlite3_reset(db->cache[i].st);
}

void
coord_db_rollback(struct coord_db *db)
{
	coord_db_reset_all(db);
	if (sqlite3_get_autocommit(db->db) == 0 &&
	    sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		log_error("coord_db: rollback: %s", sqlite3_errmsg(db->db));
}

int
coord_db_in_txn(struct coord_db *db)
{
	return sqlite3_get_autocommit(db->db) == 0;
}

/* One name for every savepoint: ROLLBACK TO and RELEASE find the innermost
 * of that name, so they nest. */
static const char q_savepoint[] = "SAVEPOINT req";
static const char q_release[] = "RELEASE req";
static const char q_rollback_to[] = "ROLLBACK TO req";

int
coord_db_savepoint(struct coord_db *db)
{
	return coord_db_exec(db, q_savepoint, "") < 0 ? -1 : 0;
}

int
coord_db_release(struct coord_db *db)
{
	coord_db_reset_all(db);
	return coord_db_exec(db, q_release, "") < 0 ? -1 : 0;
}

void
coord_db_rollback_to(struct coord_db *db)
{
	coord_db_reset_all(db);
	if (!coord_db_in_txn(db))
		return;
	if (coord_db_exec(db, q_rollback_to, "") < 0 || coord_db_exec(db, q_release, "") < 0)
		log_error("coord_db: rollback to a savepoint: %s", sqlite3_errmsg(db->db));
}

int
coord_db_housekeeping_due(struct coord_db *db, int64_t now, int64_t every)
{
	if (now - db->housekept_ms < every)
		return 0;
	db->housekept_ms = now;
	return 1;
}

char *
coord_db_col(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	return coord_mem_strdup((const char *)sqlite3_column_text(st, i));
}

const char *
coord_db_coltext(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? t : "";
}

int
coord_db_colint(sqlite3_stmt *st, int i, int64_t *v)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	*v = sqlite3_column_int64(st, i);
	return 1;
}

static int
db_pragmas(struct coord_db *db, char *err, size_t errlen)
{
	const char *const sql[] = { "PRAGMA journal_mode=WAL",
				    db->o.sync_full ? "PRAGMA synchronous=FULL"
						    : "PRAGMA synchronous=NORMAL",
				    "PRAGMA foreign_keys=ON",
				    /* Every request is decided in a savepoint of its
				     * group's transaction (coord_exec.c), so a
				     * statement that may have to be undone on its own
				     * opens a statement journal: in memory, not a
				     * temporary file created and unlinked under
				     * /var/tmp per claim. It only undoes a statement;
				     * durability is the WAL's. */
				    "PRAGMA temp_store=MEMORY" };
	char *msg = NULL;
	size_t i;

	for (i = 0; i < sizeof sql / sizeof sql[0]; i++) {
		if (sqlite3_exec(db->db, sql[i], NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, errlen, "cannot set pragmas: %s: %s", sql[i],
				 msg ? msg : sqlite3_errmsg(db->db));
			sqlite3_free(msg);
			return -1;
		}
	}
	return 0;
}

/*
 * The key worker tokens are derived from (ids_token_for), in
 * coordinator.key beside the database: 32 random bytes, 0600, made once.
 * Not in the database, so a copy of berth.db alone still does not give the
 * right to act as a worker; the same across restarts, so a claim's stored
 * reply, which holds no token, can be answered again with it.
 */
static int
db_key(struct coord_db *db, const char *path, char *err, size_t errlen)
{
	char kp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	ssize_t n;
	int fd, made = 0;

	if (slash == NULL)
		snprintf(kp, sizeof kp, "coordinator.key");
	else
		snprintf(kp, sizeof kp, "%.*s/coordinator.key", (int)(slash - path), path);
	if ((fd = open(kp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 && errno == ENOENT) {
		if (getrandom(db->key, sizeof db->key, 0) != (ssize_t)sizeof db->key)
			goto fail;
		fd = open(kp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0 && (write(fd, db->key, sizeof db->key) != (ssize_t)sizeof db->key ||
				fsync(fd) != 0)) {
			close(fd);
			unlink(kp);
			goto fail;
		}
		made = 1;
	}
	if (fd < 0)
		goto fail;
	if (!made && (n = read(fd, db->key, sizeof db->key)) != (ssize_t)sizeof db->key) {
		close(fd);
		snprintf(err, errlen,
			 "%s: not a key (%zd bytes, want %zu): remove it to make a new "
			 "one (running jobs' worker verbs then fail)",
			 kp, n, sizeof db->key);
		return -1;
	}
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", kp, strerror(errno));
	return -1;
}

const uint8_t *
coord_db_key(const struct coord_db *db)
{
	return db->key;
}

int
coord_db_open(struct coord_db **out, const char *path, const struct coord_db_opts *o, char *err,
	      size_t errlen)
{
	struct coord_db *db;

	*out = NULL;
	db = coord_mem_alloc(sizeof *db);
	if (o != NULL)
		db->o = *o;
	else
		db->o.sync_full = 1;
	if (db->o.default_lease_ms <= 0)
		db->o.default_lease_ms = 60000;
	if (db->o.backoff_base_ms <= 0)
		db->o.backoff_base_ms = 1000;
	if (db->o.backoff_max_ms <= 0)
		db->o.backoff_max_ms = 300000;

	if (sqlite3_open_v2(path, &db->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 db->db ? sqlite3_errmsg(db->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(db->db, 1);
	sqlite3_busy_timeout(db->db, 5000);
	if (db_pragmas(db, err, errlen) != 0 ||
	    coord_schema_migrate(db->db, path, err, errlen) != 0 ||
	    db_key(db, path, err, errlen) != 0)
		goto fail;
	*out = db;
	return 0;
fail:
	log_error("coord_db: %s", err);
	coord_db_close(db);
	return -1;
}

void
coord_db_close(struct coord_db *db)
{
	int i;

	if (db == NULL)
		return;
	for (i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].st);
	if (db->db != NULL && sqlite3_close(db->db) != SQLITE_OK)
		log_error("coord_db: close: %s", sqlite3_errmsg(db->db));
	explicit_bzero(db->key, sizeof db->key);
	free(db);
}

const struct coord_db_opts *
coord_db_opts(const struct coord_db *db)
{
	return &db->o;
}

sqlite3 *
coord_db_handle(struct coord_db *db)
{
	return db->db;
}
