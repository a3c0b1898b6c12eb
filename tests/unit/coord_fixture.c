/* The coordinator tests' fixture: see coord_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "coord_fixture.h"
#include "coord_hosts.h"
#include "coord_trace.h"
#include "failpoint.h"

struct coord_db_opts fx_opts = {
	.sync_full = 0, .default_lease_ms = 60000, .backoff_base_ms = 1000, .backoff_max_ms = 300000
};

int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	char err[256];

	snprintf(f->dir, sizeof f->dir, "/tmp/coord_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(test_store_make(&f->ts, f->dir), 0);
	f->store = f->ts.store;
	/* A PostgreSQL store keeps coordinator.key in the home. */
	fx_opts.key_dir = f->dir;
	clock_fake_set(T0);
	if (coord_db_open(&f->db, f->store, &fx_opts, err, sizeof err) != 0)
		fail_msg("coord_db_open %s: %s", f->store, err);
	f->req_id = 1;
	*state = f;
	return 0;
}

int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	coord_exec_free(&f->res);
	coord_db_close(f->db);
	test_store_drop(&f->ts);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	clock_fake_clear();
	fp_reset();
	free(f);
	return 0;
}

/* Executes req as instance "test" with a fresh request id (unless set) and
 * keeps the result in f->res until the next call. */
const Berth__Reply *
ex_on(struct fx *f, struct coord_db *s, Berth__Request *req)
{
	coord_exec_free(&f->res);
	if (req->instance == NULL)
		req->instance = (char *)(f->as_instance != NULL ? f->as_instance : "test");
	if (!req->has_req_id) {
		req->has_req_id = 1;
		req->req_id = f->req_id++;
	}
	if (req->actor == NULL)
		req->actor = (char *)(f->as_actor != NULL ? f->as_actor : "test");
	if (f->trace) {
		struct coord_exec_trace tr = { .seq = f->trace_seq, .t0_us = coord_trace_now_us() };

		assert_int_equal(coord_exec_request(s, req, f->as_caller, &tr, &f->res), 0);
		f->trace_seq += f->res.nlines;
	} else {
		assert_int_equal(coord_exec_request(s, req, f->as_caller, NULL, &f->res), 0);
	}
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

const Berth__Reply *
ex(struct fx *f, Berth__Request *req)
{
	return ex_on(f, f->db, req);
}

const char *
denied(const Berth__Reply *r)
{
	return r->result_case == BERTH__REPLY__RESULT_DENIED ? r->denied->reason : NULL;
}

const char *
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

int
errcode(const Berth__Reply *r)
{
	return r->result_case == BERTH__REPLY__RESULT_ERROR ? (int)r->error->code : 0;
}

/* Adds a ticket running "true" and returns its id (static buffer). */
const char *
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
		add.has_after_any = o->after_any;
		add.after_any = o->after_any;
	}
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &add;
	r = ex(f, &req);
	assert_granted(r);
	snprintf(id, sizeof id, "%s", r->granted->add->ticket);
	return id;
}

const char *
add(struct fx *f)
{
	return add_opt(f, NULL);
}

const Berth__Reply *
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

const Berth__Reply *
claim(struct fx *f, const char *ticket)
{
	return claim_as(f, f->db, ticket, 0, NULL);
}

/* Claims ticket (or the next) and returns the run id and token. */
void
claim_ok(struct fx *f, const char *ticket, char run[40], char token[80])
{
	const Berth__Reply *r = claim(f, ticket);

	assert_granted(r);
	snprintf(run, 40, "%s", r->granted->claim->run_id);
	if (token)
		snprintf(token, 80, "%s", r->granted->claim->token);
}

/* The identity of the shim the fixture pretends to have spawned. */
static void
fake_shim(Berth__Ident *id)
{
	id->boot_id = "boot";
	id->has_pid = id->has_start_time = id->has_pgid = 1;
	id->pid = 4242;
	id->start_time = 99;
	id->pgid = 4242;
}

