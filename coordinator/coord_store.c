/* The coordinator's durable state (DESIGN §3-5): opening and migrating the
 * database, and the one transaction every request runs in. The verbs
 * themselves live in coord_runs.c, coord_tickets.c and coord_seats.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_int.h"
#include "coord_store.h"
#include "failpoint.h"
#include "log.h"
#include "rpc.h"

/* Version 1. Every table's invariants are enforced by the engine where it
 * can: one lease per ticket and per run, one run per (ticket, attempt), and
 * "nonterminal <=> settled_ms IS NULL" as a CHECK. */
static const char schema_v1[] =
	"CREATE TABLE tickets ("
	" n INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL DEFAULT '',"
	" argv TEXT NOT NULL,"
	" workdir TEXT NOT NULL DEFAULT '',"
	" env TEXT NOT NULL DEFAULT '[]',"
	" seat_key TEXT NOT NULL DEFAULT '',"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" max_attempts INTEGER NOT NULL DEFAULT 1,"
	" priority INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL CHECK (state IN"
	"  ('ready','held','claimed','succeeded','failed','cancelled')),"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" bad_runs INTEGER NOT NULL DEFAULT 0,"
	" every_ms INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" updated_ms INTEGER NOT NULL);"
	"CREATE INDEX tickets_ready ON tickets(priority DESC, n) WHERE state = 'ready';"
	"CREATE INDEX tickets_state ON tickets(state, n);"
	"CREATE TABLE ticket_deps ("
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" dep INTEGER NOT NULL REFERENCES tickets(n),"
	" PRIMARY KEY (ticket, dep)) WITHOUT ROWID;"
	"CREATE TABLE activations ("
	" id INTEGER PRIMARY KEY,"
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" kind TEXT NOT NULL CHECK (kind IN ('now','at','every')),"
	" due_ms INTEGER NOT NULL,"
	" every_ms INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL CHECK (state IN ('queued','completed','cancelled')),"
	" run_id TEXT,"
	" created_ms INTEGER NOT NULL,"
	" done_ms INTEGER);"
	"CREATE INDEX activations_queued ON activations(ticket, due_ms) WHERE state = 'queued';"
	"CREATE INDEX activations_due ON activations(due_ms) WHERE state = 'queued';"
	"CREATE INDEX activations_run ON activations(run_id) WHERE run_id IS NOT NULL;"
	"CREATE TABLE runs ("
	" id TEXT PRIMARY KEY,"
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" attempt INTEGER NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('claimed','running','aftercare','succeeded',"
	"  'failed','timed_out','cancelled','orphaned','aborted')),"
	" owner TEXT NOT NULL DEFAULT '',"
	" token_hash TEXT NOT NULL,"
	" boot_id TEXT, pid INTEGER, start_time INTEGER, pgid INTEGER,"
	" has_record INTEGER NOT NULL DEFAULT 0,"
	" exit_code INTEGER, signal INTEGER,"
	" reason TEXT,"
	" claimed_ms INTEGER NOT NULL, started_ms INTEGER, ended_ms INTEGER, settled_ms INTEGER,"
	" progress_label TEXT, progress_index INTEGER, progress_total INTEGER, progress_ms INTEGER,"
	" stop_reason TEXT, stop_ms INTEGER,"
	" output_bytes INTEGER, capture_complete INTEGER,"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" heartbeat_ms INTEGER,"
	" UNIQUE (ticket, attempt),"
	" CHECK ((settled_ms IS NULL) = (state IN ('claimed','running','aftercare'))));"
	"CREATE INDEX runs_unsettled ON runs(owner) WHERE settled_ms IS NULL;"
	"CREATE INDEX runs_settled ON runs(settled_ms) WHERE settled_ms IS NOT NULL;"
	"CREATE TABLE run_notes ("
	" id INTEGER PRIMARY KEY,"
	" run_id TEXT NOT NULL REFERENCES runs(id),"
	" ts_ms INTEGER NOT NULL,"
	" text TEXT NOT NULL);"
	"CREATE INDEX run_notes_run ON run_notes(run_id, id);"
	"CREATE TABLE leases ("
	" ticket_id INTEGER PRIMARY KEY REFERENCES tickets(n),"
	" run_id TEXT NOT NULL UNIQUE REFERENCES runs(id),"
	" owner TEXT NOT NULL,"
	" acquired_ms INTEGER NOT NULL,"
	" renewed_ms INTEGER NOT NULL,"
	" expires_ms INTEGER NOT NULL);"
	"CREATE TABLE seats ("
	" item TEXT PRIMARY KEY,"
	" seat_key TEXT NOT NULL,"
	" workdir TEXT NOT NULL DEFAULT '',"
	" owner TEXT NOT NULL,"
	" acquired_ms INTEGER NOT NULL,"
	" heartbeat_ms INTEGER NOT NULL,"
	" ttl_ms INTEGER NOT NULL DEFAULT 0,"
	" boot_id TEXT, pid INTEGER NOT NULL DEFAULT 0, start_time INTEGER, pgid INTEGER,"
	" stop_reason TEXT, stop_ms INTEGER,"
	" activity_index INTEGER, activity_total INTEGER, activity_label TEXT, activity_ms INTEGER,"
	" run_id TEXT UNIQUE REFERENCES runs(id));"
	"CREATE INDEX seats_key ON seats(seat_key);"
	"CREATE INDEX seats_workdir ON seats(workdir) WHERE workdir != '';"
	"CREATE TABLE requests ("
	" instance TEXT NOT NULL,"
	" req_id INTEGER NOT NULL,"
	" ts_ms INTEGER NOT NULL,"
	" verb TEXT NOT NULL,"
	" decision TEXT NOT NULL,"
	" reason TEXT, ticket TEXT, run TEXT,"
	" reply BLOB NOT NULL,"
	" PRIMARY KEY (instance, req_id)) WITHOUT ROWID;"
	"CREATE INDEX requests_ts ON requests(ts_ms);"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY,"
	" ts_ms INTEGER NOT NULL,"
	" verb TEXT NOT NULL,"
	" ticket TEXT, run TEXT,"
	" decision TEXT NOT NULL,"
	" reason TEXT, actor TEXT, instance TEXT);"
	"CREATE TABLE actors ("
	" instance TEXT PRIMARY KEY,"
	" actor TEXT NOT NULL DEFAULT '',"
	" boot_id TEXT, pid INTEGER, start_time INTEGER, pgid INTEGER,"
	" slots INTEGER NOT NULL DEFAULT 0,"
	" seen_ms INTEGER NOT NULL);";

