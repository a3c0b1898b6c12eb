/* Rows as messages, ids and JSON arrays: see coord_rows.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_rows.h"
#include "ident.h"
#include "states.h"
#include "util.h"

/* ------------------------------------------------------------ ids */

int
coord_rows_is_hex(const char *str, size_t len)
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
rows_number(const char *p, const char **end, int64_t *v)
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

/* The T<n> at the start of id: 0 with *end after it, or -1. */
static int
rows_ticket_prefix(const char *id, const char **end, int64_t *n)
{
	if (id == NULL || (id[0] != 'T' && id[0] != 't'))
		return -1;
	if (rows_number(id + 1, end, n) != 0 || *n <= 0)
		return -1;
	return 0;
}

int
coord_rows_ticket_parse(const char *id, int64_t *n)
{
	const char *end;

	return rows_ticket_prefix(id, &end, n) == 0 && *end == '\0' ? 0 : -1;
}

int
coord_rows_alias_parse(const char *id, int64_t *n, int64_t *attempt)
{
	const char *end;

	if (rows_ticket_prefix(id, &end, n) != 0 || end[0] != '-' || end[1] != 'r')
		return -1;
	if (rows_number(end + 2, &end, attempt) != 0 || *end != '\0' || *attempt <= 0)
		return -1;
	return 0;
}

void
coord_rows_ticket_name(int64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "T%" PRId64, n);
}

void
coord_rows_alias_name(int64_t n, int64_t attempt, char *buf, size_t len)
{
	snprintf(buf, len, "T%" PRId64 "-r%" PRId64, n, attempt);
}

/* ------------------------------------------------------------ identities */

Berth__Ident *
coord_rows_ident(struct coord_st *st, int col)
{
	Berth__Ident *id;

	if (coord_db_isnull(st, col + 1))
		return NULL;
	id = coord_mem_alloc(sizeof *id);
	berth__ident__init(id);
	id->boot_id = coord_mem_strdup(coord_db_coltext(st, col));
	id->has_pid = id->has_start_time = id->has_pgid = 1;
	id->pid = (int)coord_db_i64(st, col + 1);
	id->start_time = (uint64_t)coord_db_i64(st, col + 2);
	id->pgid = (int)coord_db_i64(st, col + 3);
	return id;
}

Berth__Ident *
coord_rows_ident_of(const struct ident *i)
{
	Berth__Ident *id = coord_mem_alloc(sizeof *id);

	berth__ident__init(id);
	id->boot_id = coord_mem_strdup(i->boot_id);
	id->has_pid = id->has_start_time = id->has_pgid = 1;
	id->pid = i->pid;
	id->start_time = i->start_time;
	id->pgid = i->pgid;
	return id;
}

/* ------------------------------------------------------------ runs */

