/*
 * Stored replies (DESIGN §5): a mutation's packed reply kept under its
 * sender, instance and request id, with its event row; the replay of a
 * repeat; their pruning. Apart from coord_exec.c because it is the part of
 * the transaction that talks to the requests and events tables, on the
 * same floor and called only by it (coord_exec_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_caller.h"
#include "coord_ctx.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_exec_int.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_verbs.h"
#include "ids.h"
#include "log.h"

/* Stored replies answer retries, which come within seconds or minutes (a
 * coordinator restart at most); after a day they are only weight. */
#define EXEC_REQUEST_KEEP_MS (24 * 3600 * 1000LL)
#define EXEC_PRUNE_EVERY_MS  (3600 * 1000LL)

/* A granted claim's reply with its worker token, packed without it for
 * keeping (*out NULL when r carries no token: its packed bytes are kept
 * as they are). 0, or -1 out of memory. */
static int
exec_untoken(Berth__Reply *r, uint8_t **out, size_t *len)
{
	Berth__ClaimGranted *g;
	char *token;
	int rc;

	*out = NULL;
	if (r->result_case != BERTH__REPLY__RESULT_GRANTED || r->granted == NULL ||
	    r->granted->payload_case != BERTH__GRANTED__PAYLOAD_CLAIM ||
	    (g = r->granted->claim) == NULL || g->token == NULL)
		return 0;
	token = g->token;
	g->token = NULL;
	rc = coord_reply_pack(r, out, len);
	g->token = token;
	return rc;
}

/* A replayed claim grant gets its run's token again, derived as the claim
 * derived it: only its claimer ever sees a replay. */
static void
exec_token(struct coord_ctx *c, Berth__Reply *r)
{
	char token[IDS_TOKEN_LEN + 1];
	Berth__ClaimGranted *g;

	if (r->result_case != BERTH__REPLY__RESULT_GRANTED || r->granted == NULL ||
	    r->granted->payload_case != BERTH__GRANTED__PAYLOAD_CLAIM ||
	    (g = r->granted->claim) == NULL || g->run_id == NULL)
		return;
	ids_token_for(coord_db_key(c->db), g->run_id, token);
	free(g->token);
	g->token = coord_mem_strdup(token);
	explicit_bzero(token, sizeof token);
}

/* A repeated (instance, req_id): 1 with res answered by the stored reply,
 * marked replayed; 0 when there is none (or it is unreadable: c has the
 * error); -1 on a storage fault. Inside the request's savepoint, which
 * the caller drops. */
int
exec_replay(struct coord_ctx *c, const struct coord_verb *v, struct coord_result *res)
{
	static const char sql[] =
		"SELECT reply, reason, ticket, run FROM requests WHERE sender = ? AND instance = ?"
		" AND req_id = ?";
	char sender[COORD_SENDER_MAX];
	struct coord_st *st;
	Berth__Reply *r;
	int rc;

	/* Only to the sender that made the request (DESIGN §5): anyone else
	 * naming its instance and request id is decided afresh. */
	coord_caller_sender(c->caller, sender, sizeof sender);
	st = coord_db_q(c->db, sql, "tti", sender, c->req->instance, (int64_t)c->req->req_id);
	if ((rc = coord_db_step(c->db, st)) <= 0)
		return rc;
	{
		size_t len;
		const void *b = coord_db_blob(st, 0, &len);

		r = berth__reply__unpack(NULL, len, b);
	}
	if (r == NULL) {
		log_error("coord_exec: the stored reply to %s %llu from %s does not unpack",
			  v->name, (unsigned long long)c->req->req_id, c->req->instance);
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_STORAGE, "stored reply is unreadable");
		return 0;
	}
	res->decision = COORD_REPLAYED;
	snprintf(res->reason, sizeof res->reason, "%s", coord_db_coltext(st, 1));
	snprintf(res->ticket, sizeof res->ticket, "%s", coord_db_coltext(st, 2));
	snprintf(res->run, sizeof res->run, "%s", coord_db_coltext(st, 3));
	coord_db_done(st);
	exec_decided(res, c->req, c->caller, v->name, COORD_REPLAYED, res->reason, res->ticket,
		     res->run);
	r->has_replayed = 1;
	r->replayed = 1;
	exec_token(c, r);
	rc = coord_reply_pack(r, &res->packed, &res->packed_len);
	berth__reply__free_unpacked(r, NULL);
	return rc != 0 ? -1 : 1;
}

