/* The coordinator's store, whichever backend: see coord_db.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "coord_db_int.h"
#include "coord_mem.h"
#include "log.h"

int
coord_db_is_url(const char *store)
{
	return store != NULL &&
	       (strncmp(store, "postgresql://", 13) == 0 || strncmp(store, "postgres://", 11) == 0);
}

/* fmt and ap as values: the number of them, or -1 (logged). */
static int
db_vals(struct coord_val *v, const char *fmt, va_list ap)
{
	int i;

	for (i = 0; fmt && fmt[i]; i++) {
		if (i == COORD_DB_MAXARGS) {
			log_error("coord_db: more than %d parameters", COORD_DB_MAXARGS);
			abort();
		}
		memset(&v[i], 0, sizeof v[i]);
		v[i].kind = fmt[i];
		switch (fmt[i]) {
		case 'i': v[i].i = va_arg(ap, int64_t); break;
		case 't':
			v[i].t = va_arg(ap, const char *);
			if (v[i].t == NULL)
				v[i].kind = 'n';
			break;
		case 'n': break;
		case 'o': {
			int present = va_arg(ap, int);

			v[i].i = va_arg(ap, int64_t);
			v[i].kind = present ? 'i' : 'n';
			break;
		}
		case 'b':
			v[i].b = va_arg(ap, const void *);
			v[i].blen = va_arg(ap, size_t);
			break;
		default: log_error("coord_db: bad bind format '%c'", fmt[i]); abort();
		}
	}
	return i;
}

static struct coord_st *
db_prepare(struct coord_db *db, const char *sql)
{
	struct coord_st *st;
	void *be;
	int i;

	for (i = 0; i < db->ncache; i++) {
		if (db->cache[i].sql == sql) {
			st = &db->cache[i];
			db->ops->reset(st->be);
			return st;
		}
	}
	if ((be = db->ops->prepare(db, sql)) == NULL) {
		log_error("coord_db: prepare: %s: %s", db->ops->errmsg(db), sql);
		return NULL;
	}
	if (db->ncache == DB_STMT_CACHE) {
		/* Evicting one could finalize a statement a caller is still
		 * stepping. */
		log_error("coord_db: statement cache full (%d): raise DB_STMT_CACHE",
			  DB_STMT_CACHE);
		abort();
	}
	st = &db->cache[db->ncache++];
	st->db = db;
	st->sql = sql;
	st->be = be;
	return st;
}

/* The cached statement for sql, bound from fmt and ap. */
static struct coord_st *
db_bound(struct coord_db *db, const char *sql, const char *fmt, va_list ap)
{
	struct coord_val v[COORD_DB_MAXARGS];
	struct coord_st *st;
	int n;

	if ((st = db_prepare(db, sql)) == NULL)
		return NULL;
	n = db_vals(v, fmt, ap);
	if (db->ops->bind(db, st->be, v, n) != 0) {
		log_error("coord_db: bind: %s: %s", db->ops->errmsg(db), sql);
		return NULL;
	}
	return st;
}

struct coord_st *
coord_db_q(struct coord_db *db, const char *sql, const char *fmt, ...)
{
	struct coord_st *st;
	va_list ap;

	va_start(ap, fmt);
	st = db_bound(db, sql, fmt, ap);
	va_end(ap);
	return st;
}

struct coord_st *
coord_db_q_once(struct coord_db *db, const char *sql, const char *fmt, ...)
{
	struct coord_val v[COORD_DB_MAXARGS];
	struct coord_st *st;
	va_list ap;
	int n;

	st = coord_mem_alloc(sizeof *st);
	st->db = db;
	st->sql = sql;
	if ((st->be = db->ops->prepare(db, sql)) == NULL) {
		log_error("coord_db: prepare: %s: %s", db->ops->errmsg(db), sql);
		free(st);
		return NULL;
	}
	va_start(ap, fmt);
	n = db_vals(v, fmt, ap);
	va_end(ap);
	if (db->ops->bind(db, st->be, v, n) != 0) {
		log_error("coord_db: bind: %s: %s", db->ops->errmsg(db), sql);
		coord_db_free(st);
		return NULL;
	}
	return st;
}

