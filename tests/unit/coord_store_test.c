/* The coordinator's store: one test per invariant of DESIGN §3-4 and
 * DECISIONS.md, against a real sqlite database in a temporary directory,
 * with the wall clock faked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_ctx.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_sched.h"
#include "coord_schema.h"
#include "failpoint.h"
#include "ident.h"
#include "ids.h"

#define T0 1000000

struct fx {
	char dir[64];
	char path[128];
	struct coord_db *s;
	struct coord_result res;
	uint64_t req_id;
};

static struct coord_db_opts opts = { 0, 60000, 1000, 300000 };

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	char err[256];

	snprintf(f->dir, sizeof f->dir, "/tmp/coord_store_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/berth.db", f->dir);
	clock_fake_set(T0);
	assert_int_equal(coord_db_open(&f->s, f->path, &opts, err, sizeof err), 0);
	f->req_id = 1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	coord_exec_free(&f->res);
	coord_db_close(f->s);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	clock_fake_clear();
	fp_reset();
	free(f);
	return 0;
}

/* ------------------------------------------------------------ helpers */

/* Executes req as instance "test" with a fresh request id (unless set) and
 * keeps the result in f->res until the next call. */
static const Berth__Reply *
ex_on(struct fx *f, struct coord_db *s, Berth__Request *req)
{
	coord_exec_free(&f->res);
	if (req->instance == NULL)
		req->instance = "test";
	if (!req->has_req_id) {
		req->has_req_id = 1;
		req->req_id = f->req_id++;
	}
	if (req->actor == NULL)
		req->actor = "test";
	assert_int_equal(coord_exec_request(s, req, NULL, &f->res), 0);
	assert_non_null(f->res.packed);
	if (f->res.reply != NULL)
		return f->res.reply;
	/* A replayed reply exists only packed: unpack it for the test. */
	{
		static Berth__Reply *last;

		if (last)
			berth__reply__free_unpacked(last, NULL);
		last = berth__reply__unpack(NULL, f->res.packed_len, f->res.packed);
		assert_non_null(last);
		return last;
	}
}

static const Berth__Reply *
ex(struct fx *f, Berth__Request *req)
{
	return ex_on(f, f->s, req);
}

static const char *
denied(const Berth__Reply *r)
{
	return r->result_case == BERTH__REPLY__RESULT_DENIED ? r->denied->reason : NULL;
}

static const char *
fact(const Berth__Reply *r, const char *key)
{
	size_t i;

	if (r->result_case != BERTH__REPLY__RESULT_DENIED)
		return NULL;
	for (i = 0; i < r->denied->n_facts; i++)
		if (strcmp(r->denied->facts[i]->key, key) == 0)
			return r->denied->facts[i]->value;
	return NULL;
}

static int
errcode(const Berth__Reply *r)
{
	return r->result_case == BERTH__REPLY__RESULT_ERROR ? (int)r->error->code : 0;
}

#define assert_granted(r)                                                                  \
	do {                                                                               \
		const Berth__Reply *_r = (r);                                              \
		if (_r->result_case != BERTH__REPLY__RESULT_GRANTED)                       \
			fail_msg("not granted: %s %s",                                     \
				 _r->result_case == BERTH__REPLY__RESULT_DENIED            \
					 ? _r->denied->reason                              \
					 : "error",                                        \
				 _r->result_case == BERTH__REPLY__RESULT_ERROR             \
					 ? _r->error->message                              \
					 : "");                                            \
	} while (0)

struct addopt {
	const char *key;
	const char *workdir;
	const char *after;
	uint32_t retries;
	int64_t at_ms;
	int64_t every_ms;
	int hold;
	int32_t priority;
};

/* Adds a ticket running "true" and returns its id (static buffer). */
static const char *
add_opt(struct fx *f, const struct addopt *o)
{
	static char id[32];
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add add = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	char *after[] = { (char *)(o ? o->after : NULL) };
	const Berth__Reply *r;

	add.n_argv = 1;
	add.argv = argv;
	if (o != NULL) {
		add.key = (char *)o->key;
		add.workdir = (char *)o->workdir;
		if (o->after) {
			add.n_after = 1;
			add.after = after;
		}
		add.has_retries = 1;
		add.retries = o->retries;
		add.has_at_ms = o->at_ms != 0;
		add.at_ms = o->at_ms;
		add.has_every_ms = o->every_ms != 0;
		add.every_ms = o->every_ms;
		add.has_hold = 1;
		add.hold = o->hold;
		add.has_priority = 1;
		add.priority = o->priority;
	}
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &add;
	r = ex(f, &req);
	assert_granted(r);
	snprintf(id, sizeof id, "%s", r->granted->add->ticket);
	return id;
}

static const char *
add(struct fx *f)
{
	return add_opt(f, NULL);
}

static const Berth__Reply *
claim_as(struct fx *f, struct coord_db *s, const char *ticket, uint32_t lease_ms,
	 const char *instance)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;

	c.ticket = (char *)ticket;
	c.has_lease_ms = lease_ms != 0;
	c.lease_ms = lease_ms;
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	req.instance = (char *)instance;
	return ex_on(f, s, &req);
}

static const Berth__Reply *
claim(struct fx *f, const char *ticket)
{
	return claim_as(f, f->s, ticket, 0, NULL);
}

/* Claims ticket (or the next) and returns the run id and token. */
static void
claim_ok(struct fx *f, const char *ticket, char run[40], char token[80])
{
	const Berth__Reply *r = claim(f, ticket);

	assert_granted(r);
	snprintf(run, 40, "%s", r->granted->claim->run_id);
	if (token)
		snprintf(token, 80, "%s", r->granted->claim->token);
}

static const Berth__Reply *
start(struct fx *f, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Start m = BERTH__START__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;

	id.boot_id = "boot";
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = 4242;
	id.start_time = 99;
	id.pgid = 4242;
	m.run_id = (char *)run;
	m.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_START;
	req.start = &m;
	return ex(f, &req);
}

static const Berth__Reply *
record_exit(struct fx *f, const char *run, int has_record, int code, int sig)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;

	m.run_id = (char *)run;
	m.has_has_record = 1;
	m.has_record = has_record;
	if (sig) {
		m.has_signal = 1;
		m.signal = sig;
	} else {
		m.has_exit_code = 1;
		m.exit_code = code;
	}
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	return ex(f, &req);
}

static const Berth__Reply *
settle(struct fx *f, const char *run, const char *outcome)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle m = BERTH__SETTLE__INIT;

	m.run_id = (char *)run;
	m.outcome = (char *)outcome;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &m;
	return ex(f, &req);
}

static const Berth__Reply *
abandon(struct fx *f, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Abandon m = BERTH__ABANDON__INIT;

	m.run_id = (char *)run;
	req.verb_case = BERTH__REQUEST__VERB_ABANDON;
	req.abandon = &m;
	return ex(f, &req);
}

static const Berth__Reply *
renew(struct fx *f, const char *ticket, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Renew m = BERTH__RENEW__INIT;

	m.ticket = (char *)ticket;
	m.run_id = (char *)run;
	req.verb_case = BERTH__REQUEST__VERB_RENEW;
	req.renew = &m;
	return ex(f, &req);
}

static const Berth__Reply *
readopt(struct fx *f, const char *ticket, const char *run, const char *owner)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Readopt m = BERTH__READOPT__INIT;

	m.ticket = (char *)ticket;
	m.run_id = (char *)run;
	m.new_owner = (char *)owner;
	req.verb_case = BERTH__REQUEST__VERB_READOPT;
	req.readopt = &m;
	return ex(f, &req);
}

static const Berth__Reply *
ticket_verb(struct fx *f, Berth__Request__VerbCase verb, const char *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef m = BERTH__TICKET_REF__INIT;

	m.id = (char *)id;
	req.verb_case = verb;
	req.hold = &m; /* one union: every TicketRef verb shares the slot */
	return ex(f, &req);
}

static const Berth__Ticket *
show(struct fx *f, const char *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show m = BERTH__SHOW__INIT;
	const Berth__Reply *r;

	m.id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &m;
	r = ex(f, &req);
	assert_granted(r);
	return r->granted->ticket;
}

static const Berth__Reply *
mark_stop(struct fx *f, const char *run, const char *reason)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__MarkStop m = BERTH__MARK_STOP__INIT;

	m.run_id = (char *)run;
	m.reason = (char *)reason;
	req.verb_case = BERTH__REQUEST__VERB_MARK_STOP;
	req.mark_stop = &m;
	return ex(f, &req);
}

