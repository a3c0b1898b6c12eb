/* The transaction every request runs in: see coord_exec.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_caller.h"
#include "coord_ctx.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_verbs.h"
#include "failpoint.h"
#include "ids.h"
#include "log.h"

/* Stored replies answer retries, which come within seconds or minutes (a
 * coordinator restart at most); after a day they are only weight. */
#define EXEC_REQUEST_KEEP_MS (24 * 3600 * 1000LL)
#define EXEC_PRUNE_EVERY_MS (3600 * 1000LL)

static enum coord_decision
exec_decision(const Berth__Reply *r)
{
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED: return COORD_GRANTED;
	case BERTH__REPLY__RESULT_DENIED: return COORD_DENIED;
	default: return COORD_ERROR;
	}
}

/* The facts of the decision in c, for the result, the event row and the
 * trace line. */
static void
exec_facts(const struct coord_ctx *c, struct coord_result *res)
{
	res->decision = exec_decision(c->reply);
	snprintf(res->reason, sizeof res->reason, "%s", c->reason);
	snprintf(res->ticket, sizeof res->ticket, "%s", c->ticket);
	snprintf(res->run, sizeof res->run, "%s", c->run);
	snprintf(res->detail, sizeof res->detail, "%s", c->detail);
	snprintf(res->lease_owner, sizeof res->lease_owner, "%s", c->lease_owner);
	res->lease_expires_ms = c->lease_expires_ms;
	res->lease_renewed_ms = c->lease_renewed_ms;
}

/* Formats the decision's trace line (its one formatting) into res. */
static void
exec_line(const Berth__Request *req, const struct coord_caller *who, const struct coord_verb *v,
	  const struct coord_exec_trace *tr, struct coord_result *res)
{
	struct coord_trace_rec rec;

	coord_trace_rec_init(&rec, req, v != NULL ? v->name : coord_verb_name(req),
			     res->decision, tr->t0_us);
	rec.reason = res->reason;
	rec.ticket = res->ticket;
	rec.run = res->run;
	rec.detail = res->detail;
	rec.lease_owner = res->lease_owner;
	rec.lease_expires_ms = res->lease_expires_ms;
	rec.lease_renewed_ms = res->lease_renewed_ms;
	rec.caller = who != NULL ? who->what : NULL;
	res->seq = tr->seq;
	res->line = coord_trace_format(&rec, tr->seq);
}

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
 * error); -1 on a storage fault. */
static int
exec_replay(struct coord_ctx *c, const struct coord_verb *v, const struct coord_exec_trace *tr,
	    struct coord_result *res)
{
	static const char sql[] =
		"SELECT reply, reason, ticket, run FROM requests WHERE sender = ? AND instance = ?"
		" AND req_id = ?";
	char sender[COORD_SENDER_MAX];
	sqlite3_stmt *st;
	Berth__Reply *r;
	int rc;

	/* Only to the sender that made the request (DESIGN §5): anyone else
	 * naming its instance and request id is decided afresh. */
	coord_caller_sender(c->caller, sender, sizeof sender);
	st = coord_db_q(c->db, sql, "tti", sender, c->req->instance, (int64_t)c->req->req_id);
	if ((rc = coord_db_step(c->db, st)) <= 0)
		return rc;
	r = berth__reply__unpack(NULL, (size_t)sqlite3_column_bytes(st, 0),
				 sqlite3_column_blob(st, 0));
	if (r == NULL) {
		log_error("coord_exec: the stored reply to %s %llu from %s does not unpack",
			  v->name, (unsigned long long)c->req->req_id, c->req->instance);
		coord_db_rollback(c->db);
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_STORAGE, "stored reply is unreadable");
		return 0;
	}
	res->decision = COORD_REPLAYED;
	snprintf(res->reason, sizeof res->reason, "%s", coord_db_coltext(st, 1));
	snprintf(res->ticket, sizeof res->ticket, "%s", coord_db_coltext(st, 2));
	snprintf(res->run, sizeof res->run, "%s", coord_db_coltext(st, 3));
	coord_db_rollback(c->db);
	r->has_replayed = 1;
	r->replayed = 1;
	exec_token(c, r);
	rc = coord_reply_pack(r, &res->packed, &res->packed_len);
	berth__reply__free_unpacked(r, NULL);
	if (rc != 0)
		return -1;
	if (tr != NULL)
		exec_line(c->req, c->caller, v, tr, res);
	return 1;
}

