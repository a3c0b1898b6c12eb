/* The operator verbs on tickets (DESIGN §4, DECISIONS.md): add, list, show,
 * hold, release, retry, cancel, status. Unknown ids are ERR_NOT_FOUND; a
 * ticket in the wrong state is denied not_ready{state}. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_settings.h"
#include "coord_tickets.h"
#include "msg.h"
#include "states.h"

#define TICKET_COLS                                                                    \
	"name, argv, workdir, env, seat_key, state, attempts, max_attempts, priority," \
	" timeout_ms, created_ms, updated_ms, every_ms, isolate, after_any, failed_dep"

/* The ticket row itself into t: 1, 0 no such ticket, -1 error. */
static int
tickets_row(struct coord_db *db, int64_t n, Berth__Ticket *t)
{
	static const char sql[] = "SELECT " TICKET_COLS " FROM tickets WHERE n = ?";
	char buf[32], *argv = NULL, *env = NULL;
	sqlite3_stmt *st;
	size_t i;
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) != 1) {
		sqlite3_reset(st);
		return rc;
	}
	coord_rows_ticket_name(n, buf, sizeof buf);
	t->id = coord_mem_strdup(buf);
	t->name = coord_db_col(st, 0);
	argv = coord_db_col(st, 1);
	t->workdir = coord_db_col(st, 2);
	env = coord_db_col(st, 3);
	t->key = coord_db_col(st, 4);
	t->state = coord_db_col(st, 5);
	t->has_attempts = t->has_max_attempts = t->has_priority = t->has_timeout_ms = 1;
	t->attempts = (uint32_t)sqlite3_column_int64(st, 6);
	t->max_attempts = (uint32_t)sqlite3_column_int64(st, 7);
	t->priority = sqlite3_column_int(st, 8);
	t->timeout_ms = sqlite3_column_int64(st, 9);
	t->has_created_ms = t->has_updated_ms = t->has_every_ms = 1;
	t->created_ms = sqlite3_column_int64(st, 10);
	t->updated_ms = sqlite3_column_int64(st, 11);
	t->every_ms = sqlite3_column_int64(st, 12);
	t->has_isolate = t->has_after_any = 1;
	t->isolate = sqlite3_column_int(st, 13) != 0;
	t->after_any = sqlite3_column_int(st, 14) != 0;
	if (sqlite3_column_type(st, 15) != SQLITE_NULL) {
		coord_rows_ticket_name(sqlite3_column_int64(st, 15), buf, sizeof buf);
		t->dependency = coord_mem_strdup(buf);
	}
	sqlite3_reset(st);
	rc = coord_rows_json_list(db, argv, &t->argv, &t->n_argv) == 0 &&
			     coord_rows_json_list(db, env, &t->env, &t->n_env) == 0
		     ? 1
		     : -1;
	/* The names only: the values (tokens, passwords) reach nobody but
	 * the supervisor that claims the ticket (ClaimGranted.env). */
	for (i = 0; rc == 1 && i < t->n_env; i++)
		t->env[i][strcspn(t->env[i], "=")] = '\0';
	free(argv);
	free(env);
	return rc;
}

static int
tickets_deps(struct coord_db *db, int64_t n, Berth__Ticket *t)
{
	static const char sql[] = "SELECT dep FROM ticket_deps WHERE ticket = ? ORDER BY dep";
	sqlite3_stmt *st;
	size_t cap = 0;
	char buf[32];
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_rows_ticket_name(sqlite3_column_int64(st, 0), buf, sizeof buf);
		coord_mem_grow(&t->after, t->n_after, &cap, sizeof *t->after, 4);
		t->after[t->n_after++] = coord_mem_strdup(buf);
	}
	sqlite3_reset(st);
	return rc;
}

/* The next due activation, and why the ticket does not run (Ticket.waiting;
 * a ready ticket with an unfinished dependency shows as blocked). */
