/* The operator verbs on tickets (coordinator/coord_tickets.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"

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
	char first[24] = "T1", second[24] = "T2";
	char *after[] = { first };
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
	/* On PostgreSQL the refused batch's numbers are gone (a sequence
	 * does not roll back: docs/MANY-HOSTS.md); sqlite gives them again. */
	if (test_store_pg()) {
		int64_t v = sql_int(f, "SELECT nextval(pg_get_serial_sequence('tickets', 'n'))");

		snprintf(first, sizeof first, "T%lld", (long long)v + 1);
		snprintf(second, sizeof second, "T%lld", (long long)v + 2);
		after[0] = first;
	}
	b.n_adds = 2;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(r->granted->add_batch->n_tickets, 2);
	assert_string_equal(r->granted->add_batch->tickets[1], second);
	assert_string_equal(show(f, second)->state, "blocked");
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

	add(f);               /* T1 */
	add_opt(f, &later);   /* T2 */
	add_opt(f, &blocked); /* T3 */
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

/* 16 000 tickets T1..T16000 in the state the SQL expression state gives
 * (of i, the number), each with one 300-byte argument. */
static void
many_tickets(struct fx *f, const char *state)
{
	char x[301], sql[1024];

	memset(x, 'x', 300);
	x[300] = '\0';
	snprintf(sql, sizeof sql,
		 "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
		 " WHERE i < 16000)"
		 " INSERT INTO tickets (argv, state, created_ms, updated_ms)"
		 " SELECT '[\"%s\"]', %s, i, i FROM c",
		 x, state);
	assert_int_equal(sql_run(f, sql), 0);
}

/* A list that would not fit one message stops short and says so. */
static void
test_list_truncated(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	const Berth__Reply *r;

	many_tickets(f, "'succeeded'");
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

/* Paging: a cursor goes on where the last page stopped, in either order,
 * and a page that stops short says where to go on and how many it left;
 * walked to the end, every ticket comes once. */
static void
test_list_pages_with_cursor(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	const Berth__Reply *r;
	char cursor[32] = "";
	int seen[16001] = { 0 }, pages = 0, total = 0;
	int64_t prev = INT64_MAX, n;
	size_t i;

	many_tickets(f, "CASE WHEN i % 2 = 1 THEN 'succeeded' ELSE 'failed' END");
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &l;
	l.has_newest_first = l.newest_first = 1;
	/* The newest 10: the cursor and how many are left beyond them. */
	l.has_limit = 1;
	l.limit = 10;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 10);
	assert_string_equal(r->granted->list->tickets[0]->id, "T16000");
	assert_string_equal(r->granted->list->next, "T15991");
	assert_int_equal(r->granted->list->more, 15990);
	/* Everything, newest first, page by page (the reply budget cuts them). */
	l.has_limit = 0;
	l.limit = 0;
	do {
		l.after = cursor[0] ? cursor : NULL;
		r = ex(f, &req);
		pages++;
		for (i = 0; i < r->granted->list->n_tickets; i++) {
			assert_int_equal(sscanf(r->granted->list->tickets[i]->id, "T%" SCNd64, &n),
					 1);
			assert_true(n < prev);
			prev = n;
			seen[n]++;
			total++;
		}
		if (r->granted->list->next != NULL)
			snprintf(cursor, sizeof(cursor), "%s", r->granted->list->next);
	} while (r->granted->list->next != NULL);
	assert_true(pages > 1);
	assert_int_equal(total, 16000);
	for (n = 1; n <= 16000; n++)
		assert_int_equal(seen[n], 1);
	/* Oldest first after a cursor, with a state. */
	l.has_newest_first = l.newest_first = 0;
	l.after = "T100";
	l.state = "failed";
	l.has_limit = 1;
	l.limit = 2;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 2);
	assert_string_equal(r->granted->list->tickets[0]->id, "T102");
	assert_string_equal(r->granted->list->tickets[1]->id, "T104");
	assert_int_equal(r->granted->list->more, 8000 - 52);
	/* The last page has no cursor; a bad cursor is refused. */
	l.after = "T15998";
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 1);
	assert_null(r->granted->list->next);
	assert_false(r->granted->list->has_more);
	l.after = "nonsense";
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
}

