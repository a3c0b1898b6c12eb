/* The operator verbs on tickets (DESIGN §4, DECISIONS.md): add, list, show,
 * hold, release, retry, cancel, status. Unknown ids are ERR_NOT_FOUND; a
 * ticket in the wrong state is denied not_ready{state}. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_int.h"

/* 100 years, and the last millisecond of year 9999. */
#define TICKETS_MAX_DURATION_MS (100LL * 366 * 24 * 3600 * 1000)
#define TICKETS_MAX_TIME_MS 253402300799999LL

#define TICKET_COLS                                                                      \
	"name, argv, workdir, env, seat_key, state, attempts, max_attempts, priority,"   \
	" timeout_ms, created_ms, updated_ms, every_ms, isolate"

static void
tickets_push(char ***v, size_t *n, const char *str)
{
	char **nv = coord_store_alloc((*n + 1) * sizeof *nv);

	if (*v)
		memcpy(nv, *v, *n * sizeof *nv);
	free(*v);
	*v = nv;
	(*v)[(*n)++] = coord_store_strdup(str);
}

/* 0..15 for a hex digit, -1 otherwise. */
static int
tickets_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code unit of \uXXXX at p (after the "\u"), or -1. */
static long
tickets_u16(const char *p)
{
	long v = 0;
	int i, d;

	for (i = 0; i < 4; i++) {
		if ((d = tickets_hex(p[i])) < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Decodes the JSON string starting after its opening quote at *pp into out
 * (room for as many bytes as the input: escapes only shrink) and moves *pp
 * past the closing quote. 0, or -1 for anything this decoder does not take
 * on (a NUL, a lone surrogate, a raw control byte, an unknown escape):
 * sqlite decides those. */
static int
tickets_json_string(const char **pp, char *out)
{
	const char *p = *pp;
	long u, lo;

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
		switch (*p) {
		case '"':
		case '\\':
		case '/':
			*out++ = *p;
			break;
		case 'b':
			*out++ = '\b';
			break;
		case 'f':
			*out++ = '\f';
			break;
		case 'n':
			*out++ = '\n';
			break;
		case 'r':
			*out++ = '\r';
			break;
		case 't':
			*out++ = '\t';
			break;
		case 'u':
			if ((u = tickets_u16(p + 1)) <= 0 || (u >= 0xdc00 && u <= 0xdfff))
				return -1;
			p += 4;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (p[1] != '\\' || p[2] != 'u' ||
				    (lo = tickets_u16(p + 3)) < 0xdc00 || lo > 0xdfff)
					return -1;
				p += 6;
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			}
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
			break;
		default:
			return -1;
		}
		p++;
	}
	*out = '\0';
	*pp = p + 1;
	return 0;
}

static const char *
tickets_json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * argv and env are stored as JSON arrays of strings (coord_store_json_array).
 * Reading them back through sqlite's json_each cost two statements, each
 * with a sort, per ticket loaded (a large share of `list` at 100 000
 * tickets); this reads that form in C. Anything else (not an array of strings, an escape it does not take
 * on) goes to coord_store_json_list, so what is read never differs.
 */
static int
tickets_json_list(struct coord_store *s, const char *json, char ***out, size_t *n)
{
	const char *p = json != NULL ? json : "[]";
	char **v = NULL, *tmp;

	*out = NULL;
	*n = 0;
	tmp = coord_store_alloc(strlen(p) + 1);
	p = tickets_json_ws(p);
	if (*p++ != '[')
		goto slow;
	p = tickets_json_ws(p);
	if (*p == ']')
		p++;
	else
		for (;;) {
			if (*p++ != '"' || tickets_json_string(&p, tmp) != 0)
				goto slow;
			tickets_push(&v, n, tmp);
			p = tickets_json_ws(p);
			if (*p == ']') {
				p++;
				break;
			}
			if (*p++ != ',')
				goto slow;
			p = tickets_json_ws(p);
		}
	if (*tickets_json_ws(p) != '\0')
		goto slow;
	free(tmp);
	*out = v;
	return 0;
slow:
	free(tmp);
	while (*n > 0)
		free(v[--*n]);
	free(v);
	return coord_store_json_list(s, json, out, n);
}

Berth__Ticket *
coord_tickets_load(struct coord_store *s, int64_t n, int64_t now, int with_runs)
{
	static const char q_ticket[] = "SELECT " TICKET_COLS " FROM tickets WHERE n = ?";
	static const char q_deps[] = "SELECT dep FROM ticket_deps WHERE ticket = ? ORDER BY dep";
	static const char q_due[] =
		"SELECT due_ms FROM activations WHERE ticket = ? AND state = 'queued'"
		" ORDER BY due_ms LIMIT 1";
	static const char q_runs[] = "SELECT " COORD_RUN_COLS
				     " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
				     " WHERE r.ticket = ? ORDER BY r.attempt";
	Berth__Ticket *t = coord_store_alloc(sizeof *t);
	char buf[512], *argv = NULL, *env = NULL;
	struct coord_sched_why w;
	sqlite3_stmt *st;
	int rc;

	berth__ticket__init(t);
	if ((st = coord_store_q(s, q_ticket, "i", n)) == NULL)
		goto fail;
	if ((rc = coord_store_step(s, st)) != 1) {
		sqlite3_reset(st);
		goto fail;
	}
	coord_store_ticket_name(n, buf, sizeof buf);
	t->id = coord_store_strdup(buf);
	t->name = coord_store_col(st, 0);
	argv = coord_store_col(st, 1);
	t->workdir = coord_store_col(st, 2);
	env = coord_store_col(st, 3);
	t->key = coord_store_col(st, 4);
	t->state = coord_store_col(st, 5);
	t->has_attempts = t->has_max_attempts = t->has_priority = t->has_timeout_ms = 1;
	t->attempts = (uint32_t)sqlite3_column_int64(st, 6);
	t->max_attempts = (uint32_t)sqlite3_column_int64(st, 7);
	t->priority = sqlite3_column_int(st, 8);
	t->timeout_ms = sqlite3_column_int64(st, 9);
	t->has_created_ms = t->has_updated_ms = t->has_every_ms = 1;
	t->created_ms = sqlite3_column_int64(st, 10);
	t->updated_ms = sqlite3_column_int64(st, 11);
	t->every_ms = sqlite3_column_int64(st, 12);
	t->has_isolate = 1;
	t->isolate = sqlite3_column_int(st, 13) != 0;
	sqlite3_reset(st);
	if (tickets_json_list(s, argv, &t->argv, &t->n_argv) != 0 ||
	    tickets_json_list(s, env, &t->env, &t->n_env) != 0)
		goto fail;

	if ((st = coord_store_q(s, q_deps, "i", n)) == NULL)
		goto fail;
	while ((rc = coord_store_step(s, st)) == 1) {
		coord_store_ticket_name(sqlite3_column_int64(st, 0), buf, sizeof buf);
		tickets_push(&t->after, &t->n_after, buf);
	}
	sqlite3_reset(st);
	if (rc < 0)
		goto fail;

	memset(&w, 0, sizeof w);
	if ((rc = coord_store_int(s, &w.due, q_due, "i", n)) < 0)
		goto fail;
	w.has_due = rc == 1;
	t->has_next_due_ms = 1;
	t->next_due_ms = w.has_due ? w.due : 0;

	if (strcmp(t->state, "ready") == 0) {
		/* Without dependencies nothing can block it: no query. */
		if (t->n_after > 0 &&
		    (w.blocked = coord_sched_blocked(s, n, &w.dep, w.dep_state,
						     sizeof w.dep_state)) < 0)
			goto fail;
		if (w.blocked) {
			free(t->state);
			t->state = coord_store_strdup("blocked");
		}
		if (coord_sched_waiting(s, n, now, &w, buf, sizeof buf) != 0)
			goto fail;
		t->waiting = coord_store_strdup(buf);
	} else if (strcmp(t->state, "held") == 0) {
		t->waiting = coord_store_strdup("held");
	}

	if (with_runs) {
		size_t cap = 0;

		if ((st = coord_store_q(s, q_runs, "i", n)) == NULL)
			goto fail;
		while ((rc = coord_store_step(s, st)) == 1) {
			if (t->n_runs == cap) {
				Berth__Run **nv;

				cap = cap ? cap * 2 : 4;
				nv = coord_store_alloc(cap * sizeof *nv);
				if (t->runs)
					memcpy(nv, t->runs, t->n_runs * sizeof *nv);
				free(t->runs);
				t->runs = nv;
			}
			t->runs[t->n_runs++] = coord_runs_from_row(st);
		}
		sqlite3_reset(st);
		if (rc < 0)
			goto fail;
		for (size_t i = 0; i < t->n_runs; i++) {
			Berth__Run *full = coord_runs_load(s, t->runs[i]->id, 1);

			if (full == NULL)
				goto fail;
			berth__run__free_unpacked(t->runs[i], NULL);
			t->runs[i] = full;
		}
	}
	free(argv);
	free(env);
	return t;
fail:
	free(argv);
	free(env);
	berth__ticket__free_unpacked(t, NULL);
	return NULL;
}

/* Resolves a ticket id, a run alias T3-r1 or a run id to a ticket number:
 * 1 found, 0 unknown (an error reply is set), -1 storage. */
static int
tickets_resolve(struct coord_ctx *c, const char *id, int64_t *n)
{
	static const char q_ticket[] = "SELECT n FROM tickets WHERE n = ?";
	static const char q_alias[] = "SELECT ticket FROM runs WHERE ticket = ? AND attempt = ?";
	static const char q_run[] = "SELECT ticket FROM runs WHERE id = ?";
	int64_t attempt;
	int rc;

	if (id == NULL || id[0] == '\0') {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "missing id");
		return 0;
	}
	if (coord_store_ticket_parse(id, n) == 0)
		rc = coord_store_int(c->s, n, q_ticket, "i", *n);
	else if (coord_store_alias_parse(id, n, &attempt) == 0)
		rc = coord_store_int(c->s, n, q_alias, "ii", *n, attempt);
	else if (coord_store_is_hex(id, 32))
		rc = coord_store_int(c->s, n, q_run, "t", id);
	else {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "'%s' is not a ticket id, run id or alias", id);
		return 0;
	}
	if (rc == 0)
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no ticket or run '%s'", id);
	else if (rc == 1)
		coord_store_ticket_name(*n, c->ticket, sizeof c->ticket);
	return rc;
}