/* The event row of the decision in c, made by verb. */
int
exec_event(struct coord_ctx *c, const char *verb)
{
	static const char q_event[] =
		"INSERT INTO events (ts_ms, verb, ticket, run, decision, reason, actor, instance)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

	/* The events' ids are the commit order (coord_db_serial). */
	if (coord_db_serial(c->db) != 0)
		return -1;
	return coord_db_exec(c->db, q_event, "ittttttt", c->now, verb,
			     c->ticket[0] ? c->ticket : NULL, c->run[0] ? c->run : NULL,
			     coord_decision_name(exec_decision(c->reply)),
			     c->reason[0] ? c->reason : NULL, c->req->actor,
			     c->req->instance ? c->req->instance : "") < 0
		       ? -1
		       : 0;
}

/* Inside the request's savepoint: the reply packed (once: these bytes are
 * stored and sent), its event row, the stored reply. */
int
exec_keep(struct coord_ctx *c, const struct coord_verb *v, int store, struct coord_result *res)
{
	static const char q_store[] =
		"INSERT INTO requests (instance, req_id, ts_ms, verb, decision, reason, ticket, run,"
		" reply, sender) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const char *instance = c->req->instance ? c->req->instance : "";
	char sender[COORD_SENDER_MAX];
	uint8_t *kept = NULL;
	size_t kept_len = 0;
	int rc;

	coord_reply_seal(c->reply, c->req);
	if (c->reply->fused != NULL)
		coord_reply_seal(c->reply->fused, c->req);
	if (coord_reply_pack(c->reply, &res->packed, &res->packed_len) != 0)
		return -1;
	if (exec_event(c, v->name) != 0)
		return -1;
	if (!store)
		return 0;
	/* Stored replies hold no token in plaintext: a claim's is kept
	 * without it (a replay derives it again). */
	if (exec_untoken(c->reply, &kept, &kept_len) != 0)
		return -1;
	coord_caller_sender(c->caller, sender, sizeof sender);
	rc = coord_db_exec(c->db, q_store, "tiitttttbt", instance, (int64_t)c->req->req_id, c->now,
			   v->name, coord_decision_name(exec_decision(c->reply)),
			   c->reason[0] ? c->reason : NULL, c->ticket[0] ? c->ticket : NULL,
			   c->run[0] ? c->run : NULL,
			   kept != NULL ? (const void *)kept : res->packed,
			   kept != NULL ? kept_len : res->packed_len, sender) < 0
		     ? -1
		     : 0;
	free(kept);
	return rc;
}

/* Drops stored replies older than EXEC_REQUEST_KEEP_MS, at most once per
 * EXEC_PRUNE_EVERY_MS, in its own short transaction after a commit. A
 * failure here costs only disk space, so it is logged and forgotten. */
void
exec_prune(struct coord_db *db, int64_t now)
{
	static const char sql[] = "DELETE FROM requests WHERE ts_ms < ?";
	/* A shared store's global trace is kept as long (each host's own
	 * trace file keeps everything). */
	static const char q_log[] = "DELETE FROM trace_log WHERE ts_ms < ?";

	if (!coord_db_housekeeping_due(db, now, EXEC_PRUNE_EVERY_MS))
		return;
	if (coord_db_exec(db, sql, "i", now - EXEC_REQUEST_KEEP_MS) < 0)
		log_warn("coord_exec: pruning old stored replies failed");
	if (coord_db_kind(db) == COORD_STORE_POSTGRESQL &&
	    coord_db_exec(db, q_log, "i", now - EXEC_REQUEST_KEEP_MS) < 0)
		log_warn("coord_exec: pruning the old global trace failed");
}
