/* claim (coordinator/coord_claim.c): one claim of a ticket, the next
 * eligible ticket in order, the payload, the slots, a claim that stays an
 * index walk at 100 000 tickets, a walk past taken seats, and, on
 * PostgreSQL, its statistics and two hosts' claims decided side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "clock.h"
#include "coord_ctx.h"
#include "coord_exec.h"
#include "coord_hosts.h"
#include "coord_sched.h"
#include "ids.h"

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
test_claim_next_order(void **state)
{
	struct fx *f = *state;
	struct addopt low = { .priority = 0 }, high = { .priority = 5 },
		      held = { .hold = 1, .priority = 9 };
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
		struct coord_st *st = coord_db_q_once(f->db, "SELECT token_hash FROM runs", "");

		assert_int_equal(coord_db_step(f->db, st), 1);
		assert_string_equal(coord_db_coltext(st, 0), hash);
		coord_db_free(st);
	}
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
		/* claim-next (with its placement: coord_place.h) and the next
		 * due time, as coord_claim.c and coord_sched.c write them */
		"SELECT t.n, (SELECT a.id FROM activations a WHERE a.ticket = t.n"
		"  AND a.state = 'queued' AND a.due_ms <= 5 ORDER BY a.due_ms LIMIT 1) AS act"
		" FROM tickets t INDEXED BY tickets_ready WHERE t.state = 'ready' AND act IS NOT NULL"
		" AND (t.host_wanted = '' OR t.host_wanted = 'h1')"
		" AND (t.labels = '' OR berth_labels_ok(t.labels, 'gpu') = 1)"
		" AND NOT EXISTS (SELECT 1 FROM ticket_deps d JOIN tickets u ON u.n = d.dep"
		"  WHERE d.ticket = t.n AND u.state != 'succeeded')"
		" ORDER BY t.priority DESC, t.n",
		"SELECT a.due_ms FROM activations a INDEXED BY activations_due CROSS JOIN tickets t"
		" ON t.n = a.ticket WHERE a.state = 'queued' AND a.due_ms > 5 AND t.state = 'ready'"
		" ORDER BY a.due_ms LIMIT 1",
	};
	size_t i;

	/* sqlite's query plans and index hints; PostgreSQL plans alone
	 * (test_claim_fast_at_100k holds on both). */
	if (coord_db_kind(f->db) != COORD_STORE_SQLITE)
		skip();
	for (i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		char sql[1024];
		struct coord_st *st;
		int scans = 0;

		snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", queries[i]);
		assert_non_null(st = coord_db_q_once(f->db, sql, ""));
		while (coord_db_step(f->db, st) == 1) {
			const char *d = coord_db_coltext(st, 3);

			if ((strncmp(d, "SCAN", 4) == 0 && strstr(d, "INDEX") == NULL) ||
			    strstr(d, "TEMP B-TREE") != NULL)
				scans++;
		}
		coord_db_free(st);
		assert_int_equal(scans, 0);
	}
}

/* 100 000 tickets: claim-next and show stay fast (index lookups). */
static void
test_claim_fast_at_100k(void **state)
{
	struct fx *f = *state;
	int64_t t0, t1;
	char run[40];

	assert_int_equal(sql_run(f,
				 "BEGIN;"
				 "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
				 " WHERE i < 100000)"
				 " INSERT INTO tickets (argv, state, created_ms, updated_ms)"
				 " SELECT '[\"true\"]', CASE WHEN i % 2 = 0 THEN 'succeeded'"
				 " ELSE 'ready' END, i, i FROM c;"
				 "INSERT INTO activations (ticket, kind, due_ms, state, created_ms)"
				 " SELECT n, 'at', 2000000 + n, 'queued', 0 FROM tickets"
				 " WHERE state = 'ready';"
				 "COMMIT;"),
			 0);
	add(f); /* T100001, due now, behind 50 000 ready tickets not yet due */
	t0 = clock_mono_ms();
	claim_ok(f, NULL, run, NULL);
	assert_string_equal(f->res.ticket, "T100001");
	assert_int_equal(coord_sched_next_wake(f->db, clock_wall_ms()), 2000001);
	show(f, "T99999");
	t1 = clock_mono_ms();
	/* A scan of 50 000 candidates would still pass on a fast machine;
	 * the bound catches a full table scan per candidate. */
	assert_true(t1 - t0 < 5000);
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
	assert_granted(claim_as(f, f->db, NULL, 0, "sup"));
	add(f);
	add(f);
	assert_granted(claim_as(f, f->db, NULL, 0, "sup"));
	assert_string_equal(denied(claim_as(f, f->db, NULL, 0, "sup")), "slots_full");
}