static int
tickets_waiting(struct coord_db *db, int64_t n, int64_t now, Berth__Ticket *t)
{
	static const char sql[] =
		"SELECT due_ms FROM activations WHERE ticket = ? AND state = " SQL_ACT_QUEUED
		" ORDER BY due_ms LIMIT 1";
	struct coord_sched_why w;
	enum ticket_state ts;
	char buf[512];
	int rc;

	memset(&w, 0, sizeof w);
	if ((rc = coord_db_int(db, &w.due, sql, "i", n)) < 0)
		return -1;
	w.has_due = rc == 1;
	t->has_next_due_ms = 1;
	t->next_due_ms = w.has_due ? w.due : 0;
	ts = ticket_state_parse(t->state);
	w.after_any = t->after_any;
	if (ts == TICKET_DEPENDENCY_FAILED) {
		enum ticket_state ds = TICKET_ABSENT;
		int64_t dep;

		if (t->dependency != NULL && coord_rows_ticket_parse(t->dependency, &dep) == 0 &&
		    coord_rows_ticket_state(db, dep, &ds) != 0)
			return -1;
		snprintf(buf, sizeof buf, "dependency %s %s", t->dependency ? t->dependency : "?",
			 ds == TICKET_ABSENT ? "removed" : ticket_state_name(ds));
		t->waiting = coord_mem_strdup(buf);
	} else if (ts == TICKET_READY) {
		/* Without dependencies nothing can block it: no query. */
		if (t->n_after > 0 && (w.blocked = coord_sched_blocked(db, n, &w.dep, w.dep_state,
								       sizeof w.dep_state)) < 0)
			return -1;
		if (w.blocked) {
			free(t->state);
			t->state = coord_mem_strdup(COORD_SCHED_BLOCKED);
		}
		if (coord_sched_waiting(db, n, now, &w, buf, sizeof buf) != 0)
			return -1;
		t->waiting = coord_mem_strdup(buf);
	} else if (ts == TICKET_HELD) {
		t->waiting = coord_mem_strdup(ticket_state_name(TICKET_HELD));
	}
	return 0;
}

/* Every run of the ticket, in attempt order, with its notes. */
static int
tickets_runs(struct coord_db *db, int64_t n, Berth__Ticket *t)
{
	static const char sql[] =
		"SELECT " COORD_RUN_COLS " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
		" WHERE r.ticket = ? ORDER BY r.attempt";
	sqlite3_stmt *st;
	size_t cap = 0, i;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL ||
	    coord_rows_runs(db, st, &t->runs, &t->n_runs, &cap) < 0)
		return -1;
	for (i = 0; i < t->n_runs; i++) {
		Berth__Run *full = coord_rows_run_load(db, t->runs[i]->id, 1);

		if (full == NULL)
			return -1;
		berth__run__free_unpacked(t->runs[i], NULL);
		t->runs[i] = full;
	}
	return 0;
}

/* Ticket n as a message, its runs too when asked; NULL on error. */
static Berth__Ticket *
tickets_load(struct coord_db *db, int64_t n, int64_t now, int with_runs)
{
	Berth__Ticket *t = coord_mem_alloc(sizeof *t);

	berth__ticket__init(t);
	if (tickets_row(db, n, t) != 1 || tickets_deps(db, n, t) < 0 ||
	    tickets_waiting(db, n, now, t) != 0 || (with_runs && tickets_runs(db, n, t) != 0)) {
		berth__ticket__free_unpacked(t, NULL);
		return NULL;
	}
	return t;
}

/* A run id prefix (8 to 31 hex digits, as trace prints one): the ticket
 * of the one run it names. 1, 0 none or more than one (the error reply
 * says which), -1 storage. */
static int
tickets_run_prefix(struct coord_ctx *c, const char *id, int64_t *n)
{
	/* Run ids are lowercase hex: every id with the prefix sorts in
	 * [prefix, prefix || 'g'), a range of the primary key. */
	static const char sql[] = "SELECT ticket, attempt FROM runs WHERE id >= ?1"
				  " AND id < ?1 || 'g' ORDER BY id LIMIT 2";
	char first[48] = "", second[48] = "";
	sqlite3_stmt *st;
	int rc, found = 0;

	if ((st = coord_db_q(c->db, sql, "t", id)) == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		*n = sqlite3_column_int64(st, 0);
		coord_rows_alias_name(*n, sqlite3_column_int64(st, 1), found ? second : first,
				      sizeof first);
		found++;
	}
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	if (found == 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no run id starts with '%s'",
				 id);
		return 0;
	}
	if (found > 1) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "'%s' starts more than one run id (%s, %s, ...): give more digits",
				 id, first, second);
		return 0;
	}
	return 1;
}