/* Inside the transaction: the reply packed (once: these bytes are stored
 * and sent), its event row, the stored reply, the kept trace line. */
static int
exec_keep(struct coord_ctx *c, const struct coord_verb *v, int store,
	  const struct coord_exec_trace *tr, struct coord_result *res)
{
	static const char q_event[] =
		"INSERT INTO events (ts_ms, verb, ticket, run, decision, reason, actor, instance)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	static const char q_store[] =
		"INSERT INTO requests (instance, req_id, ts_ms, verb, decision, reason, ticket, run,"
		" reply, sender) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char q_tail[] =
		"INSERT OR REPLACE INTO trace_tail (id, seq, line) VALUES (1, ?, ?)";
	const char *instance = c->req->instance ? c->req->instance : "";
	const char *decision, *reason, *ticket, *run;
	char sender[COORD_SENDER_MAX];
	uint8_t *kept = NULL;
	size_t kept_len = 0;
	sqlite3_stmt *st;
	int rc;

	coord_reply_seal(c->reply, c->req);
	if (coord_reply_pack(c->reply, &res->packed, &res->packed_len) != 0)
		return -1;
	exec_facts(c, res);
	decision = coord_decision_name(res->decision);
	reason = c->reason[0] ? c->reason : NULL;
	ticket = c->ticket[0] ? c->ticket : NULL;
	run = c->run[0] ? c->run : NULL;
	if (coord_db_exec(c->db, q_event, "ittttttt", c->now, v->name, ticket, run, decision,
			  reason, c->req->actor, instance) < 0)
		return -1;
	if (store) {
		/* Stored replies hold no token in plaintext: a claim's is
		 * kept without it (a replay derives it again). */
		if (exec_untoken(c->reply, &kept, &kept_len) != 0)
			return -1;
		coord_caller_sender(c->caller, sender, sizeof sender);
		st = coord_db_q(c->db, q_store, "tiittttt", instance, (int64_t)c->req->req_id,
				c->now, v->name, decision, reason, ticket, run);
		rc = st == NULL ? -1 : 0;
		if (rc == 0 && (sqlite3_bind_blob(st, 9, kept != NULL ? kept : res->packed,
						  (int)(kept != NULL ? kept_len : res->packed_len),
						  SQLITE_TRANSIENT) != SQLITE_OK ||
				sqlite3_bind_text(st, 10, sender, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
				coord_db_step(c->db, st) < 0))
			rc = -1;
		free(kept);
		if (rc != 0)
			return -1;
	}
	if (tr == NULL)
		return 0;
	exec_line(c->req, c->caller, v, tr, res);
	if (res->line == NULL)
		return 0; /* the line itself is lost; the decision is not */
	return coord_db_exec(c->db, q_tail, "it", (int64_t)res->seq, res->line) < 0 ? -1 : 0;
}

/* Drops stored replies older than EXEC_REQUEST_KEEP_MS, at most once per
 * EXEC_PRUNE_EVERY_MS, in its own short transaction after a commit. A
 * failure here costs only disk space, so it is logged and forgotten. */
static void
exec_prune(struct coord_db *db, int64_t now)
{
	static const char sql[] = "DELETE FROM requests WHERE ts_ms < ?";

	if (coord_db_housekeeping_due(db, now, EXEC_PRUNE_EVERY_MS) &&
	    coord_db_exec(db, sql, "i", now - EXEC_REQUEST_KEEP_MS) < 0)
		log_warn("coord_exec: pruning old stored replies failed");
}

/* A storage fault: everything is rolled back and the answer is an error. */
static void
exec_fault(struct coord_ctx *c, const struct coord_verb *v, const char *why,
	   struct coord_result *res)
{
	char msg[200];

	snprintf(msg, sizeof msg, "%s", why != NULL ? why : sqlite3_errmsg(coord_db_handle(c->db)));
	coord_db_rollback(c->db);
	coord_reply_fail(c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s", v->name,
			 msg);
	c->decided_nothing = 0;
	free(res->packed);
	free(res->line);
	res->packed = NULL;
	res->line = NULL;
}

/* Decides c's request under its verb's row: 1 answered by a stored reply
 * (res complete), 0 with c->reply set (committed, rolled back, or an
 * error). */
static int
exec_decide(struct coord_ctx *c, const struct coord_verb *v, const struct coord_exec_trace *tr,
	    struct coord_result *res)
{
	static const char q_begin[] = "BEGIN";
	static const char q_begin_immediate[] = "BEGIN IMMEDIATE";
	static const char q_commit[] = "COMMIT";
	const Berth__Request *req = c->req;
	int reads = (v->flags & COORD_VERB_READS) != 0;
	int store = !reads && req->instance != NULL && req->instance[0] != '\0' && req->has_req_id;
	int rc;

	if (coord_db_exec(c->db, reads ? q_begin : q_begin_immediate, "") < 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_STORAGE, "cannot begin: %s",
				 sqlite3_errmsg(coord_db_handle(c->db)));
		return 0;
	}
	if (store && (rc = exec_replay(c, v, tr, res)) != 0) {
		if (rc < 0)
			exec_fault(c, v, NULL, res);
		return rc > 0;
	}
	if (c->reply != NULL) /* an unreadable stored reply */
		return 0;
	if (v->handler(c) != 0) {
		exec_fault(c, v, NULL, res);
		return 0;
	}
	if (c->reply == NULL) {
		log_error("coord_exec: %s produced no reply", v->name);
		abort();
	}
	/* Reads, input errors and a claim that found nothing leave the
	 * database as it was. */
	if (reads || c->reply->result_case == BERTH__REPLY__RESULT_ERROR || c->decided_nothing) {
		coord_db_rollback(c->db);
		return 0;
	}
	if (exec_keep(c, v, store, tr, res) != 0) {
		exec_fault(c, v, NULL, res);
		return 0;
	}
	if (fp_hit("coordinator.before_commit") == FP_ERROR) {
		log_warn("coord_exec: failpoint coordinator.before_commit: failing %s", v->name);
		exec_fault(c, v, "failpoint coordinator.before_commit", res);
		return 0;
	}
	coord_db_reset_all(c->db);
	if (coord_db_exec(c->db, q_commit, "") < 0) {
		exec_fault(c, v, NULL, res);
		return 0;
	}
	res->committed = 1;
	res->wake = c->wake && c->reply->result_case == BERTH__REPLY__RESULT_GRANTED;
	exec_prune(c->db, c->now);
	return 0;
}