static int64_t
sql_int(struct fx *f, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(coord_db_handle(f->s), sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Runs a ticket through claim/start/record_exit and returns its run. */
static void
run_to_exit(struct fx *f, const char *ticket, int code, char run[40])
{
	claim_ok(f, ticket, run, NULL);
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, code, 0));
}

/* ------------------------------------------------------------ tests */

static void
test_claim_twice_denied(void **state)
{
	struct fx *f = *state;
	const char *t = add(f);
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", t);
	claim_ok(f, id, run, NULL);
	r = claim(f, id);
	assert_string_equal(denied(r), "not_ready");
	assert_string_equal(fact(r, "state"), "claimed");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
}

static void
test_two_connections_one_claim(void **state)
{
	struct fx *f = *state;
	struct coord_db *other;
	char err[256], id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	assert_int_equal(coord_db_open(&other, f->path, &opts, err, sizeof err), 0);
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
			if (coord_db_open(&s, f->path, &opts, err, sizeof err) != 0)
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
			if (coord_exec_request(s, &req, NULL, &res) != 0)
				_exit(3);
			rc = res.reply->result_case == BERTH__REPLY__RESULT_GRANTED ? 0
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
test_record_exit_once(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	r = record_exit(f, run, 1, 0, 0);
	assert_string_equal(denied(r), "already_claimed");
	assert_string_equal(fact(r, "state"), "aftercare");
	assert_granted(settle(f, run, ""));
	r = record_exit(f, run, 0, 0, 0);
	assert_string_equal(denied(r), "already_claimed");
	assert_string_equal(fact(r, "state"), "succeeded");
	r = record_exit(f, "0123456789abcdef0123456789abcdef", 1, 0, 0);
	assert_string_equal(fact(r, "state"), "absent");
}

static void
test_start_denied_with_state(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(start(f, run));
	r = start(f, run);
	assert_string_equal(denied(r), "not_claimed");
	assert_string_equal(fact(r, "state"), "running");
	r = start(f, "ffffffffffffffffffffffffffffffff");
	assert_string_equal(denied(r), "not_claimed");
	assert_string_equal(fact(r, "state"), "absent");
	assert_int_equal(sql_int(f, "SELECT pid FROM runs"), 4242);
}

/* Claim at 2 000 with a 60 000 ms lease; at 90 000 renew is denied and
 * readopt granted until 150 000; renew at 100 000 is granted until
 * 160 000. */
static void
test_lease_timeline(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	clock_fake_set(1000);
	snprintf(id, sizeof id, "%s", add(f));
	clock_fake_set(2000);
	r = claim_as(f, f->s, id, 60000, NULL);
	assert_granted(r);
	assert_int_equal(r->granted->claim->lease_expires_ms, 62000);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	assert_granted(start(f, run));

	clock_fake_set(62000); /* strict: expires_at > now */
	assert_string_equal(denied(renew(f, id, run)), "lease_not_held");
	clock_fake_set(90000);
	assert_string_equal(denied(renew(f, id, run)), "lease_not_held");
	r = readopt(f, id, run, NULL);
	assert_granted(r);
	assert_int_equal(r->granted->lease->expires_ms, 150000);
	clock_fake_set(100000);
	r = renew(f, id, run);
	assert_granted(r);
	assert_int_equal(r->granted->lease->expires_ms, 160000);
	assert_int_equal(sql_int(f, "SELECT expires_ms FROM leases"), 160000);
}

static void
test_readopt_refuses_settled(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	assert_granted(readopt(f, id, run, "sup2"));
	assert_string_equal(sql_int(f, "SELECT owner = 'sup2' FROM runs") == 1 ? "y" : "n", "y");
	assert_granted(settle(f, run, ""));
	assert_string_equal(denied(readopt(f, id, run, "sup3")), "lease_not_held");
	assert_string_equal(denied(readopt(f, NULL, run, NULL)), "lease_not_held");
}

static void
test_renew_refuses_other_runs_lease(void **state)
{
	struct fx *f = *state;
	char a[32], b[32], ra[40], rb[40];

	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	claim_ok(f, a, ra, NULL);
	claim_ok(f, b, rb, NULL);
	assert_string_equal(denied(renew(f, a, rb)), "lease_not_held");
	assert_string_equal(denied(readopt(f, b, ra, NULL)), "lease_not_held");
	assert_granted(renew(f, a, ra));
}

static void
test_settle_twice_applied_once(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 0, run);
	r = settle(f, run, "");
	assert_granted(r);
	assert_true(r->granted->settle->applied);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
	assert_string_equal(r->granted->settle->ticket_state, "succeeded");
	r = settle(f, run, "failed");
	assert_granted(r);
	assert_false(r->granted->settle->applied);
	assert_string_equal(r->granted->settle->outcome, "succeeded");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE settled_ms IS NOT NULL"), 1);
}

/* An over-long reason (they come from actors: spawn errors, signals) is cut
 * to COORD_TEXT_MAX bytes at a character boundary, never refused: a refused
 * settle would leave the run unsettled. */
static void
test_settle_cuts_a_long_reason(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle m = BERTH__SETTLE__INIT;
	char id[32], run[40], *reason = malloc(3 * COORD_TEXT_MAX + 1);
	size_t i;

	assert_non_null(reason);
	for (i = 0; i < 3 * COORD_TEXT_MAX; i += 3)
		memcpy(reason + i, "\xc3\xa9x", 3); /* "éx": a 2-byte character */
	reason[3 * COORD_TEXT_MAX] = '\0';
	snprintf(id, sizeof id, "%s", add(f));
	run_to_exit(f, id, 1, run);
	m.run_id = run;
	m.outcome = "failed";
	m.reason = reason;
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &m;
	assert_granted(ex(f, &req));
	/* 4096 bytes of "éx"... end inside an "é" (4096 = 3 * 1365 + 1), so
	 * the cut backs up to 4095 bytes, then the 3-byte ellipsis. */
	assert_int_equal(sql_int(f, "SELECT length(CAST(reason AS BLOB)) FROM runs"),
			 COORD_TEXT_MAX - 1 + 3);
	assert_int_equal(sql_int(f, "SELECT substr(reason, -1) = '\xe2\x80\xa6' FROM runs"), 1);
	free(reason);
}

static void
test_abandon_keeps_attempt(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Ticket *t;
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	assert_granted(abandon(f, run));
	assert_granted(abandon(f, run)); /* idempotent */
	t = show(f, id);
	assert_string_equal(t->state, "ready");
	assert_int_equal(t->attempts, 1);
	assert_int_equal(t->n_runs, 1);
	assert_string_equal(t->runs[0]->state, "aborted");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	r = claim(f, id);
	assert_granted(r);
	assert_int_equal(r->granted->claim->attempt, 2);
	assert_string_equal(r->granted->claim->alias, "T1-r2");
	/* aborted spends no budget: retries=0 still allows the next run */
	assert_int_equal(sql_int(f, "SELECT bad_runs FROM tickets"), 0);
}

static void
test_hold_refuses_claimed(void **state)
{
	struct fx *f = *state;
	char id[32], run[40];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, run, NULL);
	r = ticket_verb(f, BERTH__REQUEST__VERB_HOLD, id);
	assert_string_equal(denied(r), "not_ready");
	assert_string_equal(fact(r, "state"), "claimed");
	assert_int_equal(errcode(ticket_verb(f, BERTH__REQUEST__VERB_HOLD, "T99")),
			 BERTH__ERROR_CODE__ERR_NOT_FOUND);
}

static void
test_hold_release(void **state)
{
	struct fx *f = *state;
	char id[32];
	const Berth__Reply *r;

	snprintf(id, sizeof id, "%s", add(f));
	r = ticket_verb(f, BERTH__REQUEST__VERB_HOLD, id);
	assert_granted(r);
	assert_string_equal(r->granted->ticket->state, "held");
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_HOLD, id));
	assert_string_equal(fact(claim(f, id), "state"), "held");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	r = ticket_verb(f, BERTH__REQUEST__VERB_RELEASE, id);
	assert_granted(r);
	assert_string_equal(r->granted->ticket->state, "ready");
	assert_granted(claim(f, NULL));
}

