/*
 * berth edit, berth remove, berth clean (docs/CLI.md). Edit touches only a
 * queued ticket (ready or held): a claimed one has a run that was handed
 * its command and environment, and a finished one has nothing left to
 * run. Remove and clean touch only finished tickets, and never one an
 * unfinished ticket waits for (its --after would lose its meaning). The
 * run directories (runs/<run>/) are the caller's to delete: the reply
 * names the runs, and the coordinator owns only the database.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_edit.h"
#include "coord_mem.h"
#include "coord_place.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_tickets.h"
#include "labels.h"
#include "states.h"

/* One clean removes at most this many tickets (the CLI asks again while
 * it removes some), and names at most this many it kept. */
#define EDIT_CLEAN_BATCH 1000
#define EDIT_CLEAN_KEPT  20

/* ------------------------------------------------------------ edit */

/* The environment after edit m: the old one less unset_env, with set_env
 * added or replacing. A fresh JSON array (malloc'd), NULL on error. */
static char *
edit_env(struct coord_db *db, int64_t n, const Berth__Edit *m)
{
	static const char q_env[] = "SELECT env FROM tickets WHERE n = ?";
	char **env = NULL, **out, *json = NULL, *res = NULL;
	size_t nenv = 0, nout = 0, i, j, len;
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(db, q_env, "i", n)) == NULL)
		return NULL;
	if ((rc = coord_db_step(db, st)) == 1)
		json = coord_db_col(st, 0);
	coord_db_done(st);
	if (rc != 1 || coord_rows_json_list(db, json, &env, &nenv) != 0)
		goto out;
	out = coord_mem_alloc((nenv + m->n_set_env + 1) * sizeof *out);
	for (i = 0; i < nenv; i++) {
		int drop = 0;

		len = strcspn(env[i], "=");
		for (j = 0; j < m->n_unset_env; j++)
			drop |= strlen(m->unset_env[j]) == len &&
				strncmp(env[i], m->unset_env[j], len) == 0;
		for (j = 0; j < m->n_set_env; j++)
			drop |= strncmp(env[i], m->set_env[j], len) == 0 &&
				m->set_env[j][len] == '=';
		if (!drop)
			out[nout++] = env[i];
	}
	for (j = 0; j < m->n_set_env; j++)
		out[nout++] = m->set_env[j];
	res = coord_rows_json_array(out, nout);
	free(out);
out:
	for (i = 0; i < nenv; i++)
		free(env[i]);
	free(env);
	free(json);
	return res;
}

/* What edit m asks, checked before anything changes: 0 fine, 1 refused
 * (error reply set). */
static int
edit_check(struct coord_ctx *c, const Berth__Edit *m)
{
	size_t i;

	if (m->n_argv > 0 && (m->argv[0] == NULL || m->argv[0][0] == '\0')) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "edit: empty command");
		return 1;
	}
	for (i = 0; i < m->n_set_env; i++)
		if (m->set_env[i] == NULL || strchr(m->set_env[i], '=') == NULL ||
		    m->set_env[i][0] == '=') {
			coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
					 "env entry '%s' is not NAME=value",
					 m->set_env[i] ? m->set_env[i] : "");
			return 1;
		}
	if (m->at_ms < 0 || m->every_ms < 0 || m->at_ms > COORD_TICKETS_MAX_TIME_MS ||
	    m->every_ms > COORD_TICKETS_MAX_DURATION_MS) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "--every is at most 100 years, --at before year 10000");
		return 1;
	}
	if (m->has_now && m->now && (m->at_ms > 0 || m->every_ms > 0)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "--now excludes --at, --in and --every");
		return 1;
	}
	return 0;
}

/* A new schedule: the queued activations give way to one like add's. */
static int
edit_schedule(struct coord_ctx *c, int64_t n, const Berth__Edit *m)
{
	static const char q_cancel[] =
		"UPDATE activations SET state = " SQL_ACT_CANCELLED ", done_ms = ? WHERE ticket = ?"
		" AND state = " SQL_ACT_QUEUED;
	static const char q_every[] = "UPDATE tickets SET every_ms = ? WHERE n = ?";
	int64_t every = m->every_ms, due = m->at_ms > 0 ? m->at_ms : c->now;
	const char *kind = every > 0 ? "every" : m->at_ms > 0 ? "at" : "now";

	if (coord_db_exec(c->db, q_cancel, "ii", c->now, n) < 0 ||
	    coord_db_exec(c->db, q_every, "ii", every, n) != 1)
		return -1;
	return coord_sched_queue(c->db, n, kind, due, every, c->now);
}

