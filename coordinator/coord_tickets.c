/* The operator verbs on tickets (DESIGN §4, DECISIONS.md): add and
 * add_batch here, with the loader and the id resolver every ticket verb
 * uses; list, show, status in coord_ticket_list.c; hold, release, retry,
 * cancel in coord_ticket_hold.c. Unknown ids are ERR_NOT_FOUND; a ticket
 * in the wrong state is denied not_ready{state}. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_place.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_settings.h"
#include "coord_tickets.h"
#include "coord_tickets_int.h"
#include "labels.h"
#include "msg.h"
#include "states.h"

#define TICKET_COLS                                                                      \
	"name, argv, workdir, env, seat_key, state, attempts, max_attempts, priority,"   \
	" timeout_ms, created_ms, updated_ms, every_ms, isolate, after_any, failed_dep," \
	" host_wanted, labels"

/* The ticket row itself into t: 1, 0 no such ticket, -1 error. */
static int
tickets_row(struct coord_db *db, int64_t n, Berth__Ticket *t)
{
	static const char sql[] = "SELECT " TICKET_COLS " FROM tickets WHERE n = ?";
	char buf[32], *argv = NULL, *env = NULL;
	struct coord_st *st;
	size_t i;
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) != 1) {
		coord_db_done(st);
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
	t->attempts = (uint32_t)coord_db_i64(st, 6);
	t->max_attempts = (uint32_t)coord_db_i64(st, 7);
	t->priority = (int)coord_db_i64(st, 8);
	t->timeout_ms = coord_db_i64(st, 9);
	t->has_created_ms = t->has_updated_ms = t->has_every_ms = 1;
	t->created_ms = coord_db_i64(st, 10);
	t->updated_ms = coord_db_i64(st, 11);
	t->every_ms = coord_db_i64(st, 12);
	t->has_isolate = t->has_after_any = 1;
	t->isolate = (int)coord_db_i64(st, 13) != 0;
	t->after_any = (int)coord_db_i64(st, 14) != 0;
	if (!coord_db_isnull(st, 15)) {
		coord_rows_ticket_name(coord_db_i64(st, 15), buf, sizeof buf);
		t->dependency = coord_mem_strdup(buf);
	}
	t->host_wanted = coord_db_col(st, 16);
	coord_place_split(coord_db_coltext(st, 17), &t->labels, &t->n_labels);
	coord_db_done(st);
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
	struct coord_st *st;
	size_t cap = 0;
	char buf[32];
	int rc;

	if ((st = coord_db_q(db, sql, "i", n)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_rows_ticket_name(coord_db_i64(st, 0), buf, sizeof buf);
		coord_mem_grow(&t->after, t->n_after, &cap, sizeof *t->after, 4);
		t->after[t->n_after++] = coord_mem_strdup(buf);
	}
	coord_db_done(st);
	return rc;
}

/* A ready ticket that no live host may claim says so (after what else
 * it waits for, if anything). */
static int
tickets_place_waiting(struct coord_db *db, const Berth__Ticket *t, char *buf, size_t len)
{
	char labels[LABELS_JOINED_MAX], why[LABELS_JOINED_MAX + 100];
	size_t at = strlen(buf);
	int rc;

	if ((t->host_wanted == NULL || t->host_wanted[0] == '\0') && t->n_labels == 0)
		return 0;
	if (labels_join(t->labels, t->n_labels, labels, sizeof labels) != 0)
		return -1;
	if ((rc = coord_place_waiting(db, t->host_wanted ? t->host_wanted : "", labels, why,
				      sizeof why)) <= 0)
		return rc;
	snprintf(buf + at, len - at, "%s%s", at > 0 ? "; " : "", why);
	return 0;
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
	char buf[512 + LABELS_JOINED_MAX + 100];
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
		if (coord_sched_waiting(db, n, now, &w, buf, sizeof buf) != 0 ||
		    (!w.blocked && tickets_place_waiting(db, t, buf, sizeof buf) != 0))
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
	struct coord_st *st;
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
Berth__Ticket *
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
	struct coord_st *st;
	int rc, found = 0;

	if ((st = coord_db_q(c->db, sql, "t", id)) == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		*n = coord_db_i64(st, 0);
		coord_rows_alias_name(*n, coord_db_i64(st, 1), found ? second : first,
				      sizeof first);
		found++;
	}
	coord_db_done(st);
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
		" priority, state, every_ms, created_ms, updated_ms, tree_seat, isolate, after_any,"
		" host_wanted, labels)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING n";
	static const char q_dep[] =
		"INSERT INTO ticket_deps (ticket, dep) VALUES (?, ?) ON CONFLICT DO NOTHING";
	char *argv = NULL, *env = NULL, labels[LABELS_JOINED_MAX];
	int64_t n, dep, due;
	const char *kind;
	size_t i;
	int rc, ret = -1;

	if ((rc = tickets_add_check(c, a)) != 0)
		return rc;
	if (coord_place_check(c, a->host, a->labels, a->n_labels, labels, sizeof labels) != 0)
		return 1;

	argv = coord_rows_json_array(a->argv, a->n_argv);
	env = coord_rows_json_array(a->env, a->n_env);
	/* Only a named --workdir takes the working tree as a seat; the
	 * caller's cwd filled in by default does not. */
	if (coord_db_int(c->db, &n, q_ins, "tttttiiitiiiiiitt", a->name ? a->name : "", argv,
			 a->workdir ? a->workdir : "", env, a->key ? a->key : "", a->timeout_ms,
			 (int64_t)a->retries + 1, (int64_t)a->priority,
			 ticket_state_name(a->hold ? TICKET_HELD : TICKET_READY), a->every_ms,
			 c->now, c->now, (int64_t) !(a->has_workdir_default && a->workdir_default),
			 (int64_t)(a->has_isolate && a->isolate),
			 (int64_t)(a->has_after_any && a->after_any), a->host ? a->host : "",
			 labels) != 1)
		goto out;
	coord_db_added(c->db, 1);
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
