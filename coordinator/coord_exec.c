/* The transaction requests are decided in: see coord_exec.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_caller.h"
#include "coord_ctx.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_exec_int.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_verbs.h"
#include "failpoint.h"
#include "log.h"

/* Reply.then's field number (berth.proto). */
#define EXEC_REPLY_THEN 7

enum coord_decision
exec_decision(const Berth__Reply *r)
{
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED: return COORD_GRANTED;
	case BERTH__REPLY__RESULT_DENIED: return COORD_DENIED;
	default: return COORD_ERROR;
	}
}

/* ------------------------------------------------------------- decisions */

/* Room for n decisions in res->dec (a request makes a few). */
static void
exec_dec_room(struct coord_result *res, size_t n)
{
	struct coord_decided *d = realloc(res->dec, (n > 0 ? n : 1) * sizeof *d);

	if (d == NULL) {
		log_error("coord_exec: out of memory for %zu decisions", n);
		abort();
	}
	res->dec = d;
}

/* Records one decision of res: what its trace line will say. */
struct coord_decided *
exec_decided(struct coord_result *res, const Berth__Request *req, const struct coord_caller *who,
	     const char *verb, enum coord_decision d, const char *reason, const char *ticket,
	     const char *run)
{
	struct coord_decided *x;

	exec_dec_room(res, res->ndec + 1);
	x = &res->dec[res->ndec++];
	memset(x, 0, sizeof *x);
	x->verb = verb;
	x->decision = d;
	x->from = req->actor;
	x->instance = req->instance;
	x->req_id = req->has_req_id ? req->req_id : 0;
	x->caller = who != NULL ? who->what : NULL;
	snprintf(x->reason, sizeof x->reason, "%s", reason != NULL ? reason : "");
	snprintf(x->ticket, sizeof x->ticket, "%s", ticket != NULL ? ticket : "");
	snprintf(x->run, sizeof x->run, "%s", run != NULL ? run : "");
	return x;
}

/* Records the decision in c, made by verb, with what the trace says of
 * it (its detail, the run's lease as the decision found it). */
static struct coord_decided *
exec_decided_ctx(struct coord_result *res, const struct coord_ctx *c, const char *verb,
		 enum coord_decision d)
{
	struct coord_decided *x =
		exec_decided(res, c->req, c->caller, verb, d, c->reason, c->ticket, c->run);

	snprintf(x->detail, sizeof x->detail, "%s", c->detail);
	snprintf(x->lease_owner, sizeof x->lease_owner, "%s", c->lease_owner);
	x->lease_expires_ms = c->lease_expires_ms;
	x->lease_renewed_ms = c->lease_renewed_ms;
	return x;
}

/* The facts of the decision in c, for the result and its first line. */
static void
exec_facts(const struct coord_ctx *c, const char *verb, struct coord_result *res)
{
	res->decision = exec_decision(c->reply);
	snprintf(res->reason, sizeof res->reason, "%s", c->reason);
	snprintf(res->ticket, sizeof res->ticket, "%s", c->ticket);
	snprintf(res->run, sizeof res->run, "%s", c->run);
	snprintf(res->detail, sizeof res->detail, "%s", c->detail);
	snprintf(res->lease_owner, sizeof res->lease_owner, "%s", c->lease_owner);
	res->lease_expires_ms = c->lease_expires_ms;
	res->lease_renewed_ms = c->lease_renewed_ms;
	exec_decided_ctx(res, c, verb, res->decision);
}

/*
 * The fused verb of c's granted request (proto/run_moves.def, FUSE lines),
 * decided right after it in the same savepoint, under its own row and
 * guard, as the same caller: 2 with *fc decided and kept (granted or
 * denied by its guard: committed with the request), 1 with *fc answered
 * and nothing kept (an input error, a storage error its own savepoint
 * undid, or not_permitted: as for a request sent alone, no event row),
 * 0 when the request carries none, -1 on a storage fault.
 */