int
coord_edit_ticket(struct coord_ctx *c)
{
	static const char q_argv[] = "UPDATE tickets SET argv = ? WHERE n = ?";
	static const char q_name[] = "UPDATE tickets SET name = ? WHERE n = ?";
	static const char q_env[] = "UPDATE tickets SET env = ? WHERE n = ?";
	static const char q_prio[] = "UPDATE tickets SET priority = ? WHERE n = ?";
	static const char q_time[] = "UPDATE tickets SET updated_ms = ? WHERE n = ?";
	static const char q_host[] = "UPDATE tickets SET host_wanted = ? WHERE n = ?";
	static const char q_labels[] = "UPDATE tickets SET labels = ? WHERE n = ?";
	const Berth__Edit *m = c->req->edit;
	char *json, labels[LABELS_JOINED_MAX];
	enum ticket_state state;
	int64_t n;
	int rc;

	if (m == NULL) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "edit: nothing to edit");
		return 0;
	}
	if ((rc = coord_tickets_resolve(c, m->id, &n)) != 1)
		return rc;
	if (coord_rows_ticket_state(c->db, n, &state) != 0)
		return -1;
	if (state != TICKET_READY && state != TICKET_HELD) {
		coord_reply_deny(c, "not_editable", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (edit_check(c, m) != 0 ||
	    coord_place_check(c, m->host, m->labels, m->n_labels, labels, sizeof labels) != 0)
		return 0;
	if (m->n_labels > 0 && !(m->has_set_labels && m->set_labels)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "edit: labels without set_labels (which says they replace the "
				 "ticket's)");
		return 0;
	}
	if (m->n_argv > 0) {
		json = coord_rows_json_array(m->argv, m->n_argv);
		rc = coord_db_exec(c->db, q_argv, "ti", json, n);
		free(json);
		if (rc != 1)
			return -1;
	}
	if (m->name != NULL && coord_db_exec(c->db, q_name, "ti", m->name, n) != 1)
		return -1;
	if (m->n_set_env > 0 || m->n_unset_env > 0) {
		if ((json = edit_env(c->db, n, m)) == NULL)
			return -1;
		rc = coord_db_exec(c->db, q_env, "ti", json, n);
		free(json);
		if (rc != 1)
			return -1;
	}
	if (m->has_priority && coord_db_exec(c->db, q_prio, "ii", (int64_t)m->priority, n) != 1)
		return -1;
	/* Placement, as add's (coord_place.h): the next claim judges it. */
	if (m->host != NULL && coord_db_exec(c->db, q_host, "ti", m->host, n) != 1)
		return -1;
	if (m->has_set_labels && m->set_labels &&
	    coord_db_exec(c->db, q_labels, "ti", labels, n) != 1)
		return -1;
	if ((m->at_ms > 0 || m->every_ms > 0 || (m->has_now && m->now)) &&
	    edit_schedule(c, n, m) != 0)
		return -1;
	if (coord_db_exec(c->db, q_time, "ii", c->now, n) != 1)
		return -1;
	c->wake = 1;
	return coord_tickets_reply(c, n, 0);
}

/* ------------------------------------------------------------ remove, clean */

/* The first unfinished ticket that waits for n (0: none): 0 or -1. */
static int
edit_dependent(struct coord_db *db, int64_t n, int64_t *dependent)
{
	static const char sql[] =
		"SELECT min(d.ticket) FROM ticket_deps d JOIN tickets t ON t.n = d.ticket"
		" WHERE d.dep = ? AND t.state NOT IN (" SQL_TICKET_FINAL ")";

	*dependent = 0;
	return coord_db_int(db, dependent, sql, "i", n) < 0 ? -1 : 0;
}

/* What a remove or clean reply is being filled with. */
struct edit_removed {
	Berth__Removed *r;
	size_t tcap, rcap;
};

/* Deletes finished ticket n and every row of its, adding it and its runs'
 * ids to the reply. 0 or -1. */