static int
tickets_reply(struct coord_ctx *c, int64_t n, int with_runs)
{
	Berth__Ticket *t = coord_tickets_load(c->s, n, c->now, with_runs);
	Berth__Granted *g;

	if (t == NULL)
		return -1;
	g = coord_store_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_TICKET;
	g->ticket = t;
	return 0;
}

/* ------------------------------------------------------------ add */

/* Validates and inserts one ticket with its first activation: 0 added, 1
 * refused (error reply set), -1 storage. */
static int
tickets_add_one(struct coord_ctx *c, const Berth__Add *a, int64_t *out)
{
	static const char q_ins[] =
		"INSERT INTO tickets (name, argv, workdir, env, seat_key, timeout_ms, max_attempts,"
		" priority, state, every_ms, created_ms, updated_ms, tree_seat, isolate)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char q_exists[] = "SELECT n FROM tickets WHERE n = ?";
	static const char q_dep[] = "INSERT OR IGNORE INTO ticket_deps (ticket, dep) VALUES (?, ?)";
	char *argv = NULL, *env = NULL;
	int64_t n, dep, due;
	const char *kind;
	size_t i;
	int rc, ret = -1;

	if (a == NULL || a->n_argv == 0 || a->argv[0] == NULL || a->argv[0][0] == '\0') {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "add needs a command (argv)");
		return 1;
	}
	if (a->timeout_ms < 0 || a->every_ms < 0 || a->at_ms < 0) {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "timeout, --every and --at must not be negative");
		return 1;
	}
	/* Schedules and timeouts are added to times: bounded, so no sum
	 * overflows (an --every firing is due + k * every). */
	if (a->timeout_ms > TICKETS_MAX_DURATION_MS || a->every_ms > TICKETS_MAX_DURATION_MS ||
	    a->at_ms > TICKETS_MAX_TIME_MS) {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "timeout and --every are at most 100 years, --at before year 10000");
		return 1;
	}
	if ((a->key && strlen(a->key) > COORD_SEAT_NAME_MAX) ||
	    (a->workdir && strlen(a->workdir) > COORD_SEAT_PATH_MAX)) {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "--key is at most %d bytes, --workdir %d", COORD_SEAT_NAME_MAX,
				 COORD_SEAT_PATH_MAX);
		return 1;
	}
	for (i = 0; i < a->n_env; i++) {
		if (a->env[i] == NULL || strchr(a->env[i], '=') == NULL || a->env[i][0] == '=') {
			coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "env entry '%s' is not NAME=value",
					 a->env[i] ? a->env[i] : "");
			return 1;
		}
	}
	for (i = 0; i < a->n_after; i++) {
		if (coord_store_ticket_parse(a->after[i], &dep) != 0) {
			coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "--after '%s' is not a ticket id",
					 a->after[i] ? a->after[i] : "");
			return 1;
		}
		if ((rc = coord_store_int(c->s, &dep, q_exists, "i", dep)) < 0)
			return -1;
		if (rc == 0) {
			coord_store_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND,
					 "--after names unknown ticket %s", a->after[i]);
			return 1;
		}
	}

	argv = coord_store_json_array(a->argv, a->n_argv);
	env = coord_store_json_array(a->env, a->n_env);
	/* Only a named --workdir takes the working tree as a seat; the
	 * caller's cwd filled in by default does not. */
	if (coord_store_run(c->s, q_ins, "tttttiiitiiiii", a->name ? a->name : "", argv,
			    a->workdir ? a->workdir : "", env, a->key ? a->key : "", a->timeout_ms,
			    (int64_t)a->retries + 1, (int64_t)a->priority,
			    a->hold ? "held" : "ready", a->every_ms, c->now, c->now,
			    (int64_t)!(a->has_workdir_default && a->workdir_default),
			    (int64_t)(a->has_isolate && a->isolate)) != 1)
		goto out;
	n = sqlite3_last_insert_rowid(c->s->db);
	for (i = 0; i < a->n_after; i++) {
		coord_store_ticket_parse(a->after[i], &dep);
		/* The new ticket's id did not exist when its deps were
		 * checked, so it cannot name itself; the guard stays for
		 * the invariant. */
		if (dep == n) {
			coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "a ticket cannot wait for itself");
			ret = 1;
			goto out;
		}
		if (coord_store_run(c->s, q_dep, "ii", n, dep) < 0)
			goto out;
	}
	if (a->every_ms > 0) {
		kind = "every";
		due = a->at_ms > 0 ? a->at_ms : c->now;
	} else if (a->at_ms > 0) {
		kind = "at";
		due = a->at_ms;
	} else {
		kind = "now";
		due = c->now;
	}
	if (coord_sched_queue(c->s, n, kind, due, a->every_ms, c->now) != 0)
		goto out;
	*out = n;
	ret = 0;