static int
exec_fused(struct coord_ctx *c, struct coord_ctx *fc, struct coord_verb_fusion *fz,
	   const struct coord_verb **fvp)
{
	const struct coord_verb *fv;
	char err[160];
	int rc;

	memset(fc, 0, sizeof *fc);
	if ((rc = coord_verb_fused(c->req, c->reply, fz, err, sizeof err)) == 0)
		return 0;
	fc->db = c->db;
	fc->req = &fz->req;
	fc->caller = c->caller;
	fc->now = c->now;
	*fvp = fv = coord_verb_find(fz->req.verb_case);
	if (rc < 0) {
		coord_reply_fail(fc, BERTH__ERROR_CODE__ERR_INVALID, "%s", err);
		return 1;
	}
	if ((rc = exec_permitted(fc, fv)) <= 0)
		return rc < 0 ? -1 : 1;
	if (coord_db_savepoint(c->db) != 0)
		return -1;
	if (fv->handler(fc) != 0) {
		coord_db_rollback_to(c->db); /* the caller undoes the request's */
		return -1;
	}
	if (fc->reply == NULL) {
		log_error("coord_exec: fused %s produced no reply", fv->name);
		abort();
	}
	if (fc->reply->result_case == BERTH__REPLY__RESULT_ERROR) {
		coord_db_rollback_to(c->db);
		return 1;
	}
	return coord_db_release(c->db) == 0 ? 2 : -1;
}

/* A storage fault of c's request: its savepoint is undone and the answer
 * is an error. */
static void
exec_fault(struct coord_ctx *c, const char *verb, const char *why, struct coord_result *res)
{
	char msg[200];

	snprintf(msg, sizeof msg, "%s", why != NULL ? why : coord_db_errmsg(c->db));
	coord_db_rollback_to(c->db);
	coord_reply_fail(c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s", verb, msg);
	c->decided_nothing = 0;
	free(res->packed);
	res->packed = NULL;
	res->packed_len = 0;
	free(res->dec);
	res->dec = NULL;
	res->ndec = 0;
}

/*
 * Decides one request (a request's own verb, or one of its parts) in a
 * savepoint of its own, inside the group's open transaction: the stored
 * reply of a repeat, or the handler and then the fused verb the request
 * carries. Reads, input errors and a claim that found nothing leave the
 * database as it was. 0 with res complete, -1 when no reply could be
 * built.
 */
static int
exec_one(struct coord_group *g, const Berth__Request *req, const struct coord_caller *caller,
	 struct coord_result *res)
{
	const struct coord_verb *v = coord_verb_find(req->verb_case), *fv = NULL;
	const char *name = v != NULL ? v->name : coord_verb_name(req);
	struct coord_verb_fusion fz;
	struct coord_ctx c, fc;
	enum coord_decision fd;
	int rc, reads, store, fused = 0;

	memset(&c, 0, sizeof c);
	memset(&fc, 0, sizeof fc);
	c.db = g->db;
	c.req = req;
	c.caller = caller;
	c.now = g->now = clock_wall_ms();
	if (v == NULL) {
		coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_UNKNOWN_VERB, "unknown verb %d",
				 (int)req->verb_case);
		goto answer;
	}
	if ((rc = exec_permitted(&c, v)) < 0) {
		coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s",
				 v->name, coord_db_errmsg(g->db));
		goto answer;
	}
	if (rc == 0)
		goto answer;
	reads = (v->flags & COORD_VERB_READS) != 0;
	store = !reads && req->instance != NULL && req->instance[0] != '\0' && req->has_req_id;
	if (coord_db_savepoint(g->db) != 0) {
		coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "cannot begin: %s",
				 coord_db_errmsg(g->db));
		goto answer;
	}
	if (store && (rc = exec_replay(&c, v, res)) != 0) {
		if (rc < 0)
			goto fault;
		coord_db_rollback_to(g->db);
		return 0;
	}
	if (c.reply != NULL) { /* an unreadable stored reply */
		coord_db_rollback_to(g->db);
		goto answer;
	}
	if (v->handler(&c) != 0)
		goto fault;
	if (c.reply == NULL) {
		log_error("coord_exec: %s produced no reply", v->name);
		abort();
	}
	if (reads || c.reply->result_case == BERTH__REPLY__RESULT_ERROR || c.decided_nothing) {
		coord_db_rollback_to(g->db);
		goto answer;
	}
	if ((fused = exec_fused(&c, &fc, &fz, &fv)) < 0)
		goto fault;
	exec_facts(&c, v->name, res);
	if (fused) {
		fd = exec_decision(fc.reply);
		exec_decided_ctx(res, &fc, fv->name, fd)->fused = v->name;
		c.wake = c.wake || (fd == COORD_GRANTED && fc.wake);
		/* The fused verb's answer travels inside this one's. */
		c.reply->fused = fc.reply;
	}
	/* The events rows in decision order, as the trace lines are: the
	 * request's verb's (exec_keep), then its fused verb's. */
	if (exec_keep(&c, v, store, res) != 0 || (fused == 2 && exec_event(&fc, fv->name) != 0) ||
	    coord_db_release(g->db) != 0) {
		fc.reply = NULL; /* c.reply owns it now */
		goto fault;
	}
	fc.reply = NULL;
	res->committed = 1;
	res->wake = c.wake && c.reply->result_case == BERTH__REPLY__RESULT_GRANTED;
	res->reply = c.reply;
	g->keep = 1;
	return 0;