int
coord_tickets_resolve(struct coord_ctx *c, const char *id, int64_t *n)
{
	static const char q_ticket[] = "SELECT n FROM tickets WHERE n = ?";
	static const char q_alias[] = "SELECT ticket FROM runs WHERE ticket = ? AND attempt = ?";
	static const char q_run[] = "SELECT ticket FROM runs WHERE id = ?";
	static const char q_last[] = "SELECT max(n) FROM tickets";
	int64_t attempt;
	size_t len;
	int rc;

	if (id == NULL || id[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "missing id");
		return 0;
	}
	len = strlen(id);
	if (strcmp(id, "last") == 0) {
		/* The newest ticket: max(n) is NULL without any. */
		if ((rc = coord_db_int(c->db, n, q_last, "")) == 1 && *n <= 0)
			rc = 0;
		if (rc == 0) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND,
					 "no tickets yet ('last' names the newest)");
			return 0;
		}
	} else if (coord_rows_ticket_parse(id, n) == 0)
		rc = coord_db_int(c->db, n, q_ticket, "i", *n);
	else if (coord_rows_alias_parse(id, n, &attempt) == 0)
		rc = coord_db_int(c->db, n, q_alias, "ii", *n, attempt);
	else if (coord_rows_is_hex(id, 32))
		rc = coord_db_int(c->db, n, q_run, "t", id);
	else if (len >= 8 && len < 32 && coord_rows_is_hex(id, len)) {
		if ((rc = tickets_run_prefix(c, id, n)) != 1)
			return rc;
	} else {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "'%s' is not a ticket id, run id (or 8+ of its digits), alias or "
				 "'last'",
				 id);
		return 0;
	}
	if (rc == 0)
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND, "no ticket or run '%s'", id);
	else if (rc == 1)
		coord_rows_ticket_name(*n, c->ticket, sizeof c->ticket);
	return rc;
}

int
coord_tickets_reply(struct coord_ctx *c, int64_t n, int with_runs)
{
	Berth__Ticket *t = tickets_load(c->db, n, c->now, with_runs);
	Berth__Granted *g;

	if (t == NULL)
		return -1;
	g = coord_reply_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_TICKET;
	g->ticket = t;
	return 0;
}

/* ------------------------------------------------------------ add */

/* An add's fields, checked before anything is written: 0 fine, 1 refused
 * (error reply set), -1 storage. */
static int
tickets_add_check(struct coord_ctx *c, const Berth__Add *a)
{
	static const char q_exists[] = "SELECT n FROM tickets WHERE n = ?";
	char why[160];
	int64_t dep;
	size_t i;
	int rc;

	if (a == NULL || a->n_argv == 0 || a->argv[0] == NULL || a->argv[0][0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "add needs a command (argv)");
		return 1;
	}
	/* The CLI checks these before it sends; any other sender is held to
	 * them here (proto/berth_limits.h). */
	if (msg_add_limits(a, why, sizeof(why)) != 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "%s", why);
		return 1;
	}
	if (a->timeout_ms < 0 || a->every_ms < 0 || a->at_ms < 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "timeout, --every and --at must not be negative");
		return 1;
	}
	/* Schedules and timeouts are added to times: bounded, so no sum
	 * overflows (an --every firing is due + k * every). */
	if (a->timeout_ms > COORD_TICKETS_MAX_DURATION_MS ||
	    a->every_ms > COORD_TICKETS_MAX_DURATION_MS || a->at_ms > COORD_TICKETS_MAX_TIME_MS) {
		coord_reply_fail(
			c, BERTH__ERROR_CODE__ERR_INVALID,
			"timeout and --every are at most 100 years, --at before year 10000");
		return 1;
	}
	if ((a->key && strlen(a->key) > COORD_SEAT_NAME_MAX) ||
	    (a->workdir && strlen(a->workdir) > COORD_SEAT_PATH_MAX)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "--key is at most %d bytes, --workdir %d", COORD_SEAT_NAME_MAX,
				 COORD_SEAT_PATH_MAX);
		return 1;
	}
	for (i = 0; i < a->n_env; i++) {
		if (a->env[i] == NULL || strchr(a->env[i], '=') == NULL || a->env[i][0] == '=') {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "env entry '%s' is not NAME=value",
					 a->env[i] ? a->env[i] : "");
			return 1;
		}
	}
	for (i = 0; i < a->n_after; i++) {
		if (coord_rows_ticket_parse(a->after[i], &dep) != 0) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "--after '%s' is not a ticket id",
					 a->after[i] ? a->after[i] : "");
			return 1;
		}
		if ((rc = coord_db_int(c->db, &dep, q_exists, "i", dep)) < 0)
			return -1;
		if (rc == 0) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_NOT_FOUND,
					 "--after names unknown ticket %s", a->after[i]);
			return 1;
		}
	}
	return 0;
}

