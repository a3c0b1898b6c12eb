/* The PostgreSQL backend of the store (coord_db_int.h, DESIGN §13): one
 * libpq connection. A statement is written once, in the SQL both engines
 * speak, with '?' placeholders; here they become $1, $2, ... and the
 * statement is prepared on the server at its first use. Parameters go as
 * text, an integer typed int8 and a blob as binary bytea; rows come back as
 * text. A lost connection is made again at the next transaction, and every
 * statement prepared again. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "clock.h"
#include "coord_db_int.h"
#include "coord_mem.h"
#include "coord_schema.h"
#include "log.h"

#define PG_INT8OID  20
#define PG_BYTEAOID 17
#define PG_TEXTOID  25

struct pg {
	PGconn *c;
	char err[512];
	unsigned gen;                  /* bumped when the connection is made again */
	unsigned next;                 /* statement names */
	int reader;                    /* coord_db_opts.reader: no ownership lock */
	char host[COORD_HOST_MAX + 1]; /* the ownership lock's */
	int64_t revived_mono;          /* the last attempt to connect again */
	char *url;                     /* to connect again */
};

struct pg_st {
	char name[16];
	char *sql; /* with $n placeholders */
	int nparams;
	unsigned char used[COORD_DB_MAXARGS]; /* the SQL names $i + 1 */
	int utility;  /* BEGIN, COMMIT, ...: sent on their own, never prepared */
	unsigned gen; /* the connection it was prepared on; 0 not yet */
	const char *vals[COORD_DB_MAXARGS];
	int lens[COORD_DB_MAXARGS], fmts[COORD_DB_MAXARGS];
	unsigned int types[COORD_DB_MAXARGS];
	char *arena[COORD_DB_MAXARGS]; /* this use's copies of the values */
	PGresult *res;
	int row, nrows, changes;
	unsigned char *blob; /* the last blob column read, unescaped */
};

#define PG(db) ((struct pg *)(db)->be)

static void
pg_seterr(struct pg *p, const char *what, const char *msg)
{
	size_t n;

	snprintf(p->err, sizeof p->err, "%s%s%s", what, what[0] ? ": " : "", msg ? msg : "");
	n = strlen(p->err);
	while (n > 0 && (p->err[n - 1] == '\n' || p->err[n - 1] == ' '))
		p->err[--n] = '\0';
}

static void
pg_notice(void *arg, const char *msg)
{
	(void)arg;
	log_info("coord_db: postgresql: %s", msg);
}

/* A PostgreSQL URL, with any password in it hidden, for messages. */
static void
pg_where(const char *url, char *out, size_t n)
{
	const char *at = strchr(url, '@'), *colon, *start = strstr(url, "://");

	start = start != NULL ? start + 3 : url;
	colon = strchr(start, ':');
	if (at != NULL && colon != NULL && colon < at)
		snprintf(out, n, "%.*s:***%s", (int)(colon - url), url, at);
	else
		snprintf(out, n, "%s", url);
}

/*
 * The URL as libpq reads it, with berth's defaults under it for what the
 * URL does not say: a connection attempt gives up after 10 s, and over TCP
 * a server that stopped answering is noticed by keepalives within ~15 s
 * and a send unacknowledged for 15 s fails, instead of the coordinator's
 * loop waiting on a dead peer for the system's two hours. The URL's own
 * values win (expand_dbname: a later keyword overrides an earlier one).
 */
/*
 * What every connection of a coordinator holds: the notice hook, quiet
 * notices (the schema's IF NOT EXISTS says "skipping" at every start), the
 * wakes of the other hosts' coordinators (coord_db_wake_fd), and bounds on
 * what a host cut off in the middle of a transaction costs the others: it
 * holds the store's decision lock (begin_write), and the server would keep
 * its session, and the lock, until TCP gave up on it (hours). A
 * coordinator never idles inside a transaction (a group is decided from
 * memory and committed in one turn; a group of claims may wait for the
 * serial lock, which is waiting, not idling), so a session idle in one for
 * 2 s is one whose host is gone: the server ends it, and the lock with it;
 * its keepalives notice a dead peer in a few seconds too. A decision waits
 * for a lock at most 10 s, then fails as a storage error, and is resent.
 */
static void
pg_session(struct pg *p)
{
	static const char *const set[] = {
		"SET client_min_messages = warning",
		"SET idle_in_transaction_session_timeout = 2000",
		"SET lock_timeout = 10000",
		"SET tcp_keepalives_idle = 2",
		"SET tcp_keepalives_interval = 1",
		"SET tcp_keepalives_count = 2",
		"LISTEN berth_wake",
	};
	size_t i;

	PQsetNoticeProcessor(p->c, pg_notice, NULL);
	for (i = 0; i < sizeof set / sizeof set[0]; i++)
		PQclear(PQexec(p->c, set[i]));
	p->gen++;
}