static void
test_newer_schema_refused(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2 = NULL;
	char err[256], want[32];

	assert_int_equal(sqlite3_exec(coord_db_handle(f->s), "PRAGMA user_version=99", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	assert_int_equal(coord_db_open(&s2, f->path, &opts, err, sizeof err), -1);
	assert_null(s2);
	assert_non_null(strstr(err, "99"));
	snprintf(want, sizeof want, "version %d", COORD_SCHEMA_VERSION);
	assert_non_null(strstr(err, want));
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
	coord_db_close(f->s);
	assert_int_equal(coord_db_open(&s2, f->path, &opts, err, sizeof err), 0);
	f->s = s2;
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
	assert_int_equal(coord_sched_next_wake(f->s, clock_wall_ms()), T0 + 5000);
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
test_claim_next_order(void **state)
{
	struct fx *f = *state;
	struct addopt low = { .priority = 0 }, high = { .priority = 5 }, held = { .hold = 1, .priority = 9 };
	struct addopt later = { .at_ms = T0 + 1000, .priority = 8 };
	struct addopt blocked = { .after = "T1", .priority = 7 };
	const Berth__Reply *r;

	add_opt(f, &low);     /* T1 */
	add_opt(f, &high);    /* T2 */
	add_opt(f, &high);    /* T3 */
	add_opt(f, &held);    /* T4 */
	add_opt(f, &later);   /* T5 */
	add_opt(f, &blocked); /* T6 */
	r = claim(f, NULL);
	assert_string_equal(r->granted->claim->ticket, "T2");
	r = claim(f, NULL);
	assert_string_equal(r->granted->claim->ticket, "T3");
	r = claim(f, NULL);
	assert_string_equal(r->granted->claim->ticket, "T1");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	r = claim(f, "T6");
	assert_string_equal(fact(r, "state"), "blocked");
	assert_string_equal(fact(r, "after"), "T1");
	r = claim(f, "T5");
	assert_string_equal(denied(r), "nothing_due");
	assert_string_equal(fact(r, "next_due_at"), "1001000");
}

static void
test_claim_payload(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "sh", "-c", "echo \"a\\b\"\n" };
	char *env[] = { "A=1", "B=x y" };
	const Berth__ClaimGranted *g;
	const Berth__Reply *r;
	char hash[IDS_HASH_LEN + 1];

	a.n_argv = 3;
	a.argv = argv;
	a.n_env = 2;
	a.env = env;
	a.workdir = "/tmp";
	a.has_timeout_ms = 1;
	a.timeout_ms = 5000;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_granted(ex(f, &req));
	r = claim(f, NULL);
	assert_granted(r);
	g = r->granted->claim;
	assert_int_equal(strlen(g->run_id), 32);
	assert_int_equal(strlen(g->token), 64);
	assert_int_equal(g->n_argv, 3);
	assert_string_equal(g->argv[2], "echo \"a\\b\"\n");
	assert_int_equal(g->n_env, 2);
	assert_string_equal(g->env[1], "B=x y");
	assert_string_equal(g->workdir, "/tmp");
	assert_int_equal(g->timeout_ms, 5000);
	assert_int_equal(g->attempt, 1);
	assert_string_equal(g->alias, "T1-r1");
	/* only the hash of the token is stored */
	ids_hash_hex(g->token, hash);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE length(token_hash) = 64"), 1);
	{
		sqlite3_stmt *st;

		sqlite3_prepare_v2(coord_db_handle(f->s), "SELECT token_hash FROM runs", -1, &st,
				   NULL);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), hash);
		sqlite3_finalize(st);
	}
}

static void
test_add_validation(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	char *after[] = { "T42" };
	char *env[] = { "NOEQUALS" };

	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	a.n_argv = 1;
	a.argv = argv;
	a.n_after = 1;
	a.after = after;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	a.n_after = 0;
	a.n_env = 1;
	a.env = env;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests"), 0);
}

static void
test_add_batch_atomic(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__AddBatch b = BERTH__ADD_BATCH__INIT;
	Berth__Add a1 = BERTH__ADD__INIT, a2 = BERTH__ADD__INIT, a3 = BERTH__ADD__INIT;
	Berth__Add *adds[] = { &a1, &a2, &a3 };
	char *argv[] = { "true" };
	char *after[] = { "T1" };
	const Berth__Reply *r;

	a1.n_argv = a2.n_argv = 1;
	a1.argv = a2.argv = argv;
	a2.n_after = 1; /* may name an earlier ticket of the same batch */
	a2.after = after;
	b.n_adds = 3;
	b.adds = adds;
	req.verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
	req.add_batch = &b;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	b.n_adds = 2;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(r->granted->add_batch->n_tickets, 2);
	assert_string_equal(r->granted->add_batch->tickets[1], "T2");
	assert_string_equal(show(f, "T2")->state, "blocked");
}

static void
test_outcome_derivation(void **state)
{
	struct fx *f = *state;
	static const struct {
		int has_record, code, sig;
		const char *stop, *outcome;
	} cases[] = {
		{ 1, 0, 0, NULL, "succeeded" }, { 1, 3, 0, NULL, "failed" },
		{ 1, 0, 9, NULL, "failed" },    { 0, 0, 0, NULL, "orphaned" },
		{ 1, 0, 0, "cancel", "cancelled" }, { 1, 1, 0, "timeout", "timed_out" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char id[32], run[40];
		const Berth__Reply *r;

		snprintf(id, sizeof id, "%s", add(f));
		claim_ok(f, id, run, NULL);
		assert_granted(start(f, run));
		if (cases[i].stop)
			assert_granted(mark_stop(f, run, cases[i].stop));
		assert_granted(record_exit(f, run, cases[i].has_record, cases[i].code,
					   cases[i].sig));
		r = settle(f, run, NULL);
		assert_granted(r);
		assert_string_equal(r->granted->settle->outcome, cases[i].outcome);
	}
	/* a claimed run settled without an outcome never executed */
	{
		char id[32], run[40];
		const Berth__Reply *r;

		snprintf(id, sizeof id, "%s", add(f));
		claim_ok(f, id, run, NULL);
		r = settle(f, run, NULL);
		assert_string_equal(r->granted->settle->outcome, "aborted");
		assert_string_equal(r->granted->settle->ticket_state, "ready");
		assert_int_equal(errcode(settle(f, "0123456789abcdef0123456789abcdef", NULL)),
				 BERTH__ERROR_CODE__ERR_NOT_FOUND);
	}
}

/* --retries 2: two bad outcomes go back to ready after 1 s then 2 s; the
 * third is final. */
static void
test_retry_backoff(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .retries = 2 };
	char id[32], run[40];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	snprintf(id, sizeof id, "%s", add_opt(f, &o));
	run_to_exit(f, id, 1, run);
	r = settle(f, run, NULL);
	assert_string_equal(r->granted->settle->ticket_state, "ready");
	t = show(f, id);
	assert_int_equal(t->next_due_ms, T0 + 1000);
	assert_string_equal(denied(claim(f, id)), "nothing_due");
	clock_fake_set(T0 + 1000);
	run_to_exit(f, id, 1, run);
	assert_string_equal(settle(f, run, NULL)->granted->settle->ticket_state, "ready");
	assert_int_equal(show(f, id)->next_due_ms, T0 + 1000 + 2000);
	clock_fake_set(T0 + 3000);
	run_to_exit(f, id, 1, run);
	assert_string_equal(settle(f, run, NULL)->granted->settle->ticket_state, "failed");
	t = show(f, id);
	assert_int_equal(t->attempts, 3);
	assert_int_equal(t->n_runs, 3);
	assert_string_equal(t->runs[0]->alias, "T1-r1");
	assert_string_equal(t->runs[2]->state, "failed");
	assert_int_equal(t->runs[2]->exit_code, 1);
	/* retry: a fresh budget, due now */
	r = ticket_verb(f, BERTH__REQUEST__VERB_RETRY, id);
	assert_granted(r);
	assert_string_equal(r->granted->ticket->state, "ready");
	assert_int_equal(sql_int(f, "SELECT bad_runs FROM tickets"), 0);
	assert_granted(claim(f, id));
	assert_string_equal(fact(ticket_verb(f, BERTH__REQUEST__VERB_RETRY, id), "state"),
			    "claimed");
}

static void
test_backoff_capped(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .retries = 30 };
	char id[32], run[40];
	int i;

	snprintf(id, sizeof id, "%s", add_opt(f, &o));
	for (i = 0; i < 12; i++) {
		clock_fake_set(T0 + 10000000LL * i);
		run_to_exit(f, id, 1, run);
		assert_granted(settle(f, run, NULL));
	}
	assert_int_equal(show(f, id)->next_due_ms, T0 + 10000000LL * 11 + 300000);
}

