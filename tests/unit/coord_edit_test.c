/* berth edit, remove and clean (coordinator/coord_edit.c): edit changes a
 * queued ticket only; remove and clean delete finished tickets, every row
 * of theirs, never one an unfinished ticket waits for, and a number is
 * never given twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_fixture.h"

static const Berth__Reply *
edit(struct fx *f, Berth__Edit *m, const char *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;

	m->id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_EDIT;
	req.edit = m;
	return ex(f, &req);
}

static const Berth__Reply *
show_rep(struct fx *f, const char *id)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show m = BERTH__SHOW__INIT;

	m.id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &m;
	return ex(f, &req);
}

static const Berth__Reply *
clean(struct fx *f, int64_t older_ms, const char *state)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Clean m = BERTH__CLEAN__INIT;

	m.has_older_ms = older_ms > 0;
	m.older_ms = older_ms;
	m.state = (char *)state;
	req.verb_case = BERTH__REQUEST__VERB_CLEAN;
	req.clean = &m;
	return ex(f, &req);
}

static void
test_edit(void **state)
{
	struct fx *f = *state;
	Berth__Edit m = BERTH__EDIT__INIT;
	char *argv[] = { "make", "all" }, *set[] = { "B=2", "A=9" }, *unset[] = { "C" };
	char run[40];
	const Berth__Reply *r;

	/* T1's environment is A=1 C=3 (set straight in the row). */
	add(f);
	assert_int_equal(
		sql_int(f, "SELECT count(*) FROM (SELECT 1 FROM tickets WHERE n = 1) AS x"), 1);
	assert_int_equal(sql_run(f, "UPDATE tickets SET env = '[\"A=1\",\"C=3\"]' WHERE n = 1"), 0);
	m.n_argv = 2;
	m.argv = argv;
	m.n_set_env = 2;
	m.set_env = set;
	m.n_unset_env = 1;
	m.unset_env = unset;
	m.has_priority = 1;
	m.priority = 7;
	m.name = "renamed";
	r = edit(f, &m, "T1");
	assert_granted(r);
	assert_string_equal(r->granted->ticket->argv[1], "all");
	assert_string_equal(r->granted->ticket->name, "renamed");
	assert_int_equal(r->granted->ticket->priority, 7);
	r = claim(f, "T1");
	assert_granted(r);
	assert_int_equal(r->granted->claim->n_argv, 2);
	assert_string_equal(r->granted->claim->argv[0], "make");
	assert_int_equal(r->granted->claim->n_env, 2);
	assert_string_equal(r->granted->claim->env[0], "B=2");
	assert_string_equal(r->granted->claim->env[1], "A=9");
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);

	/* Claimed: its run was handed the old command; no edit. */
	memset(&m, 0, sizeof m);
	berth__edit__init(&m);
	m.has_priority = 1;
	m.priority = 1;
	r = edit(f, &m, "T1");
	assert_string_equal(denied(r), "not_editable");
	assert_string_equal(fact(r, "state"), "claimed");
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, 0, 0));
	assert_granted(settle(f, run, NULL));
	assert_string_equal(denied(edit(f, &m, "T1")), "not_editable");
	assert_int_equal(errcode(edit(f, &m, "T9")), BERTH__ERROR_CODE__ERR_NOT_FOUND);
}

/* A new schedule replaces the queued activation: later, then now, then
 * every minute. */
static void
test_edit_schedule(void **state)
{
	struct fx *f = *state;
	Berth__Edit m = BERTH__EDIT__INIT;
	int64_t now = clock_wall_ms();

	add(f);
	m.has_at_ms = 1;
	m.at_ms = now + 3600000;
	assert_granted(edit(f, &m, "T1"));
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE state = 'queued'"), 1);
	berth__edit__init(&m);
	m.has_now = 1;
	m.now = 1;
	assert_granted(edit(f, &m, "T1"));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE state = 'queued'"), 1);
	berth__edit__init(&m);
	m.has_every_ms = 1;
	m.every_ms = 60000;
	assert_granted(edit(f, &m, "T1"));
	assert_int_equal(show(f, "T1")->every_ms, 60000);
	assert_granted(claim(f, NULL));
	berth__edit__init(&m);
	m.has_now = 1;
	m.now = 1;
	m.has_every_ms = 1;
	m.every_ms = 60000;
	add(f);
	assert_int_equal(errcode(edit(f, &m, "T2")), BERTH__ERROR_CODE__ERR_INVALID);
}