/* Validates and inserts one ticket with its first activation: 0 added, 1
 * refused (error reply set), -1 storage. */
static int
tickets_add_one(struct coord_ctx *c, const Berth__Add *a, int64_t *out)
{
	static const char q_ins[] =
		"INSERT INTO tickets (name, argv, workdir, env, seat_key, timeout_ms, max_attempts,"
		" priority, state, every_ms, created_ms, updated_ms, tree_seat, isolate, after_any)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char q_dep[] = "INSERT OR IGNORE INTO ticket_deps (ticket, dep) VALUES (?, ?)";
	char *argv = NULL, *env = NULL;
	int64_t n, dep, due;
	const char *kind;
	size_t i;
	int rc, ret = -1;

	if ((rc = tickets_add_check(c, a)) != 0)
		return rc;

	argv = coord_rows_json_array(a->argv, a->n_argv);
	env = coord_rows_json_array(a->env, a->n_env);
	/* Only a named --workdir takes the working tree as a seat; the
	 * caller's cwd filled in by default does not. */
	if (coord_db_exec(c->db, q_ins, "tttttiiitiiiiii", a->name ? a->name : "", argv,
			  a->workdir ? a->workdir : "", env, a->key ? a->key : "", a->timeout_ms,
			  (int64_t)a->retries + 1, (int64_t)a->priority,
			  ticket_state_name(a->hold ? TICKET_HELD : TICKET_READY), a->every_ms,
			  c->now, c->now, (int64_t) !(a->has_workdir_default && a->workdir_default),
			  (int64_t)(a->has_isolate && a->isolate),
			  (int64_t)(a->has_after_any && a->after_any)) != 1)
		goto out;
	n = sqlite3_last_insert_rowid(coord_db_handle(c->db));
	for (i = 0; i < a->n_after; i++) {
		coord_rows_ticket_parse(a->after[i], &dep);
		/* The new ticket's id did not exist when its deps were
		 * checked, so it cannot name itself; the guard stays for
		 * the invariant. */
		if (dep == n) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "a ticket cannot wait for itself");
			ret = 1;
			goto out;
		}
		if (coord_db_exec(c->db, q_dep, "ii", n, dep) < 0)
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
	if (coord_sched_queue(c->db, n, kind, due, a->every_ms, c->now) != 0)
		goto out;
	/* After a dependency that has already failed it never runs. */
	if (a->n_after > 0 && coord_sched_deps_check(c->db, n, c->now) != 0)
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
	coord_rows_ticket_name(n, c->ticket, sizeof c->ticket);
	g = coord_reply_granted(c);
	ag = coord_mem_alloc(sizeof *ag);
	berth__add_granted__init(ag);
	ag->ticket = coord_mem_strdup(c->ticket);
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
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "empty batch");
		return 0;
	}
	ag = coord_mem_alloc(sizeof *ag);
	berth__add_batch_granted__init(ag);
	ag->tickets = coord_mem_alloc(b->n_adds * sizeof *ag->tickets);
	/* All or nothing: one refusal fails the batch and the transaction is
	 * rolled back. */
	for (i = 0; i < b->n_adds; i++) {
		if ((rc = tickets_add_one(c, b->adds[i], &n)) != 0) {
			berth__add_batch_granted__free_unpacked(ag, NULL);
			return rc < 0 ? -1 : 0;
		}
		coord_rows_ticket_name(n, id, sizeof id);
		ag->tickets[ag->n_tickets++] = coord_mem_strdup(id);
	}
	g = coord_reply_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_ADD_BATCH;
	g->add_batch = ag;
	c->wake = 1;
	return 0;
}

