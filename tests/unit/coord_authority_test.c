/*
 * Who may ask what (DESIGN §1, §4, §5; issue 10), a test per rule: the verb
 * table's caller classes and roles, an actor bound to the instance it said
 * hello with, run_moves.def's who column (owner, recovery, the reaper for a
 * stopped run, the checkpointer, recovery as heir of a dead checkpointer
 * only), stored replies answered only to their sender and holding no token,
 * and a live run's seat that force-release may not take.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "coord_fixture.h"
#include "ids.h"

#define V(v) BERTH__REQUEST__VERB_##v

/* A caller as a connection would present it. */
static struct coord_caller
caller_of(enum coord_class cls, unsigned roles, const char *what, const struct ident *id)
{
	struct coord_caller c;

	memset(&c, 0, sizeof c);
	c.cls = cls;
	c.roles = roles;
	c.verified = cls == CALLER_ACTOR;
	c.pid = id != NULL ? id->pid : 4000;
	c.start_time = id != NULL ? id->start_time : 77;
	c.uid = getuid();
	snprintf(c.what, sizeof c.what, "%s", what);
	return c;
}

/* The outcome a granted settle reports. */
static const char *
settled_as(const Berth__Reply *r)
{
	assert_int_equal(r->result_case, BERTH__REPLY__RESULT_GRANTED);
	assert_int_equal(r->granted->payload_case, BERTH__GRANTED__PAYLOAD_SETTLE);
	return r->granted->settle->outcome;
}

static void
as(struct fx *f, const char *instance, const char *actor, const struct coord_caller *c)
{
	f->as_instance = instance;
	f->as_actor = actor;
	f->as_caller = c;
}

/* A supervisor of this very process (its identity is alive). */
static void
live_ident(struct ident *id)
{
	assert_int_equal(ident_self(id), 0);
}

/* A claimed, then started, run of a new ticket, owned by supervisor
 * instance "supA". */
static void
started(struct fx *f, char run[40])
{
	const char *t;

	as(f, NULL, NULL, NULL);
	t = add(f);
	as(f, "supA", "supervisor", NULL);
	claim_ok(f, t, run, NULL);
	assert_granted(start(f, run));
}

static void
test_class_and_role_from_the_table(void **state)
{
	struct fx *f = *state;
	struct coord_caller op = caller_of(CALLER_OPERATOR, 0, "operator", NULL);
	struct coord_caller wk = caller_of(CALLER_WORKER, 0, "worker", NULL);
	struct ident id;
	struct coord_caller reaper;
	char run[40];

	live_ident(&id);
	reaper = caller_of(CALLER_ACTOR, ROLE_REAPER, "reaper", &id);
	started(f, run);
	/* An operator (a job on coordinator.sock is one), whatever it calls
	 * itself, sends no actor verb. */
	as(f, "supA", "supervisor", &op);
	assert_string_equal(denied(record_exit(f, run, 1, 0, 0)), "not_permitted");
	assert_string_equal(fact(&f->res.reply[0], "caller"), "operator");
	assert_string_equal(fact(&f->res.reply[0], "verb"), "record_exit");
	assert_string_equal(denied(abandon(f, run)), "not_permitted");
	assert_string_equal(denied(settle(f, run, "succeeded")), "not_permitted");
	/* A worker sends worker verbs only, not even operator ones. */
	as(f, "w1", "worker", &wk);
	assert_string_equal(denied(ticket_verb(f, V(CANCEL), "T1")), "not_permitted");
	assert_string_equal(denied(mark_stop(f, run, "cancel")), "not_permitted");
	/* A verified reaper sends the reaper's verbs, not the supervisor's. */
	as(f, "r1", "reaper", &reaper);
	assert_granted(hello_as(f, "r1", "reaper", &id));
	assert_string_equal(denied(start(f, run)), "not_permitted");
	assert_string_equal(fact(&f->res.reply[0], "why"), "role");
	/* Nothing of it changed the run, or was stored. */
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE decision = 'denied'"), 0);
}

/* A verified actor acts under its own role's name and the instance its
 * process said hello with; a hello must give the caller's own identity. */