static int
pg_connect(struct pg *p, const char *url, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"connect_timeout",     "keepalives",       "keepalives_idle",
		"keepalives_interval", "keepalives_count", "tcp_user_timeout",
		"application_name",    "dbname",           NULL
	};
	const char *vals[] = { "10", "1", "5", "2", "5", "15000", "berth-coordinator", url, NULL };
	char where[256];

	pg_where(url, where, sizeof where);
	p->c = PQconnectdbParams(keys, vals, 1);
	if (p->c == NULL || PQstatus(p->c) != CONNECTION_OK) {
		snprintf(err, errlen, "%s: cannot connect: %s", where,
			 p->c ? PQerrorMessage(p->c) : "out of memory");
		return -1;
	}
	pg_session(p);
	return 0;
}

/*
 * One coordinator per host and store (DESIGN §13): every host's group may
 * share a store, but a host is one group, so a second coordinator naming
 * the same host is refused. A session advisory lock, keyed by the store
 * (a database, and the schema its search_path names first: the unit tests
 * run at once, each in a schema of its own) and the host id; it goes with
 * the connection, so a coordinator that dies or is cut off frees it, and
 * one that comes back takes it again or stops deciding.
 */
static int
pg_own(PGconn *c, const char *host)
{
	static const char sql[] = "SELECT pg_try_advisory_lock(hashtext(current_schema()),"
				  " hashtext($1))";
	const char *v[1] = { host != NULL ? host : "" };
	PGresult *r = PQexecParams(c, sql, 1, NULL, v, NULL, NULL, 0);
	int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
		 strcmp(PQgetvalue(r, 0, 0), "t") == 0;

	PQclear(r);
	return ok ? 0 : -1;
}

/*
 * pg_own at opening. A coordinator that closed its store has freed the lock
 * (pg_close), but one that died has not: the server frees it when it sees
 * the session end, a moment later, so a coordinator started again at once
 * by its launcher would find it still held. Asked again for up to 2 s
 * before it is another coordinator's.
 */