/* An actor's instance is its process's: the one it said hello with. 1 the
 * caller's process said hello as req's instance (for hello itself: the
 * identity it gives is its own), 0 not, -1 on error. */
static int
exec_bound(struct coord_ctx *c)
{
	static const char sql[] = "SELECT pid, start_time FROM actors WHERE instance = ?";
	const struct coord_caller *who = c->caller;
	const Berth__Ident *id;
	sqlite3_stmt *st;
	int64_t pid = 0, start = 0;
	int rc;

	if (c->req->verb_case == BERTH__REQUEST__VERB_HELLO) {
		id = c->req->hello != NULL ? c->req->hello->ident : NULL;
		return id != NULL && id->pid == who->pid && id->start_time == who->start_time;
	}
	if ((st = coord_db_q(c->db, sql, "t", c->req->instance)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		pid = sqlite3_column_int64(st, 0);
		start = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc < 0)
		return -1;
	return rc == 1 && pid == who->pid && (uint64_t)start == who->start_time;
}

/*
 * Who may ask what (DESIGN §1): the verb's row names the caller classes
 * and actor roles that may send it. A verified actor acts in its own role,
 * under the name of that role and the instance it said hello with; the
 * coordinator's own process and a harness (every role) act in the role
 * their actor name gives, or in every role for another name. 1 permitted
 * (c->roles set), 0 denied not_permitted (c->reply set: traced, never
 * stored, nothing changed), -1 on error.
 */
static int
exec_permitted(struct coord_ctx *c, const struct coord_verb *v)
{
	const struct coord_caller *who = c->caller;
	unsigned named = coord_role_of(c->req->actor);
	const char *why = NULL;
	int rc;

	if (who == NULL || (who->cls == CALLER_ACTOR && who->roles == ROLE_ANY)) {
		/* Trusted with every verb; in the role its name gives, the
		 * verb's row still applies (so in-process tests keep the
		 * rules), another name acts in every role. */
		c->roles = named != 0 ? named : ROLE_ANY;
		if (named == 0 || (v->roles & named) != 0 || (v->callers & CALLER_ACTOR) == 0)
			return 1;
		why = "role";
		goto deny;
	}
	c->roles = who->cls == CALLER_ACTOR ? who->roles : 0;
	if ((v->callers & who->cls) == 0)
		why = "class";
	else if (who->cls == CALLER_ACTOR && (v->roles & who->roles) == 0)
		why = "role";
	else if (who->cls == CALLER_ACTOR && named != who->roles)
		why = "name";
	else if (who->cls == CALLER_ACTOR) {
		if ((rc = exec_bound(c)) < 0)
			return -1;
		if (rc == 0)
			why = "instance";
	}
	if (why == NULL)
		return 1;
deny:
	log_warn("not permitted: %s from %s pid %d (as %s %s): %s", v->name,
		 who != NULL ? who->what : "coordinator", who != NULL ? (int)who->pid : 0,
		 c->req->actor, c->req->instance,
		 strcmp(why, "class") == 0   ? "not a verb of its class"
		 : strcmp(why, "role") == 0  ? "not a verb of its role"
		 : strcmp(why, "name") == 0  ? "it names another actor"
					     : "not the instance its process said hello with");
	coord_reply_deny(c, "not_permitted", "verb", v->name, "caller",
			 who != NULL ? who->what : "coordinator", "why", why, NULL);
	return 0;
}

int
coord_exec_request(struct coord_db *db, const Berth__Request *req,
		   const struct coord_caller *caller, const struct coord_exec_trace *tr,
		   struct coord_result *res)
{
	const struct coord_verb *v = coord_verb_find(req->verb_case);
	struct coord_ctx c;
	int rc;

	memset(res, 0, sizeof *res);
	memset(&c, 0, sizeof c);
	c.db = db;
	c.req = req;
	c.caller = caller;
	c.now = clock_wall_ms();
	if (v == NULL)
		coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_UNKNOWN_VERB, "unknown verb %d",
				 (int)req->verb_case);
	else if ((rc = exec_permitted(&c, v)) < 0)
		coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s",
				 v->name, sqlite3_errmsg(coord_db_handle(db)));
	else if (rc > 0 && exec_decide(&c, v, tr, res) > 0)
		return 0;
	coord_db_reset_all(db);
	coord_reply_seal(c.reply, req);
	res->reply = c.reply;
	res->decided_nothing = c.decided_nothing;
	exec_facts(&c, res);
	if (res->packed == NULL && coord_reply_pack(c.reply, &res->packed, &res->packed_len) != 0) {
		berth__reply__free_unpacked(c.reply, NULL);
		res->reply = NULL;
		return -1;
	}
	if (tr != NULL && res->line == NULL && !res->committed)
		exec_line(req, caller, v, tr, res);
	return 0;
}

void
coord_exec_free(struct coord_result *res)
{
	if (res == NULL)
		return;
	if (res->reply != NULL)
		berth__reply__free_unpacked(res->reply, NULL);
	free(res->packed);
	free(res->line);
	res->reply = NULL;
	res->packed = NULL;
	res->line = NULL;
}

int
coord_exec_kept_line(struct coord_db *db, uint64_t *seq, char **line)
{
	static const char q[] = "SELECT seq, line FROM trace_tail WHERE id = 1";
	sqlite3_stmt *st = coord_db_q(db, q, "");
	int rc;

	*seq = 0;
	*line = NULL;
	if ((rc = coord_db_step(db, st)) == 1) {
		*seq = (uint64_t)sqlite3_column_int64(st, 0);
		*line = coord_db_col(st, 1);
	}
	sqlite3_reset(st);
	return rc == 1 && *line != NULL ? 1 : rc < 0 ? -1 : 0;
}