static void
test_actor_bound_to_its_hello(void **state)
{
	struct fx *f = *state;
	struct ident id, other;
	struct coord_caller sup;

	live_ident(&id);
	sup = caller_of(CALLER_ACTOR, ROLE_SUPERVISOR, "supervisor", &id);
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supB", "supervisor", &sup);
	/* No hello yet: the instance is not this process's. */
	assert_string_equal(denied(claim(f, NULL)), "not_permitted");
	assert_string_equal(fact(&f->res.reply[0], "why"), "instance");
	/* A hello giving someone else's identity is refused. */
	other = id;
	other.pid = id.pid + 1;
	assert_string_equal(denied(hello_as(f, "supB", "supervisor", &other)), "not_permitted");
	assert_granted(hello_as(f, "supB", "supervisor", &id));
	assert_granted(claim(f, NULL));
	/* Under another role's name, or another instance: refused. */
	f->as_actor = "recovery";
	assert_string_equal(denied(claim(f, NULL)), "not_permitted");
	assert_string_equal(fact(&f->res.reply[0], "why"), "name");
	as(f, "supA", "supervisor", &sup);
	assert_string_equal(denied(claim(f, NULL)), "not_permitted");
	assert_string_equal(fact(&f->res.reply[0], "why"), "instance");
}

/* start, record_exit, abandon, renew: the run's owner (recovery for the
 * exit and abandon); another supervisor is denied not_owner. */
static void
test_owner_only(void **state)
{
	struct fx *f = *state;
	char run[40], run2[40], ticket[32];

	as(f, NULL, NULL, NULL);
	snprintf(ticket, sizeof ticket, "%s", add(f));
	as(f, "supA", "supervisor", NULL);
	claim_ok(f, ticket, run, NULL);
	as(f, "supB", "supervisor", NULL);
	assert_string_equal(denied(start(f, run)), "not_owner");
	assert_string_equal(fact(&f->res.reply[0], "owner"), "supA");
	assert_string_equal(denied(abandon(f, run)), "not_owner");
	assert_string_equal(denied(renew(f, ticket, run)), "lease_not_held");
	as(f, "supA", "supervisor", NULL);
	assert_granted(renew(f, ticket, run));
	assert_granted(start(f, run));
	as(f, "supB", "supervisor", NULL);
	assert_string_equal(denied(record_exit(f, run, 1, 0, 0)), "not_owner");
	/* Recovery may checkpoint any run's exit, and then owns its
	 * aftercare. */
	as(f, "rcv1", "recovery", NULL);
	assert_granted(record_exit(f, run, 1, 3, 0));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE aftercare_owner = 'rcv1'"), 1);
	/* The supervisor, the run's owner still, lost the checkpoint: the
	 * aftercare is not its. */
	as(f, "supA", "supervisor", NULL);
	assert_string_equal(denied(settle(f, run, "")), "not_aftercare_owner");
	assert_string_equal(fact(&f->res.reply[0], "owner"), "rcv1");
	as(f, "rcv1", "recovery", NULL);
	assert_string_equal(settled_as(settle(f, run, "")), "failed");

	/* Recovery abandons a claimed run of anyone's. */
	as(f, NULL, NULL, NULL);
	snprintf(ticket, sizeof ticket, "%s", add(f));
	as(f, "supA", "supervisor", NULL);
	claim_ok(f, ticket, run2, NULL);
	as(f, "rcv1", "recovery", NULL);
	assert_granted(abandon(f, run2));
}

/* abandon only for a run that never executed: claimed, or running with no
 * started marker (the caller's word); never an aftercare. Repeated on an
 * aborted run: granted. */
static void
test_abandon_guard(void **state)
{
	struct fx *f = *state;
	char run[40];

	started(f, run);
	assert_granted(record_exit(f, run, 1, 0, 0));
	assert_string_equal(denied(abandon(f, run)), "not_abandonable");
	assert_string_equal(fact(&f->res.reply[0], "state"), "aftercare");
	assert_granted(settle(f, run, ""));
	assert_string_equal(denied(abandon(f, run)), "not_abandonable");
	assert_string_equal(fact(&f->res.reply[0], "state"), "succeeded");
	assert_string_equal(denied(abandon(f, "00000000000000000000000000000000")),
			    "not_abandonable");
	assert_string_equal(fact(&f->res.reply[0], "state"), "absent");

	started(f, run);
	assert_granted(abandon(f, run));
	assert_granted(abandon(f, run));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aborted'"), 1);
}

/* Recovery inherits an aftercare only from a dead checkpointer, never
 * because its lease lapsed. */