fault:
	if (fc.reply != NULL)
		berth__reply__free_unpacked(fc.reply, NULL);
	exec_fault(&c, name, NULL, res);
answer:
	coord_db_reset_all(g->db);
	coord_reply_seal(c.reply, req);
	res->reply = c.reply;
	res->decided_nothing = c.decided_nothing;
	exec_facts(&c, name, res);
	if (res->packed == NULL && coord_reply_pack(c.reply, &res->packed, &res->packed_len) != 0) {
		berth__reply__free_unpacked(c.reply, NULL);
		res->reply = NULL;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- the group */

void
coord_exec_group_init(struct coord_group *g, struct coord_db *db, int trace, uint64_t first_seq)
{
	memset(g, 0, sizeof *g);
	g->db = db;
	g->trace = trace;
	g->first_seq = g->next_seq = first_seq;
}

void
coord_exec_group_seq(struct coord_group *g, uint64_t first_seq)
{
	g->first_seq = g->next_seq = first_seq;
}

void
coord_exec_group_free(struct coord_group *g)
{
	free(g->e);
	g->e = NULL;
	g->n = g->cap = 0;
}

/* A claim for the next ticket, alone (no parts, no ticket named): what a
 * group of claims decided beside other hosts' holds (coord_db_begin_claims). */
static int
exec_next_claim(const Berth__Request *req)
{
	return req->verb_case == BERTH__REQUEST__VERB_CLAIM && req->n_then == 0 &&
	       (req->claim == NULL || req->claim->ticket == NULL || req->claim->ticket[0] == '\0');
}

int
coord_exec_group_fits(const struct coord_group *g, const Berth__Request *req)
{
	if (g->n == 0)
		return 1;
	if (g->claims)
		return exec_next_claim(req);
	return !g->reads && !coord_verb_reads(req);
}

/* An answer to req that says the storage failed (why): res is made again,
 * with one decision, nothing committed. */
static int
exec_failed(struct coord_exec_entry *e, const char *why)
{
	struct coord_result *res = e->res;
	const char *name = coord_verb_name(e->req);
	struct coord_ctx c;

	coord_exec_free(res);
	memset(res, 0, sizeof *res);
	memset(&c, 0, sizeof c);
	c.req = e->req;
	c.caller = e->caller;
	coord_reply_fail(&c, BERTH__ERROR_CODE__ERR_STORAGE, "storage failure in %s: %s", name,
			 why);
	coord_reply_seal(c.reply, e->req);
	res->reply = c.reply;
	exec_facts(&c, name, res);
	e->failed = 1;
	return coord_reply_pack(c.reply, &res->packed, &res->packed_len);
}

/* The transaction is gone (sqlite rolled it back after an I/O error, or
 * its COMMIT failed): every decision the group was to keep is undone, so
 * its request is answered with a storage error instead. */
static void
exec_lost(struct coord_group *g, const char *why)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (!g->e[i].res->committed || g->e[i].failed)
			continue;
		log_error("coord_exec: %s %llu from %s undone: %s", coord_verb_name(g->e[i].req),
			  (unsigned long long)g->e[i].req->req_id, g->e[i].req->actor, why);
		if (exec_failed(&g->e[i], why) != 0)
			log_error("coord_exec: out of memory answering a lost decision");
	}
	coord_db_rollback(g->db);
	g->open = 0;
	g->keep = 0;
}

