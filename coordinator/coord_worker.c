/* The worker verbs (DESIGN §4): heartbeat, progress, note and should_stop,
 * each from the holder of its run's token and about that run only. */
#include <stdio.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_reply.h"
#include "coord_rows.h"
#include "coord_worker.h"
#include "ids.h"

/* A worker is the holder of its run's token: the token's hash must match
 * the stored one for exactly that run, and the run must be unsettled. Every
 * failure is the same ERR_AUTH, so a caller learns nothing about runs it
 * does not hold. 1 authorized, 0 not (reply set), -1 error. */
static int
worker_auth(struct coord_ctx *c, const char *run_id)
{
	static const char sql[] =
		"SELECT token_hash, ticket FROM runs WHERE id = ? AND settled_ms IS NULL";
	const char *token = c->req->token;
	char hash[IDS_HASH_LEN + 1], stored[IDS_HASH_LEN + 1] = "";
	int64_t n = 0;
	struct coord_st *st;
	int rc;

	if (!coord_rows_is_hex(token, IDS_TOKEN_LEN) || !coord_rows_is_hex(run_id, IDS_RUN_LEN))
		goto deny;
	if ((st = coord_db_q(c->db, sql, "t", run_id)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		snprintf(stored, sizeof stored, "%s", coord_db_coltext(st, 0));
		n = coord_db_i64(st, 1);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	ids_hash_hex(token, hash);
	if (rc == 0 || strlen(stored) != IDS_HASH_LEN ||
	    !ids_consttime_eq(hash, stored, IDS_HASH_LEN))
		goto deny;
	snprintf(c->run, sizeof c->run, "%s", run_id);
	coord_rows_ticket_name(n, c->ticket, sizeof c->ticket);
	return 1;
deny:
	coord_reply_fail(c, BERTH__ERROR_CODE__ERR_AUTH, "not authorized for this run");
	return 0;
}

/* A label or a note over COORD_TEXT_MAX: refused after the token checked
 * out, so a stranger learns nothing from it. */
static int
worker_too_long(struct coord_ctx *c, const char *text)
{
	if (text == NULL || strlen(text) <= COORD_TEXT_MAX)
		return 0;
	coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "a label or note is at most %d bytes",
			 COORD_TEXT_MAX);
	return 1;
}

int
coord_worker_heartbeat(struct coord_ctx *c)
{
	static const char sql[] = "UPDATE runs SET heartbeat_ms = ? WHERE id = ?";
	const char *run_id = c->req->heartbeat ? c->req->heartbeat->run_id : NULL;
	int rc;

	if ((rc = worker_auth(c, run_id)) <= 0)
		return rc;
	if (coord_db_exec(c->db, sql, "it", c->now, run_id) != 1)
		return -1;
	coord_reply_granted(c);
	return 0;
}

int
coord_worker_progress(struct coord_ctx *c)
{
	static const char sql[] =
		"UPDATE runs SET progress_index = ?, progress_total = ?, progress_label = ?,"
		" progress_ms = ?, heartbeat_ms = ? WHERE id = ?";
	const Berth__Progress *m = c->req->progress;
	const char *run_id = m ? m->run_id : NULL;
	int rc;

	if ((rc = worker_auth(c, run_id)) <= 0 || worker_too_long(c, m->label))
		return rc < 0 ? -1 : 0;
	if (coord_db_exec(c->db, sql, "iitiit", m->index, m->total, m->label ? m->label : "",
			  c->now, c->now, run_id) != 1)
		return -1;
	coord_reply_granted(c);
	return 0;
}

int
coord_worker_note(struct coord_ctx *c)
{
	static const char sql[] = "INSERT INTO run_notes (run_id, ts_ms, text) VALUES (?, ?, ?)";
	const Berth__Note *m = c->req->note;
	const char *run_id = m ? m->run_id : NULL;
	int rc;

	if ((rc = worker_auth(c, run_id)) <= 0 || worker_too_long(c, m->text))
		return rc < 0 ? -1 : 0;
	if (m->text == NULL || m->text[0] == '\0') {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "empty note");
		return 0;
	}
	if (coord_db_exec(c->db, sql, "tit", run_id, c->now, m->text) != 1)
		return -1;
	coord_reply_granted(c);
	return 0;
}

int
coord_worker_should_stop(struct coord_ctx *c)
{
	static const char sql[] = "SELECT stop_reason FROM runs WHERE id = ?";
	const char *run_id = c->req->should_stop ? c->req->should_stop->run_id : NULL;
	Berth__ShouldStopReply *sr;
	Berth__Granted *g;
	char reason[16] = "";
	struct coord_st *st;
	int rc;

	if ((rc = worker_auth(c, run_id)) <= 0)
		return rc;
	if ((st = coord_db_q(c->db, sql, "t", run_id)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1)
		snprintf(reason, sizeof reason, "%s", coord_db_coltext(st, 0));
	coord_db_done(st);
	if (rc < 0)
		return -1;
	g = coord_reply_granted(c);
	sr = coord_mem_alloc(sizeof *sr);
	berth__should_stop_reply__init(sr);
	sr->has_stop = 1;
	sr->stop = reason[0] != '\0';
	sr->reason = coord_mem_strdup(reason);
	g->payload_case = BERTH__GRANTED__PAYLOAD_SHOULD_STOP;
	g->should_stop = sr;
	return 0;
}