static void
test_cancel(void **state)
{
	struct fx *f = *state;
	char a[32], b[32], run[40];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	r = ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, a);
	assert_string_equal(r->granted->ticket->state, "cancelled");
	assert_string_equal(denied(claim(f, a)), "not_ready");
	/* with a run: a stop request the reaper enforces */
	run_to_exit(f, b, 0, run);
	r = ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, b);
	assert_granted(r);
	t = show(f, b);
	assert_string_equal(t->state, "claimed");
	assert_string_equal(t->runs[0]->stop_reason, "cancel");
	r = settle(f, run, NULL);
	assert_string_equal(r->granted->settle->outcome, "cancelled");
	assert_string_equal(r->granted->settle->ticket_state, "cancelled");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE state = 'queued'"), 0);
}

static void
test_show_by_alias_and_run(void **state)
{
	struct fx *f = *state;
	char id[32], r1[40], r2[40];
	const Berth__Ticket *t;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show m = BERTH__SHOW__INIT;

	snprintf(id, sizeof id, "%s", add(f));
	claim_ok(f, id, r1, NULL);
	assert_granted(abandon(f, r1));
	claim_ok(f, id, r2, NULL);
	t = show(f, "T1-r2");
	assert_string_equal(t->id, "T1");
	assert_int_equal(t->n_runs, 2);
	assert_string_equal(t->runs[0]->id, r1);
	assert_string_equal(t->runs[1]->id, r2);
	assert_true(t->runs[1]->has_lease);
	t = show(f, r1);
	assert_string_equal(t->id, "T1");
	m.id = "T1-r3";
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &m;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	m.id = "bogus";
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
}

static const Berth__Reply *
worker(struct fx *f, Berth__Request__VerbCase v, const char *token, const char *run)
{
	static Berth__WorkerRef w;
	static Berth__Progress p;
	static Berth__Note n;
	Berth__Request req = BERTH__REQUEST__INIT;

	berth__worker_ref__init(&w);
	berth__progress__init(&p);
	berth__note__init(&n);
	req.token = (char *)token;
	req.actor = "worker";
	req.verb_case = v;
	switch (v) {
	case BERTH__REQUEST__VERB_PROGRESS:
		p.run_id = (char *)run;
		p.has_index = p.has_total = 1;
		p.index = 3;
		p.total = 10;
		p.label = "step";
		req.progress = &p;
		break;
	case BERTH__REQUEST__VERB_NOTE:
		n.run_id = (char *)run;
		n.text = "hello";
		req.note = &n;
		break;
	default:
		w.run_id = (char *)run;
		req.heartbeat = &w;
		break;
	}
	return ex(f, &req);
}

static void
test_worker_auth(void **state)
{
	struct fx *f = *state;
	char a[32], b[32], ra[40], rb[40], ta[80], tb[80];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	claim_ok(f, a, ra, ta);
	claim_ok(f, b, rb, tb);
	assert_granted(start(f, ra));
	assert_granted(worker(f, BERTH__REQUEST__VERB_HEARTBEAT, ta, ra));
	assert_granted(worker(f, BERTH__REQUEST__VERB_PROGRESS, ta, ra));
	assert_granted(worker(f, BERTH__REQUEST__VERB_NOTE, ta, ra));
	r = worker(f, BERTH__REQUEST__VERB_SHOULD_STOP, ta, ra);
	assert_granted(r);
	assert_false(r->granted->should_stop->stop);
	assert_granted(mark_stop(f, ra, "timeout"));
	r = worker(f, BERTH__REQUEST__VERB_SHOULD_STOP, ta, ra);
	assert_true(r->granted->should_stop->stop);
	assert_string_equal(r->granted->should_stop->reason, "timeout");
	t = show(f, a);
	assert_int_equal(t->runs[0]->progress_index, 3);
	assert_string_equal(t->runs[0]->progress_label, "step");
	assert_int_equal(t->runs[0]->n_notes, 1);

	/* another run's token, a malformed token, no token, an unknown run */
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_HEARTBEAT, tb, ra)),
			 BERTH__ERROR_CODE__ERR_AUTH);
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_NOTE, "abc", ra)),
			 BERTH__ERROR_CODE__ERR_AUTH);
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_HEARTBEAT, NULL, ra)),
			 BERTH__ERROR_CODE__ERR_AUTH);
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_HEARTBEAT, ta,
					"0123456789abcdef0123456789abcdef")),
			 BERTH__ERROR_CODE__ERR_AUTH);
	/* settled: refused */
	assert_granted(record_exit(f, ra, 1, 0, 0));
	assert_granted(settle(f, ra, NULL));
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_HEARTBEAT, ta, ra)),
			 BERTH__ERROR_CODE__ERR_AUTH);
	assert_int_equal(errcode(worker(f, BERTH__REQUEST__VERB_SHOULD_STOP, ta, ra)),
			 BERTH__ERROR_CODE__ERR_AUTH);
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

static void
test_scan_and_hello(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	char a[32], b[32], ra[40], rb[40];
	const Berth__Reply *r;

	id.boot_id = "b";
	id.has_pid = 1;
	id.pid = 10;
	h.ident = &id;
	h.has_slots = 1;
	h.slots = 1;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	req.instance = "sup";
	req.actor = "supervisor";
	assert_granted(ex(f, &req));
	snprintf(a, sizeof a, "%s", add(f));
	snprintf(b, sizeof b, "%s", add(f));
	r = claim_as(f, f->s, NULL, 0, "sup");
	assert_granted(r);
	snprintf(ra, sizeof ra, "%s", r->granted->claim->run_id);
	/* one slot: the second claim is refused while the first is unsettled */
	r = claim_as(f, f->s, NULL, 0, "sup");
	assert_string_equal(denied(r), "slots_full");
	assert_string_equal(fact(r, "running"), "1");
	claim_ok(f, b, rb, NULL);
	assert_granted(start(f, rb));
	assert_granted(record_exit(f, rb, 1, 0, 0));
	clock_fake_set(T0 + 50);
	assert_granted(settle(f, rb, NULL));

	berth__request__init(&req);
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	assert_string_equal(r->granted->scan->runs[0]->id, ra);
	assert_string_equal(r->granted->scan->runs[0]->owner, "sup");
	assert_int_equal(r->granted->scan->runs[0]->lease_expires_ms, T0 + 60000);
	assert_int_equal(r->granted->scan->n_actors, 1);
	assert_int_equal(r->granted->scan->actors[0]->ident->pid, 10);
	sc.has_settled = 1;
	sc.settled = 1;
	sc.has_settled_since_ms = 1;
	sc.settled_since_ms = T0 + 50;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 2);
	sc.settled_since_ms = T0 + 51;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	sc.settled_since_ms = 0;
	sc.has_settled_before_ms = 1;
	sc.settled_before_ms = T0 + 50;
	r = ex(f, &req);
	assert_int_equal(r->granted->scan->n_runs, 1);
	/* read-only verbs store nothing */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE verb = 'scan'"), 0);
}

