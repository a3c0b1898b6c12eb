/* coord_hosts.c: host leases, host_lost, lose and the fence (DESIGN §13),
 * on either engine (the fixture's store). Another host is a second
 * connection to the same store with a host of its own... played here by
 * rows of the hosts table, since one store takes one coordinator per host
 * and the fixture is one: what another host's coordinator would write,
 * the test writes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "coord_fixture.h"
#include "coord_hosts.h"

static void
host_set(struct fx *f, const char *id)
{
	fx_host(f, id, "", 3000);
}

static const Berth__Reply *
host_lost(struct fx *f, const char *host, int64_t epoch)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__HostLost m = BERTH__HOST_LOST__INIT;

	m.host = (char *)host;
	m.has_epoch = 1;
	m.epoch = epoch;
	req.verb_case = BERTH__REQUEST__VERB_HOST_LOST;
	req.host_lost = &m;
	return ex(f, &req);
}

static const Berth__Reply *
lose(struct fx *f, const char *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Lose m = BERTH__LOSE__INIT;

	m.run_id = (char *)run;
	req.verb_case = BERTH__REQUEST__VERB_LOSE;
	req.lose = &m;
	return ex(f, &req);
}

/* Registering takes epoch 1; renewing keeps it; a runs's host and epoch
 * are the claimer's. */
static void
test_register_and_claim(void **state)
{
	struct fx *f = *state;
	char run[40], sql[200];

	host_set(f, "h1");
	assert_int_equal(coord_db_host(f->db)->epoch, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM hosts WHERE host = 'h1' AND epoch = 1"
				    " AND expires_ms > renewed_ms"),
			 1);
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 1), 0);
	assert_int_equal(coord_db_host(f->db)->epoch, 1);
	add(f);
	claim_ok(f, NULL, run, NULL);
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM runs WHERE id = '%s' AND host = 'h1'"
		 " AND epoch = 1",
		 run);
	assert_int_equal(sql_int(f, sql), 1);
}

/* A seat is its host's: made under h1, it says h1, so another host's
 * registration (which adopts the seats from before hosts were named)
 * does not take it. */
static void
test_seat_host(void **state)
{
	struct fx *f = *state;

	host_set(f, "h1");
	assert_int_equal(outcome(seat_acquire(f, "s1", "me", NULL))[0] != '\0', 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM seats WHERE item = 's1' AND host = 'h1'"),
			 1);
	host_set(f, "h2");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM seats WHERE item = 's1' AND host = 'h1'"),
			 test_store_pg() ? 1 : 0);
}

/* Another host's lapsed lease: declared lost once (epoch moves on), then
 * denied epoch_moved; a live one denied lease_live; one's own denied. */
static void
test_host_lost_once(void **state)
{
	struct fx *f = *state;

	host_set(f, "h1");
	assert_int_equal(sql_run(f, "INSERT INTO hosts (host, boot_id, epoch, ttl_ms, renewed_ms,"
				    " expires_ms) VALUES ('h2', 'b', 4, 3000, berth_now_ms(),"
				    " berth_now_ms() + 60000)"),
			 0);
	assert_string_equal(denied(host_lost(f, "h2", 4)), "lease_live");
	assert_int_equal(sql_run(f, "UPDATE hosts SET renewed_ms = berth_now_ms() - 5000,"
				    " expires_ms = berth_now_ms() - 2000 WHERE host = 'h2'"),
			 0);
	assert_string_equal(denied(host_lost(f, "h2", 3)), "epoch_moved");
	assert_granted(host_lost(f, "h2", 4));
	assert_int_equal(sql_int(f, "SELECT epoch FROM hosts WHERE host = 'h2'"), 5);
	/* Still lapsed, but lost since its last renewal: not again. */
	assert_string_equal(denied(host_lost(f, "h2", 5)), "epoch_moved");
	assert_string_equal(denied(host_lost(f, "h1", 1)), "own_host");
	assert_string_equal(denied(host_lost(f, "nobody", 1)), "no_host");
}

/* A run of a host declared lost is fenced: every decision about it but
 * lose is denied host_lost; lose ends it lost and its ticket is retried
 * like an orphaned run's; lose of a run not fenced is denied. */
static void
test_fenced_run(void **state)
{
	struct fx *f = *state;
	struct addopt o = { 0 };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	const Berth__Reply *r;
	char run[40], sql[200];
	const char *t;

	host_set(f, "h1");
	o.retries = 1;
	t = add_opt(f, &o);
	claim_ok(f, t, run, NULL);
	assert_granted(start(f, run));
	assert_string_equal(denied(lose(f, run)), "host_not_lost");
	/* h1 lapses and another host declares it lost. */
	assert_int_equal(sql_run(f, "UPDATE hosts SET expires_ms = berth_now_ms() - 1,"
				    " renewed_ms = berth_now_ms() - 4000 WHERE host = 'h1'"),
			 0);
	assert_int_equal(sql_run(f, "UPDATE hosts SET epoch = epoch + 1, lost_ms = berth_now_ms()"
				    " WHERE host = 'h1'"),
			 0);
	r = record_exit(f, run, 1, 0, 0);
	assert_string_equal(denied(r), "host_lost");
	assert_string_equal(denied(abandon(f, run)), "host_lost");
	assert_string_equal(denied(renew(f, NULL, run)), "lease_not_held");
	/* The scan lists h1's fenced run among its stale runs. */
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(r->granted->scan->n_hosts, 1);
	assert_int_equal(r->granted->scan->hosts[0]->n_stale_runs, 1);
	assert_string_equal(r->granted->scan->hosts[0]->stale_runs[0], run);
	assert_granted(lose(f, run));
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM runs WHERE id = '%s' AND state = 'lost'"
		 " AND settled_ms IS NOT NULL",
		 run);
	assert_int_equal(sql_int(f, sql), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases"), 0);
	assert_string_equal(show(f, t)->state, "ready"); /* retried, one retry spent */
	assert_granted(lose(f, run));                    /* again: nothing done */
	assert_string_equal(denied(record_exit(f, run, 1, 0, 0)), "host_lost");
	/* lost is not an outcome a settle may name (of a run not fenced: the
	 * host's renewal takes the new epoch first). */
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 1), 0);
	claim_ok(f, add(f), run, NULL);
	assert_int_equal(errcode(settle(f, run, "lost")), BERTH__ERROR_CODE__ERR_INVALID);
}

/* The claim guard: a host that has not renewed within half its TTL does
 * not claim; one whose epoch moved on does not claim under the old one. */
static void
test_claim_guard(void **state)
{
	struct fx *f = *state;
	struct coord_host *h;

	host_set(f, "h1");
	h = coord_db_host(f->db);
	add(f);
	h->renewed_mono = clock_mono_ms() - 2000; /* more than half of 3000 */
	assert_string_equal(denied(claim(f, NULL)), "store_unreachable");
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 0), 0);
	assert_int_equal(sql_run(f, "UPDATE hosts SET epoch = 7 WHERE host = 'h1'"), 0);
	assert_string_equal(denied(claim(f, NULL)), "host_lost");
	/* The next renewal takes the epoch there is now, and claims again. */
	assert_int_equal(coord_hosts_tend(f->db, clock_mono_ms(), 0), 0);
	assert_int_equal(h->epoch, 7);
	assert_granted(claim(f, NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register_and_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_lost_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fenced_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_guard, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