static int
edit_delete(struct coord_db *db, int64_t n, struct edit_removed *er)
{
	static const char q_runs[] = "SELECT id FROM runs WHERE ticket = ? ORDER BY attempt";
	static const char *const q_del[] = {
		"DELETE FROM run_notes WHERE run_id IN (SELECT id FROM runs WHERE ticket = ?1)",
		"DELETE FROM seats WHERE run_id IN (SELECT id FROM runs WHERE ticket = ?1)",
		"DELETE FROM leases WHERE ticket_id = ?1",
		"DELETE FROM activations WHERE ticket = ?1",
		"DELETE FROM runs WHERE ticket = ?1",
		"DELETE FROM ticket_deps WHERE ticket = ?1 OR dep = ?1",
		"DELETE FROM tickets WHERE n = ?1",
	};
	struct coord_st *st;
	char buf[32];
	size_t i;
	int rc;

	if ((st = coord_db_q(db, q_runs, "i", n)) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		coord_mem_grow(&er->r->runs, er->r->n_runs, &er->rcap, sizeof *er->r->runs, 8);
		er->r->runs[er->r->n_runs++] = coord_db_col(st, 0);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	for (i = 0; i < sizeof q_del / sizeof q_del[0]; i++)
		if (coord_db_exec(db, q_del[i], "i", n) < 0)
			return -1;
	coord_rows_ticket_name(n, buf, sizeof buf);
	coord_mem_grow(&er->r->tickets, er->r->n_tickets, &er->tcap, sizeof *er->r->tickets, 8);
	er->r->tickets[er->r->n_tickets++] = coord_mem_strdup(buf);
	return 0;
}

static void
edit_removed(struct coord_ctx *c, struct edit_removed *er)
{
	Berth__Granted *g = coord_reply_granted(c);

	er->r = coord_mem_alloc(sizeof *er->r);
	er->tcap = er->rcap = 0;
	berth__removed__init(er->r);
	g->payload_case = BERTH__GRANTED__PAYLOAD_REMOVED;
	g->removed = er->r;
}

int
coord_edit_remove(struct coord_ctx *c)
{
	const Berth__TicketRef *ref = c->req->remove;
	struct edit_removed er;
	enum ticket_state state;
	int64_t n, dependent;
	char buf[32];
	int rc;

	if ((rc = coord_tickets_resolve(c, ref ? ref->id : NULL, &n)) != 1)
		return rc;
	if (coord_rows_ticket_state(c->db, n, &state) != 0 || edit_dependent(c->db, n, &dependent))
		return -1;
	if (!ticket_state_final(state)) {
		coord_reply_deny(c, "not_finished", "state", ticket_state_name(state), NULL);
		return 0;
	}
	if (dependent > 0) {
		coord_rows_ticket_name(dependent, buf, sizeof buf);
		coord_reply_deny(c, "has_dependents", "dependent", buf, NULL);
		return 0;
	}
	edit_removed(c, &er);
	return edit_delete(c->db, n, &er);
}

int
coord_edit_clean(struct coord_ctx *c)
{
	/* Finished before the cut, of the state asked (NULL: any final one);
	 * those an unfinished ticket waits for are kept, and some named. */
#define EDIT_FINISHED                                                                        \
	" FROM tickets WHERE state IN (" SQL_TICKET_FINAL ") AND (?1 IS NULL OR state = ?1)" \
	" AND updated_ms <= ?2 AND "
#define EDIT_WAITED_FOR                                                        \
	"EXISTS (SELECT 1 FROM ticket_deps d JOIN tickets t ON t.n = d.ticket" \
	" WHERE d.dep = tickets.n AND t.state NOT IN (" SQL_TICKET_FINAL "))"
	static const char q_pick[] =
		"SELECT n" EDIT_FINISHED "NOT " EDIT_WAITED_FOR " ORDER BY n LIMIT ?3";
	static const char q_keep[] =
		"SELECT n" EDIT_FINISHED EDIT_WAITED_FOR " ORDER BY n LIMIT ?3";
#undef EDIT_FINISHED
#undef EDIT_WAITED_FOR
	const Berth__Clean *m = c->req->clean;
	const char *state = m && m->state && m->state[0] ? m->state : NULL;
	int64_t cut = c->now - (m && m->older_ms > 0 ? m->older_ms : 0);
	int64_t *ns = NULL;
	size_t nn = 0, ncap = 0, kcap = 0, i;
	struct edit_removed er;
	struct coord_st *st;
	char buf[32];
	int rc;

	if (state != NULL && !ticket_state_final(ticket_state_parse(state))) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "clean --state: '%s' is not a finished state (succeeded, failed,"
				 " cancelled, dependency_failed)",
				 state);
		return 0;
	}
	if (m != NULL && m->older_ms < 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "clean --older is negative");
		return 0;
	}
	if ((st = coord_db_q(c->db, q_pick, "tii", state, cut, (int64_t)EDIT_CLEAN_BATCH)) == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		coord_mem_grow(&ns, nn, &ncap, sizeof *ns, 64);
		ns[nn++] = coord_db_i64(st, 0);
	}
	coord_db_done(st);
	edit_removed(c, &er);
	for (i = 0; rc == 0 && i < nn; i++)
		if (edit_delete(c->db, ns[i], &er) != 0)
			rc = -1;
	free(ns);
	if (rc < 0 ||
	    (st = coord_db_q(c->db, q_keep, "tii", state, cut, (int64_t)EDIT_CLEAN_KEPT)) == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		coord_rows_ticket_name(coord_db_i64(st, 0), buf, sizeof buf);
		coord_mem_grow(&er.r->kept, er.r->n_kept, &kcap, sizeof *er.r->kept, 8);
		er.r->kept[er.r->n_kept++] = coord_mem_strdup(buf);
	}
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}