static void
test_list_and_status(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	Berth__Status st = BERTH__STATUS__INIT;
	struct addopt later = { .at_ms = T0 + 60000 };
	struct addopt blocked = { .after = "T1" };
	char run[40];
	const Berth__Reply *r;
	size_t i;
	int seen = 0;

	add(f);                  /* T1 */
	add_opt(f, &later);      /* T2 */
	add_opt(f, &blocked);    /* T3 */
	claim_ok(f, "T1", run, NULL);
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &l;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 3);
	assert_string_equal(r->granted->list->tickets[0]->state, "claimed");
	assert_int_equal(r->granted->list->tickets[1]->next_due_ms, T0 + 60000);
	assert_non_null(strstr(r->granted->list->tickets[1]->waiting, "due at"));
	assert_string_equal(r->granted->list->tickets[2]->state, "blocked");
	assert_non_null(strstr(r->granted->list->tickets[2]->waiting, "T1"));
	l.state = "blocked";
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 1);
	assert_string_equal(r->granted->list->tickets[0]->id, "T3");
	l.state = "ready";
	l.has_limit = 1;
	l.limit = 1;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 1);
	assert_string_equal(r->granted->list->tickets[0]->id, "T2");

	berth__request__init(&req);
	req.verb_case = BERTH__REQUEST__VERB_STATUS;
	req.status = &st;
	r = ex(f, &req);
	for (i = 0; i < r->granted->status->n_ticket_counts; i++) {
		const Berth__Fact *c = r->granted->status->ticket_counts[i];

		if (strcmp(c->key, "blocked") == 0 || strcmp(c->key, "ready") == 0 ||
		    strcmp(c->key, "claimed") == 0) {
			assert_string_equal(c->value, "1");
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(r->granted->status->n_running, 1);
}

/* --after: blocked until the dependency succeeds; a failed dependency
 * leaves it blocked and says by what. */
static void
test_after_dependency(void **state)
{
	struct fx *f = *state;
	struct addopt dep = { .after = "T1" };
	char run[40];
	const Berth__Ticket *t;

	add(f);             /* T1 */
	add_opt(f, &dep);   /* T2 after T1 */
	add(f);             /* T3 */
	add_opt(f, &dep);   /* T4 after T1 */
	run_to_exit(f, "T1", 0, run);
	assert_string_equal(show(f, "T2")->state, "blocked");
	assert_granted(settle(f, run, NULL));
	assert_string_equal(show(f, "T2")->state, "ready");
	assert_string_equal(claim(f, NULL)->granted->claim->ticket, "T2");

	/* a failing dependency */
	{
		struct addopt dep3 = { .after = "T3" };
		char r3[40];

		add_opt(f, &dep3); /* T5 after T3 */
		run_to_exit(f, "T3", 2, r3);
		assert_granted(settle(f, r3, NULL));
		t = show(f, "T5");
		assert_string_equal(t->state, "blocked");
		assert_non_null(strstr(t->waiting, "T3 failed"));
	}
}

/* --every: after a long downtime it fires once, and the next firing is in
 * the future. */
static void
test_every_collapses_missed(void **state)
{
	struct fx *f = *state;
	struct addopt ev = { .every_ms = 60000 };
	char run[40];
	const Berth__Reply *r;
	const Berth__Ticket *t;

	add_opt(f, &ev);
	run_to_exit(f, "T1", 0, run);
	r = settle(f, run, NULL);
	assert_string_equal(r->granted->settle->ticket_state, "ready");
	t = show(f, "T1");
	assert_int_equal(t->next_due_ms, T0 + 60000);
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");

	clock_fake_set(T0 + 10 * 60000 + 5000); /* ten intervals missed */
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	t = show(f, "T1");
	assert_int_equal(t->next_due_ms, T0 + 11 * 60000);
	assert_int_equal(t->attempts, 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE state = 'queued'"), 1);
}

/* Times and durations are bounded at add: an --every of INT64_MAX ms
 * overflowed due + every when its run settled (UB; under UBSan the
 * coordinator aborted). The largest accepted values still compute. */
static void
test_add_bounds_times(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	struct addopt ev = { .every_ms = 100LL * 366 * 24 * 3600 * 1000 };
	char run[40];
	const Berth__Ticket *t;
	int i;

	a.n_argv = 1;
	a.argv = argv;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	for (i = 0; i < 3; i++) {
		a.has_every_ms = i == 0;
		a.every_ms = INT64_MAX;
		a.has_timeout_ms = i == 1;
		a.timeout_ms = i == 1 ? INT64_MAX : 0;
		a.has_at_ms = i == 2;
		a.at_ms = i == 2 ? INT64_MAX : 0;
		if (i != 0)
			a.every_ms = 0;
		req.has_req_id = 0;
		assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);

	add_opt(f, &ev);
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	t = show(f, "T1");
	assert_int_equal(t->next_due_ms, T0 + ev.every_ms);
}

static void
test_claim_uses_indexes(void **state)
{
	struct fx *f = *state;
	static const char *const queries[] = {
		"SELECT t.n FROM tickets t INDEXED BY tickets_ready WHERE t.state = 'ready'"
		" ORDER BY t.priority DESC, t.n",
		"SELECT n FROM tickets INDEXED BY tickets_state WHERE state = 'held' ORDER BY n",
		"SELECT id FROM activations WHERE ticket = 1 AND state = 'queued' ORDER BY due_ms",
		"SELECT id FROM runs WHERE settled_ms IS NULL",
		/* claim-next and the next due time, as coord_runs.c and
		 * coord_sched.c write them */
		"SELECT t.n, (SELECT a.id FROM activations a WHERE a.ticket = t.n"
		"  AND a.state = 'queued' AND a.due_ms <= 5 ORDER BY a.due_ms LIMIT 1) AS act"
		" FROM tickets t INDEXED BY tickets_ready WHERE t.state = 'ready' AND act IS NOT NULL"
		" AND NOT EXISTS (SELECT 1 FROM ticket_deps d JOIN tickets u ON u.n = d.dep"
		"  WHERE d.ticket = t.n AND u.state != 'succeeded')"
		" ORDER BY t.priority DESC, t.n",
		"SELECT a.due_ms FROM activations a INDEXED BY activations_due CROSS JOIN tickets t"
		" ON t.n = a.ticket WHERE a.state = 'queued' AND a.due_ms > 5 AND t.state = 'ready'"
		" ORDER BY a.due_ms LIMIT 1",
	};
	size_t i;

	for (i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		char sql[512];
		sqlite3_stmt *st;
		int scans = 0;

		snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", queries[i]);
		assert_int_equal(sqlite3_prepare_v2(coord_db_handle(f->s), sql, -1, &st, NULL),
				 SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *d = (const char *)sqlite3_column_text(st, 3);

			if ((strncmp(d, "SCAN", 4) == 0 && strstr(d, "INDEX") == NULL) ||
			    strstr(d, "TEMP B-TREE") != NULL)
				scans++;
		}
		sqlite3_finalize(st);
		assert_int_equal(scans, 0);
	}
}

/* 100 000 tickets: claim-next and show stay fast (index lookups). */
static void
test_claim_fast_at_100k(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = coord_db_handle(f->s);
	int64_t t0, t1;
	char run[40];

	assert_int_equal(sqlite3_exec(db,
				      "BEGIN;"
				      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
				      " WHERE i < 100000)"
				      " INSERT INTO tickets (argv, state, created_ms, updated_ms)"
				      " SELECT '[\"true\"]', CASE WHEN i % 2 = 0 THEN 'succeeded'"
				      " ELSE 'ready' END, i, i FROM c;"
				      "INSERT INTO activations (ticket, kind, due_ms, state, created_ms)"
				      " SELECT n, 'at', 2000000 + n, 'queued', 0 FROM tickets"
				      " WHERE state = 'ready';"
				      "COMMIT;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	add(f); /* T100001, due now, behind 50 000 ready tickets not yet due */
	t0 = clock_mono_ms();
	claim_ok(f, NULL, run, NULL);
	assert_string_equal(f->res.ticket, "T100001");
	assert_int_equal(coord_sched_next_wake(f->s, clock_wall_ms()), 2000001);
	show(f, "T99999");
	t1 = clock_mono_ms();
	/* A scan of 50 000 candidates would still pass on a fast machine;
	 * the bound catches a full table scan per candidate. */
	assert_true(t1 - t0 < 5000);
}

/* ------------------------------------------------------------ seats */

struct seatopt {
	const char *key;
	const char *workdir;
	int64_t ttl_ms;
	const struct ident *ident;
};

static const Berth__Reply *
seat_acquire(struct fx *f, const char *item, const char *owner, const struct seatopt *o)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatAcquire m = BERTH__SEAT_ACQUIRE__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;

	m.item = (char *)item;
	m.owner = (char *)owner;
	if (o != NULL) {
		m.key = (char *)o->key;
		m.workdir = (char *)o->workdir;
		m.has_ttl_ms = o->ttl_ms != 0;
		m.ttl_ms = o->ttl_ms;
		if (o->ident != NULL) {
			id.boot_id = (char *)o->ident->boot_id;
			id.has_pid = id.has_start_time = id.has_pgid = 1;
			id.pid = o->ident->pid;
			id.start_time = o->ident->start_time;
			id.pgid = o->ident->pgid;
			m.owner_ident = &id;
		}
	}
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
	req.seat_acquire = &m;
	return ex(f, &req);
}

static const Berth__Reply *
seat_verb(struct fx *f, Berth__Request__VerbCase v, const char *item, const char *owner)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatRelease m = BERTH__SEAT_RELEASE__INIT;

	m.item = (char *)item;
	m.owner = (char *)owner;
	req.verb_case = v;
	req.seat_release = &m; /* release, force_release, heartbeat, show share the slot */
	return ex(f, &req);
}

static const char *
outcome(const Berth__Reply *r)
{
	if (r->result_case == BERTH__REPLY__RESULT_GRANTED &&
	    r->granted->payload_case == BERTH__GRANTED__PAYLOAD_SEAT)
		return r->granted->seat->outcome;
	return denied(r);
}

static const Berth__Seat *
seat_show(struct fx *f, const char *item)
{
	const Berth__Reply *r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_SHOW, item, NULL);

	assert_granted(r);
	assert_int_equal(r->granted->seats->n_seats, 1);
	return r->granted->seats->seats[0];
}

static int64_t
seat_count(struct fx *f)
{
	return sql_int(f, "SELECT count(*) FROM seats");
}

/* An identity of a process that existed and is gone now. */
static void
dead_ident(struct ident *id)
{
	int p[2];
	pid_t pid;
	char b;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[1]);
		(void)read(p[0], &b, 1);
		_exit(0);
	}
	close(p[0]);
	assert_int_equal(ident_read(pid, id), 0);
	close(p[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(ident_check(id), IDENT_GONE);
}

static void
test_seat_single_keys_conflict(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	r = seat_acquire(f, "b", "bob@h", NULL);
	assert_string_equal(denied(r), "conflict");
	assert_string_equal(fact(r, "holder"), "a");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_non_null(fact(r, "age_ms"));
	assert_non_null(fact(r, "heartbeat_age_ms"));
	/* the same item by another owner conflicts too */
	assert_string_equal(fact(seat_acquire(f, "a", "bob@h", NULL), "holder"), "a");
	assert_int_equal(seat_count(f), 1);
}

static void
test_seat_same_owner_already_held(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	clock_fake_set(T0 + 5000);
	r = seat_acquire(f, "a", "alice@h", NULL);
	assert_string_equal(outcome(r), "already_held");
	assert_int_equal(r->granted->seat->seat->heartbeat_ms, T0 + 5000);
	assert_int_equal(r->granted->seat->seat->acquired_ms, T0);
}

static void
test_seat_release_owner_only(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "bob@h");
	assert_string_equal(denied(r), "not_owner");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_int_equal(seat_count(f), 1);
	assert_string_equal(outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "alice@h")),
			    "released");
	assert_int_equal(seat_count(f), 0);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", NULL)), "acquired");
	assert_int_equal(errcode(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "alice@h")),
			 BERTH__ERROR_CODE__ERR_NOT_FOUND);
	assert_string_equal(outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE, "b", NULL)),
			    "force_released");
	assert_int_equal(seat_count(f), 0);
}