/* Opens the group's transaction for req: IMMEDIATE for mutations (the
 * write lock is taken first, so guards judged in it stay true), a plain
 * read transaction for a read. 0, or -1 with why in the log. */
static int
exec_begin(struct coord_group *g, const Berth__Request *req)
{
	if (g->open)
		return 0;
	g->reads = coord_verb_reads(req);
	g->claims = !g->reads && exec_next_claim(req);
	if ((g->claims ? coord_db_begin_claims(g->db) : coord_db_begin(g->db, !g->reads)) != 0)
		return -1;
	/* Where claims are not decided side by side, a group of them is as
	 * any other and may take any request. */
	g->claims = g->claims && coord_db_claims(g->db);
	g->open = 1;
	return 0;
}

/* The answers to req's parts (Request.then), each decided as if sent
 * alone: in a savepoint of its own, stored under its own request id,
 * appended to res's packed reply as one element of Reply.then. */
static int
exec_parts(struct coord_group *g, const Berth__Request *req, const struct coord_caller *caller,
	   struct coord_result *res)
{
	struct coord_result pr;
	Berth__Request part;
	size_t i;
	int rc = 0;

	for (i = 0; i < req->n_then && rc == 0; i++) {
		/* The part's envelope is the request's (coord_envelope.c
		 * refused a part that brings its own). */
		part = *req->then[i];
		part.has_version = req->has_version;
		part.version = req->version;
		part.actor = req->actor;
		part.instance = req->instance;
		part.token = req->token;
		memset(&pr, 0, sizeof pr);
		if (exec_one(g, &part, caller, &pr) != 0 ||
		    coord_reply_append(&res->packed, &res->packed_len, EXEC_REPLY_THEN, pr.packed,
				       pr.packed_len) != 0) {
			rc = -1;
		} else {
			exec_dec_room(res, res->ndec + pr.ndec);
			memcpy(res->dec + res->ndec, pr.dec, pr.ndec * sizeof *pr.dec);
			res->ndec += pr.ndec;
			/* The copy's strings are the request's own: the part's
			 * lines name its envelope and its request id. */
			res->committed |= pr.committed;
			res->wake |= pr.wake;
		}
		coord_exec_free(&pr);
	}
	/* A request with parts is answered at once, never held. */
	res->decided_nothing = 0;
	return rc;
}

int
coord_exec_group_add(struct coord_group *g, const Berth__Request *req,
		     const struct coord_caller *caller, int64_t t0_us, int may_park,
		     struct coord_result *res)
{
	struct coord_exec_entry *e;

	memset(res, 0, sizeof *res);
	coord_mem_grow(&g->e, g->n, &g->cap, sizeof *g->e, 16);
	e = &g->e[g->n++];
	memset(e, 0, sizeof *e);
	e->req = req;
	e->caller = caller;
	e->t0_us = t0_us;
	e->may_park = may_park;
	e->res = res;
	if (exec_begin(g, req) != 0) {
		g->now = clock_wall_ms();
		return exec_failed(e, coord_db_errmsg(g->db)) == 0 ? 0 : -1;
	}
	if (exec_one(g, req, caller, res) != 0)
		return -1;
	if (req->n_then > 0 && exec_parts(g, req, caller, res) != 0)
		return -1;
	if (!coord_db_in_txn(g->db))
		exec_lost(g, "the transaction was rolled back by the store");
	return 0;
}

/* Formats every decision's line, in decision order, from the group's
 * first seq on: each result's lines go into its line. */
