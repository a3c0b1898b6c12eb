/* The ticket verbs that read (DESIGN §4): list with its cursor, show, and
 * status's counts and queue. Apart from coord_tickets.c (add, the loader
 * and the resolver) and coord_ticket_hold.c (the state changes) so each
 * verb group reads alone; they share the loader (coord_tickets_int.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_db.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_schema.h"
#include "coord_sched.h"
#include "coord_settings.h"
#include "coord_tickets.h"
#include "coord_tickets_int.h"
#include "msg.h"
#include "states.h"

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
 * no limit, bound as the largest number: PostgreSQL refuses sqlite's
 * LIMIT -1); 0, or -1 on error. */
static int
list_page(struct coord_ctx *c, int kind, const char *filter, int newest, int64_t lo, int64_t hi,
	  int64_t limit, int64_t **ns, size_t *nn)
{
	struct coord_st *st = coord_db_q(c->db, list_q[kind][newest], "tiii", filter, lo, hi,
					 limit < 0 ? INT64_MAX : limit);
	size_t cap = 0;
	int rc;

	*ns = NULL;
	*nn = 0;
	if (st == NULL)
		return -1;
	while ((rc = coord_db_step(c->db, st)) == 1) {
		coord_mem_grow(ns, *nn, &cap, sizeof **ns, 64);
		(*ns)[(*nn)++] = coord_db_i64(st, 0);
	}
	coord_db_done(st);
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
	struct coord_st *st;
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
			ns[nn++] = coord_db_i64(st, 0);
		}
		coord_db_done(st);
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
	struct coord_st *st;
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
	sr->store = coord_mem_strdup(coord_db_where(c->db));
	if (coord_db_host(c->db)->id[0] != '\0') {
		char why[200];

		sr->host = coord_mem_strdup(coord_db_host(c->db)->id);
		if (!coord_hosts_claiming(c->db, clock_mono_ms(), why, sizeof why))
			sr->not_claiming = coord_mem_strdup(why);
	}
	if (coord_hosts_rows(c->db, &sr->hosts, &sr->n_hosts) != 0)
		return -1;
	sr->ticket_counts = coord_mem_alloc(9 * sizeof *sr->ticket_counts);
	if ((st = coord_db_q(c->db, q_counts, "")) == NULL)
		return -1;
	/* At most the seven states and blocked. */
	while ((rc = coord_db_step(c->db, st)) == 1 && sr->n_ticket_counts < TICKET_NSTATES) {
		const char *state = coord_db_coltext(st, 0);
		int64_t cnt = coord_db_i64(st, 1);

		if (ticket_state_parse(state) == TICKET_READY)
			cnt -= blocked;
		snprintf(buf, sizeof buf, "%" PRId64, cnt);
		sr->ticket_counts[sr->n_ticket_counts++] = coord_reply_fact(state, buf);
	}
	coord_db_done(st);
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