/* ------------------------------------------------------------ list, show */

/*
 * The tickets a list matches, as SQL: every ticket, those in one state, the
 * blocked ones ("blocked" is derived, coord_sched_blocked: a ready ticket
 * with a dependency it waits for; selected here, so that only the tickets
 * returned are loaded) and the ready ones (a ready ticket that is not
 * blocked). Parameters alike in every variant: ?1 the state, ?2 < n < ?3
 * the cursor's window, ?4 the row limit. Each kind has its two orders and
 * its count.
 */
#define LIST_ALL "FROM tickets t WHERE t.n > ?2 AND t.n < ?3"
#define LIST_STATE \
	"FROM tickets t INDEXED BY tickets_state WHERE t.state = ?1 AND t.n > ?2 AND t.n < ?3"
#define LIST_READY(not )                                                            \
	"FROM tickets t INDEXED BY tickets_state WHERE t.state = " SQL_TICKET_READY \
	" AND t.n > ?2 AND t.n < ?3 AND " not COORD_SCHED_BLOCKED_SQL("t")
#define LIST_QUERIES(w)                                                                     \
	{                                                                                   \
		"SELECT t.n " w " ORDER BY t.n LIMIT ?4",                                   \
			"SELECT t.n " w " ORDER BY t.n DESC LIMIT ?4", "SELECT count(*) " w \
	}

enum { LIST_K_ALL, LIST_K_STATE, LIST_K_BLOCKED, LIST_K_READY };

static const char *const list_q[4][3] = { LIST_QUERIES(LIST_ALL), LIST_QUERIES(LIST_STATE),
					  LIST_QUERIES(LIST_READY("")),
					  LIST_QUERIES(LIST_READY("NOT ")) };

/* The ticket numbers of one page, in its order, at most limit of them (-1:
 * no limit); 0, or -1 on error. */