const Berth__Reply *
start(struct fx *f, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Start m = BERTH__START__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;

	fake_shim(&id);
	m.run_id = (char *)run;
	m.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_START;
	req.start = &m;
	return ex(f, &req);
}

const Berth__Reply *
claim_shim(struct fx *f, const char *ticket)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;

	fake_shim(&id);
	c.ticket = (char *)ticket;
	c.shim = &id;
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &c;
	return ex(f, &req);
}

const Berth__Reply *
exit_settle(struct fx *f, const char *run, int code, const char *outcome)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;

	m.run_id = (char *)run;
	m.has_has_record = 1;
	m.has_record = 1;
	m.has_exit_code = 1;
	m.exit_code = code;
	se.outcome = (char *)outcome;
	se.has_output_bytes = 1;
	se.output_bytes = 12;
	se.has_capture_complete = 1;
	se.capture_complete = 1;
	m.settle = &se;
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &m;
	return ex(f, &req);
}

const Berth__Reply *
sent(struct fx *f)
{
	static Berth__Reply *last;

	if (last)
		berth__reply__free_unpacked(last, NULL);
	last = berth__reply__unpack(NULL, f->res.packed_len, f->res.packed);
	assert_non_null(last);
	return last;
}

const Berth__Reply *
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

const Berth__Reply *
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

const Berth__Reply *
abandon(struct fx *f, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Abandon m = BERTH__ABANDON__INIT;

	m.run_id = (char *)run;
	req.verb_case = BERTH__REQUEST__VERB_ABANDON;
	req.abandon = &m;
	return ex(f, &req);
}

const Berth__Reply *
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

const Berth__Reply *
readopt_as(struct fx *f, const char *actor, const char *instance, const char *ticket,
	   const char *run, const char *owner)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Readopt m = BERTH__READOPT__INIT;

	m.ticket = (char *)ticket;
	m.run_id = (char *)run;
	m.new_owner = (char *)owner;
	req.actor = (char *)actor;
	req.instance = (char *)instance;
	req.verb_case = BERTH__REQUEST__VERB_READOPT;
	req.readopt = &m;
	return ex(f, &req);
}

const Berth__Reply *
hello_as(struct fx *f, const char *instance, const char *actor, const struct ident *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello m = BERTH__HELLO__INIT;
	Berth__Ident ident = BERTH__IDENT__INIT;

	if (id != NULL) {
		ident.boot_id = (char *)id->boot_id;
		ident.has_pid = ident.has_start_time = ident.has_pgid = 1;
		ident.pid = id->pid;
		ident.start_time = id->start_time;
		ident.pgid = id->pgid;
		m.ident = &ident;
	}
	req.instance = (char *)instance;
	req.actor = (char *)actor;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &m;
	return ex(f, &req);
}

const Berth__Reply *
readopt(struct fx *f, const char *ticket, const char *run, const char *owner)
{
	return readopt_as(f, NULL, NULL, ticket, run, owner);
}

const Berth__Reply *
ticket_verb(struct fx *f, Berth__Request__VerbCase verb, const char *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef m = BERTH__TICKET_REF__INIT;

	m.id = (char *)id;
	req.verb_case = verb;
	req.hold = &m; /* one union: every TicketRef verb shares the slot */
	return ex(f, &req);
}

const Berth__Ticket *
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

const Berth__Reply *
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

int64_t
sql_int(struct fx *f, const char *sql)
{
	struct coord_st *st;
	int64_t v = -1;

	/* Not cached: sql may be a buffer the test formatted. */
	assert_non_null(st = coord_db_q_once(f->db, sql, ""));
	if (coord_db_step(f->db, st) == 1)
		v = coord_db_i64(st, 0);
	coord_db_free(st);
	return v;
}

int
sql_run(struct fx *f, const char *sql)
{
	return coord_db_script(f->db, sql);
}