static int
pg_own_open(PGconn *c, const char *host)
{
	/* Counted, not timed: the tests fake berth's clock. */
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int tries = 40;

	while (pg_own(c, host) != 0) {
		if (PQstatus(c) != CONNECTION_OK || --tries == 0)
			return -1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int
pg_open(struct coord_db *db, const char *url, char *err, size_t errlen)
{
	struct pg *p = coord_mem_alloc(sizeof *p);
	char where[256];

	db->be = p;
	p->url = coord_mem_strdup(url);
	if (pg_connect(p, url, err, errlen) != 0)
		return -1;
	pg_where(url, where, sizeof where);
	p->reader = db->o.reader;
	snprintf(p->host, sizeof p->host, "%s", db->o.host_id != NULL ? db->o.host_id : "");
	if (!p->reader && pg_own_open(p->c, p->host) != 0) {
		snprintf(err, errlen,
			 "%s: another coordinator of host '%s' is using this store (one "
			 "coordinator per host; give each host's group its own --host-id)",
			 where, p->host);
		return -1;
	}
	if (coord_schema_pg_migrate((struct pg_conn *)p->c, where, err, errlen) != 0)
		return -1;
	return 0;
}

static void
pg_close(struct coord_db *db)
{
	struct pg *p = PG(db);

	/* The ownership lock is freed here, not when the server sees the
	 * session end after PQfinish: the next coordinator of this host,
	 * opened at once, finds it free. */
	if (!p->reader && p->c != NULL && PQstatus(p->c) == CONNECTION_OK)
		PQclear(PQexec(p->c, "SELECT pg_advisory_unlock_all()"));
	PQfinish(p->c);
	free(p->url);
	free(p);
	db->be = NULL;
}

/* sql with '?' outside quotes as $1, $2, ... and sqlite's '?N' as $N; the
 * number of parameters in *n. */
static char *
pg_translate(const char *sql, int *n, unsigned char *used)
{
	size_t len = strlen(sql);
	char *out = coord_mem_alloc(len * 4 + 1), *o = out, q = 0;
	const char *s;

	*n = 0;
	for (s = sql; *s; s++) {
		if (q != 0) {
			if (*s == q)
				q = 0;
			*o++ = *s;
		} else if (*s == '\'' || *s == '"') {
			q = *s;
			*o++ = *s;
		} else if (strncmp(s, " CROSS JOIN ", 12) == 0) {
			/* sqlite's way to fix the join order, with ON */
			o += sprintf(o, " JOIN ");
			s += 11;
		} else if (strncmp(s, " INDEXED BY ", 12) == 0) {
			/* sqlite's index hint: PostgreSQL plans alone */
			s += 12;
			while (isalnum((unsigned char)s[1]) || s[1] == '_')
				s++;
		} else if (*s == '?' && isdigit((unsigned char)s[1])) {
			int k = (int)strtol(s + 1, NULL, 10);

			o += sprintf(o, "$%d", k);
			if (k > *n)
				*n = k;
			if (k >= 1 && k <= COORD_DB_MAXARGS)
				used[k - 1] = 1;
			while (isdigit((unsigned char)s[1]))
				s++;
		} else if (*s == '?') {
			o += sprintf(o, "$%d", ++*n);
			if (*n <= COORD_DB_MAXARGS)
				used[*n - 1] = 1;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static int
pg_is_utility(const char *sql)
{
	static const char *const kw[] = { "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE" };
	size_t i;

	for (i = 0; i < sizeof kw / sizeof kw[0]; i++)
		if (strncmp(sql, kw[i], strlen(kw[i])) == 0)
			return 1;
	return 0;
}

static void *
pg_prepare(struct coord_db *db, const char *sql)
{
	struct pg *p = PG(db);
	struct pg_st *st = coord_mem_alloc(sizeof *st);

	snprintf(st->name, sizeof st->name, "b%u", ++p->next);
	/* sqlite's BEGIN IMMEDIATE is begin_write's (below). */
	if (strcmp(sql, "BEGIN IMMEDIATE") == 0)
		sql = coord_store_pg.begin_write;
	st->sql = pg_translate(sql, &st->nparams, st->used);
	st->utility = pg_is_utility(st->sql) && st->nparams == 0;
	return st;
}

static void
pg_reset(void *vst)
{
	struct pg_st *st = vst;
	int i;

	if (st->res != NULL)
		PQclear(st->res);
	st->res = NULL;
	st->row = st->nrows = 0;
	for (i = 0; i < COORD_DB_MAXARGS; i++) {
		free(st->arena[i]);
		st->arena[i] = NULL;
	}
	if (st->blob != NULL)
		PQfreemem(st->blob);
	st->blob = NULL;
}

static void
pg_finalize(struct coord_db *db, void *vst)
{
	struct pg_st *st = vst;

	(void)db;
	pg_reset(st);
	free(st->sql);
	free(st);
}

static int
pg_bind(struct coord_db *db, void *vst, const struct coord_val *v, int n)
{
	struct pg_st *st = vst;
	char num[24];
	int i;

	pg_reset(st);
	if (n != st->nparams) {
		pg_seterr(PG(db), "bind", "wrong number of parameters");
		return -1;
	}
	for (i = 0; i < n; i++) {
		st->fmts[i] = 0;
		st->lens[i] = 0;
		switch (v[i].kind) {
		case 'i':
			snprintf(num, sizeof num, "%lld", (long long)v[i].i);
			st->arena[i] = coord_mem_strdup(num);
			st->vals[i] = st->arena[i];
			st->types[i] = PG_INT8OID;
			break;
		case 't':
			st->arena[i] = coord_mem_strdup(v[i].t);
			st->vals[i] = st->arena[i];
			st->types[i] = PG_TEXTOID;
			break;
		case 'b':
			st->arena[i] = coord_mem_alloc(v[i].blen + 1);
			memcpy(st->arena[i], v[i].b, v[i].blen);
			st->vals[i] = st->arena[i];
			st->lens[i] = (int)v[i].blen;
			st->fmts[i] = 1;
			st->types[i] = PG_BYTEAOID;
			break;
		default:
			st->vals[i] = NULL;
			if (st->gen == 0)
				st->types[i] = 0;
			break;
		}
	}
	return 0;
}

/* Makes the connection again if it was lost, outside a transaction only
 * (one that was open is gone with it, and its caller hears so). */
static void
pg_revive(struct coord_db *db)
{
	struct pg *p = PG(db);
	int64_t now = clock_mono_ms();
	char err[512];

	if (p->c != NULL && PQstatus(p->c) == CONNECTION_OK)
		return;
	/* At most every 5 s: an attempt may block for libpq's
	 * connect_timeout, and every request in between fails at once. */
	if (now - p->revived_mono < 5000)
		return;
	p->revived_mono = now;
	PQfinish(p->c);
	p->c = NULL;
	if (pg_connect(p, p->url, err, sizeof err) != 0) {
		PQfinish(p->c);
		p->c = NULL;
		return;
	}
	if (!p->reader && pg_own(p->c, p->host) != 0) {
		/* This host's old session, cut off, may still hold it until the
		 * server ends that session (pg_session's bounds): not deciding
		 * beside it; tried again at the next attempt. */
		log_warn("coord_db: postgresql: this host's lock is still held (its old session); "
			 "not deciding until it is freed");
		PQfinish(p->c);
		p->c = NULL;
		return;
	}
	log_warn("coord_db: postgresql: connection made again");
}

static int
pg_result(struct pg *p, struct pg_st *st)
{
	ExecStatusType s = PQresultStatus(st->res);
	const char *ct;

	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK) {
		st->nrows = s == PGRES_TUPLES_OK ? PQntuples(st->res) : 0;
		ct = PQcmdTuples(st->res);
		st->changes = ct != NULL && ct[0] ? atoi(ct) : 0;
		st->row = 0;
		return 0;
	}
	pg_seterr(p, "", PQresultErrorMessage(st->res));
	PQclear(st->res);
	st->res = NULL;
	return -1;
}

/* A statement prepared on the server. A parameter bound only NULL so far
 * has no type yet: one the SQL does not name is text; one it names gets
 * the type the SQL implies, or text where the SQL does not say, found by
 * trying (inside a savepoint when a transaction is open, which a failed
 * prepare would otherwise abort). */
static int
pg_prepare_now(struct pg *p, struct pg_st *st)
{
	PGresult *r;
	int i, untyped = 0, sp;

	for (i = 0; i < st->nparams; i++) {
		if (st->types[i] == 0 && !st->used[i])
			st->types[i] = PG_TEXTOID;
		untyped |= st->types[i] == 0;
	}
	sp = untyped && PQtransactionStatus(p->c) == PQTRANS_INTRANS;
	if (sp)
		PQclear(PQexec(p->c, "SAVEPOINT pgprep"));
	r = PQprepare(p->c, st->name, st->sql, st->nparams, st->types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && untyped) {
		PQclear(r);
		if (sp)
			PQclear(PQexec(p->c, "ROLLBACK TO SAVEPOINT pgprep"));
		for (i = 0; i < st->nparams; i++)
			if (st->types[i] == 0)
				st->types[i] = PG_TEXTOID;
		r = PQprepare(p->c, st->name, st->sql, st->nparams, st->types);
	}
	if (sp)
		PQclear(PQexec(p->c, "RELEASE SAVEPOINT pgprep"));
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		pg_seterr(p, "prepare", PQresultErrorMessage(r));
		PQclear(r);
		return -1;
	}
	PQclear(r);
	st->gen = p->gen;
	return 0;
}

static int
pg_step(struct coord_db *db, void *vst)
{
	struct pg *p = PG(db);
	struct pg_st *st = vst;

	if (st->res == NULL) {
		if (st->utility && strncmp(st->sql, "BEGIN", 5) == 0)
			pg_revive(db);
		if (p->c == NULL) {
			pg_seterr(p, "", "not connected to the database");
			return -1;
		}
		if (st->utility) {
			st->res = PQexec(p->c, st->sql);
		} else {
			if (st->gen != p->gen && pg_prepare_now(p, st) != 0)
				return -1;
			st->res = PQexecPrepared(p->c, st->name, st->nparams, st->vals, st->lens,
						 st->fmts, 0);
		}
		if (pg_result(p, st) != 0)
			return -1;
		st->row = -1;
	}
	if (st->row + 1 < st->nrows) {
		st->row++;
		return 1;
	}
	st->row = st->nrows;
	return 0;
}

static int
pg_changes(struct coord_db *db, void *vst)
{
	(void)db;
	return ((struct pg_st *)vst)->changes;
}

static int
pg_isnull(void *vst, int i)
{
	struct pg_st *st = vst;

	if (st->res == NULL || st->row < 0 || st->row >= st->nrows || i >= PQnfields(st->res))
		return 1;
	return PQgetisnull(st->res, st->row, i);
}

static const char *
pg_text(void *vst, int i)
{
	struct pg_st *st = vst;

	return pg_isnull(st, i) ? NULL : PQgetvalue(st->res, st->row, i);
}

static int64_t
pg_i64(void *vst, int i)
{
	const char *t = pg_text(vst, i);

	if (t == NULL)
		return 0;
	if (t[0] == 't' && t[1] == '\0')
		return 1; /* a boolean, as sqlite would give it */
	if (t[0] == 'f' && t[1] == '\0')
		return 0;
	return strtoll(t, NULL, 10);
}

static const void *
pg_blob(void *vst, int i, size_t *len)
{
	struct pg_st *st = vst;
	const char *t = pg_text(st, i);

	*len = 0;
	if (t == NULL)
		return NULL;
	if (st->blob != NULL)
		PQfreemem(st->blob);
	st->blob = PQunescapeBytea((const unsigned char *)t, len);
	return st->blob;
}

static int
pg_script(struct coord_db *db, const char *sql)
{
	struct pg *p = PG(db);
	PGresult *r = p->c != NULL ? PQexec(p->c, sql) : NULL;
	ExecStatusType s = PQresultStatus(r);
	int ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;

	if (!ok)
		pg_seterr(p, "",
			  r != NULL ? PQresultErrorMessage(r) : "not connected to the database");
	PQclear(r);
	return ok ? 0 : -1;
}

static int
pg_in_txn(struct coord_db *db)
{
	PGTransactionStatusType t = PQtransactionStatus(PG(db)->c);

	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

static const char *
pg_errmsg(struct coord_db *db)
{
	struct pg *p = PG(db);

	if (p == NULL)
		return "no database";
	if (p->err[0] == '\0' && p->c != NULL)
		pg_seterr(p, "", PQerrorMessage(p->c));
	return p->err;
}

static void
pg_describe(const char *url, char *where, size_t n)
{
	char w[480];

	pg_where(url, w, sizeof w);
	snprintf(where, n, "postgresql %s", w);
}

static int
pg_wake_fd(struct coord_db *db)
{
	return PG(db)->c != NULL ? PQsocket(PG(db)->c) : -1;
}

/* 1 when another coordinator's wake arrived (ours come back too: not
 * counted). */
static int
pg_woken(struct coord_db *db)
{
	struct pg *p = PG(db);
	PGnotify *n;
	int any = 0;

	if (p->c == NULL || PQconsumeInput(p->c) == 0)
		return 0;
	while ((n = PQnotifies(p->c)) != NULL) {
		any |= n->be_pid != PQbackendPID(p->c);
		PQfreemem(n);
	}
	return any;
}

static void
pg_wake_others(struct coord_db *db)
{
	if (PG(db)->c != NULL)
		PQclear(PQexec(PG(db)->c, "NOTIFY berth_wake"));
}

const struct coord_store_ops coord_store_pg = {
	.kind = COORD_STORE_POSTGRESQL,
	.describe = pg_describe,
	.open = pg_open,
	.close = pg_close,
	.prepare = pg_prepare,
	.finalize = pg_finalize,
	.bind = pg_bind,
	.step = pg_step,
	.reset = pg_reset,
	.changes = pg_changes,
	.isnull = pg_isnull,
	.i64 = pg_i64,
	.text = pg_text,
	.blob = pg_blob,
	.script = pg_script,
	.in_txn = pg_in_txn,
	.errmsg = pg_errmsg,
	.wake_fd = pg_wake_fd,
	.woken = pg_woken,
	.wake_others = pg_wake_others,
	.begin_read = "BEGIN",
	/* Decisions are taken one at a time across every host on the store,
	 * as sqlite's BEGIN IMMEDIATE takes them on one: a guard judged by a
	 * read stays true until COMMIT, and the events' ids (the trace's
	 * global order) are the commit order. The lock is the transaction's
	 * and the store's (its schema). */
	.begin_write = "BEGIN; SELECT pg_advisory_xact_lock(hashtext(current_schema()), 1)",
	/* A group of claims for the next ticket takes the decision lock
	 * shared: the claims of every host pick their tickets side by side,
	 * each with FOR UPDATE SKIP LOCKED (coord_claim.c), while every other
	 * decision still waits for them all, and they for it. What claims
	 * judge in common (a seat, a tree) and the ids their events and
	 * trace take are theirs one at a time, under the serial lock, from
	 * the first seat judged or row written to COMMIT. */
	.begin_claims = "BEGIN; SELECT pg_advisory_xact_lock_shared(hashtext(current_schema()), 1)",
	.serial = "SELECT pg_advisory_xact_lock(hashtext(current_schema()), 2)",
	/* A claim's walk is a plan of PostgreSQL's choosing, made from the
	 * statistics autovacuum refreshes only a minute or so after a queue
	 * grew: until then the planner takes a thousand ready tickets for
	 * one and sorts them all at every claim (18 ms a claim at 1 200
	 * queued, 0.1 ms with statistics; bench/run --store). */
	.analyze = "ANALYZE tickets, activations",
};