/* Version 2: a ticket whose workdir is only the caller's cwd (the CLI
 * says so with Add.workdir_default) runs there without taking the working
 * tree as a seat; only a named --workdir does. */
static const char schema_v2[] =
	"ALTER TABLE tickets ADD COLUMN tree_seat INTEGER NOT NULL DEFAULT 1;";

/* Version 3: the trace line of the last committed decision, written in the
 * decision's own transaction, so the line survives a crash between COMMIT
 * and its write to trace/trace.jsonl (coord_store_keep_trace). */
static const char schema_v3[] =
	"CREATE TABLE trace_tail ("
	" id INTEGER PRIMARY KEY CHECK (id = 1),"
	" seq INTEGER NOT NULL,"
	" line TEXT NOT NULL);";

/* Version 4: berth add --isolate (Add.isolate), kept with the ticket and
 * handed to the supervisor with every claim (ClaimGranted.isolate). */
static const char schema_v4[] =
	"ALTER TABLE tickets ADD COLUMN isolate INTEGER NOT NULL DEFAULT 0"
	" CHECK (isolate IN (0, 1));";

/* Forward migrations: migrations[v] takes a database from version v to
 * v + 1. A new version appends here and bumps COORD_SCHEMA_VERSION. */
static const char *const migrations[COORD_SCHEMA_VERSION] = { schema_v1, schema_v2, schema_v3,
	schema_v4 };

/* ------------------------------------------------------------ plumbing */

void *
coord_store_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (p == NULL) {
		log_error("coord_store: out of memory (%zu bytes)", n);
		abort();
	}
	return p;
}

char *
coord_store_strdup(const char *str)
{
	size_t n;
	char *p;

	if (str == NULL)
		return NULL;
	n = strlen(str);
	p = coord_store_alloc(n + 1);
	memcpy(p, str, n);
	return p;
}

char *
coord_store_col(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	return coord_store_strdup((const char *)sqlite3_column_text(st, i));
}

const char *
coord_store_coltext(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? t : "";
}