Berth__Reply *
stored_reply(struct fx *f, const char *sql)
{
	struct coord_st *st;
	Berth__Reply *r;
	const void *b;
	size_t len;

	assert_non_null(st = coord_db_q_once(f->db, sql, ""));
	assert_int_equal(coord_db_step(f->db, st), 1);
	b = coord_db_blob(st, 0, &len);
	assert_non_null(r = berth__reply__unpack(NULL, len, b));
	assert_int_equal(coord_db_step(f->db, st), 0); /* the only row */
	coord_db_free(st);
	return r;
}

/* Runs a ticket through claim/start/record_exit and returns its run. */
void
run_to_exit(struct fx *f, const char *ticket, int code, char run[40])
{
	claim_ok(f, ticket, run, NULL);
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, code, 0));
}

const Berth__Reply *
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
fx_ident(const struct ident *from, Berth__Ident *id)
{
	id->boot_id = (char *)from->boot_id;
	id->has_pid = id->has_start_time = id->has_pgid = 1;
	id->pid = from->pid;
	id->start_time = from->start_time;
	id->pgid = from->pgid;
}

const Berth__Reply *
seat_acquire(struct fx *f, const char *item, const char *owner, const struct seatopt *o)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatAcquire m = BERTH__SEAT_ACQUIRE__INIT;
	Berth__Ident id = BERTH__IDENT__INIT, fid = BERTH__IDENT__INIT;

	m.item = (char *)item;
	m.owner = (char *)owner;
	if (o != NULL) {
		m.key = (char *)o->key;
		m.workdir = (char *)o->workdir;
		m.has_ttl_ms = o->ttl_ms != 0;
		m.ttl_ms = o->ttl_ms;
		if (o->ident != NULL) {
			fx_ident(o->ident, &id);
			m.owner_ident = &id;
		}
		m.kind = (char *)o->kind;
		m.state = (char *)o->state;
		m.has_task = m.has_in_flight = 1;
		m.task = o->task;
		m.in_flight = o->in_flight;
		m.has_in_flight_ttl_ms = o->in_flight_ttl_ms != 0;
		m.in_flight_ttl_ms = o->in_flight_ttl_ms;
		if (o->in_flight_ident != NULL) {
			fx_ident(o->in_flight_ident, &fid);
			m.in_flight_ident = &fid;
		}
	}
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
	req.seat_acquire = &m;
	return ex(f, &req);
}

const Berth__Reply *
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

const Berth__Reply *
seat_confirm(struct fx *f, const char *item, const char *owner, const char *state)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatConfirm m = BERTH__SEAT_CONFIRM__INIT;

	m.item = (char *)item;
	m.owner = (char *)owner;
	m.state = (char *)state;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_CONFIRM;
	req.seat_confirm = &m;
	return ex(f, &req);
}

const char *
outcome(const Berth__Reply *r)
{
	if (r->result_case == BERTH__REPLY__RESULT_GRANTED &&
	    r->granted->payload_case == BERTH__GRANTED__PAYLOAD_SEAT)
		return r->granted->seat->outcome;
	return denied(r);
}

const Berth__Seat *
seat_show(struct fx *f, const char *item)
{
	const Berth__Reply *r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_SHOW, item, NULL);

	assert_granted(r);
	assert_int_equal(r->granted->seats->n_seats, 1);
	return r->granted->seats->seats[0];
}

int64_t
seat_count(struct fx *f)
{
	return sql_int(f, "SELECT count(*) FROM seats");
}

/* An identity of a process that existed and is gone now. */
void
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

void
fx_host(struct fx *f, const char *id, const char *labels, int64_t ttl_ms)
{
	struct coord_host *h = coord_db_host(f->db);

	snprintf(h->id, sizeof h->id, "%s", id);
	snprintf(h->boot_id, sizeof h->boot_id, "boot-%s", id);
	snprintf(h->labels, sizeof h->labels, "%s", labels);
	h->ttl_ms = ttl_ms;
	h->epoch = 0;
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 1), 0);
}
