/* The sqlite backend of the store (coord_db_int.h): a file in the home,
 * the embedded default. */
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "clock.h"
#include "coord_db_int.h"
#include "coord_schema.h"
#include "labels.h"
#include "log.h"

#define LITE(db) ((sqlite3 *)(db)->be)

static int
lite_pragmas(struct coord_db *db, char *err, size_t errlen)
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
		if (sqlite3_exec(LITE(db), sql[i], NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, errlen, "cannot set pragmas: %s: %s", sql[i],
				 msg ? msg : sqlite3_errmsg(LITE(db)));
			sqlite3_free(msg);
			return -1;
		}
	}
	return 0;
}

/* berth_now_ms(): the store's clock (DESIGN §13), which for a file on
 * this host is this host's wall clock (clock.h, so tests may set it). */
static void
lite_now_ms(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, clock_wall_ms());
}

/* berth_labels_ok(need, have): 1 when every label of need is one of
 * have's (docs/MANY-HOSTS.md "Placement"; PostgreSQL's is in its schema,
 * coord_schema_pg.c). */
static void
lite_labels_ok(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *need = (const char *)sqlite3_value_text(argv[0]);
	const char *have = (const char *)sqlite3_value_text(argv[1]);

	(void)argc;
	sqlite3_result_int64(ctx, labels_cover(have, need));
}

static int
lite_open(struct coord_db *db, const char *path, char *err, size_t errlen)
{
	sqlite3 *h = NULL;

	if (sqlite3_open_v2(path, &h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 h ? sqlite3_errmsg(h) : "out of memory");
		sqlite3_close(h);
		return -1;
	}
	db->be = h;
	sqlite3_extended_result_codes(h, 1);
	sqlite3_busy_timeout(h, 5000);
	if (sqlite3_create_function(h, "berth_now_ms", 0, SQLITE_UTF8, NULL, lite_now_ms, NULL,
				    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot register berth_now_ms: %s", path,
			 sqlite3_errmsg(h));
		return -1;
	}
	if (sqlite3_create_function(h, "berth_labels_ok", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				    NULL, lite_labels_ok, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot register berth_labels_ok: %s", path,
			 sqlite3_errmsg(h));
		return -1;
	}
	if (lite_pragmas(db, err, errlen) != 0 || coord_schema_migrate(h, path, err, errlen) != 0)
		return -1;
	return 0;
}

static void
lite_close(struct coord_db *db)
{
	if (sqlite3_close(LITE(db)) != SQLITE_OK)
		log_error("coord_db: close: %s", sqlite3_errmsg(LITE(db)));
	db->be = NULL;
}

static void *
lite_prepare(struct coord_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v3(LITE(db), sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
	    SQLITE_OK)
		return NULL;
	return st;
}

static void
lite_finalize(struct coord_db *db, void *st)
{
	(void)db;
	sqlite3_finalize(st);
}

static int
lite_bind(struct coord_db *db, void *vst, const struct coord_val *v, int n)
{
	sqlite3_stmt *st = vst;
	int i, rc = SQLITE_OK;

	(void)db;
	sqlite3_clear_bindings(st);
	for (i = 0; i < n && rc == SQLITE_OK; i++) {
		switch (v[i].kind) {
		case 'i': rc = sqlite3_bind_int64(st, i + 1, v[i].i); break;
		case 't': rc = sqlite3_bind_text(st, i + 1, v[i].t, -1, SQLITE_TRANSIENT); break;
		case 'b':
			rc = sqlite3_bind_blob(st, i + 1, v[i].b, (int)v[i].blen, SQLITE_TRANSIENT);
			break;
		default: rc = sqlite3_bind_null(st, i + 1); break;
		}
	}
	return rc == SQLITE_OK ? 0 : -1;
}

static int
lite_step(struct coord_db *db, void *st)
{
	int rc = sqlite3_step(st);

	(void)db;
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

static void
lite_reset(void *st)
{
	sqlite3_reset(st);
}

static int
lite_changes(struct coord_db *db, void *st)
{
	(void)st;
	return sqlite3_changes(LITE(db));
}

static int
lite_isnull(void *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL;
}

static int64_t
lite_i64(void *st, int i)
{
	return sqlite3_column_int64(st, i);
}

static const char *
lite_text(void *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static const void *
lite_blob(void *st, int i, size_t *len)
{
	const void *b = sqlite3_column_blob(st, i);

	*len = b != NULL ? (size_t)sqlite3_column_bytes(st, i) : 0;
	return b;
}

static int
lite_script(struct coord_db *db, const char *sql)
{
	return sqlite3_exec(LITE(db), sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int
lite_in_txn(struct coord_db *db)
{
	return sqlite3_get_autocommit(LITE(db)) == 0;
}

static const char *
lite_errmsg(struct coord_db *db)
{
	return db->be != NULL ? sqlite3_errmsg(LITE(db)) : "no database";
}

static void
lite_describe(const char *path, char *where, size_t n)
{
	snprintf(where, n, "sqlite %s", path);
}

const struct coord_store_ops coord_store_sqlite = {
	.kind = COORD_STORE_SQLITE,
	.describe = lite_describe,
	.open = lite_open,
	.close = lite_close,
	.prepare = lite_prepare,
	.finalize = lite_finalize,
	.bind = lite_bind,
	.step = lite_step,
	.reset = lite_reset,
	.changes = lite_changes,
	.isnull = lite_isnull,
	.i64 = lite_i64,
	.text = lite_text,
	.blob = lite_blob,
	.script = lite_script,
	.in_txn = lite_in_txn,
	.errmsg = lite_errmsg,
	.begin_read = "BEGIN",
	.begin_write = "BEGIN IMMEDIATE",
};