static void
test_seat_stale_heartbeat_stolen(void **state)
{
	struct fx *f = *state;
	struct seatopt o = { .ttl_ms = 10000 };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	clock_fake_set(T0 + 10000); /* exactly the TTL: still live */
	assert_string_equal(denied(seat_acquire(f, "a", "bob@h", &o)), "conflict");
	clock_fake_set(T0 + 10001);
	r = seat_acquire(f, "a", "bob@h", &o);
	assert_string_equal(outcome(r), "stolen");
	assert_string_equal(r->granted->seat->previous->owner, "alice@h");
	assert_string_equal(r->granted->seat->seat->owner, "bob@h");
	assert_string_equal(seat_show(f, "a")->owner, "bob@h");
}

static void
test_seat_dead_owner_stale(void **state)
{
	struct fx *f = *state;
	struct ident dead, self;
	struct seatopt o = { .ttl_ms = 3600000, .ident = &dead };
	struct seatopt live = { .ttl_ms = 3600000, .ident = &self };

	dead_ident(&dead);
	assert_int_equal(ident_self(&self), 0);
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	assert_true(seat_show(f, "a")->stale);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &live)), "acquired");
	assert_false(seat_show(f, "b")->stale);
	/* a live owner's seat is not stolen */
	assert_string_equal(denied(seat_acquire(f, "b", "carol@h", NULL)), "conflict");
}

static void
test_seat_stop_annotates(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatStop m = BERTH__SEAT_STOP__INIT;
	const Berth__Seat *st;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	m.item = "a";
	m.reason = "please wrap up";
	req.verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
	req.seat_stop = &m;
	assert_string_equal(outcome(ex(f, &req)), "stop_requested");
	st = seat_show(f, "a");
	assert_string_equal(st->owner, "alice@h");
	assert_string_equal(st->stop_reason, "please wrap up");
	assert_false(st->stale);
	assert_string_equal(denied(seat_acquire(f, "a", "bob@h", NULL)), "conflict");
}

/* Two processes acquire different single-key items at once: exactly one
 * holds a seat afterwards. */
static void
test_seat_concurrent_acquirers(void **state)
{
	struct fx *f = *state;
	int go[2], i, won = 0, lost = 0;
	pid_t pids[2];

	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__SeatAcquire m = BERTH__SEAT_ACQUIRE__INIT;
			char err[256], b, item[8], owner[16];
			int rc = 3;

			close(go[1]);
			if (coord_db_open(&s, f->path, &opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			snprintf(item, sizeof item, "item%d", i);
			snprintf(owner, sizeof owner, "owner%d", i);
			m.item = item;
			m.owner = owner;
			req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
			req.seat_acquire = &m;
			req.instance = owner;
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, &res) == 0) {
				if (res.reply->result_case == BERTH__REPLY__RESULT_GRANTED &&
				    strcmp(res.reply->granted->seat->outcome, "acquired") == 0)
					rc = 0;
				else if (res.reply->result_case == BERTH__REPLY__RESULT_DENIED &&
					 strcmp(res.reply->denied->reason, "conflict") == 0)
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
		won += WEXITSTATUS(st) == 0;
		lost += WEXITSTATUS(st) == 1;
	}
	assert_int_equal(won, 1);
	assert_int_equal(lost, 1);
	assert_int_equal(seat_count(f), 1);
}

static void
test_seat_equal_keys_trees(void **state)
{
	struct fx *f = *state;
	struct seatopt a = { .key = "repo", .workdir = "/src/a" };
	struct seatopt b = { .key = "repo", .workdir = "/src/b" };
	struct seatopt same = { .key = "repo", .workdir = "/src/a" };
	struct seatopt other = { .key = "other", .workdir = "/src/a" };
	struct seatopt none = { .key = "repo" };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &a)), "acquired");
	/* equal keys, different trees: coexist */
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &b)), "acquired");
	/* equal keys, same tree: tree_conflict */
	r = seat_acquire(f, "s3", "carol@h", &same);
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "holder"), "s1");
	assert_string_equal(fact(r, "workdir"), "/src/a");
	/* a different key on the same tree: the key answers first */
	assert_string_equal(denied(seat_acquire(f, "s4", "dave@h", &other)), "conflict");
	/* unanchored: never tree-blocked */
	assert_string_equal(outcome(seat_acquire(f, "s5", "erin@h", &none)), "acquired");
	assert_int_equal(seat_count(f), 3);
}

static void
test_seat_reap_only_stale(void **state)
{
	struct fx *f = *state;
	struct seatopt shortttl = { .key = "repo", .workdir = "/a", .ttl_ms = 1000 };
	struct seatopt longttl = { .key = "repo", .workdir = "/b", .ttl_ms = 100000 };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatReap m = BERTH__SEAT_REAP__INIT;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &shortttl)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &longttl)), "acquired");
	clock_fake_set(T0 + 5000);
	req.verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
	req.seat_reap = &m;
	r = ex(f, &req);
	assert_int_equal(r->granted->seat->reaped, 1);
	assert_int_equal(seat_count(f), 1);
	assert_string_equal(seat_show(f, "s2")->owner, "bob@h");
	/* a seat re-acquired before the reap is live and stays */
	assert_string_equal(outcome(seat_acquire(f, "s1", "carol@h", &shortttl)), "acquired");
	req.has_req_id = 0; /* a new request, not a retry of the first reap */
	r = ex(f, &req);
	assert_int_equal(r->granted->seat->reaped, 0);
	assert_int_equal(seat_count(f), 2);
}

static void
test_seat_heartbeat_never_revives(void **state)
{
	struct fx *f = *state;
	struct seatopt o = { .ttl_ms = 1000 };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	clock_fake_set(T0 + 900);
	assert_string_equal(outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "alice@h")),
			    "heartbeat");
	assert_string_equal(denied(seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "bob@h")),
			    "not_owner");
	clock_fake_set(T0 + 900 + 1001);
	r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "alice@h");
	assert_string_equal(denied(r), "stale");
	assert_true(seat_show(f, "a")->stale);
	assert_int_equal(seat_show(f, "a")->heartbeat_ms, T0 + 900);
}

