/* claim (coordinator/coord_claim.c): one claim of a ticket, the next
 * eligible ticket in order, the payload, the slots, and a claim that stays
 * an index walk at 100 000 tickets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "clock.h"
#include "coord_ctx.h"
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