static void
test_heir_only_of_the_dead(void **state)
{
	struct fx *f = *state;
	struct ident alive, dead;
	char run[40];

	live_ident(&alive);
	dead_ident(&dead);
	started(f, run);
	assert_granted(hello_as(f, "supA", "supervisor", &alive));
	assert_granted(record_exit(f, run, 1, 0, 0));
	/* Long past any lease: the owner lives, the aftercare is its. */
	clock_fake_set(T0 + 3600 * 1000);
	as(f, "rcv1", "recovery", NULL);
	assert_string_equal(denied(settle(f, run, "")), "not_aftercare_owner");
	/* The owner's process is gone: recovery settles. */
	as(f, "supA", "supervisor", NULL);
	assert_granted(hello_as(f, "supA", "supervisor", &dead));
	as(f, "rcv1", "recovery", NULL);
	assert_string_equal(settled_as(settle(f, run, "")), "succeeded");
	/* Settled: the next settle is idempotent, from anyone of the
	 * group. */
	as(f, "supA", "supervisor", NULL);
	assert_granted(settle(f, run, ""));
}

/* A claimed run (never started) is settled by its owner (a failed
 * spawn), recovery (a start the store lost), or the reaper only when a
 * stop was asked. */
static void
test_settle_claimed(void **state)
{
	struct fx *f = *state;
	char run[40], ticket[32];

	as(f, NULL, NULL, NULL);
	snprintf(ticket, sizeof ticket, "%s", add(f));
	as(f, "supA", "supervisor", NULL);
	claim_ok(f, ticket, run, NULL);
	as(f, "reap1", "reaper", NULL);
	assert_string_equal(denied(settle(f, run, "")), "not_owner");
	assert_granted(mark_stop(f, run, "cancel"));
	assert_string_equal(settled_as(settle(f, run, "")), "cancelled");
	/* A running run has no aftercare yet: nobody settles it. */
	started(f, run);
	assert_string_equal(denied(settle(f, run, "failed")), "not_aftercare_owner");
	assert_string_equal(fact(&f->res.reply[0], "state"), "running");
}

/* A stored reply answers only the sender that made the request; anyone
 * else naming its instance and request id is decided afresh (and not
 * stored). A claim's stored reply holds no token; its replay carries the
 * same token the grant did. */
static void
test_replay_per_sender_and_no_stored_token(void **state)
{
	struct fx *f = *state;
	struct ident id;
	struct coord_caller sup, other, op;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Reply *stored;
	char token[IDS_TOKEN_LEN + 1], run[40];
	const Berth__Reply *r;

	live_ident(&id);
	sup = caller_of(CALLER_ACTOR, ROLE_SUPERVISOR, "supervisor", &id);
	other = sup;
	other.start_time++; /* the same pid, another process */
	op = caller_of(CALLER_OPERATOR, 0, "operator", NULL);
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supB", "supervisor", &sup);
	assert_granted(hello_as(f, "supB", "supervisor", &id));
	req.verb_case = V(CLAIM);
	req.claim = &cl;
	req.has_req_id = 1;
	req.req_id = 500;
	r = ex(f, &req);
	assert_granted(r);
	snprintf(token, sizeof token, "%s", r->granted->claim->token);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	assert_int_equal(strlen(token), IDS_TOKEN_LEN);

	/* The same sender again: the stored reply, with its token. */
	r = ex(f, &req);
	assert_true(r->replayed);
	assert_string_equal(r->granted->claim->token, token);
	assert_string_equal(r->granted->claim->run_id, run);

	/* Another process under that instance and request id: decided
	 * afresh, never the stored reply, never a token. */
	f->as_caller = &other;
	r = ex(f, &req);
	assert_false(r->replayed);
	assert_string_equal(denied(r), "not_permitted");
	f->as_caller = &op;
	req.verb_case = V(SETTLE);
	{
		Berth__Settle s = BERTH__SETTLE__INIT;

		s.run_id = run;
		req.settle = &s;
		r = ex(f, &req);
		assert_false(r->replayed);
		assert_string_equal(denied(r), "not_permitted");
	}

	/* What is kept holds no token. */
	stored = stored_reply(f, "SELECT reply FROM requests WHERE verb = 'claim'");
	assert_null(stored->granted->claim->token);
	assert_string_equal(stored->granted->claim->run_id, run);
	berth__reply__free_unpacked(stored, NULL);
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM requests WHERE req_id = 500"), 1);
}

