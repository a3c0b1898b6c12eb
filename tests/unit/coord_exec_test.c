/* One request, one transaction (coordinator/coord_exec.c): stored replies
 * replayed, nothing stored for a claim that found nothing, the failpoint
 * before COMMIT, pruning, and races between two connections or processes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "coord_trace.h"
#include "clock.h"
#include "coord_sched.h"
#include "failpoint.h"

static void
test_two_connections_one_claim(void **state)
{
	struct fx *f = *state;
	struct coord_db *other;
	char err[256], id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	assert_int_equal(coord_db_open(&other, f->path, &fx_opts, err, sizeof err), 0);
	claim_ok(f, id, run, NULL);
	r = claim_as(f, other, id, 0, "other");
	assert_string_equal(denied(r), "not_ready");
	assert_string_equal(fact(r, "state"), "claimed");
	coord_exec_free(&f->res);
	coord_db_close(other);
}

/* Two processes race to claim the same ticket, each with its own
 * connection: exactly one is granted. */
static void
test_two_processes_one_claim(void **state)
{
	struct fx *f = *state;
	int go[2], i, granted = 0;
	pid_t pids[2];
	char id[32];

	snprintf(id, sizeof id, "%s", add(f));
	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__Claim c = BERTH__CLAIM__INIT;
			char err[256], b, inst[16];
			int rc;

			close(go[1]);
			if (coord_db_open(&s, f->path, &fx_opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			snprintf(inst, sizeof inst, "proc%d", i);
			c.ticket = id;
			req.verb_case = BERTH__REQUEST__VERB_CLAIM;
			req.claim = &c;
			req.instance = inst;
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, NULL, &res) != 0)
				_exit(3);
			rc = res.reply->result_case == BERTH__REPLY__RESULT_GRANTED  ? 0
			     : res.reply->result_case == BERTH__REPLY__RESULT_DENIED ? 1
										     : 3;
			coord_exec_free(&res);
			coord_db_close(s);
			_exit(rc);
		}
	}
	close(go[0]);
	close(go[1]); /* both children start together */
	for (i = 0; i < 2; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		assert_true(WEXITSTATUS(st) <= 1);
		granted += WEXITSTATUS(st) == 0;
	}
	assert_int_equal(granted, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 1);
}

static void
test_repeated_request_replayed(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "echo", "hi" };
	const Berth__Reply *r;
	struct coord_db *s2;
	char err[256];

	a.n_argv = 2;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.has_req_id = 1;
	req.req_id = 77;
	r = ex(f, &req);
	assert_granted(r);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_false(r->replayed);
	r = ex(f, &req);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_granted(r);
	assert_true(r->replayed);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_int_equal(r->req_id, 77);
	/* and after a restart of the coordinator */
	coord_exec_free(&f->res);
	coord_db_close(f->db);
	assert_int_equal(coord_db_open(&s2, f->path, &fx_opts, err, sizeof err), 0);
	f->db = s2;
	r = ex(f, &req);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_string_equal(r->granted->add->ticket, "T1");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 1);
	/* the same request id from another instance is a new request */
	req.instance = "another";
	r = ex(f, &req);
	assert_string_equal(r->granted->add->ticket, "T2");
}

/* Denials are decisions: stored and replayed, also when the world changed
 * in between. */
static void
test_denial_stored(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef m = BERTH__TICKET_REF__INIT;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	m.id = id;
	req.verb_case = BERTH__REQUEST__VERB_HOLD;
	req.hold = &m;
	req.has_req_id = 1;
	req.req_id = 500;
	assert_string_equal(denied(ex(f, &req)), "not_ready");
	assert_granted(abandon(f, run));
	r = ex(f, &req);
	assert_string_equal(denied(r), "not_ready");
	assert_true(r->replayed);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE decision = 'denied'"), 1);
}

/* A claim for the next ticket that finds nothing decides nothing: it is
 * not stored, so the same request may be executed again when work
 * arrives. */