out:
	free(argv);
	free(env);
	return ret;
}

int
coord_tickets_add(struct coord_ctx *c)
{
	Berth__AddGranted *ag;
	Berth__Granted *g;
	int64_t n;
	int rc;

	if ((rc = tickets_add_one(c, c->req->add, &n)) != 0)
		return rc < 0 ? -1 : 0;
	coord_store_ticket_name(n, c->ticket, sizeof c->ticket);
	g = coord_store_granted(c);
	ag = coord_store_alloc(sizeof *ag);
	berth__add_granted__init(ag);
	ag->ticket = coord_store_strdup(c->ticket);
	g->payload_case = BERTH__GRANTED__PAYLOAD_ADD;
	g->add = ag;
	c->wake = 1;
	return 0;
}

int
coord_tickets_add_batch(struct coord_ctx *c)
{
	const Berth__AddBatch *b = c->req->add_batch;
	Berth__AddBatchGranted *ag;
	Berth__Granted *g;
	char id[32];
	int64_t n;
	size_t i;
	int rc;

	if (b == NULL || b->n_adds == 0) {
		coord_store_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "empty batch");
		return 0;
	}
	ag = coord_store_alloc(sizeof *ag);
	berth__add_batch_granted__init(ag);
	ag->tickets = coord_store_alloc(b->n_adds * sizeof *ag->tickets);
	/* All or nothing: one refusal fails the batch and the transaction is
	 * rolled back. */
	for (i = 0; i < b->n_adds; i++) {
		if ((rc = tickets_add_one(c, b->adds[i], &n)) != 0) {
			berth__add_batch_granted__free_unpacked(ag, NULL);
			return rc < 0 ? -1 : 0;
		}
		coord_store_ticket_name(n, id, sizeof id);
		ag->tickets[ag->n_tickets++] = coord_store_strdup(id);
	}
	g = coord_store_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_ADD_BATCH;
	g->add_batch = ag;
	c->wake = 1;
	return 0;
}