/* Free text from workers and seat holders is bounded: a progress label,
 * a note, an activity label or a stop reason of megabytes would ride in
 * every scan, status and seat list until those replies no longer fit. */
static void
test_free_text_bounded(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Progress p = BERTH__PROGRESS__INIT;
	Berth__Note n = BERTH__NOTE__INIT;
	Berth__SeatActivity a = BERTH__SEAT_ACTIVITY__INIT;
	Berth__SeatStop st = BERTH__SEAT_STOP__INIT;
	char run[40], token[80], *big = malloc(4098);

	memset(big, 'x', 4097);
	big[4097] = '\0';
	add(f);
	claim_ok(f, "T1", run, token);
	assert_granted(start(f, run));
	req.token = token;
	req.actor = "worker";
	p.run_id = n.run_id = run;
	p.label = n.text = big;
	req.verb_case = BERTH__REQUEST__VERB_PROGRESS;
	req.progress = &p;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	req.has_req_id = 0;
	req.verb_case = BERTH__REQUEST__VERB_NOTE;
	req.note = &n;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	big[4096] = '\0'; /* the bound itself is accepted */
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	big[4096] = 'x';

	assert_string_equal(outcome(seat_acquire(f, "s", "alice@h", NULL)), "acquired");
	memset(&req, 0, sizeof req);
	berth__request__init(&req);
	a.item = st.item = "s";
	a.label = st.reason = big;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
	req.seat_activity = &a;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	req.has_req_id = 0;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
	req.seat_stop = &st;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_null(seat_show(f, "s")->stop_reason);
	assert_int_equal(show(f, "T1")->runs[0]->n_notes, 1);
	free(big);
}

static void
test_seat_activity_hidden_when_dead(void **state)
{
	struct fx *f = *state;
	struct ident dead, self;
	struct seatopt live = { .ident = &self };
	struct seatopt gone = { .key = "k", .ident = &dead };
	struct seatopt co = { .key = "k", .ident = &self };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatActivity m = BERTH__SEAT_ACTIVITY__INIT;
	const Berth__Seat *st;

	assert_int_equal(ident_self(&self), 0);
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &live)), "acquired");
	m.item = "a";
	m.has_index = m.has_total = 1;
	m.index = 2;
	m.total = 5;
	m.label = "tests";
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
	req.seat_activity = &m;
	assert_string_equal(outcome(ex(f, &req)), "activity");
	st = seat_show(f, "a");
	assert_int_equal(st->activity_index, 2);
	assert_string_equal(st->activity_label, "tests");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE, "a", NULL));

	dead_ident(&dead);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &co)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "c", "carol@h", &gone)), "acquired");
	m.item = "c";
	assert_string_equal(outcome(ex(f, &req)), "activity");
	st = seat_show(f, "c");
	assert_true(st->stale);
	assert_false(st->has_activity_index);
	assert_null(st->activity_label);
}

static void
test_seat_steal_obeys_key_and_tree(void **state)
{
	struct fx *f = *state;
	struct ident dead;
	struct seatopt old = { .key = "repo", .workdir = "/a", .ttl_ms = 1000 };
	struct seatopt live = { .key = "repo", .workdir = "/b" };
	struct seatopt thief_key = { .key = "other", .workdir = "/c" };
	struct seatopt thief_tree = { .key = "repo", .workdir = "/b" };
	struct seatopt thief_ok = { .key = "repo", .workdir = "/a" };
	struct seatopt ghost = { .key = "repo", .workdir = "/g", .ident = &dead };

	dead_ident(&dead);
	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &old)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &live)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s3", "gone@h", &ghost)), "acquired");
	clock_fake_set(T0 + 2000); /* s1 is stale now, s3 always was */
	assert_string_equal(denied(seat_acquire(f, "s1", "carol@h", &thief_key)), "conflict");
	assert_string_equal(denied(seat_acquire(f, "s1", "carol@h", &thief_tree)), "tree_conflict");
	assert_string_equal(outcome(seat_acquire(f, "s1", "carol@h", &thief_ok)), "stolen");
	/* a stale holder of another item blocks nobody */
	assert_string_equal(outcome(seat_acquire(f, "s4", "dave@h", &(struct seatopt){ .key = "repo", .workdir = "/g" })),
			    "acquired");
}

/* Runs take seats: an outside holder of a working tree keeps a ticket
 * with that --workdir waiting, and show says why. */
static void
test_run_waits_for_tree_seat(void **state)
{
	struct fx *f = *state;
	struct seatopt outside = { .workdir = "/src/app" };
	struct addopt o = { .workdir = "/src/app" };
	const Berth__Reply *r;
	const Berth__Ticket *t;
	char run[40];

	assert_string_equal(outcome(seat_acquire(f, "S", "alice@host", &outside)), "acquired");
	add_opt(f, &o);
	clock_fake_set(T0 + 12000);
	r = claim(f, "T1");
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "holder"), "S");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	t = show(f, "T1");
	assert_string_equal(t->state, "ready");
	assert_string_equal(t->waiting,
			    "waiting: working tree /src/app held by seat S, owner alice@host,"
			    " heartbeat 12s ago");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "S", "alice@host"));
	assert_true(f->res.wake);
	claim_ok(f, NULL, run, NULL);
	/* the run holds the tree now: an outside acquire is refused */
	r = seat_acquire(f, "S", "alice@host", &outside);
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "owner"), run);
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, 0, 0));
	assert_granted(settle(f, run, NULL));
	assert_int_equal(seat_count(f), 0);
	assert_string_equal(outcome(seat_acquire(f, "S", "alice@host", &outside)), "acquired");
}

static void
test_runs_same_key_never_overlap(void **state)
{
	struct fx *f = *state;
	struct addopt k = { .key = "db" };
	struct addopt k2 = { .key = "web" };
	struct addopt tree1 = { .workdir = "/w1" }, tree2 = { .workdir = "/w2" };
	const Berth__Reply *r;
	char r1[40], r2[40], r3[40], r4[40];

	add_opt(f, &k);     /* T1 */
	add_opt(f, &k);     /* T2 */
	add_opt(f, &k2);    /* T3 */
	add_opt(f, &tree1); /* T4 */
	add_opt(f, &tree2); /* T5 */
	claim_ok(f, "T1", r1, NULL);
	r = claim(f, "T2");
	assert_string_equal(denied(r), "seat_conflict");
	assert_string_equal(fact(r, "holder"), "db");
	/* claim-next passes over T2 for the others: other keys and trees run */
	claim_ok(f, NULL, r2, NULL);
	assert_string_equal(f->res.ticket, "T3");
	claim_ok(f, NULL, r3, NULL);
	assert_string_equal(f->res.ticket, "T4");
	claim_ok(f, NULL, r4, NULL);
	assert_string_equal(f->res.ticket, "T5");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_non_null(strstr(show(f, "T2")->waiting, "seat key db held by seat db"));
	/* an outside holder of the key is refused while the run holds it */
	assert_string_equal(denied(seat_acquire(f, "db", "alice@h", NULL)), "conflict");
	assert_granted(abandon(f, r1));
	claim_ok(f, NULL, r1, NULL);
	assert_string_equal(f->res.ticket, "T1"); /* older first, same priority */
	assert_int_equal(seat_count(f), 4);
}

/* A claim parked behind a seat is tried again when the seat's TTL lapses,
 * and then it runs. */