static void
test_nothing_due_not_stored(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	struct addopt later = { .at_ms = T0 + 5000 };
	const Berth__Reply *r;

	add_opt(f, &later);
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	req.has_req_id = 1;
	req.req_id = 900;
	r = ex(f, &req);
	assert_string_equal(denied(r), "nothing_due");
	assert_string_equal(fact(r, "next_due_at"), "1005000");
	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), T0 + 5000);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 1); /* the add */
	clock_fake_set(T0 + 5000);
	r = ex(f, &req);
	assert_granted(r);
	assert_false(r->replayed);
	assert_string_equal(r->granted->claim->ticket, "T1");
	r = ex(f, &req);
	assert_true(r->replayed);
}

static void
test_failpoint_before_commit(void **state)
{
	struct fx *f = *state;
	char err[256];
	const Berth__Reply *r;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };

	assert_int_equal(fp_init("coordinator.before_commit=1*error", f->dir, err, sizeof err), 0);
	a.n_argv = 1;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.has_req_id = 1;
	req.req_id = 3;
	r = ex(f, &req);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_STORAGE);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 0);
	/* the retry of the same request succeeds once */
	r = ex(f, &req);
	assert_granted(r);
	assert_false(r->replayed);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 1);
}

/* Stored replies are kept a day, then pruned. */
static void
test_old_replies_pruned(void **state)
{
	struct fx *f = *state;

	add(f);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 2);
	clock_fake_set(T0 + 23 * 3600 * 1000LL);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 3);
	clock_fake_set(T0 + 25 * 3600 * 1000LL);
	add(f);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events"), 4);
}

/* The exit-checkpoint race as it happens: the supervisor and recovery, two
 * processes with their own connections, both send record_exit for one
 * run. Exactly one is granted; the other learns "aftercare". */
static void
test_record_exit_race_two_processes(void **state)
{
	struct fx *f = *state;
	int go[2], i, granted = 0, aftercare = 0;
	pid_t pids[2];
	char id[32], run[40];

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(start(f, run));
	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
			char err[256], b;
			int rc = 3;

			close(go[1]);
			if (coord_db_open(&s, f->path, &fx_opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			m.run_id = run;
			m.has_has_record = m.has_record = 1;
			m.has_exit_code = 1;
			m.exit_code = i;
			req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
			req.record_exit = &m;
			req.instance = i ? "recovery" : "supervisor";
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, NULL, &res) == 0) {
				const Berth__Reply *r = res.reply;

				if (r->result_case == BERTH__REPLY__RESULT_GRANTED)
					rc = 0;
				else if (r->result_case == BERTH__REPLY__RESULT_DENIED &&
					 strcmp(r->denied->reason, "already_claimed") == 0 &&
					 r->denied->n_facts == 1 &&
					 strcmp(r->denied->facts[0]->value, "aftercare") == 0)
					rc = 1;
				coord_exec_free(&res);
			}
			coord_db_close(s);
			_exit(rc);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < 2; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		granted += WEXITSTATUS(st) == 0;
		aftercare += WEXITSTATUS(st) == 1;
	}
	assert_int_equal(granted, 1);
	assert_int_equal(aftercare, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'record_exit'"), 2);
}

/* The decision's trace line is formatted once, in coord_exec: with the seq
 * and arrival time the caller gives, and a committed decision keeps that
 * very line in its transaction. A read, a denial that decided nothing and
 * a replay get a line too, but keep none. */
static void
test_trace_line_once(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, list = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	struct coord_exec_trace tr = { 7, coord_trace_now_us() };
	char *argv[] = { "true" }, *kept;
	uint64_t seq;

	a.n_argv = 1;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	req.actor = "test";
	req.instance = "test";
	req.has_req_id = 1;
	req.req_id = 42;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.decision, COORD_GRANTED);
	assert_true(f->res.committed);
	assert_int_equal(f->res.seq, 7);
	assert_non_null(f->res.line);
	assert_non_null(strstr(f->res.line, "{\"seq\":7,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"add\""));
	assert_non_null(strstr(f->res.line, "\"ticket\":\"T1\""));
	assert_non_null(strstr(f->res.line, "\"decision\":\"granted\""));
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 7);
	assert_string_equal(kept, f->res.line);
	free(kept);

	list.verb_case = BERTH__REQUEST__VERB_STATUS;
	list.actor = "test";
	list.instance = "test";
	list.has_req_id = 1;
	list.req_id = 43;
	tr.seq = 8;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &list, NULL, &tr, &f->res), 0);
	assert_false(f->res.committed);
	assert_non_null(strstr(f->res.line, "{\"seq\":8,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"status\""));

	tr.seq = 9;
	coord_exec_free(&f->res);
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.decision, COORD_REPLAYED);
	assert_false(f->res.committed);
	assert_non_null(strstr(f->res.line, "\"decision\":\"replayed\""));
	assert_non_null(strstr(f->res.line, "\"ticket\":\"T1\""));
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 7);
	free(kept);
}