/* ------------------------------------------------------------ list, show */

int
coord_tickets_list(struct coord_ctx *c)
{
	static const char q_all[] = "SELECT n FROM tickets ORDER BY n LIMIT ?";
	static const char q_state[] =
		"SELECT n FROM tickets INDEXED BY tickets_state WHERE state = ? ORDER BY n LIMIT ?";
	/* "blocked" is derived (coord_sched_blocked): a ready ticket with a
	 * dependency that has not succeeded. Selected here, so that only the
	 * tickets returned are loaded. */
	static const char q_blocked[] =
		"SELECT t.n FROM tickets t INDEXED BY tickets_state WHERE t.state = 'ready'"
		" AND EXISTS (SELECT 1 FROM ticket_deps d JOIN tickets u ON u.n = d.dep"
		" WHERE d.ticket = t.n AND u.state != 'succeeded') ORDER BY t.n LIMIT ?";
	const Berth__List *m = c->req->list;
	const char *filter = m && m->state && m->state[0] ? m->state : NULL;
	int64_t limit = m && m->limit ? (int64_t)m->limit : -1;
	Berth__TicketList *tl;
	Berth__Granted *g;
	sqlite3_stmt *st;
	int64_t *ns = NULL;
	size_t nn = 0, cap = 0, i, size = 0;
	int rc;

	if (filter && strcmp(filter, "blocked") == 0)
		st = coord_store_q(c->s, q_blocked, "i", limit);
	else if (filter)
		st = coord_store_q(c->s, q_state, "ti", filter, limit);
	else
		st = coord_store_q(c->s, q_all, "i", limit);
	if (st == NULL)
		return -1;
	while ((rc = coord_store_step(c->s, st)) == 1) {
		if (nn == cap) {
			int64_t *nv;

			cap = cap ? cap * 2 : 64;
			nv = coord_store_alloc(cap * sizeof *nv);
			if (ns)
				memcpy(nv, ns, nn * sizeof *nv);
			free(ns);
			ns = nv;
		}
		ns[nn++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	if (rc < 0) {
		free(ns);
		return -1;
	}
	g = coord_store_granted(c);
	tl = coord_store_alloc(sizeof *tl);
	berth__ticket_list__init(tl);
	g->payload_case = BERTH__GRANTED__PAYLOAD_LIST;
	g->list = tl;
	tl->has_now_ms = 1;
	tl->now_ms = c->now;
	tl->tickets = coord_store_alloc((nn ? nn : 1) * sizeof *tl->tickets);
	for (i = 0; i < nn; i++) {
		Berth__Ticket *t = coord_tickets_load(c->s, ns[i], c->now, 0);

		if (t == NULL) {
			free(ns);
			return -1;
		}
		size += berth__ticket__get_packed_size(t) + 8;
		if (size > COORD_REPLY_BUDGET) {
			berth__ticket__free_unpacked(t, NULL);
			tl->has_truncated = tl->truncated = 1;
			break;
		}
		tl->tickets[tl->n_tickets++] = t;
	}
	free(ns);
	return 0;
}

int
coord_tickets_show(struct coord_ctx *c)
{
	const Berth__Show *m = c->req->show;
	int64_t n;
	int rc;

	if ((rc = tickets_resolve(c, m ? m->id : NULL, &n)) != 1)
		return rc;
	return tickets_reply(c, n, 1);
}

/* ------------------------------------------------------------ hold .. cancel */

static int
tickets_state(struct coord_ctx *c, int64_t n, char *buf, size_t len)
{
	static const char sql[] = "SELECT state FROM tickets WHERE n = ?";
	sqlite3_stmt *st;
	int rc;

	if ((st = coord_store_q(c->s, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_store_step(c->s, st)) == 1)
		snprintf(buf, len, "%s", coord_store_coltext(st, 0));
	sqlite3_reset(st);
	return rc == 1 ? 0 : -1;
}

static int
tickets_set_state(struct coord_ctx *c, int64_t n, const char *state)
{
	static const char sql[] = "UPDATE tickets SET state = ?, updated_ms = ? WHERE n = ?";

	return coord_store_run(c->s, sql, "tii", state, c->now, n) == 1 ? 0 : -1;
}

static int
tickets_ref(struct coord_ctx *c, const Berth__TicketRef *ref, int64_t *n, char *state,
	    size_t len)
{
	int rc;

	if ((rc = tickets_resolve(c, ref ? ref->id : NULL, n)) != 1)
		return rc;
	return tickets_state(c, *n, state, len) == 0 ? 1 : -1;
}

int
coord_tickets_hold(struct coord_ctx *c)
{
	char state[16];
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, c->req->hold, &n, state, sizeof state)) != 1)
		return rc;
	/* Only a ticket that is not running can be held (DECISIONS.md). */
	if (strcmp(state, "ready") != 0 && strcmp(state, "held") != 0) {
		coord_store_deny(c, "not_ready", "state", state, NULL);
		return 0;
	}
	if (strcmp(state, "ready") == 0 && tickets_set_state(c, n, "held") != 0)
		return -1;
	return tickets_reply(c, n, 0);
}