/* A seat held by a live run is not force-released: cancel the run. */
static void
test_force_release_of_a_live_runs_seat(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .key = "area" };
	char run[40], ticket[32];

	as(f, NULL, NULL, NULL);
	/* An explicit seat nobody's run holds is force-released as ever. */
	assert_string_equal(outcome(seat_acquire(f, "lock", "someone", NULL)), "acquired");
	assert_string_equal(outcome(seat_verb(f, V(SEAT_FORCE_RELEASE), "lock", NULL)),
			    "force_released");
	snprintf(ticket, sizeof ticket, "%s", add_opt(f, &o));
	claim_ok(f, ticket, run, NULL);
	assert_int_equal(seat_count(f), 1);
	assert_string_equal(denied(seat_verb(f, V(SEAT_FORCE_RELEASE), "area", NULL)),
			    "held_by_run");
	assert_string_equal(fact(&f->res.reply[0], "run"), run);
	assert_int_equal(seat_count(f), 1);
}

/* The fused forms keep every rule of the verbs they fuse: a non-actor's
 * fused claim or record_exit is not_permitted and moves nothing; only the
 * owner or recovery checkpoints, and the fused settle is the
 * checkpointer's (run_moves.def's who column for each move). */
static void
test_fused_forms_keep_the_rules(void **state)
{
	struct fx *f = *state;
	struct coord_caller op = caller_of(CALLER_OPERATOR, 0, "operator", NULL);
	struct coord_caller wk = caller_of(CALLER_WORKER, 0, "worker", NULL);
	struct ident id;
	struct coord_caller reaper;
	char run[40];

	live_ident(&id);
	reaper = caller_of(CALLER_ACTOR, ROLE_REAPER, "reaper", &id);
	as(f, NULL, NULL, NULL);
	add(f);
	/* A job on coordinator.sock (an operator) or worker.sock, calling
	 * itself the supervisor: neither claims, nor starts. */
	as(f, "supA", "supervisor", &op);
	assert_string_equal(denied(claim_shim(f, NULL)), "not_permitted");
	assert_null(f->res.reply->fused);
	as(f, "supA", "supervisor", &wk);
	assert_string_equal(denied(claim_shim(f, NULL)), "not_permitted");
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 0);

	/* The claimer is the run's owner: its fused start is granted. */
	as(f, "supA", "supervisor", NULL);
	assert_granted(claim_shim(f, NULL));
	assert_granted(f->res.reply->fused);
	snprintf(run, sizeof run, "%s", f->res.reply->granted->claim->run_id);

	/* Neither a job nor the reaper checkpoints and settles it. */
	as(f, "supA", "supervisor", &op);
	assert_string_equal(denied(exit_settle(f, run, 0, NULL)), "not_permitted");
	assert_null(f->res.reply->fused);
	as(f, "r1", "reaper", &reaper);
	assert_granted(hello_as(f, "r1", "reaper", &id));
	assert_string_equal(denied(exit_settle(f, run, 0, NULL)), "not_permitted");
	/* Another supervisor is not the owner. */
	as(f, "supB", "supervisor", NULL);
	assert_string_equal(denied(exit_settle(f, run, 0, NULL)), "not_owner");
	assert_null(f->res.reply->fused);
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);

	/* Recovery checkpoints any run's exit; its fused settle is then the
	 * checkpointer's. */
	as(f, "rcv1", "recovery", NULL);
	assert_granted(exit_settle(f, run, 0, NULL));
	assert_string_equal(settled_as(f->res.reply->fused), "succeeded");
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE aftercare_owner = 'rcv1' AND"
				    " state = 'succeeded'"),
			 1);
}

/* The fused claim is a supervisor's, as claim is: recovery (which may
 * checkpoint) neither claims nor starts. */
static void
test_fused_claim_is_a_supervisors(void **state)
{
	struct fx *f = *state;

	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "rcv1", "recovery", NULL);
	assert_string_equal(denied(claim_shim(f, NULL)), "not_permitted");
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 0);
}

/* A verified supervisor's record_exit whose fused settle names another
 * run (another supervisor's, in its aftercare): the settle is refused as
 * an input error (a FUSE line moves only its request's run), the other
 * run stays as it was, and the sender's own checkpoint stands. Without
 * the check the fused form would settle a run its sender may not. */