static void
exec_lines(struct coord_group *g)
{
	struct coord_trace_rec rec;
	struct coord_result *res;
	size_t i, j, len;
	char *line, *all;

	g->next_seq = g->first_seq;
	for (i = 0; i < g->n; i++) {
		res = g->e[i].res;
		free(res->line);
		res->line = NULL;
		res->nlines = 0;
		/* A claim that will be held decided nothing: it is traced when
		 * it is answered. */
		if (g->e[i].may_park && res->decided_nothing)
			continue;
		for (j = 0; j < res->ndec; j++) {
			const struct coord_decided *x = &res->dec[j];

			memset(&rec, 0, sizeof rec);
			rec.ts_ms = clock_wall_ms();
			rec.from = x->from;
			rec.instance = x->instance;
			rec.req_id = x->req_id;
			rec.verb = x->verb;
			rec.decision = coord_decision_name(x->decision);
			rec.reason = x->reason;
			rec.ticket = x->ticket;
			rec.run = x->run;
			rec.latency_us = coord_trace_now_us() - g->e[i].t0_us;
			rec.caller = x->caller;
			rec.fused = x->fused;
			rec.detail = x->detail;
			rec.lease_owner = x->lease_owner;
			rec.lease_expires_ms = x->lease_expires_ms;
			rec.lease_renewed_ms = x->lease_renewed_ms;
			if ((line = coord_trace_format(&rec, g->next_seq)) == NULL)
				continue; /* the line is lost, its seq not taken */
			len = res->line != NULL ? strlen(res->line) : 0;
			all = coord_mem_alloc(len + strlen(line) + 1);
			if (len > 0)
				memcpy(all, res->line, len);
			strcpy(all + len, line);
			free(line);
			free(res->line);
			res->line = all;
			if (res->nlines++ == 0)
				res->seq = g->next_seq;
			g->next_seq++;
		}
	}
}

/* The group's lines kept with its COMMIT (one row: the lines joined), so
 * a crash between the COMMIT and their append loses none. */
static int
exec_keep_lines(struct coord_group *g)
{
	static const char q_tail[] =
		"INSERT INTO trace_tail (id, seq, line) VALUES (1, ?, ?)"
		" ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, line = excluded.line";
	/* A host on a shared store keeps its own (schema v9). */
	static const char q_tails[] =
		"INSERT INTO trace_tails (seq, line, host) VALUES (?, ?, ?)"
		" ON CONFLICT (host) DO UPDATE SET seq = excluded.seq, line = excluded.line";
	static const char q_log[] =
		"INSERT INTO trace_log (ts_ms, host, seq, lines) VALUES (?, ?, ?, ?)";
	const char *host = coord_db_host(g->db)->id;
	char *all = NULL;
	size_t i, len = 0, n;
	uint64_t seq = 0;
	int rc;

	for (i = 0; i < g->n; i++) {
		const struct coord_result *res = g->e[i].res;

		if (res->line == NULL)
			continue;
		if (len == 0)
			seq = res->seq;
		n = strlen(res->line);
		all = realloc(all, len + n + 1);
		if (all == NULL) {
			log_error("coord_exec: out of memory keeping trace lines");
			return -1;
		}
		memcpy(all + len, res->line, n + 1);
		len += n;
	}
	if (all == NULL)
		return 0; /* every line is lost; the decisions are not */
	if (coord_db_serial(g->db) != 0) {
		free(all);
		return -1;
	}
	if (!g->keep)
		rc = 0; /* denials only: trace_log's (below), no decision to restore */
	else if (host[0] != '\0')
		rc = coord_db_exec(g->db, q_tails, "itt", (int64_t)seq, all, host) < 0 ? -1 : 0;
	else
		rc = coord_db_exec(g->db, q_tail, "it", (int64_t)seq, all) < 0 ? -1 : 0;
	/* A shared store's global trace (schema v10): every host's groups,
	 * in the order the decision lock let them decide. */
	if (rc == 0 && coord_db_kind(g->db) == COORD_STORE_POSTGRESQL &&
	    coord_db_exec(g->db, q_log, "itit", g->now, host, (int64_t)seq, all) < 0)
		rc = -1;
	free(all);
	return rc;
}