static int
list_page(struct coord_ctx *c, int kind, const char *filter, int newest, int64_t lo, int64_t hi,
	  int64_t limit, int64_t **ns, size_t *nn)
{
	sqlite3_stmt *st = coord_db_q(c->db, list_q[kind][newest], "tiii", filter, lo, hi, limit);
	size_t cap = 0;
	int rc;

	*ns = NULL;
	*nn = 0;
	if (st == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		coord_mem_grow(ns, *nn, &cap, sizeof **ns, 64);
		(*ns)[(*nn)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	return rc < 0 ? -1 : 0;
}

/* A page ends before the last match: its cursor, and how many match beyond
 * it (a caller that stops here says how many it left out). */
static int
list_more(struct coord_ctx *c, Berth__TicketList *tl, int kind, const char *filter, int newest,
	  int64_t lo, int64_t hi, int64_t last)
{
	char id[32];
	int64_t more = 0;

	if (newest)
		hi = last;
	else
		lo = last;
	if (coord_db_int(c->db, &more, list_q[kind][2], "tii", filter, lo, hi) < 0)
		return -1;
	if (more <= 0)
		return 0;
	coord_rows_ticket_name(last, id, sizeof id);
	tl->next = coord_mem_strdup(id);
	tl->has_more = 1;
	tl->more = (uint64_t)more;
	return 0;
}

int
coord_tickets_list(struct coord_ctx *c)
{
	const Berth__List *m = c->req->list;
	const char *filter = m && m->state && m->state[0] ? m->state : NULL;
	int64_t limit = m && m->limit ? (int64_t)m->limit : -1, lo = 0, hi = INT64_MAX, after;
	int newest = m != NULL && m->has_newest_first && m->newest_first;
	int kind = !filter                                      ? LIST_K_ALL
		   : strcmp(filter, COORD_SCHED_BLOCKED) == 0   ? LIST_K_BLOCKED
		   : ticket_state_parse(filter) == TICKET_READY ? LIST_K_READY
								: LIST_K_STATE;
	Berth__TicketList *tl;
	Berth__Granted *g;
	int64_t *ns = NULL;
	size_t nn = 0, i, size = 0;

	if (m && m->after && m->after[0]) {
		if (coord_rows_ticket_parse(m->after, &after) != 0) {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "list: the cursor '%s' is not a ticket id", m->after);
			return 0;
		}
		if (newest)
			hi = after;
		else
			lo = after;
	}
	/* One more than asked: whether anything lies beyond the page. */
	if (list_page(c, kind, filter, newest, lo, hi, limit < 0 ? -1 : limit + 1, &ns, &nn) < 0)
		return -1;
	g = coord_reply_granted(c);
	tl = coord_mem_alloc(sizeof *tl);
	berth__ticket_list__init(tl);
	g->payload_case = BERTH__GRANTED__PAYLOAD_LIST;
	g->list = tl;
	tl->has_now_ms = 1;
	tl->now_ms = c->now;
	tl->tickets = coord_mem_alloc((nn ? nn : 1) * sizeof *tl->tickets);
	for (i = 0; i < nn && (limit < 0 || (int64_t)i < limit); i++) {
		Berth__Ticket *t = tickets_load(c->db, ns[i], c->now, 0);

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
	if (tl->n_tickets > 0 && tl->n_tickets < nn &&
	    list_more(c, tl, kind, filter, newest, lo, hi, ns[tl->n_tickets - 1]) < 0) {
		free(ns);
		return -1;
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

	if ((rc = coord_tickets_resolve(c, m ? m->id : NULL, &n)) != 1)
		return rc;
	return coord_tickets_reply(c, n, 1);
}

/* ------------------------------------------------------------ hold .. cancel */

static int
tickets_set_state(struct coord_ctx *c, int64_t n, enum ticket_state state)
{
	static const char sql[] = "UPDATE tickets SET state = ?, updated_ms = ? WHERE n = ?";

	return coord_db_exec(c->db, sql, "tii", ticket_state_name(state), c->now, n) == 1 ? 0 : -1;
}

/* The ticket a verb names and its state: 1, 0 unknown (error reply set),
 * -1 error. */
static int
tickets_ref(struct coord_ctx *c, const Berth__TicketRef *ref, int64_t *n, enum ticket_state *state)
{
	int rc;

	if ((rc = coord_tickets_resolve(c, ref ? ref->id : NULL, n)) != 1)
		return rc;
	return coord_rows_ticket_state(c->db, *n, state) == 0 ? 1 : -1;
}

/* Hold (to held) and release (to ready): only a ticket that is not running
 * moves between the two (DECISIONS.md); one already there is granted as it
 * is. */
static int
tickets_hold_release(struct coord_ctx *c, const Berth__TicketRef *ref, enum ticket_state to)
{
	enum ticket_state state;
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, ref, &n, &state)) != 1)
		return rc;
	if (state != TICKET_READY && state != TICKET_HELD) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (state != to && tickets_set_state(c, n, to) != 0)
		return -1;
	if (to == TICKET_READY)
		c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

int
coord_tickets_hold(struct coord_ctx *c)
{
	return tickets_hold_release(c, c->req->hold, TICKET_HELD);
}

int
coord_tickets_release(struct coord_ctx *c)
{
	return tickets_hold_release(c, c->req->release, TICKET_READY);
}

/* The state of ticket n's last run (RUN_ABSENT: none): 0 or -1. */
static int
tickets_last_run(struct coord_ctx *c, int64_t n, enum run_state *last)
{
	static const char sql[] =
		"SELECT state FROM runs WHERE ticket = ? ORDER BY attempt DESC LIMIT 1";
	sqlite3_stmt *st;
	int rc;

	*last = RUN_ABSENT;
	if ((st = coord_db_q(c->db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1)
		*last = run_state_parse(coord_db_coltext(st, 0));
	sqlite3_reset(st);
	return rc < 0 ? -1 : 0;
}

int
coord_tickets_retry(struct coord_ctx *c)
{
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	static const char q_budget[] =
		"UPDATE tickets SET state = " SQL_TICKET_READY ", bad_runs = 0, updated_ms = ?"
		" WHERE n = ?";
	static const char q_every[] = "SELECT every_ms FROM tickets WHERE n = ?";
	enum ticket_state state;
	enum run_state last;
	int64_t n, every = 0;
	int rc;

	if ((rc = tickets_ref(c, c->req->retry, &n, &state)) != 1)
		return rc;
	if (tickets_last_run(c, n, &last) != 0)
		return -1;
	/* failed or cancelled, or a ready ticket whose last run was orphaned
	 * (waiting out its backoff): ready now, with a fresh budget. */
	if (state == TICKET_DEPENDENCY_FAILED) {
		/* It never ran: its dependency is the one to retry. */
		Berth__Ticket *t = tickets_load(c->db, n, c->now, 0);

		if (t == NULL)
			return -1;
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), "dependency",
				 t->dependency ? t->dependency : "", NULL);
		berth__ticket__free_unpacked(t, NULL);
		return 0;
	}
	if (state != TICKET_FAILED && state != TICKET_CANCELLED &&
	    !(state == TICKET_READY && last == RUN_ORPHANED)) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (coord_db_int(c->db, &every, q_every, "i", n) < 0)
		return -1;
	if (coord_db_exec(c->db, q_cancel, "ii", c->now, n) < 0 ||
	    coord_db_exec(c->db, q_budget, "ii", c->now, n) != 1 ||
	    coord_sched_queue(c->db, n, every > 0 ? "every" : "now", c->now, every, c->now) != 0 ||
	    coord_sched_deps_rearm(c->db, n, c->now) != 0)
		return -1;
	c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

int
coord_tickets_cancel(struct coord_ctx *c)
{
	static const char q_run[] = "SELECT id FROM runs WHERE ticket = ? AND settled_ms IS NULL";
	/* A cancel overrides a timeout stop: the user's word is final. */
	static const char q_stop[] =
		"UPDATE runs SET stop_reason = " SQL_STOP_CANCEL ", stop_ms = ? WHERE id = ?"
		" AND (stop_reason IS NULL OR stop_reason != " SQL_STOP_CANCEL ")";
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	enum ticket_state state;
	char run[40] = "";
	sqlite3_stmt *st;
	int64_t n;
	int rc;

	if ((rc = tickets_ref(c, c->req->cancel, &n, &state)) != 1)
		return rc;
	if ((st = coord_db_q(c->db, q_run, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1)
		snprintf(run, sizeof run, "%s", coord_db_coltext(st, 0));
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	if (run[0] != '\0') {
		/* A stop request: the reaper enforces it and the run settles
		 * cancelled. */
		snprintf(c->run, sizeof c->run, "%s", run);
		if (coord_db_exec(c->db, q_stop, "it", c->now, run) < 0)
			return -1;
		return coord_tickets_reply(c, n, 0);
	}
	if (state == TICKET_SUCCEEDED || state == TICKET_FAILED ||
	    state == TICKET_DEPENDENCY_FAILED) {
		coord_reply_deny(c, "not_ready", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (state != TICKET_CANCELLED && (tickets_set_state(c, n, TICKET_CANCELLED) != 0 ||
					  coord_db_exec(c->db, q_cancel, "ii", c->now, n) < 0 ||
					  coord_sched_deps_failed(c->db, n, c->now) != 0))
		return -1;
	c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

/* ------------------------------------------------------------ status */

/* At most this many waiting tickets in status: the head of the queue. */
#define TICKETS_STATUS_QUEUE 10

/* The tickets status names: those of the running runs, then the head of
 * the queue in the order claims take it (ready before held, higher
 * priority first, then oldest), each with why it waits. */
static int
tickets_status_queue(struct coord_ctx *c, Berth__StatusReply *sr)
{
	static const char q_running[] =
		"SELECT DISTINCT ticket FROM runs WHERE settled_ms IS NULL ORDER BY ticket";
	static const char q_queue[] =
		"SELECT n FROM tickets WHERE state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD ")"
		" ORDER BY state = " SQL_TICKET_HELD ", priority DESC, n LIMIT ?";
	sqlite3_stmt *st;
	int64_t *ns = NULL;
	size_t nn = 0, cap = 0, i;
	int q, rc = 0;

	for (q = 0; q < 2 && rc == 0; q++) {
		st = q == 0 ? coord_db_q(c->db, q_running, "")
			    : coord_db_q(c->db, q_queue, "i", (int64_t)TICKETS_STATUS_QUEUE);
		if (st == NULL) {
			rc = -1;
			break;
		}
		while ((rc = coord_db_step(c->db, st)) == 1) {
			coord_mem_grow(&ns, nn, &cap, sizeof *ns, 16);
			ns[nn++] = sqlite3_column_int64(st, 0);
		}
		sqlite3_reset(st);
	}
	if (rc == 0 && nn > 0) {
		sr->tickets = coord_mem_alloc(nn * sizeof *sr->tickets);
		for (i = 0; rc == 0 && i < nn; i++) {
			Berth__Ticket *t = tickets_load(c->db, ns[i], c->now, 0);

			if (t == NULL)
				rc = -1;
			else
				sr->tickets[sr->n_tickets++] = t;
		}
	}
	free(ns);
	return rc < 0 ? -1 : 0;
}

int
coord_tickets_status(struct coord_ctx *c)
{
	static const char q_counts[] =
		"SELECT state, count(*) FROM tickets GROUP BY state ORDER BY state";
	static const char q_blocked[] =
		"SELECT count(*) FROM tickets t WHERE t.state = " SQL_TICKET_READY
		" AND " COORD_SCHED_BLOCKED_SQL("t");
	static const char q_live[] =
		"SELECT " COORD_RUN_COLS " FROM runs r LEFT JOIN leases l ON l.run_id = r.id"
		" WHERE r.settled_ms IS NULL ORDER BY r.claimed_ms";
	Berth__StatusReply *sr;
	Berth__Granted *g;
	sqlite3_stmt *st;
	int64_t blocked = 0;
	size_t cap = 0;
	char buf[24];
	int rc;

	if (coord_db_int(c->db, &blocked, q_blocked, "") < 0)
		return -1;
	g = coord_reply_granted(c);
	sr = coord_mem_alloc(sizeof *sr);
	berth__status_reply__init(sr);
	g->payload_case = BERTH__GRANTED__PAYLOAD_STATUS;
	g->status = sr;
	sr->has_now_ms = 1;
	sr->now_ms = c->now;
	sr->ticket_counts = coord_mem_alloc(9 * sizeof *sr->ticket_counts);
	if ((st = coord_db_q(c->db, q_counts, "")) == NULL)
		return -1;
	/* At most the seven states and blocked. */
	while ((rc = coord_db_step(c->db, st)) == 1 && sr->n_ticket_counts < TICKET_NSTATES) {
		const char *state = coord_db_coltext(st, 0);
		int64_t cnt = sqlite3_column_int64(st, 1);

		if (ticket_state_parse(state) == TICKET_READY)
			cnt -= blocked;
		snprintf(buf, sizeof buf, "%" PRId64, cnt);
		sr->ticket_counts[sr->n_ticket_counts++] = coord_reply_fact(state, buf);
	}
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	if (blocked > 0) {
		snprintf(buf, sizeof buf, "%" PRId64, blocked);
		sr->ticket_counts[sr->n_ticket_counts++] =
			coord_reply_fact(COORD_SCHED_BLOCKED, buf);
	}
	if ((st = coord_db_q(c->db, q_live, "")) == NULL ||
	    coord_rows_runs(c->db, st, &sr->running, &sr->n_running, &cap) < 0)
		return -1;
	sr->actors = coord_rows_actors(c->db, &sr->n_actors);
	if ((sr->group = coord_settings_message(c->db)) == NULL)
		return -1;
	return tickets_status_queue(c, sr);
}