void
coord_db_free(struct coord_st *st)
{
	if (st == NULL)
		return;
	st->db->ops->finalize(st->db, st->be);
	free(st);
}

int
coord_db_step(struct coord_db *db, struct coord_st *st)
{
	int rc;

	if (st == NULL)
		return -1;
	if ((rc = db->ops->step(db, st->be)) < 0)
		log_error("coord_db: step: %s: %s", db->ops->errmsg(db), st->sql);
	return rc;
}

void
coord_db_done(struct coord_st *st)
{
	if (st != NULL)
		st->db->ops->reset(st->be);
}

/* Runs sql bound from fmt and ap: with out, the first row's first column
 * into *out (1 a row, 0 none); without, to completion (the number of rows
 * changed). -1 on error. */
static int
db_vrun(struct coord_db *db, int64_t *out, const char *sql, const char *fmt, va_list ap)
{
	struct coord_st *st;
	int rc;

	if ((st = db_bound(db, sql, fmt, ap)) == NULL)
		return -1;
	if (out != NULL) {
		if ((rc = coord_db_step(db, st)) == 1)
			*out = coord_db_i64(st, 0);
	} else {
		while ((rc = coord_db_step(db, st)) == 1)
			;
		if (rc == 0)
			rc = db->ops->changes(db, st->be);
	}
	db->ops->reset(st->be);
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

int
coord_db_script(struct coord_db *db, const char *sql)
{
	coord_db_reset_all(db);
	return db->ops->script(db, sql);
}

void
coord_db_reset_all(struct coord_db *db)
{
	int i;

	for (i = 0; i < db->ncache; i++)
		db->ops->reset(db->cache[i].be);
}

int
coord_db_begin(struct coord_db *db, int write)
{
	db->claims = db->serial = 0;
	if (coord_db_exec(db, write ? db->ops->begin_write : db->ops->begin_read, "") >= 0)
		return 0;
	/* PostgreSQL's begin_write is BEGIN and the decision lock: when the
	 * lock is not had (lock_timeout), the transaction is open, and
	 * aborted; nothing may be left open for the next group. */
	coord_db_rollback(db);
	return -1;
}

int
coord_db_begin_claims(struct coord_db *db)
{
	if (db->ops->begin_claims == NULL || db->host.others == 0)
		return coord_db_begin(db, 1);
	if (coord_db_exec(db, db->ops->begin_claims, "") < 0) {
		coord_db_rollback(db); /* as coord_db_begin's */
		return -1;
	}
	db->claims = 1;
	db->serial = 0;
	return 0;
}

int
coord_db_claims(const struct coord_db *db)
{
	return db->claims;
}

int
coord_db_serial(struct coord_db *db)
{
	if (!db->claims || db->serial)
		return 0;
	if (coord_db_exec(db, db->ops->serial, "") < 0)
		return -1;
	db->serial = 1;
	return 0;
}

int
coord_db_commit(struct coord_db *db)
{
	static const char q_commit[] = "COMMIT";

	coord_db_reset_all(db);
	db->claims = db->serial = 0;
	return coord_db_exec(db, q_commit, "") < 0 ? -1 : 0;
}

void
coord_db_rollback(struct coord_db *db)
{
	coord_db_reset_all(db);
	db->claims = db->serial = 0;
	if (db->ops->in_txn(db) && db->ops->script(db, "ROLLBACK") != 0)
		log_error("coord_db: rollback: %s", db->ops->errmsg(db));
}

int
coord_db_in_txn(struct coord_db *db)
{
	return db->ops->in_txn(db);
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
		log_error("coord_db: rollback to a savepoint: %s", db->ops->errmsg(db));
}

void
coord_db_added(struct coord_db *db, int64_t n)
{
	db->added += n;
}

void
coord_db_tend_stats(struct coord_db *db)
{
	int64_t since = db->added - db->analyzed;

	if (db->ops->analyze == NULL || since < 500 || since < db->analyzed / 4 ||
	    db->ops->in_txn(db))
		return;
	db->analyzed = db->added;
	if (db->ops->script(db, db->ops->analyze) != 0)
		log_warn("coord_db: making the planner's statistics: %s", db->ops->errmsg(db));
}

int
coord_db_housekeeping_due(struct coord_db *db, int64_t now, int64_t every)
{
	if (now - db->housekept_ms < every)
		return 0;
	db->housekept_ms = now;
	return 1;
}

int
coord_db_isnull(struct coord_st *st, int i)
{
	return st->db->ops->isnull(st->be, i);
}

int64_t
coord_db_i64(struct coord_st *st, int i)
{
	return st->db->ops->i64(st->be, i);
}

char *
coord_db_col(struct coord_st *st, int i)
{
	const char *t = st->db->ops->text(st->be, i);

	return t != NULL ? coord_mem_strdup(t) : NULL;
}

const char *
coord_db_coltext(struct coord_st *st, int i)
{
	const char *t = st->db->ops->text(st->be, i);

	return t ? t : "";
}

int
coord_db_colint(struct coord_st *st, int i, int64_t *v)
{
	if (coord_db_isnull(st, i))
		return 0;
	*v = coord_db_i64(st, i);
	return 1;
}

const void *
coord_db_blob(struct coord_st *st, int i, size_t *len)
{
	return st->db->ops->blob(st->be, i, len);
}

int
coord_db_wake_fd(struct coord_db *db)
{
	return db->ops->wake_fd != NULL ? db->ops->wake_fd(db) : -1;
}

int
coord_db_woken(struct coord_db *db)
{
	return db->ops->woken != NULL ? db->ops->woken(db) : 0;
}

void
coord_db_wake_others(struct coord_db *db)
{
	if (db->ops->wake_others != NULL)
		db->ops->wake_others(db);
}

struct coord_host *
coord_db_host(struct coord_db *db)
{
	return &db->host;
}

const char *
coord_db_where(const struct coord_db *db)
{
	return db->where;
}

const char *
coord_db_errmsg(struct coord_db *db)
{
	return db->ops->errmsg(db);
}

enum coord_store_kind
coord_db_kind(const struct coord_db *db)
{
	return db->ops->kind;
}

/*
 * The key worker tokens are derived from (ids_token_for), in
 * coordinator.key beside the database (or in the home): 32 random bytes, 0600, made once.
 * Not in the database, so a copy of berth.db alone still does not give the
 * right to act as a worker; the same across restarts, so a claim's stored
 * reply, which holds no token, can be answered again with it.
 */
static int
db_key(struct coord_db *db, const char *kp, char *err, size_t errlen)
{
	ssize_t n;
	int fd, made = 0;

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
coord_db_open(struct coord_db **out, const char *store, const struct coord_db_opts *o, char *err,
	      size_t errlen)
{
	struct coord_db *db;
	char kp[PATH_MAX];
	const char *slash;

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
	db->ops = coord_db_is_url(store) ? &coord_store_pg : &coord_store_sqlite;
	if (db->o.key_dir != NULL)
		snprintf(kp, sizeof kp, "%s/coordinator.key", db->o.key_dir);
	else if (db->ops->kind == COORD_STORE_POSTGRESQL) {
		snprintf(err, errlen, "a PostgreSQL store needs a directory for coordinator.key");
		goto fail;
	} else if ((slash = strrchr(store, '/')) == NULL)
		snprintf(kp, sizeof kp, "coordinator.key");
	else
		snprintf(kp, sizeof kp, "%.*s/coordinator.key", (int)(slash - store), store);
	db->o.key_dir = NULL; /* the caller's string is not kept */
	db->ops->describe(store, db->where, sizeof db->where);
	if (db->ops->open(db, store, err, errlen) != 0 || db_key(db, kp, err, errlen) != 0)
		goto fail;
	db->o.host_id = NULL; /* nor this one (the backend copied it) */
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
		db->ops->finalize(db, db->cache[i].be);
	if (db->be != NULL)
		db->ops->close(db);
	explicit_bzero(db->key, sizeof db->key);
	free(db);
}

const struct coord_db_opts *
coord_db_opts(const struct coord_db *db)
{
	return &db->o;
}