int
coord_tickets_release(struct coord_ctx *c)
{
	char state[16];
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, c->req->release, &n, state, sizeof state)) != 1)
		return rc;
	if (strcmp(state, "ready") != 0 && strcmp(state, "held") != 0) {
		coord_store_deny(c, "not_ready", "state", state, NULL);
		return 0;
	}
	if (strcmp(state, "held") == 0 && tickets_set_state(c, n, "ready") != 0)
		return -1;
	c->wake = 1;
	return tickets_reply(c, n, 0);
}

int
coord_tickets_retry(struct coord_ctx *c)
{
	static const char q_last[] =
		"SELECT state FROM runs WHERE ticket = ? ORDER BY attempt DESC LIMIT 1";
	static const char q_cancel[] =
		"UPDATE activations SET state = 'cancelled', done_ms = ? WHERE ticket = ?"
		" AND state = 'queued'";
	static const char q_budget[] =
		"UPDATE tickets SET state = 'ready', bad_runs = 0, updated_ms = ? WHERE n = ?";
	static const char q_every[] = "SELECT every_ms FROM tickets WHERE n = ?";
	char state[16], last[16] = "";
	sqlite3_stmt *st;
	int64_t n, every = 0;
	int rc;

	if ((rc = tickets_ref(c, c->req->retry, &n, state, sizeof state)) != 1)
		return rc;
	if ((st = coord_store_q(c->s, q_last, "i", n)) == NULL)
		return -1;
	if ((rc = coord_store_step(c->s, st)) == 1)
		snprintf(last, sizeof last, "%s", coord_store_coltext(st, 0));
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	/* failed or cancelled, or a ready ticket whose last run was orphaned
	 * (waiting out its backoff): ready now, with a fresh budget. */
	if (strcmp(state, "failed") != 0 && strcmp(state, "cancelled") != 0 &&
	    !(strcmp(state, "ready") == 0 && strcmp(last, "orphaned") == 0)) {
		coord_store_deny(c, "not_ready", "state", state, NULL);
		return 0;
	}
	if (coord_store_int(c->s, &every, q_every, "i", n) < 0)
		return -1;
	if (coord_store_run(c->s, q_cancel, "ii", c->now, n) < 0 ||
	    coord_store_run(c->s, q_budget, "ii", c->now, n) != 1 ||
	    coord_sched_queue(c->s, n, every > 0 ? "every" : "now", c->now, every, c->now) != 0)
		return -1;
	c->wake = 1;
	return tickets_reply(c, n, 0);
}