static int
store_bindv(sqlite3 *db, sqlite3_stmt *st, const char *fmt, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 0; fmt && fmt[i] && rc == SQLITE_OK; i++) {
		switch (fmt[i]) {
		case 'i':
			rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
			break;
		case 't': {
			const char *t = va_arg(ap, const char *);

			rc = t ? sqlite3_bind_text(st, i + 1, t, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, i + 1);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(st, i + 1);
			break;
		case 'o': {
			int present = va_arg(ap, int);
			int64_t v = va_arg(ap, int64_t);

			rc = present ? sqlite3_bind_int64(st, i + 1, v) : sqlite3_bind_null(st, i + 1);
			break;
		}
		default:
			log_error("coord_store: bad bind format '%c'", fmt[i]);
			abort();
		}
	}
	if (rc != SQLITE_OK) {
		log_error("coord_store: bind: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static sqlite3_stmt *
store_prepare(struct coord_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int i;

	for (i = 0; i < s->ncache; i++) {
		if (s->cache[i].sql == sql) {
			st = s->cache[i].st;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return st;
		}
	}
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		log_error("coord_store: prepare: %s: %s", sqlite3_errmsg(s->db), sql);
		return NULL;
	}
	if (s->ncache == COORD_STMT_CACHE) {
		/* The statements are a fixed set of literals, fewer than the
		 * cache holds; evicting one could finalize a statement a
		 * caller is still stepping. */
		log_error("coord_store: statement cache full (%d): raise COORD_STMT_CACHE",
			  COORD_STMT_CACHE);
		abort();
	}
	s->cache[s->ncache].sql = sql;
	s->cache[s->ncache].st = st;
	s->ncache++;
	return st;
}

sqlite3_stmt *
coord_store_q(struct coord_store *s, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	if ((st = store_prepare(s, sql)) == NULL)
		return NULL;
	va_start(ap, fmt);
	rc = store_bindv(s->db, st, fmt, ap);
	va_end(ap);
	return rc == 0 ? st : NULL;
}

int
coord_store_step(struct coord_store *s, sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_error("coord_store: step: %s: %s", sqlite3_errmsg(s->db), sqlite3_sql(st));
	return -1;
}

int
coord_store_run(struct coord_store *s, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	va_start(ap, fmt);
	rc = store_bindv(s->db, st, fmt, ap);
	va_end(ap);
	if (rc != 0)
		return -1;
	while ((rc = coord_store_step(s, st)) == 1)
		;
	sqlite3_reset(st);
	return rc < 0 ? -1 : sqlite3_changes(s->db);
}

int
coord_store_int(struct coord_store *s, int64_t *out, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	if ((st = store_prepare(s, sql)) == NULL)
		return -1;
	va_start(ap, fmt);
	rc = store_bindv(s->db, st, fmt, ap);
	va_end(ap);
	if (rc != 0)
		return -1;
	rc = coord_store_step(s, st);
	if (rc == 1)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc;
}

/* Every cached statement is reset when a request ends, so none keeps a read
 * snapshot open between requests. */
static void
store_reset_all(struct coord_store *s)
{
	int i;

	for (i = 0; i < s->ncache; i++)
		sqlite3_reset(s->cache[i].st);
}

static int
store_sql(struct coord_store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("coord_store: %s: %s", sql, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ ids, json */

int
coord_store_is_hex(const char *str, size_t len)
{
	size_t i;

	if (str == NULL || strlen(str) != len)
		return 0;
	for (i = 0; i < len; i++) {
		char ch = str[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return 0;
	}
	return 1;
}

static int
store_number(const char *p, const char **end, int64_t *v)
{
	int64_t n = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		if (n > (INT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (*p++ - '0');
	}
	*end = p;
	*v = n;
	return 0;
}

int
coord_store_ticket_parse(const char *id, int64_t *n)
{
	const char *end;

	if (id == NULL || (id[0] != 'T' && id[0] != 't'))
		return -1;
	if (store_number(id + 1, &end, n) != 0 || *end != '\0' || *n <= 0)
		return -1;
	return 0;
}

int
coord_store_alias_parse(const char *id, int64_t *n, int64_t *attempt)
{
	const char *end;

	if (id == NULL || (id[0] != 'T' && id[0] != 't'))
		return -1;
	if (store_number(id + 1, &end, n) != 0 || *n <= 0)
		return -1;
	if (end[0] != '-' || end[1] != 'r')
		return -1;
	if (store_number(end + 2, &end, attempt) != 0 || *end != '\0' || *attempt <= 0)
		return -1;
	return 0;
}

void
coord_store_ticket_name(int64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "T%" PRId64, n);
}

char *
coord_store_json_array(char *const *v, size_t n)
{
	size_t i, len = 3;
	char *out, *p;

	for (i = 0; i < n; i++)
		len += strlen(v[i] ? v[i] : "") * 6 + 3;
	p = out = coord_store_alloc(len);
	*p++ = '[';
	for (i = 0; i < n; i++) {
		const unsigned char *c = (const unsigned char *)(v[i] ? v[i] : "");

		if (i)
			*p++ = ',';
		*p++ = '"';
		for (; *c; c++) {
			if (*c == '"' || *c == '\\') {
				*p++ = '\\';
				*p++ = (char)*c;
			} else if (*c < 0x20) {
				p += sprintf(p, "\\u%04x", *c);
			} else {
				*p++ = (char)*c;
			}
		}
		*p++ = '"';
	}
	*p++ = ']';
	*p = '\0';
	return out;
}

int
coord_store_json_list(struct coord_store *s, const char *json, char ***out, size_t *n)
{
	static const char sql[] = "SELECT value FROM json_each(?) ORDER BY key";
	sqlite3_stmt *st;
	size_t cap = 0;
	char **v = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if ((st = coord_store_q(s, sql, "t", json ? json : "[]")) == NULL)
		return -1;
	while ((rc = coord_store_step(s, st)) == 1) {
		if (*n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 8;
			nv = coord_store_alloc(cap * sizeof *nv);
			if (v)
				memcpy(nv, v, *n * sizeof *nv);
			free(v);
			v = nv;
		}
		v[(*n)++] = coord_store_strdup(coord_store_coltext(st, 0));
	}
	sqlite3_reset(st);
	*out = v;
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ replies */

static Berth__Reply *
store_reply(struct coord_ctx *c)
{
	if (c->reply == NULL) {
		c->reply = coord_store_alloc(sizeof *c->reply);
		berth__reply__init(c->reply);
	}
	return c->reply;
}

/* Drops whatever result was built so far (a denial replaces nothing, but an
 * error may follow a half-built grant). */
static void
store_reply_clear(struct coord_ctx *c)
{
	if (c->reply != NULL) {
		berth__reply__free_unpacked(c->reply, NULL);
		c->reply = NULL;
	}
}

Berth__Granted *
coord_store_granted(struct coord_ctx *c)
{
	Berth__Reply *r;
	Berth__Granted *g;

	store_reply_clear(c);
	r = store_reply(c);
	g = coord_store_alloc(sizeof *g);
	berth__granted__init(g);
	r->result_case = BERTH__REPLY__RESULT_GRANTED;
	r->granted = g;
	c->reason[0] = '\0';
	return g;
}

void
coord_store_deny(struct coord_ctx *c, const char *reason, ...)
{
	Berth__Reply *r;
	Berth__Denied *d;
	const char *k;
	va_list ap;
	size_t n = 0;

	store_reply_clear(c);
	r = store_reply(c);
	d = coord_store_alloc(sizeof *d);
	berth__denied__init(d);
	d->reason = coord_store_strdup(reason);
	va_start(ap, reason);
	while ((k = va_arg(ap, const char *)) != NULL) {
		(void)va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	d->facts = coord_store_alloc((n ? n : 1) * sizeof *d->facts);
	va_start(ap, reason);
	while ((k = va_arg(ap, const char *)) != NULL) {
		Berth__Fact *f = coord_store_alloc(sizeof *f);

		berth__fact__init(f);
		f->key = coord_store_strdup(k);
		f->value = coord_store_strdup(va_arg(ap, const char *));
		d->facts[d->n_facts++] = f;
	}
	va_end(ap);
	r->result_case = BERTH__REPLY__RESULT_DENIED;
	r->denied = d;
	snprintf(c->reason, sizeof c->reason, "%s", reason);
}

void
coord_store_fail(struct coord_ctx *c, Berth__ErrorCode code, const char *fmt, ...)
{
	Berth__Reply *r;
	Berth__Error *e;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	store_reply_clear(c);
	r = store_reply(c);
	e = coord_store_alloc(sizeof *e);
	berth__error__init(e);
	e->has_code = 1;
	e->code = code;
	e->message = coord_store_strdup(msg);
	r->result_case = BERTH__REPLY__RESULT_ERROR;
	r->error = e;
	snprintf(c->reason, sizeof c->reason, "%.63s", msg);
}

/* ------------------------------------------------------------ open */

static int
store_pragmas(struct coord_store *s, char *err, size_t errlen)
{
	char sql[128];

	snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", s->o.sync_full ? "FULL" : "NORMAL");
	if (store_sql(s, "PRAGMA journal_mode=WAL") != 0 || store_sql(s, sql) != 0 ||
	    store_sql(s, "PRAGMA foreign_keys=ON") != 0) {
		snprintf(err, errlen, "cannot set pragmas: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

/* Brings the schema to COORD_SCHEMA_VERSION inside one IMMEDIATE
 * transaction, so two coordinators racing on a fresh file cannot both
 * create it. A newer schema is refused: this binary does not know its
 * invariants. */
static int
store_migrate(struct coord_store *s, const char *path, char *err, size_t errlen)
{
	int64_t v = 0;
	char sql[64];

	if (store_sql(s, "BEGIN IMMEDIATE") != 0) {
		snprintf(err, errlen, "%s: cannot lock: %s", path, sqlite3_errmsg(s->db));
		return -1;
	}
	if (coord_store_int(s, &v, "PRAGMA user_version", "") < 0) {
		snprintf(err, errlen, "%s: cannot read schema version: %s", path,
			 sqlite3_errmsg(s->db));
		goto fail;
	}
	if (v > COORD_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: database schema version %" PRId64
			 " is newer than this coordinator's version %d; upgrade berth",
			 path, v, COORD_SCHEMA_VERSION);
		goto fail;
	}
	if (v < 0) {
		snprintf(err, errlen, "%s: bad schema version %" PRId64, path, v);
		goto fail;
	}
	for (; v < COORD_SCHEMA_VERSION; v++) {
		if (store_sql(s, migrations[v]) != 0) {
			snprintf(err, errlen, "%s: migration to version %" PRId64 " failed: %s", path,
				 v + 1, sqlite3_errmsg(s->db));
			goto fail;
		}
		snprintf(sql, sizeof sql, "PRAGMA user_version=%" PRId64, v + 1);
		if (store_sql(s, sql) != 0) {
			snprintf(err, errlen, "%s: cannot set schema version", path);
			goto fail;
		}
	}
	if (store_sql(s, "COMMIT") != 0) {
		snprintf(err, errlen, "%s: cannot commit schema: %s", path, sqlite3_errmsg(s->db));
		goto fail;
	}
	return 0;
fail:
	store_reset_all(s);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int
coord_store_open(struct coord_store **out, const char *path, const struct coord_store_opts *o,
		 char *err, size_t errlen)
{
	struct coord_store *s;

	*out = NULL;
	s = coord_store_alloc(sizeof *s);
	if (o != NULL)
		s->o = *o;
	else
		s->o.sync_full = 1;
	if (s->o.default_lease_ms <= 0)
		s->o.default_lease_ms = 60000;
	if (s->o.backoff_base_ms <= 0)
		s->o.backoff_base_ms = 1000;
	if (s->o.backoff_max_ms <= 0)
		s->o.backoff_max_ms = 300000;

	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	if (store_pragmas(s, err, errlen) != 0)
		goto fail;
	if (store_migrate(s, path, err, errlen) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	log_error("coord_store: %s", err);
	coord_store_close(s);
	return -1;
}

void
coord_store_close(struct coord_store *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	if (s->db != NULL && sqlite3_close(s->db) != SQLITE_OK)
		log_error("coord_store: close: %s", sqlite3_errmsg(s->db));
	free(s);
}

void *
coord_store_db(struct coord_store *s)
{
	return s->db;
}

/* Parked claims are tried again when an activation falls due, and also
 * when an explicit seat's TTL lapses: a ticket waiting for that seat's key
 * or tree may run then, and nothing else would say so. */
int64_t
coord_store_next_due_ms(struct coord_store *s)
{
	static const char q_seat[] =
		"SELECT min(heartbeat_ms + ttl_ms + 1) FROM seats WHERE run_id IS NULL"
		" AND ttl_ms > 0 AND heartbeat_ms + ttl_ms + 1 > ?";
	int64_t now = clock_wall_ms(), due, lapse = 0;

	due = coord_sched_next_due(s, now);
	if (coord_store_int(s, &lapse, q_seat, "i", now) == 1 && lapse > now && lapse < due)
		due = lapse;
	store_reset_all(s);
	return due;
}

/* ------------------------------------------------------------ exec */

static const char *
store_verb_name(Berth__Request__VerbCase v)
{
	switch (v) {
	case BERTH__REQUEST__VERB_CLAIM: return "claim";
	case BERTH__REQUEST__VERB_START: return "start";
	case BERTH__REQUEST__VERB_RENEW: return "renew";
	case BERTH__REQUEST__VERB_READOPT: return "readopt";
	case BERTH__REQUEST__VERB_RECORD_EXIT: return "record_exit";
	case BERTH__REQUEST__VERB_ABANDON: return "abandon";
	case BERTH__REQUEST__VERB_SETTLE: return "settle";
	case BERTH__REQUEST__VERB_HELLO: return "hello";
	case BERTH__REQUEST__VERB_SCAN: return "scan";
	case BERTH__REQUEST__VERB_MARK_STOP: return "mark_stop";
	case BERTH__REQUEST__VERB_ADD: return "add";
	case BERTH__REQUEST__VERB_LIST: return "list";
	case BERTH__REQUEST__VERB_SHOW: return "show";
	case BERTH__REQUEST__VERB_HOLD: return "hold";
	case BERTH__REQUEST__VERB_RELEASE: return "release";
	case BERTH__REQUEST__VERB_RETRY: return "retry";
	case BERTH__REQUEST__VERB_CANCEL: return "cancel";
	case BERTH__REQUEST__VERB_STATUS: return "status";
	case BERTH__REQUEST__VERB_ADD_BATCH: return "add_batch";
	case BERTH__REQUEST__VERB_HEARTBEAT: return "heartbeat";
	case BERTH__REQUEST__VERB_PROGRESS: return "progress";
	case BERTH__REQUEST__VERB_NOTE: return "note";
	case BERTH__REQUEST__VERB_SHOULD_STOP: return "should_stop";
	case BERTH__REQUEST__VERB_SEAT_ACQUIRE: return "seat_acquire";
	case BERTH__REQUEST__VERB_SEAT_RELEASE: return "seat_release";
	case BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE: return "seat_force_release";
	case BERTH__REQUEST__VERB_SEAT_HEARTBEAT: return "seat_heartbeat";
	case BERTH__REQUEST__VERB_SEAT_STOP: return "seat_stop";
	case BERTH__REQUEST__VERB_SEAT_ACTIVITY: return "seat_activity";
	case BERTH__REQUEST__VERB_SEAT_LIST: return "seat_list";
	case BERTH__REQUEST__VERB_SEAT_SHOW: return "seat_show";
	case BERTH__REQUEST__VERB_SEAT_REAP: return "seat_reap";
	default: return NULL;
	}
}

static int
store_readonly(Berth__Request__VerbCase v)
{
	switch (v) {
	case BERTH__REQUEST__VERB_LIST:
	case BERTH__REQUEST__VERB_SHOW:
	case BERTH__REQUEST__VERB_STATUS:
	case BERTH__REQUEST__VERB_SCAN:
	case BERTH__REQUEST__VERB_SHOULD_STOP:
	case BERTH__REQUEST__VERB_SEAT_LIST:
	case BERTH__REQUEST__VERB_SEAT_SHOW:
		return 1;
	default:
		return 0;
	}
}

/* The one dispatch: each handler returns 0 with c->reply set (granted,
 * denied or an input error), or -1 on a storage fault. */
static int
store_dispatch(struct coord_ctx *c)
{
	switch (c->req->verb_case) {
	case BERTH__REQUEST__VERB_CLAIM: return coord_runs_claim(c);
	case BERTH__REQUEST__VERB_START: return coord_runs_start(c);
	case BERTH__REQUEST__VERB_RENEW: return coord_runs_renew(c);
	case BERTH__REQUEST__VERB_READOPT: return coord_runs_readopt(c);
	case BERTH__REQUEST__VERB_RECORD_EXIT: return coord_runs_record_exit(c);
	case BERTH__REQUEST__VERB_ABANDON: return coord_runs_abandon(c);
	case BERTH__REQUEST__VERB_SETTLE: return coord_runs_settle(c);
	case BERTH__REQUEST__VERB_HELLO: return coord_runs_hello(c);
	case BERTH__REQUEST__VERB_SCAN: return coord_runs_scan(c);
	case BERTH__REQUEST__VERB_MARK_STOP: return coord_runs_mark_stop(c);
	case BERTH__REQUEST__VERB_ADD: return coord_tickets_add(c);
	case BERTH__REQUEST__VERB_ADD_BATCH: return coord_tickets_add_batch(c);
	case BERTH__REQUEST__VERB_LIST: return coord_tickets_list(c);
	case BERTH__REQUEST__VERB_SHOW: return coord_tickets_show(c);
	case BERTH__REQUEST__VERB_HOLD: return coord_tickets_hold(c);
	case BERTH__REQUEST__VERB_RELEASE: return coord_tickets_release(c);
	case BERTH__REQUEST__VERB_RETRY: return coord_tickets_retry(c);
	case BERTH__REQUEST__VERB_CANCEL: return coord_tickets_cancel(c);
	case BERTH__REQUEST__VERB_STATUS: return coord_tickets_status(c);
	case BERTH__REQUEST__VERB_HEARTBEAT:
	case BERTH__REQUEST__VERB_PROGRESS:
	case BERTH__REQUEST__VERB_NOTE:
	case BERTH__REQUEST__VERB_SHOULD_STOP: return coord_runs_worker(c);
	case BERTH__REQUEST__VERB_SEAT_ACQUIRE:
	case BERTH__REQUEST__VERB_SEAT_RELEASE:
	case BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE:
	case BERTH__REQUEST__VERB_SEAT_HEARTBEAT:
	case BERTH__REQUEST__VERB_SEAT_STOP:
	case BERTH__REQUEST__VERB_SEAT_ACTIVITY:
	case BERTH__REQUEST__VERB_SEAT_LIST:
	case BERTH__REQUEST__VERB_SEAT_SHOW:
	case BERTH__REQUEST__VERB_SEAT_REAP: return coord_seats_verb(c);
	default:
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_UNKNOWN_VERB, "unknown verb %d",
				 (int)c->req->verb_case);
		return 0;
	}
}

static const char *
store_decision(const Berth__Reply *r)
{
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED: return "granted";
	case BERTH__REPLY__RESULT_DENIED: return "denied";
	default: return "error";
	}
}

static int
store_pack(struct coord_result *res, const Berth__Reply *r)
{
	res->packed_len = berth__reply__get_packed_size(r);
	res->packed = malloc(res->packed_len ? res->packed_len : 1);
	if (res->packed == NULL) {
		log_error("coord_store: out of memory packing a reply");
		return -1;
	}
	berth__reply__pack(r, res->packed);
	return 0;
}

/* A repeated (instance, req_id): the stored reply, marked replayed. */
static int
store_replay(struct coord_store *s, sqlite3_stmt *st, struct coord_result *res)
{
	Berth__Reply *r;
	const void *blob = sqlite3_column_blob(st, 0);
	int len = sqlite3_column_bytes(st, 0);

	snprintf(res->reason, sizeof res->reason, "%s", coord_store_coltext(st, 1));
	snprintf(res->ticket, sizeof res->ticket, "%s", coord_store_coltext(st, 2));
	snprintf(res->run, sizeof res->run, "%s", coord_store_coltext(st, 3));
	r = berth__reply__unpack(NULL, (size_t)len, blob);
	if (r == NULL) {
		log_error("coord_store: stored reply does not unpack (%d bytes)", len);
		return -1;
	}
	r->has_replayed = 1;
	r->replayed = 1;
	res->decision = "replayed";
	res->reply = NULL;
	if (store_pack(res, r) != 0) {
		berth__reply__free_unpacked(r, NULL);
		return -1;
	}
	berth__reply__free_unpacked(r, NULL);
	(void)s;
	return 0;
}

static void
store_rollback(struct coord_store *s)
{
	store_reset_all(s);
	if (sqlite3_get_autocommit(s->db) == 0 &&
	    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		log_error("coord_store: rollback: %s", sqlite3_errmsg(s->db));
}

/* Drops stored replies older than COORD_REQUEST_KEEP_MS, at most once per
 * COORD_PRUNE_EVERY_MS, in its own short transaction after a commit. A
 * failure here costs only disk space, so it is logged and forgotten. */
static void
store_prune(struct coord_store *s, int64_t now)
{
	static const char sql[] = "DELETE FROM requests WHERE ts_ms < ?";

	if (now - s->pruned_ms < COORD_PRUNE_EVERY_MS)
		return;
	s->pruned_ms = now;
	if (coord_store_run(s, sql, "i", now - COORD_REQUEST_KEEP_MS) < 0)
		log_warn("coord_store: pruning old stored replies failed");
}

static void
store_result(struct coord_ctx *c, struct coord_result *res)
{
	snprintf(res->reason, sizeof res->reason, "%s", c->reason);
	snprintf(res->ticket, sizeof res->ticket, "%s", c->ticket);
	snprintf(res->run, sizeof res->run, "%s", c->run);
}

void
coord_store_keep_trace(struct coord_store *s, coord_trace_line_fn fn, void *arg)
{
	s->trace_fn = fn;
	s->trace_arg = arg;
}

/* Keeps the trace line of the decision in c, inside its transaction. */
static int
store_keep_trace(struct coord_ctx *c, struct coord_result *res)
{
	static const char q[] = "INSERT OR REPLACE INTO trace_tail (id, seq, line) VALUES (1, ?, ?)";
	uint64_t seq = 0;
	char *line;
	int rc;

	store_result(c, res);
	line = c->s->trace_fn(c->s->trace_arg, c->req, store_decision(c->reply), res->reason,
			      res->ticket, res->run, &seq);
	if (line == NULL)
		return 0; /* the line itself is lost; the decision is not */
	rc = coord_store_run(c->s, q, "it", (int64_t)seq, line) < 0 ? -1 : 0;
	free(line);
	return rc;
}

int
coord_store_trace_tail(struct coord_store *s, uint64_t *seq, char **line)
{
	static const char q[] = "SELECT seq, line FROM trace_tail WHERE id = 1";
	sqlite3_stmt *st = coord_store_q(s, q, "");
	int rc;

	*seq = 0;
	*line = NULL;
	if ((rc = coord_store_step(s, st)) == 1) {
		*seq = (uint64_t)sqlite3_column_int64(st, 0);
		*line = coord_store_col(st, 1);
	}
	sqlite3_reset(st);
	return rc == 1 && *line != NULL ? 1 : rc < 0 ? -1 : 0;
}

int
coord_store_exec(struct coord_store *s, const Berth__Request *req, struct coord_result *res)
{
	static const char q_request[] =
		"SELECT reply, reason, ticket, run FROM requests WHERE instance = ? AND req_id = ?";
	static const char q_begin[] = "BEGIN";
	static const char q_begin_immediate[] = "BEGIN IMMEDIATE";
	static const char q_commit[] = "COMMIT";
	static const char q_event[] =
		"INSERT INTO events (ts_ms, verb, ticket, run, decision, reason, actor, instance)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	static const char q_store[] =
		"INSERT INTO requests (instance, req_id, ts_ms, verb, decision, reason, ticket, run,"
		" reply) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct coord_ctx c;
	const char *verb = store_verb_name(req->verb_case);
	const char *instance = req->instance ? req->instance : "";
	int ro = store_readonly(req->verb_case);
	int dedupe = !ro && instance[0] != '\0' && req->has_req_id;
	sqlite3_stmt *st;
	char why[200];
	int rc, fpfail = 0;

	memset(res, 0, sizeof *res);
	memset(&c, 0, sizeof c);
	c.s = s;
	c.req = req;
	c.now = clock_wall_ms();

	if (verb == NULL) {
		coord_store_fail(&c, BERTH__ERROR_CODE__ERR_UNKNOWN_VERB, "unknown verb %d",
				 (int)req->verb_case);
		goto reply;
	}
	if (coord_store_run(s, ro ? q_begin : q_begin_immediate, "") < 0) {
		coord_store_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "cannot begin: %s",
				 sqlite3_errmsg(s->db));
		goto reply;
	}
	if (dedupe) {
		st = coord_store_q(s, q_request, "ti", instance, (int64_t)req->req_id);
		rc = coord_store_step(s, st);
		if (rc == 1) {
			rc = store_replay(s, st, res);
			store_rollback(s);
			if (rc == 0)
				return 0;
			coord_store_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE,
					 "stored reply is unreadable");
			goto reply;
		}
		if (rc < 0)
			goto storage;
	}

	if (store_dispatch(&c) != 0)
		goto storage;
	if (c.reply == NULL) {
		log_error("coord_store: %s produced no reply", verb);
		abort();
	}
	/* Input errors changed nothing worth keeping, and a claim that found
	 * nothing decided nothing: both leave the database as it was. */
	if (ro || c.reply->result_case == BERTH__REPLY__RESULT_ERROR || c.nostore) {
		store_rollback(s);
		goto reply;
	}

	c.reply->has_req_id = req->has_req_id;
	c.reply->req_id = req->req_id;
	c.reply->has_version = 1;
	c.reply->version = BERTH_PROTOCOL_VERSION;
	if (coord_store_run(s, q_event, "ittttttt", c.now, verb, c.ticket[0] ? c.ticket : NULL,
			    c.run[0] ? c.run : NULL, store_decision(c.reply),
			    c.reason[0] ? c.reason : NULL, req->actor, instance) < 0)
		goto storage;
	if (dedupe) {
		size_t len = berth__reply__get_packed_size(c.reply);
		uint8_t *buf = coord_store_alloc(len);

		berth__reply__pack(c.reply, buf);
		st = coord_store_q(s, q_store, "tiittttt", instance, (int64_t)req->req_id, c.now,
				   verb, store_decision(c.reply), c.reason[0] ? c.reason : NULL,
				   c.ticket[0] ? c.ticket : NULL, c.run[0] ? c.run : NULL);
		rc = st ? sqlite3_bind_blob(st, 9, buf, (int)len, SQLITE_TRANSIENT) : SQLITE_ERROR;
		free(buf);
		if (rc != SQLITE_OK || coord_store_step(s, st) < 0)
			goto storage;
	}
	if (s->trace_fn != NULL && store_keep_trace(&c, res) != 0)
		goto storage;
	if (fp_hit("coordinator.before_commit") == FP_ERROR) {
		log_warn("coord_store: failpoint coordinator.before_commit: failing %s", verb);
		fpfail = 1;
		goto storage;
	}
	store_reset_all(s);
	if (coord_store_run(s, q_commit, "") < 0)
		goto storage;
	res->wake = c.wake && c.reply->result_case == BERTH__REPLY__RESULT_GRANTED;
	store_prune(s, c.now);
	goto reply;

storage:
	snprintf(why, sizeof why, "%s", fpfail ? "failpoint coordinator.before_commit"
					      : sqlite3_errmsg(s->db));
	store_rollback(s);
	coord_store_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s",
			 verb ? verb : "request", why);
	c.nostore = 0;
reply:
	store_reset_all(s);
	c.reply->has_req_id = req->has_req_id;
	c.reply->req_id = req->req_id;
	c.reply->has_version = 1;
	c.reply->version = BERTH_PROTOCOL_VERSION;
	res->reply = c.reply;
	res->decision = store_decision(c.reply);
	store_result(&c, res);
	if (store_pack(res, c.reply) != 0) {
		berth__reply__free_unpacked(c.reply, NULL);
		res->reply = NULL;
		return -1;
	}
	return 0;
}

void
coord_result_free(struct coord_result *res)
{
	if (res == NULL)
		return;
	if (res->reply != NULL)
		berth__reply__free_unpacked(res->reply, NULL);
	free(res->packed);
	res->reply = NULL;
	res->packed = NULL;
}