/* The result says what happened, for the server to act on without reading
 * the reply again: committed or not, decided nothing (may be held), wake. */
static void
test_typed_result(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;

	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(f->res.decision, COORD_DENIED);
	assert_true(f->res.decided_nothing);
	assert_false(f->res.committed);
	assert_null(f->res.line); /* no coord_exec_trace: no line */
	add(f);
	assert_true(f->res.committed);
	assert_true(f->res.wake);
	assert_false(f->res.decided_nothing);
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a; /* no argv */
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(f->res.decision, COORD_ERROR);
	assert_false(f->res.committed);
}

/* ------------------------------------------------------------- fused verbs */

/* A claim carrying the waiting shim's identity creates its run and starts
 * it in one transaction: running with that shim before the reply leaves,
 * start's own answer in Reply.fused, an event and a line for each. */
static void
test_fused_claim_starts_the_run(void **state)
{
	struct fx *f = *state;
	struct coord_exec_trace tr = { 3, coord_trace_now_us() };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	const Berth__Reply *r;
	char run[40], token[80], *kept, *second;
	uint64_t seq;

	add(f);
	r = claim_shim(f, NULL);
	assert_granted(r);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(r->fused->req_id, r->req_id);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	snprintf(token, sizeof token, "%s", r->granted->claim->token);
	assert_int_equal(sql_int(f,
				 "SELECT count(*) FROM runs WHERE state = 'running' AND pid = 4242"
				 " AND start_time = 99 AND pgid = 4242 AND started_ms IS NOT NULL"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'claim'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 1);
	/* One stored reply, the claim's, with start's answer in it and no
	 * token; a replay derives the token again. */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'claim'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'start'"), 0);
	berth__request__init(&req);
	id.boot_id = "boot";
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = 4242;
	id.start_time = 99;
	id.pgid = 4242;
	c.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	req.has_req_id = 1;
	req.req_id = f->req_id - 1;
	r = ex(f, &req);
	assert_true(r->replayed);
	assert_string_equal(r->granted->claim->run_id, run);
	assert_string_equal(r->granted->claim->token, token);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);

	/* Traced as two decisions, in order: the claim's, then start's,
	 * which says which request carried it; both kept with the commit. */
	add(f);
	coord_exec_free(&f->res);
	c.shim = &id;
	req.has_req_id = 1;
	req.req_id = 700;
	req.actor = "test";
	req.instance = "test";
	assert_int_equal(coord_exec_request(f->db, &req, NULL, &tr, &f->res), 0);
	assert_int_equal(f->res.nlines, 2);
	assert_int_equal(f->res.seq, 3);
	assert_non_null(strstr(f->res.line, "{\"seq\":3,"));
	assert_non_null(strstr(f->res.line, "\"verb\":\"claim\""));
	second = strchr(f->res.line, '\n') + 1;
	assert_non_null(strstr(second, "{\"seq\":4,"));
	assert_non_null(strstr(second, "\"verb\":\"start\""));
	assert_non_null(strstr(second, "\"fused\":\"claim\""));
	assert_non_null(strstr(second, "\"req_id\":700"));
	assert_true(strstr(f->res.line, "\"fused\"") >= second); /* the claim's line has none */
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 3);
	assert_string_equal(kept, f->res.line);
	free(kept);
}

/* A denied claim starts nothing: no fused answer, no run. */
static void
test_fused_claim_denied_starts_nothing(void **state)
{
	struct fx *f = *state;
	struct addopt held = { .hold = 1 };
	const Berth__Reply *r;
	char id[32];

	snprintf(id, sizeof id, "%s", add_opt(f, &held));
	r = claim_shim(f, id);
	assert_string_equal(denied(r), "not_ready");
	assert_null(r->fused);
	r = claim_shim(f, NULL);
	assert_string_equal(denied(r), "nothing_due");
	assert_null(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 0);
}