/* The walk passes over every ticket whose seat is taken, page after page
 * (sqlite's pages of 32; PostgreSQL's of 1, 2, 4, ... 32), to the first
 * that fits. */
static void
test_claim_passes_over_pages(void **state)
{
	struct fx *f = *state;
	struct addopt k = { .key = "db" };
	char run[40];
	int i;

	for (i = 0; i < 40; i++)
		add_opt(f, &k); /* T1..T40 */
	add(f);                 /* T41 */
	claim_ok(f, NULL, run, NULL);
	assert_string_equal(f->res.ticket, "T1");
	claim_ok(f, NULL, run, NULL);
	assert_string_equal(f->res.ticket, "T41");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
}

/* On PostgreSQL the claim's walk is planned from statistics: a queue that
 * grew by 500 tickets and more has them made at once, not a minute later
 * by autovacuum (until then every claim sorted the whole queue). */
static void
test_claim_stats_after_growth(void **state)
{
	struct fx *f = *state;
	static const char q_rows[] =
		"SELECT reltuples::int8 FROM pg_class WHERE oid = 'tickets'::regclass";
	int i;

	if (!test_store_pg())
		skip();
	for (i = 0; i < 10; i++)
		add(f);
	assert_true(sql_int(f, q_rows) < 10);
	for (i = 0; i < 600; i++)
		add(f);
	assert_true(sql_int(f, q_rows) >= 500);
}

/* A claim for the next ticket, as a supervisor sends it. */
static void
next_claim_req(Berth__Request *req, Berth__Claim *cl, const char *instance, uint64_t req_id)
{
	berth__request__init(req);
	berth__claim__init(cl);
	req->verb_case = BERTH__REQUEST__VERB_CLAIM;
	req->claim = cl;
	req->actor = "supervisor";
	req->instance = (char *)instance;
	req->has_req_id = 1;
	req->req_id = req_id;
}

/* The advisory lock of this store a session waits for (its second key:
 * 1 the decision lock, 2 the claims' serial lock), or 0 while none waits;
 * asked again for up to 30 s until one does. */