static void
test_remove(void **state)
{
	struct fx *f = *state;
	struct addopt on1 = { .after = "T1" };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	char run[40];
	const Berth__Reply *r;

	add(f);           /* T1 */
	add_opt(f, &on1); /* T2 after T1 */
	req.verb_case = BERTH__REQUEST__VERB_REMOVE;
	req.remove = &ref;
	ref.id = "T1";
	req.has_req_id = 0; /* a new request each time, not a repeat */
	r = ex(f, &req);
	assert_string_equal(denied(r), "not_finished");
	assert_string_equal(fact(r, "state"), "ready");
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	/* T2 waits for it (it ran; T2 may yet): kept. */
	ref.id = "T1";
	req.has_req_id = 0; /* a new request each time, not a repeat */
	r = ex(f, &req);
	assert_string_equal(denied(r), "has_dependents");
	assert_string_equal(fact(r, "dependent"), "T2");
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, "T2"));
	ref.id = "T1";
	req.has_req_id = 0; /* a new request each time, not a repeat */
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(r->granted->removed->n_tickets, 1);
	assert_string_equal(r->granted->removed->tickets[0], "T1");
	assert_int_equal(r->granted->removed->n_runs, 1);
	assert_string_equal(r->granted->removed->runs[0], run);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM activations WHERE ticket = 1"), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM ticket_deps"), 0);
	assert_int_equal(errcode(show_rep(f, "T1")), BERTH__ERROR_CODE__ERR_NOT_FOUND);
	/* The number is never given again. */
	ref.id = "T2";
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	assert_string_equal(add(f), "T3");
}

static void
test_clean(void **state)
{
	struct fx *f = *state;
	struct addopt on2 = { .after = "T2" };
	char run[40];
	const Berth__Reply *r;

	add(f);           /* T1: will succeed */
	add(f);           /* T2: will fail, T3 waits for it ... */
	add_opt(f, &on2); /* T3 */
	add(f);           /* T4: stays ready */
	run_to_exit(f, "T1", 0, run);
	assert_granted(settle(f, run, NULL));
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, "T2"));
	/* ... so T3 ends dependency_failed: finished too. */
	assert_string_equal(show(f, "T3")->state, "dependency_failed");
	/* Nothing finished an hour ago. */
	r = clean(f, 3600000, NULL);
	assert_granted(r);
	assert_int_equal(r->granted->removed->n_tickets, 0);
	assert_int_equal(errcode(clean(f, 0, "ready")), BERTH__ERROR_CODE__ERR_INVALID);
	r = clean(f, 0, "succeeded");
	assert_int_equal(r->granted->removed->n_tickets, 1);
	assert_string_equal(r->granted->removed->tickets[0], "T1");
	assert_int_equal(r->granted->removed->n_runs, 1);
	r = clean(f, 0, NULL);
	assert_int_equal(r->granted->removed->n_tickets, 2);
	assert_string_equal(r->granted->removed->tickets[0], "T2");
	assert_string_equal(r->granted->removed->tickets[1], "T3");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 1);
	assert_string_equal(show(f, "T4")->state, "ready");
}

/* A finished ticket a queued one waits for is kept, and named. */
static void
test_clean_keeps_a_dependency(void **state)
{
	struct fx *f = *state;
	struct addopt any1 = { .after = "T1", .after_any = 1 };
	const Berth__Reply *r;

	add(f);            /* T1 */
	add_opt(f, &any1); /* T2 after any end of T1, held back by hold below */
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_HOLD, "T2"));
	assert_granted(ticket_verb(f, BERTH__REQUEST__VERB_CANCEL, "T1"));
	r = clean(f, 0, NULL);
	assert_int_equal(r->granted->removed->n_tickets, 0);
	assert_int_equal(r->granted->removed->n_kept, 1);
	assert_string_equal(r->granted->removed->kept[0], "T1");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_edit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_edit_schedule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_keeps_a_dependency, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