/* record_exit carrying the aftercare facts checkpoints the exit and
 * settles the run in one transaction: the outcome from the exit, the
 * capture facts kept, the lease gone, the ticket moved on. */
static void
test_fused_exit_settles(void **state)
{
	struct fx *f = *state;
	struct addopt retry = { .retries = 1 };
	const Berth__Reply *r;
	char run[40], id[32];

	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	r = exit_settle(f, run, 0, NULL);
	assert_granted(r);
	assert_non_null(r->fused);
	assert_granted(r->fused);
	assert_int_equal(r->fused->granted->payload_case, BERTH__GRANTED__PAYLOAD_SETTLE);
	assert_true(r->fused->granted->settle->applied);
	assert_string_equal(r->fused->granted->settle->outcome, "succeeded");
	assert_string_equal(r->fused->granted->settle->ticket_state, "succeeded");
	assert_int_equal(sql_int(f,
				 "SELECT count(*) FROM runs WHERE state = 'succeeded' AND"
				 " exit_code = 0 AND output_bytes = 12 AND capture_complete = 1 AND"
				 " settled_ms IS NOT NULL AND aftercare_owner = 'test'"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'settle'"), 1);

	/* A failure with a retry left: failed, the ticket ready again. */
	snprintf(id, sizeof id, "%s", add_opt(f, &retry));
	assert_granted(claim_shim(f, id));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	r = exit_settle(f, run, 3, NULL);
	assert_string_equal(r->fused->granted->settle->outcome, "failed");
	assert_string_equal(r->fused->granted->settle->ticket_state, "ready");
}

/* The checkpoint still decides the race: when recovery checkpointed the
 * exit first, the supervisor's record_exit is denied and settles nothing. */
static void
test_fused_exit_denied_settles_nothing(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;
	char run[40];

	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	f->as_instance = "rcv";
	f->as_actor = "recovery";
	assert_granted(record_exit(f, run, 1, 0, 0));
	f->as_instance = NULL;
	f->as_actor = NULL;
	r = exit_settle(f, run, 0, NULL);
	assert_string_equal(denied(r), "already_claimed");
	assert_null(r->fused);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare' AND"
				    " settled_ms IS NULL AND aftercare_owner = 'rcv'"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'settle'"), 0);
}

/* The fused settle is answered on its own: one that names another run, or
 * an outcome that is none, is its own input error; the checkpoint stands,
 * and a settle sent after it settles the run. */
static void
test_fused_settle_error_keeps_the_checkpoint(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	const Berth__Reply *r;
	char run[40], run2[40];

	add(f);
	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	assert_granted(claim_shim(f, NULL));
	snprintf(run2, sizeof run2, "%s", f->res.reply->granted->claim->run_id);
	m.run_id = run;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	se.run_id = run2;
	m.settle = &se;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(errcode(r->fused), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);

	berth__request__init(&req);
	m.run_id = run2;
	se.run_id = NULL;
	se.outcome = "sideways";
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(errcode(r->fused), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare'"), 2);
	r = settle(f, run2, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
}

/* ------------------------------------------------------------- parts */

/* One request with parts: this run's exit and settlement, and the next
 * run's claim, each decided as if sent alone and answered in Reply.then;
 * a repeat replays each from its own stored reply. */
static void
test_parts_decided_in_order(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, part = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Request *parts[] = { &part };
	const Berth__Reply *r;
	char run[40], next[40];

	add(f);
	add(f);
	assert_granted(claim_shim(f, NULL));
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);
	m.run_id = run;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	m.settle = &se;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	req.has_req_id = 1;
	req.req_id = 800;
	id.boot_id = "boot";
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = 4343;
	id.start_time = 7;
	id.pgid = 4343;
	c.shim = &id;
	c.has_wait_ms = 1;
	c.wait_ms = 5000; /* a part is never held */
	part.verb_case = BERTH__REQUEST__VERB_CLAIM;
	part.claim = &c;
	part.has_req_id = 1;
	part.req_id = 801;
	req.n_then = 1;
	req.then = parts;
	ex(f, &req);
	assert_true(f->res.committed);
	r = sent(f);
	assert_int_equal(r->req_id, 800);
	assert_granted(r);
	assert_granted(r->fused);
	assert_string_equal(r->fused->granted->settle->outcome, "succeeded");
	assert_int_equal(r->n_then, 1);
	assert_int_equal(r->then[0]->req_id, 801);
	assert_granted(r->then[0]);
	assert_granted(r->then[0]->fused);
	snprintf(next, sizeof next, "%s", r->then[0]->granted->claim->run_id);
	assert_int_equal(
		sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running' AND pid = 4343"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE req_id IN (800, 801)"), 2);

	/* The repeat: both replayed, nothing decided twice. */
	ex(f, &req);
	r = sent(f);
	assert_true(r->replayed);
	assert_int_equal(r->n_then, 1);
	assert_true(r->then[0]->replayed);
	assert_string_equal(r->then[0]->granted->claim->run_id, next);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 2);

	/* Nothing due: the claim part is answered at once, not held. */
	m.run_id = next;
	req.req_id = 802;
	part.req_id = 803;
	ex(f, &req);
	assert_false(f->res.decided_nothing);
	r = sent(f);
	assert_granted(r);
	assert_string_equal(denied(r->then[0]), "nothing_due");
}

/* A part that fails or is denied takes nothing from the others. */
static void
test_parts_stand_alone(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT, p1 = BERTH__REQUEST__INIT,
		       p2 = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT, a2 = BERTH__ADD__INIT;
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	Berth__Request *parts[] = { &p1, &p2 };
	char *argv[] = { "true" };
	const Berth__Reply *r;

	a.n_argv = a2.n_argv = 1;
	a.argv = a2.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	ref.id = "T9";
	p1.verb_case = BERTH__REQUEST__VERB_HOLD;
	p1.hold = &ref;
	p1.has_req_id = 1;
	p1.req_id = 901;
	p2.verb_case = BERTH__REQUEST__VERB_ADD;
	p2.add = &a2;
	p2.has_req_id = 1;
	p2.req_id = 902;
	req.n_then = 2;
	req.then = parts;
	ex(f, &req);
	r = sent(f);
	assert_granted(r);
	assert_int_equal(r->n_then, 2);
	assert_int_equal(errcode(r->then[0]), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	assert_granted(r->then[1]);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 2);
}

/* ------------------------------------------------------------- groups */

/* Several requests in one transaction, a savepoint each: one that fails
 * rolls back only itself; one COMMIT keeps the rest, and every line of
 * the group, in order. */
static void
test_group_rolls_back_only_the_failing_request(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	struct coord_result res[3];
	Berth__Request req[3];
	Berth__Claim c[2];
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" }, *kept;
	uint64_t seq;
	int i;

	add(f);
	add(f);
	/* The second claim's run cannot be inserted: its request fails. */
	assert_int_equal(
		sqlite3_exec(coord_db_handle(f->db),
			     "CREATE TEMP TRIGGER boom BEFORE INSERT ON runs WHEN NEW.ticket = 2"
			     " BEGIN SELECT RAISE(ABORT, 'boom'); END",
			     NULL, NULL, NULL),
		SQLITE_OK);
	a.n_argv = 1;
	a.argv = argv;
	for (i = 0; i < 3; i++) {
		berth__request__init(&req[i]);
		req[i].actor = "test";
		req[i].instance = "test";
		req[i].has_req_id = 1;
		req[i].req_id = 1000 + i;
	}
	for (i = 0; i < 2; i++) {
		berth__claim__init(&c[i]);
		c[i].ticket = i == 0 ? "T1" : "T2";
		req[i].verb_case = BERTH__REQUEST__VERB_CLAIM;
		req[i].claim = &c[i];
	}
	req[2].verb_case = BERTH__REQUEST__VERB_ADD;
	req[2].add = &a;
	coord_exec_group_init(&g, f->db, 1, 20);
	for (i = 0; i < 3; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	/* Nothing is durable yet, and nothing answered. */
	assert_int_equal(coord_exec_group_end(&g), 0);
	assert_int_equal(res[0].decision, COORD_GRANTED);
	assert_int_equal(res[1].decision, COORD_ERROR);
	assert_false(res[1].committed);
	assert_int_equal(res[2].decision, COORD_GRANTED);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 3);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE req_id >= 1000"), 2);
	for (i = 0; i < 3; i++) {
		char want[32];

		assert_int_equal(res[i].seq, 20 + i);
		snprintf(want, sizeof want, "{\"seq\":%d,", 20 + i);
		assert_non_null(strstr(res[i].line, want));
	}
	assert_int_equal(coord_exec_kept_line(f->db, &seq, &kept), 1);
	assert_int_equal(seq, 20);
	assert_int_equal(strlen(kept),
			 strlen(res[0].line) + strlen(res[1].line) + strlen(res[2].line));
	free(kept);
	for (i = 0; i < 3; i++)
		coord_exec_free(&res[i]);
	coord_exec_group_free(&g);
}

/* A group whose COMMIT fails (the failpoint's error) loses every decision
 * it was to keep: each of its requests is answered with a storage error,
 * its lines made again in order, and a retry decides them once. */
static void
test_group_commit_failure_answers_every_request(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	struct coord_result res[2];
	Berth__Request req[2];
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" }, err[256];
	int i;

	assert_int_equal(fp_init("coordinator.before_commit=1*error", f->dir, err, sizeof err), 0);
	a.n_argv = 1;
	a.argv = argv;
	for (i = 0; i < 2; i++) {
		berth__request__init(&req[i]);
		req[i].actor = "test";
		req[i].instance = "test";
		req[i].has_req_id = 1;
		req[i].req_id = 50 + i;
		req[i].verb_case = BERTH__REQUEST__VERB_ADD;
		req[i].add = &a;
	}
	coord_exec_group_init(&g, f->db, 1, 1);
	for (i = 0; i < 2; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	assert_int_equal(coord_exec_group_end(&g), -1);
	for (i = 0; i < 2; i++) {
		Berth__Reply *r = berth__reply__unpack(NULL, res[i].packed_len, res[i].packed);

		assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_STORAGE);
		assert_int_equal(r->req_id, 50 + i);
		berth__reply__free_unpacked(r, NULL);
		assert_false(res[i].committed);
		assert_int_equal(res[i].nlines, 1);
		assert_int_equal(res[i].seq, 1 + i);
		assert_non_null(strstr(res[i].line, "\"decision\":\"error\""));
		coord_exec_free(&res[i]);
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(
			coord_exec_group_add(&g, &req[i], NULL, coord_trace_now_us(), 0, &res[i]),
			0);
	assert_int_equal(coord_exec_group_end(&g), 0);
	assert_int_equal(res[0].seq, 3); /* the seqs go on */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 2);
	for (i = 0; i < 2; i++)
		coord_exec_free(&res[i]);
	coord_exec_group_free(&g);
}

/* A read has a group of its own, and a group of decisions that keep
 * nothing costs no commit. */
static void
test_group_fits(void **state)
{
	struct fx *f = *state;
	struct coord_group g;
	Berth__Request add = BERTH__REQUEST__INIT, status = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;

	add.verb_case = BERTH__REQUEST__VERB_ADD;
	add.add = &a;
	status.verb_case = BERTH__REQUEST__VERB_STATUS;
	coord_exec_group_init(&g, f->db, 0, 1);
	assert_true(coord_exec_group_fits(&g, &add));
	assert_true(coord_exec_group_fits(&g, &status));
	g.n = 1;
	g.reads = 0;
	assert_true(coord_exec_group_fits(&g, &add));
	assert_false(coord_exec_group_fits(&g, &status));
	g.reads = 1;
	assert_false(coord_exec_group_fits(&g, &add));
	g.n = 0;
	coord_exec_group_free(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_connections_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_request_replayed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denial_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_due_not_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failpoint_before_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_replies_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_race_two_processes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trace_line_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_claim_starts_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_claim_denied_starts_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fused_exit_settles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_exit_denied_settles_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fused_settle_error_keeps_the_checkpoint, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_parts_decided_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parts_stand_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_rolls_back_only_the_failing_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_failure_answers_every_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_fits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