#define ROWS_OPT_INT(field, col)                                           \
	do {                                                               \
		int64_t v_;                                                \
		if ((r->has_##field = coord_db_colint(st, col, &v_)) != 0) \
			r->field = v_;                                     \
	} while (0)

Berth__Run *
coord_rows_run(struct coord_st *st)
{
	Berth__Run *r = coord_mem_alloc(sizeof *r);
	int64_t n = coord_db_i64(st, 1), attempt = coord_db_i64(st, 2);
	char buf[48];

	berth__run__init(r);
	r->id = coord_db_col(st, 0);
	coord_rows_ticket_name(n, buf, sizeof buf);
	r->ticket = coord_mem_strdup(buf);
	r->has_attempt = 1;
	r->attempt = (uint32_t)attempt;
	coord_rows_alias_name(n, attempt, buf, sizeof buf);
	r->alias = coord_mem_strdup(buf);
	r->state = coord_db_col(st, 3);
	r->owner = coord_db_col(st, 4);
	r->shim = coord_rows_ident(st, 5);
	if (!coord_db_isnull(st, 10)) {
		r->has_exit_code_known = r->exit_code_known = 1;
		r->has_exit_code = 1;
		r->exit_code = (int)coord_db_i64(st, 10);
	}
	if (!coord_db_isnull(st, 11)) {
		r->has_signal_known = r->signal_known = 1;
		r->has_signal = 1;
		r->signal = (int)coord_db_i64(st, 11);
	}
	r->reason = coord_db_col(st, 12);
	ROWS_OPT_INT(claimed_ms, 13);
	ROWS_OPT_INT(started_ms, 14);
	ROWS_OPT_INT(ended_ms, 15);
	ROWS_OPT_INT(settled_ms, 16);
	ROWS_OPT_INT(lease_expires_ms, 17);
	r->has_has_lease = 1;
	r->has_lease = !coord_db_isnull(st, 17);
	r->progress_label = coord_db_col(st, 18);
	ROWS_OPT_INT(progress_index, 19);
	ROWS_OPT_INT(progress_total, 20);
	ROWS_OPT_INT(progress_ms, 21);
	r->stop_reason = coord_db_col(st, 22);
	ROWS_OPT_INT(stop_ms, 23);
	ROWS_OPT_INT(output_bytes, 24);
	if (!coord_db_isnull(st, 25)) {
		r->has_capture_complete = 1;
		r->capture_complete = (int)coord_db_i64(st, 25) != 0;
	}
	ROWS_OPT_INT(timeout_ms, 26);
	ROWS_OPT_INT(heartbeat_ms, 27);
	r->aftercare_owner = coord_db_col(st, 28);
	ROWS_OPT_INT(stragglers, 29);
	if (!coord_db_isnull(st, 30)) {
		r->has_disk_full = 1;
		r->disk_full = (int)coord_db_i64(st, 30) != 0;
	}
	r->host = coord_db_col(st, 31);
	ROWS_OPT_INT(epoch, 32);
	return r;
}

int
coord_rows_runs(struct coord_db *db, struct coord_st *st, Berth__Run ***v, size_t *n, size_t *cap)
{
	int rc;

	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(v, *n, cap, sizeof **v, 16);
		(*v)[(*n)++] = coord_rows_run(st);
	}
	coord_db_done(st);
	return rc;
}

static int
rows_notes(struct coord_db *db, Berth__Run *r)
{
	static const char sql[] = "SELECT text FROM run_notes WHERE run_id = ? ORDER BY id";
	struct coord_st *st;
	size_t cap = 0;
	int rc;

	if ((st = coord_db_q(db, sql, "t", r->id)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(&r->notes, r->n_notes, &cap, sizeof *r->notes, 4);
		r->notes[r->n_notes++] = coord_db_col(st, 0);
	}
	coord_db_done(st);
	return rc;
}

Berth__Run *
coord_rows_run_load(struct coord_db *db, const char *run_id, int with_notes)
{
	static const char sql[] =
		"SELECT " COORD_RUN_COLS
		" FROM runs r LEFT JOIN leases l ON l.run_id = r.id WHERE r.id = ?";
	struct coord_st *st;
	Berth__Run *r = NULL;

	if ((st = coord_db_q(db, sql, "t", run_id)) == NULL)
		return NULL;
	if (coord_db_step(db, st) == 1)
		r = coord_rows_run(st);
	coord_db_done(st);
	if (r != NULL && with_notes && rows_notes(db, r) < 0) {
		berth__run__free_unpacked(r, NULL);
		return NULL;
	}
	return r;
}

int
coord_rows_ticket_state(struct coord_db *db, int64_t n, enum ticket_state *ts)
{
	static const char sql[] = "SELECT state FROM tickets WHERE n = ?";
	struct coord_st *st;
	int rc;

	*ts = TICKET_ABSENT;
	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		*ts = ticket_state_parse(coord_db_coltext(st, 0));
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}

Berth__Actor **
coord_rows_actors(struct coord_db *db, size_t *n)
{
	static const char q_count[] = "SELECT count(*) FROM actors";
	static const char sql[] =
		"SELECT actor, instance, boot_id, pid, start_time, pgid, seen_ms, slots FROM actors"
		" ORDER BY seen_ms DESC";
	Berth__Actor **v;
	struct coord_st *st;
	int64_t cnt = 0;

	*n = 0;
	if (coord_db_int(db, &cnt, q_count, "") < 0)
		return NULL;
	v = coord_mem_alloc((size_t)(cnt + 1) * sizeof *v);
	if ((st = coord_db_q(db, sql, "")) == NULL)
		return v;
	while (*n < (size_t)cnt && coord_db_step(db, st) == 1) {
		Berth__Actor *a = coord_mem_alloc(sizeof *a);

		berth__actor__init(a);
		a->actor = coord_db_col(st, 0);
		a->instance = coord_db_col(st, 1);
		a->ident = coord_rows_ident(st, 2);
		a->has_seen_ms = 1;
		a->seen_ms = coord_db_i64(st, 6);
		a->has_slots = 1;
		a->slots = (uint32_t)coord_db_i64(st, 7);
		v[(*n)++] = a;
	}
	coord_db_done(st);
	return v;
}

/* ------------------------------------------------------------ JSON arrays */

char *
coord_rows_json_array(char *const *v, size_t n)
{
	size_t i, len = 3;
	char *out, *p;

	for (i = 0; i < n; i++)
		len += strlen(v[i] ? v[i] : "") * 6 + 3;
	p = out = coord_mem_alloc(len);
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

/* The code unit of \uXXXX at p (after the "\u"), or -1. */
static long
rows_u16(const char *p)
{
	long v = 0;
	int i, d;

	for (i = 0; i < 4; i++) {
		if ((d = hex_digit((unsigned char)p[i])) < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Writes code point u as UTF-8 at out: the byte after it. */
static char *
rows_utf8(char *out, long u)
{
	if (u < 0x80) {
		*out++ = (char)u;
	} else if (u < 0x800) {
		*out++ = (char)(0xc0 | (u >> 6));
		*out++ = (char)(0x80 | (u & 0x3f));
	} else if (u < 0x10000) {
		*out++ = (char)(0xe0 | (u >> 12));
		*out++ = (char)(0x80 | ((u >> 6) & 0x3f));
		*out++ = (char)(0x80 | (u & 0x3f));
	} else {
		*out++ = (char)(0xf0 | (u >> 18));
		*out++ = (char)(0x80 | ((u >> 12) & 0x3f));
		*out++ = (char)(0x80 | ((u >> 6) & 0x3f));
		*out++ = (char)(0x80 | (u & 0x3f));
	}
	return out;
}

/* The escape after a backslash at *pp (moved to its last character) into
 * out: the byte after it, or NULL for one this decoder does not take on
 * (a NUL, a lone surrogate, an unknown escape). */
static char *
rows_escape(const char **pp, char *out)
{
	static const char plain[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";
	const char *p = *pp, *k;
	long u, lo;

	if (*p != '\0' && (k = strchr(plain, *p)) != NULL) {
		*out++ = meant[k - plain];
		return out;
	}
	if (*p != 'u' || (u = rows_u16(p + 1)) <= 0 || (u >= 0xdc00 && u <= 0xdfff))
		return NULL;
	p += 4;
	if (u >= 0xd800 && u <= 0xdbff) {
		if (p[1] != '\\' || p[2] != 'u' || (lo = rows_u16(p + 3)) < 0xdc00 || lo > 0xdfff)
			return NULL;
		p += 6;
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
	}
	*pp = p;
	return rows_utf8(out, u);
}

/* Decodes the JSON string starting after its opening quote at *pp into out
 * (room for as many bytes as the input: escapes only shrink) and moves *pp
 * past the closing quote. 0, or -1 for anything this decoder does not take
 * on (rows_escape's, or a raw control byte): sqlite decides those. */
static int
rows_json_string(const char **pp, char *out)
{
	const char *p = *pp;

	for (;;) {
		if (*p == '\0' || (unsigned char)*p < 0x20)
			return -1;
		if (*p == '"')
			break;
		if (*p != '\\') {
			*out++ = *p++;
			continue;
		}
		p++;
		if ((out = rows_escape(&p, out)) == NULL)
			return -1;
		p++;
	}
	*out = '\0';
	*pp = p + 1;
	return 0;
}

static const char *
rows_json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static void
rows_push(char ***v, size_t *n, size_t *cap, const char *str)
{
	coord_mem_grow(v, *n, cap, sizeof **v, 4);
	(*v)[(*n)++] = coord_mem_strdup(str);
}

/* The array read in C: 0, or -1 for a form it leaves to sqlite. */
static int
rows_json_fast(const char *json, char ***out, size_t *n)
{
	const char *p = rows_json_ws(json);
	char *tmp = coord_mem_alloc(strlen(json) + 1);
	size_t cap = 0;

	if (*p++ != '[')
		goto slow;
	p = rows_json_ws(p);
	if (*p == ']')
		p++;
	else
		for (;;) {
			if (*p++ != '"' || rows_json_string(&p, tmp) != 0)
				goto slow;
			rows_push(out, n, &cap, tmp);
			p = rows_json_ws(p);
			if (*p == ']') {
				p++;
				break;
			}
			if (*p++ != ',')
				goto slow;
			p = rows_json_ws(p);
		}
	if (*rows_json_ws(p) != '\0')
		goto slow;
	free(tmp);
	return 0;
slow:
	free(tmp);
	while (*n > 0)
		free((*out)[--*n]);
	free(*out);
	*out = NULL;
	return -1;
}

/* The array read by the engine: whatever sqlite's json_each, or
 * PostgreSQL's json_array_elements_text, takes as JSON (a read: the one
 * statement written per engine). */
static int
rows_json_sqlite(struct coord_db *db, const char *json, char ***out, size_t *n)
{
	static const char sql[] = "SELECT value FROM json_each(?) ORDER BY key";
	static const char pg[] = "SELECT e.value FROM json_array_elements_text(CAST(? AS json))"
				 " WITH ORDINALITY AS e(value, i) ORDER BY e.i";
	struct coord_st *st;
	size_t cap = 0;
	int rc;

	if ((st = coord_db_q(db, coord_db_kind(db) == COORD_STORE_POSTGRESQL ? pg : sql, "t",
			     json)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1)
		rows_push(out, n, &cap, coord_db_coltext(st, 0));
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}

/*
 * Reading argv and env back through sqlite's json_each cost two
 * statements, each with a sort, per ticket loaded (a large share of `list`
 * at 100 000 tickets), so the form coord_rows_json_array writes is read in
 * C. Anything else (not an array of strings, an escape the C reader does
 * not take on) goes to the engine, so what is read never differs.
 */
int
coord_rows_json_list(struct coord_db *db, const char *json, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (json == NULL)
		json = "[]";
	if (rows_json_fast(json, out, n) == 0)
		return 0;
	return rows_json_sqlite(db, json, out, n);
}