/* A group of denials on a shared store: nothing to keep, but its lines
 * belong in the global trace, where a race between hosts (two recoveries
 * declaring one host lost) shows who came second. They are committed on
 * their own; if that fails, they are in this host's trace file only, and
 * the denials stand. */
static void
exec_keep_denials(struct coord_group *g)
{
	if (g->reads || coord_db_kind(g->db) != COORD_STORE_POSTGRESQL)
		return;
	if (exec_keep_lines(g) != 0 || coord_db_commit(g->db) != 0)
		log_warn("coord_exec: the global trace lost a group of denials: %s",
			 coord_db_errmsg(g->db));
}

/* Ends the group's transaction: 0 committed (or nothing to commit), -1
 * when the decisions to keep were lost (answered as storage errors). */
static int
exec_commit(struct coord_group *g)
{
	char why[200];

	if (!g->open)
		return 0;
	if (!g->keep) {
		if (g->trace)
			exec_keep_denials(g);
		coord_db_rollback(g->db);
		g->open = 0;
		return 0;
	}
	if (g->trace && exec_keep_lines(g) != 0) {
		snprintf(why, sizeof why, "%s", coord_db_errmsg(g->db));
		goto lost;
	}
	if (fp_hit("coordinator.before_commit") == FP_ERROR) {
		log_warn("coord_exec: failpoint coordinator.before_commit: failing %zu request%s",
			 g->n, g->n == 1 ? "" : "s");
		snprintf(why, sizeof why, "failpoint coordinator.before_commit");
		goto lost;
	}
	if (coord_db_commit(g->db) != 0) {
		snprintf(why, sizeof why, "%s", coord_db_errmsg(g->db));
		goto lost;
	}
	g->open = 0;
	exec_prune(g->db, g->now);
	coord_db_tend_stats(g->db);
	return 0;
lost:
	exec_lost(g, why);
	return -1;
}

int
coord_exec_group_end(struct coord_group *g)
{
	int rc;

	/* The lines are formatted (ts_ms, latency_us) just before COMMIT, so
	 * the kept copy and the line appended after it are the same bytes;
	 * a failed commit formats them again with the errors. */
	if (g->trace)
		exec_lines(g);
	rc = exec_commit(g);
	if (rc != 0 && g->trace)
		exec_lines(g);
	coord_db_reset_all(g->db);
	g->first_seq = g->next_seq;
	g->n = 0;
	g->reads = 0;
	g->claims = 0;
	g->keep = 0;
	return rc;
}

int
coord_exec_request(struct coord_db *db, const Berth__Request *req,
		   const struct coord_caller *caller, const struct coord_exec_trace *tr,
		   struct coord_result *res)
{
	struct coord_group g;
	int rc;

	coord_exec_group_init(&g, db, tr != NULL, tr != NULL ? tr->seq : 0);
	rc = coord_exec_group_add(&g, req, caller, tr != NULL ? tr->t0_us : coord_trace_now_us(), 0,
				  res);
	if (rc == 0) {
		coord_exec_group_end(&g);
	} else {
		g.keep = 0;
		coord_exec_group_end(&g);
	}
	coord_exec_group_free(&g);
	return rc;
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
	free(res->dec);
	res->reply = NULL;
	res->packed = NULL;
	res->line = NULL;
	res->dec = NULL;
	res->ndec = 0;
	res->nlines = 0;
}

int
coord_exec_kept_line(struct coord_db *db, uint64_t *seq, char **line)
{
	static const char q[] = "SELECT seq, line FROM trace_tail WHERE id = 1";
	static const char q_host[] = "SELECT seq, line FROM trace_tails WHERE host = ?";
	const char *host = coord_db_host(db)->id;
	struct coord_st *st =
		host[0] != '\0' ? coord_db_q(db, q_host, "t", host) : coord_db_q(db, q, "");
	int rc;

	*seq = 0;
	*line = NULL;
	if ((rc = coord_db_step(db, st)) == 1) {
		*seq = (uint64_t)coord_db_i64(st, 0);
		*line = coord_db_col(st, 1);
	}
	coord_db_done(st);
	return rc == 1 && *line != NULL ? 1 : rc < 0 ? -1 : 0;
}