int
coord_tickets_cancel(struct coord_ctx *c)
{
	static const char q_run[] = "SELECT id FROM runs WHERE ticket = ? AND settled_ms IS NULL";
	/* A cancel overrides a timeout stop: the user's word is final. */
	static const char q_stop[] =
		"UPDATE runs SET stop_reason = 'cancel', stop_ms = ? WHERE id = ?"
		" AND (stop_reason IS NULL OR stop_reason != 'cancel')";
	static const char q_cancel[] =
		"UPDATE activations SET state = 'cancelled', done_ms = ? WHERE ticket = ?"
		" AND state = 'queued'";
	char state[16], run[40] = "";
	sqlite3_stmt *st;
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, c->req->cancel, &n, state, sizeof state)) != 1)
		return rc;
	if ((st = coord_store_q(c->s, q_run, "i", n)) == NULL)
		return -1;
	if ((rc = coord_store_step(c->s, st)) == 1)
		snprintf(run, sizeof run, "%s", coord_store_coltext(st, 0));
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	if (run[0] != '\0') {
		/* A stop request: the reaper enforces it and the run settles
		 * cancelled. */
		snprintf(c->run, sizeof c->run, "%s", run);
		if (coord_store_run(c->s, q_stop, "it", c->now, run) < 0)
			return -1;
		return tickets_reply(c, n, 0);
	}
	if (strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0) {
		coord_store_deny(c, "not_ready", "state", state, NULL);
		return 0;
	}
	if (strcmp(state, "cancelled") != 0 &&
	    (tickets_set_state(c, n, "cancelled") != 0 ||
	     coord_store_run(c->s, q_cancel, "ii", c->now, n) < 0))
		return -1;
	c->wake = 1;
	return tickets_reply(c, n, 0);
}