/* `list --state blocked` returns the ready tickets with a dependency that
 * has not succeeded, in ticket order, and its --limit counts only those;
 * `--state ready` the others. */
static void
test_list_blocked_limit(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	struct addopt on1 = { .after = "T1" }, on3 = { .after = "T3" };
	const Berth__Reply *r;
	char run[40];

	add(f);           /* T1 */
	add_opt(f, &on1); /* T2: blocked */
	add(f);           /* T3 */
	add_opt(f, &on3); /* T4: blocked until T3 succeeds */
	add_opt(f, &on1); /* T5: blocked */
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
	/* ready means ready to run: the blocked ones are not listed. */
	l.state = "ready";
	l.limit = 3;
	r = ex(f, &req);
	assert_int_equal(r->granted->list->n_tickets, 2);
	assert_string_equal(r->granted->list->tickets[0]->id, "T1");
	assert_string_equal(r->granted->list->tickets[1]->id, "T4");
	assert_string_equal(r->granted->list->tickets[1]->state, "ready");
}

/* Ids as people type them: "last" is the newest ticket; 8 or more hex
 * digits of a run id name its run's ticket, and a prefix two runs share
 * is refused, naming both. */
static void
test_resolve_last_and_prefix(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show m = BERTH__SHOW__INIT;
	const Berth__Reply *r;

	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &m;
	m.id = "last";
	r = ex(f, &req);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	add(f);
	add(f);
	add(f);
	assert_string_equal(show(f, "last")->id, "T3");
	assert_int_equal(
		sql_run(f, "INSERT INTO runs (id, ticket, attempt, state, token_hash,"
			   " claimed_ms, settled_ms) VALUES"
			   " ('abcdef01aa000000000000000000000a', 2, 1, 'aborted', 'x', 1, 1),"
			   " ('abcdef01bb000000000000000000000b', 3, 1, 'aborted', 'x', 1, 1)"),
		0);
	assert_string_equal(show(f, "abcdef01a")->id, "T2");
	assert_string_equal(show(f, "abcdef01bb00")->id, "T3");
	m.id = "abcdef01";
	req.has_req_id = 0;
	r = ex(f, &req);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_INVALID);
	assert_non_null(strstr(r->error->message, "T2-r1"));
	assert_non_null(strstr(r->error->message, "T3-r1"));
	m.id = "abcdef02";
	req.has_req_id = 0;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	m.id = "abcdef0";
	req.has_req_id = 0;
	assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	/* Every verb that takes an id resolves it the same way. */
	assert_string_equal(ticket_verb(f, BERTH__REQUEST__VERB_HOLD, "last")->granted->ticket->id,
			    "T3");
}

/* berth add --isolate is kept with the ticket, shown, and handed to the
 * supervisor with every claim of it (and only of it). */
static void
test_isolate_kept_and_claimed(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	const Berth__Reply *r;

	a.n_argv = 1;
	a.argv = argv;
	a.has_isolate = 1;
	a.isolate = 1;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_granted(ex(f, &req));
	add(f);
	assert_int_equal(sql_int(f, "SELECT isolate FROM tickets WHERE n = 1"), 1);
	assert_int_equal(sql_int(f, "SELECT isolate FROM tickets WHERE n = 2"), 0);
	r = claim(f, "T1");
	assert_granted(r);
	assert_true(r->granted->claim->has_isolate);
	assert_true(r->granted->claim->isolate);
	r = claim(f, "T2");
	assert_granted(r);
	assert_true(r->granted->claim->has_isolate);
	assert_false(r->granted->claim->isolate);
	assert_true(show(f, "T1")->isolate);
	assert_false(show(f, "T2")->isolate);
	/* The engine keeps the column a flag. */
	assert_int_equal(sql_run(f, "UPDATE tickets SET isolate = 2"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hold_refuses_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_batch_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_show_by_alias_and_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_and_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_bounds_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_pages_with_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_blocked_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_isolate_kept_and_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_last_and_prefix, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