static void
test_fused_settle_of_another_run(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__RecordExit m = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	struct coord_caller sup;
	struct ident id;
	char mine[40], theirs[40];
	const Berth__Reply *r;

	live_ident(&id);
	sup = caller_of(CALLER_ACTOR, ROLE_SUPERVISOR, "supervisor", &id);
	/* Theirs: supB's, checkpointed by supB (in its aftercare). */
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supB", "supervisor", NULL);
	claim_ok(f, NULL, theirs, NULL);
	assert_granted(start(f, theirs));
	assert_granted(record_exit(f, theirs, 1, 0, 0));

	/* Mine: a verified supervisor's fused claim. */
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supA", "supervisor", &sup);
	assert_granted(hello_as(f, "supA", "supervisor", &id));
	r = claim_shim(f, NULL);
	assert_granted(r);
	assert_granted(r->fused);
	snprintf(mine, sizeof mine, "%s", r->granted->claim->run_id);

	m.run_id = mine;
	m.has_has_record = m.has_record = 1;
	m.has_exit_code = 1;
	se.run_id = theirs;
	se.outcome = "failed";
	m.settle = &se;
	req.verb_case = V(RECORD_EXIT);
	req.record_exit = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_non_null(r->fused);
	assert_int_equal(errcode(r->fused), BERTH__ERROR_CODE__ERR_INVALID);
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'aftercare'"), 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'failed'"), 0);
}

/* A job (worker.sock, with its own run's token) sends its run's
 * record_exit with a fused settle, and an operator the fused claim: both
 * not_permitted before any guard, no run moved, no event row of either
 * verb (nothing was decided). */
static void
test_fused_forms_refused_to_jobs(void **state)
{
	struct fx *f = *state;
	struct coord_caller wk = caller_of(CALLER_WORKER, 0, "worker", NULL);
	struct coord_caller op = caller_of(CALLER_OPERATOR, 0, "operator", NULL);
	char run[40], token[80];

	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supA", "supervisor", NULL);
	claim_ok(f, NULL, run, token);
	assert_granted(start(f, run));
	as(f, "supA", "supervisor", &wk);
	assert_string_equal(denied(exit_settle(f, run, 0, "succeeded")), "not_permitted");
	assert_null(f->res.reply->fused);
	as(f, "supA", "supervisor", &op);
	assert_string_equal(denied(exit_settle(f, run, 0, "succeeded")), "not_permitted");
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supA", "supervisor", &op);
	assert_string_equal(denied(claim_shim(f, NULL)), "not_permitted");
	as(f, NULL, NULL, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb IN ('record_exit',"
				    " 'settle')"),
			 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events WHERE verb = 'start'"), 1);
}

/* A stored fused reply answers only its sender: the verified supervisor's
 * repeat of its fused claim gets the stored reply with the fused start's
 * answer inside and the same token; another process under its instance
 * and request id is decided afresh (not_permitted, no fused answer, no
 * token); what is kept holds no token. */
static void
test_fused_replay_per_sender(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Ident shim = BERTH__IDENT__INIT;
	struct coord_caller sup, other;
	char token[IDS_TOKEN_LEN + 1];
	Berth__Reply *stored;
	const Berth__Reply *r;
	struct ident id;

	live_ident(&id);
	sup = caller_of(CALLER_ACTOR, ROLE_SUPERVISOR, "supervisor", &id);
	other = sup;
	other.start_time++;
	as(f, NULL, NULL, NULL);
	add(f);
	as(f, "supA", "supervisor", &sup);
	assert_granted(hello_as(f, "supA", "supervisor", &id));
	shim.has_pid = shim.has_start_time = shim.has_pgid = 1;
	shim.pid = shim.pgid = 4242;
	shim.start_time = 99;
	cl.shim = &shim;
	req.verb_case = V(CLAIM);
	req.claim = &cl;
	req.has_req_id = 1;
	req.req_id = 600;
	r = ex(f, &req);
	assert_granted(r);
	assert_granted(r->fused);
	snprintf(token, sizeof token, "%s", r->granted->claim->token);

	r = ex(f, &req);
	assert_true(r->replayed);
	assert_string_equal(r->granted->claim->token, token);
	assert_non_null(r->fused);
	assert_granted(r->fused);

	f->as_caller = &other;
	r = ex(f, &req);
	assert_false(r->replayed);
	assert_string_equal(denied(r), "not_permitted");
	assert_null(r->fused);

	as(f, NULL, NULL, NULL);
	stored = stored_reply(f, "SELECT reply FROM requests WHERE req_id = 600");
	assert_null(stored->granted->claim->token);
	assert_non_null(stored->fused);
	berth__reply__free_unpacked(stored, NULL);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_class_and_role_from_the_table, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_actor_bound_to_its_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heir_only_of_the_dead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_forms_keep_the_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_settle_of_another_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_forms_refused_to_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_replay_per_sender, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_claim_is_a_supervisors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_per_sender_and_no_stored_token, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_force_release_of_a_live_runs_seat, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