static int64_t
lock_waited(struct coord_db *r)
{
	static const char sql[] =
		"SELECT objid::int8 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
		" AND classid::int8 = (hashtext(current_schema())::int8 & 4294967295)";
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int64_t v = 0;
	int i;

	for (i = 0; i < 1500; i++) {
		if (coord_db_int(r, &v, sql, "") == 1)
			return v;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * On PostgreSQL, two hosts' claims for the next ticket are decided side
 * by side (DESIGN §13): while host A's claim of T1 (added with o) is not
 * committed, host B's claim walks the queue, passes over T1 (locked: SKIP
 * LOCKED), finds T2 (added with o too), and waits only for the lock that
 * keeps seats and the events' order one claim at a time, not for A's
 * whole decision. 1 when B was granted T2, 0 when it found nothing (T2's
 * seat was T1's by then).
 */
static int
side_by_side(struct fx *f, const struct addopt *o)
{
	struct coord_db_opts o2 = fx_opts, ro = fx_opts;
	struct coord_db *s2 = NULL, *rd = NULL;
	struct coord_result res, res2;
	struct coord_group g;
	Berth__Request req;
	Berth__Claim cl;
	struct coord_host *h;
	char err[256];
	int status;
	pid_t pid;

	fx_host(f, "h1", "", 60000);
	assert_int_equal(coord_db_host(f->db)->others, 0);
	add_opt(f, o); /* T1 */
	add_opt(f, o); /* T2 */
	o2.host_id = "h2";
	ro.reader = 1;
	if (coord_db_open(&s2, f->store, &o2, err, sizeof err) != 0 ||
	    coord_db_open(&rd, f->store, &ro, err, sizeof err) != 0)
		fail_msg("opening: %s", err);
	h = coord_db_host(s2);
	snprintf(h->id, sizeof h->id, "h2");
	snprintf(h->boot_id, sizeof h->boot_id, "boot-h2");
	h->ttl_ms = 60000;
	assert_int_equal(coord_hosts_tend(s2, clock_mono_ms(), 1), 0);
	/* Each host knows the other is there (at its next renewal). */
	assert_int_equal(coord_db_host(s2)->others, 1);
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 1), 0);
	assert_int_equal(coord_db_host(f->db)->others, 1);

	/* Host A's claim, decided and not yet committed. */
	next_claim_req(&req, &cl, "sup-a", 1);
	coord_exec_group_init(&g, f->db, 0, 0);
	memset(&res, 0, sizeof res);
	assert_int_equal(coord_exec_group_add(&g, &req, NULL, 0, 0, &res), 0);
	assert_non_null(res.reply);
	assert_granted(res.reply);
	assert_string_equal(res.reply->granted->claim->ticket, "T1");

	/* Host B's, from a process of its own (its own session): exits 0
	 * granted T2, 3 denied nothing_due, 1 anything else. */
	if ((pid = fork()) == 0) {
		const Berth__Reply *r;
		Berth__Request req2;
		Berth__Claim cl2;

		next_claim_req(&req2, &cl2, "sup-b", 1);
		memset(&res2, 0, sizeof res2);
		if (coord_exec_request(s2, &req2, NULL, NULL, &res2) != 0 ||
		    (r = res2.reply) == NULL)
			_exit(1);
		if (r->result_case == BERTH__REPLY__RESULT_GRANTED)
			_exit(strcmp(r->granted->claim->ticket, "T2") == 0 ? 0 : 1);
		if (r->result_case == BERTH__REPLY__RESULT_DENIED)
			_exit(strcmp(r->denied->reason, "nothing_due") == 0 ? 3 : 1);
		_exit(1);
	}
	assert_true(pid > 0);
	/* B has walked the queue and waits for the serial lock, where it
	 * waited for the decision lock before it could look at anything. */
	assert_int_equal(lock_waited(rd), 2);
	assert_int_equal(coord_exec_group_end(&g), 0);
	coord_exec_group_free(&g);
	coord_exec_free(&res);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3);
	coord_db_close(rd);
	coord_db_close(s2);
	return WEXITSTATUS(status) == 0;
}

/* Each ticket is claimed once, and the events' ids follow the commits. */
static void
test_claims_side_by_side(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .priority = 0 };

	if (!test_store_pg())
		skip();
	assert_true(side_by_side(f, &o));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE ticket = 1"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE ticket = 2 AND host = 'h2'"),
			 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets WHERE state = 'claimed'"), 2);
	assert_int_equal(sql_int(f, "SELECT (SELECT id FROM events WHERE ticket = 'T1' AND verb ="
				    " 'claim') < (SELECT id FROM events WHERE ticket = 'T2' AND"
				    " verb = 'claim')"),
			 1);
}

/* Two tickets for one seat: B judges T2's seat after A committed T1's run
 * into it, and passes over T2. */
static void
test_claims_side_by_side_seat(void **state)
{
	struct fx *f = *state;
	struct addopt o = { .key = "one-seat" };

	if (!test_store_pg())
		skip();
	assert_false(side_by_side(f, &o));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM seats"), 1);
	assert_string_equal(show(f, "T2")->state, "ready");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_claim_twice_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_next_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_payload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_uses_indexes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_fast_at_100k, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_two, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_passes_over_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_stats_after_growth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claims_side_by_side, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claims_side_by_side_seat, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