/* ------------------------------------------------------------ status */

int
coord_tickets_status(struct coord_ctx *c)
{
	static const char q_counts[] =
		"SELECT state, count(*) FROM tickets GROUP BY state ORDER BY state";
	static const char q_blocked[] =
		"SELECT count(*) FROM tickets t WHERE t.state = 'ready' AND EXISTS"
		" (SELECT 1 FROM ticket_deps d JOIN tickets u ON u.n = d.dep"
		"  WHERE d.ticket = t.n AND u.state != 'succeeded')";
	static const char q_live[] = "SELECT " COORD_RUN_COLS
				     " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
				     " WHERE r.settled_ms IS NULL ORDER BY r.claimed_ms";
	Berth__StatusReply *sr;
	Berth__Granted *g;
	sqlite3_stmt *st;
	int64_t blocked = 0;
	size_t cap = 0;
	char buf[24];
	int rc;

	if (coord_store_int(c->s, &blocked, q_blocked, "") < 0)
		return -1;
	g = coord_store_granted(c);
	sr = coord_store_alloc(sizeof *sr);
	berth__status_reply__init(sr);
	g->payload_case = BERTH__GRANTED__PAYLOAD_STATUS;
	g->status = sr;
	sr->has_now_ms = 1;
	sr->now_ms = c->now;
	sr->ticket_counts = coord_store_alloc(8 * sizeof *sr->ticket_counts);
	if ((st = coord_store_q(c->s, q_counts, "")) == NULL)
		return -1;
	while ((rc = coord_store_step(c->s, st)) == 1 && sr->n_ticket_counts < 7) {
		Berth__Fact *f = coord_store_alloc(sizeof *f);
		int64_t cnt = sqlite3_column_int64(st, 1);

		if (strcmp(coord_store_coltext(st, 0), "ready") == 0)
			cnt -= blocked;
		berth__fact__init(f);
		f->key = coord_store_col(st, 0);
		snprintf(buf, sizeof buf, "%" PRId64, cnt);
		f->value = coord_store_strdup(buf);
		sr->ticket_counts[sr->n_ticket_counts++] = f;
	}
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	if (blocked > 0) {
		Berth__Fact *f = coord_store_alloc(sizeof *f);

		berth__fact__init(f);
		f->key = coord_store_strdup("blocked");
		snprintf(buf, sizeof buf, "%" PRId64, blocked);
		f->value = coord_store_strdup(buf);
		sr->ticket_counts[sr->n_ticket_counts++] = f;
	}
	if ((st = coord_store_q(c->s, q_live, "")) == NULL)
		return -1;
	while ((rc = coord_store_step(c->s, st)) == 1) {
		if (sr->n_running == cap) {
			Berth__Run **nv;

			cap = cap ? cap * 2 : 16;
			nv = coord_store_alloc(cap * sizeof *nv);
			if (sr->running)
				memcpy(nv, sr->running, sr->n_running * sizeof *nv);
			free(sr->running);
			sr->running = nv;
		}
		sr->running[sr->n_running++] = coord_runs_from_row(st);
	}
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	sr->actors = coord_runs_actors(c->s, &sr->n_actors);
	return 0;
}
