/* A shared store's global trace: see coord_trace_log.h. */
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_trace_log.h"

/* Moves one row of q into a new group of tl. */
static size_t
trace_log_group(Berth__TraceLog *tl, size_t *cap, struct coord_st *q)
{
	Berth__TraceGroup *g = coord_mem_alloc(sizeof *g);

	berth__trace_group__init(g);
	g->has_id = g->has_seq = g->has_ts_ms = 1;
	g->id = coord_db_i64(q, 0);
	g->host = coord_mem_strdup(coord_db_coltext(q, 1));
	g->seq = (uint64_t)coord_db_i64(q, 2);
	g->lines = coord_mem_strdup(coord_db_coltext(q, 3));
	g->ts_ms = coord_db_i64(q, 4);
	coord_mem_grow(&tl->groups, tl->n_groups, cap, sizeof *tl->groups, 16);
	tl->groups[tl->n_groups++] = g;
	return strlen(g->lines) + strlen(g->host) + 32;
}

int
coord_trace_read(struct coord_ctx *c)
{
	static const char q_after[] = "SELECT id, host, seq, lines, ts_ms FROM trace_log"
				      " WHERE id > ? ORDER BY id LIMIT ?";
	static const char q_last[] = "SELECT id, host, seq, lines, ts_ms FROM"
				     " (SELECT id, host, seq, lines, ts_ms FROM trace_log"
				     " ORDER BY id DESC LIMIT ?) AS t ORDER BY id";
	static const Berth__TraceRead from_start = BERTH__TRACE_READ__INIT;
	/* A request with the verb's tag alone asks for the defaults. */
	const Berth__TraceRead *r = c->req->trace != NULL ? c->req->trace : &from_start;
	Berth__TraceLog *tl;
	Berth__Granted *g;
	struct coord_st *q;
	size_t budget = COORD_TRACE_PAGE_MAX, bytes = 0, rows = 0, cap = 0;
	int rc;

	if (r->after < 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "trace: after must be a group id (0 or more), not %lld",
				 (long long)r->after);
		return 0;
	}
	if (r->after > 0 && r->last > 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "trace: after and last exclude each other");
		return 0;
	}
	if (r->max_bytes > 0 && r->max_bytes < budget)
		budget = r->max_bytes;
	tl = coord_mem_alloc(sizeof *tl);
	berth__trace_log__init(tl);
	tl->has_shared = tl->has_more = 1;
	tl->shared = coord_db_kind(c->db) == COORD_STORE_POSTGRESQL;
	tl->host = coord_mem_strdup(coord_db_host(c->db)->id);
	if (tl->shared) {
		q = r->last > 0 ? coord_db_q(c->db, q_last, "i",
					     (int64_t)(r->last < COORD_TRACE_PAGE_GROUPS
							       ? r->last
							       : COORD_TRACE_PAGE_GROUPS))
				: coord_db_q(c->db, q_after, "ii", r->after,
					     (int64_t)COORD_TRACE_PAGE_GROUPS);
		if (q == NULL) {
			berth__trace_log__free_unpacked(tl, NULL);
			return -1;
		}
		while ((rc = coord_db_step(c->db, q)) == 1) {
			rows++;
			if (bytes >= budget && tl->n_groups > 0) {
				tl->more = 1;
				break;
			}
			bytes += trace_log_group(tl, &cap, q);
		}
		coord_db_done(q);
		if (rc < 0) {
			berth__trace_log__free_unpacked(tl, NULL);
			return -1;
		}
		if (r->last == 0 && rows == COORD_TRACE_PAGE_GROUPS)
			tl->more = 1;
	}
	g = coord_reply_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_TRACE;
	g->trace = tl;
	return 0;
}