static void
test_next_due_includes_seat_lapse(void **state)
{
	struct fx *f = *state;
	struct seatopt outside = { .workdir = "/w", .ttl_ms = 30000 };
	struct addopt o = { .workdir = "/w" };

	assert_int_equal(coord_sched_next_wake(f->s, clock_wall_ms()), INT64_MAX);
	assert_string_equal(outcome(seat_acquire(f, "S", "alice@h", &outside)), "acquired");
	add_opt(f, &o);
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(coord_sched_next_wake(f->s, clock_wall_ms()), T0 + 30001);
	clock_fake_set(T0 + 30001);
	assert_int_equal(coord_sched_next_wake(f->s, clock_wall_ms()), INT64_MAX);
	assert_granted(claim(f, NULL));
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

/* Two slots: a second claim is granted while the first run is unsettled,
 * the third is refused. */
static void
test_slots_two(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;

	h.has_slots = 1;
	h.slots = 2;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	req.instance = "sup";
	assert_granted(ex(f, &req));
	add(f);
	assert_granted(claim_as(f, f->s, NULL, 0, "sup"));
	add(f);
	add(f);
	assert_granted(claim_as(f, f->s, NULL, 0, "sup"));
	assert_string_equal(denied(claim_as(f, f->s, NULL, 0, "sup")), "slots_full");
}

/* The caller's cwd filled in by the CLI (workdir_default) is where the job
 * runs, not a seat: two such tickets in one directory run side by side. */
static void
test_default_workdir_takes_no_seat(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	const Berth__Reply *r;

	a.n_argv = 1;
	a.argv = argv;
	a.workdir = "/home/u/proj";
	a.has_workdir_default = 1;
	a.workdir_default = 1;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_granted(ex(f, &req));
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	assert_granted(claim(f, NULL));
	r = claim(f, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->claim->workdir, "/home/u/proj");
	assert_int_equal(seat_count(f), 0);
	/* a named --workdir on the same tree does take it */
	a.workdir_default = 0;
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	assert_granted(claim(f, NULL));
	assert_string_equal(denied(claim(f, "T4")), "tree_conflict");
}

/* A version 1 database is migrated forward when opened (through every
 * later version). */
static void
test_migrates_v1(void **state)
{
	struct fx *f = *state;
	struct coord_db *s2;
	char err[256];

	add(f);
	assert_int_equal(sqlite3_exec(coord_db_handle(f->s),
				      "ALTER TABLE tickets DROP COLUMN tree_seat;"
				      "DROP TABLE trace_tail;"
				      "PRAGMA user_version=1;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	coord_exec_free(&f->res);
	coord_db_close(f->s);
	assert_int_equal(coord_db_open(&s2, f->path, &opts, err, sizeof err), 0);
	f->s = s2;
	assert_int_equal(sql_int(f, "PRAGMA user_version"), COORD_SCHEMA_VERSION);
	assert_int_equal(sql_int(f, "SELECT tree_seat FROM tickets"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM trace_tail"), 0);
	assert_granted(claim(f, "T1"));
}

static void
test_seat_names_bounded(void **state)
{
	struct fx *f = *state;
	char big[400];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(errcode(seat_acquire(f, big, "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "a", big, NULL)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "run:x", "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "", "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(seat_count(f), 0);
}

/* A list that would not fit one message stops short and says so. */
static void
test_list_truncated(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	const Berth__Reply *r;

	assert_int_equal(sqlite3_exec(coord_db_handle(f->s),
				      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
				      " WHERE i < 16000)"
				      " INSERT INTO tickets (argv, state, created_ms, updated_ms)"
				      " SELECT json_array(printf('%.300c', 'x')), 'succeeded', i, i"
				      " FROM c",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &l;
	r = ex(f, &req);
	assert_true(r->granted->list->truncated);
	assert_true(r->granted->list->n_tickets > 1000);
	assert_true(r->granted->list->n_tickets < 16000);
	assert_true(f->res.packed_len < 4 * 1024 * 1024);
	l.has_limit = 1;
	l.limit = 100;
	r = ex(f, &req);
	assert_false(r->granted->list->truncated);
	assert_int_equal(r->granted->list->n_tickets, 100);
}

/* argv and env read back exactly as added, whatever bytes they hold; and a
 * stored array in any JSON spelling reads back as sqlite's json_each reads
 * it (the loader decodes the common form itself, the rest through sqlite). */
static void
test_argv_env_read_back(void **state)
{
	static const char *const spellings[] = {
		"[\"a\"]",
		"[]",
		" [ \"a\\/b\" , \"\\u00e9\\u20ac\\ud83d\\ude00\" ,\"\\b\\f\\n\\r\\t\\\"\\\\\" ] ",
		"[\"\\u0041\\u0000tail\"]",
		"[\"lone \\ud800 high\", \"lone \\udc00 low\"]",
		"[1, \"x\", null, 2.5]",
		"[\"\xc3\xa9 raw utf-8\", \"\xff not utf-8\"]",
	};
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char ctl[32], *argv[] = { "sh", "-c", "echo \"a\\b\" 'c'\n\t$x", "", ctl,
				  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" };
	char *env[] = { "A=1", "Q=\"\\", "U=\xe2\x82\xac" };
	const Berth__Reply *r;
	const Berth__Ticket *t;
	sqlite3 *db = coord_db_handle(f->s);
	sqlite3_stmt *st;
	size_t i, k;

	for (i = 0; i < 31; i++)
		ctl[i] = (char)(i + 1);
	ctl[31] = '\0';
	a.n_argv = 6;
	a.argv = argv;
	a.n_env = 3;
	a.env = env;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	r = ex(f, &req);
	assert_granted(r);
	t = show(f, "T1");
	assert_int_equal(t->n_argv, 6);
	for (i = 0; i < 6; i++)
		assert_string_equal(t->argv[i], argv[i]);
	assert_int_equal(t->n_env, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(t->env[i], env[i]);

	for (k = 0; k < sizeof spellings / sizeof spellings[0]; k++) {
		char sql[512];

		snprintf(sql, sizeof sql, "UPDATE tickets SET argv = ?, env = ? WHERE n = 1");
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
		sqlite3_bind_text(st, 1, spellings[k], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, spellings[k], -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
		t = show(f, "T1");
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM json_each(?) ORDER BY key",
						    -1, &st, NULL),
				 SQLITE_OK);
		sqlite3_bind_text(st, 1, spellings[k], -1, SQLITE_STATIC);
		for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
			const char *want = (const char *)sqlite3_column_text(st, 0);

			assert_true(i < t->n_argv);
			assert_true(i < t->n_env);
			assert_string_equal(t->argv[i], want ? want : "");
			assert_string_equal(t->env[i], want ? want : "");
		}
		sqlite3_finalize(st);
		assert_int_equal(t->n_argv, i);
		assert_int_equal(t->n_env, i);
	}
}

/* `list --state blocked` returns the ready tickets with a dependency that
 * has not succeeded, in ticket order, and its --limit counts only those. */
static void
test_list_blocked_limit(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	struct addopt on1 = { .after = "T1" }, on3 = { .after = "T3" };
	const Berth__Reply *r;
	char run[40];

	add(f);              /* T1 */
	add_opt(f, &on1);    /* T2: blocked */
	add(f);              /* T3 */
	add_opt(f, &on3);    /* T4: blocked until T3 succeeds */
	add_opt(f, &on1);    /* T5: blocked */
	run_to_exit(f, "T3", 0, run);
	assert_granted(settle(f, run, NULL));
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &l;
	l.state = "blocked";
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 2);
	assert_string_equal(r->granted->list->tickets[0]->id, "T2");
	assert_string_equal(r->granted->list->tickets[1]->id, "T5");
	assert_string_equal(r->granted->list->tickets[1]->state, "blocked");
	assert_non_null(strstr(r->granted->list->tickets[1]->waiting, "T1"));
	l.has_limit = 1;
	l.limit = 1;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 1);
	assert_string_equal(r->granted->list->tickets[0]->id, "T2");
	l.state = "ready";
	l.limit = 3;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 3);
	assert_string_equal(r->granted->list->tickets[1]->id, "T2");
	assert_string_equal(r->granted->list->tickets[1]->state, "blocked");
	assert_string_equal(r->granted->list->tickets[2]->id, "T4");
	assert_string_equal(r->granted->list->tickets[2]->state, "ready");
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
			if (coord_db_open(&s, f->path, &opts, err, sizeof err) != 0)
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
			if (coord_exec_request(s, &req, NULL, &res) == 0) {
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_claim_twice_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_cuts_a_long_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_connections_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_one_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_denied_with_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readopt_refuses_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renew_refuses_other_runs_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_twice_applied_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_keeps_attempt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_refuses_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_request_replayed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denial_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_due_not_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_next_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_payload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_batch_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outcome_derivation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_show_by_alias_and_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failpoint_before_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_and_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_and_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_dependency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_collapses_missed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_bounds_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_uses_indexes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_fast_at_100k, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_single_keys_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_same_owner_already_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_release_owner_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_stale_heartbeat_stolen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_dead_owner_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_stop_annotates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_concurrent_acquirers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_equal_keys_trees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_reap_only_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_heartbeat_never_revives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_activity_hidden_when_dead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_text_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_steal_obeys_key_and_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_waits_for_tree_seat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_same_key_never_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_due_includes_seat_lapse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_replies_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_two, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_workdir_takes_no_seat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_names_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_argv_env_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_blocked_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_race_two_processes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
