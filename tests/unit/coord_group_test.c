/* berth slots, pause, resume (coordinator/coord_group.c and
 * coord_settings.c): the claim guard follows them, the supervisor is told
 * its slots in every claim and renew reply, and a new launch forgets them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "coord_settings.h"

static const Berth__Reply *
hello(struct fx *f, const char *instance, uint32_t slots)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello h = BERTH__HELLO__INIT;

	h.has_slots = 1;
	h.slots = slots;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &h;
	req.instance = (char *)instance;
	req.actor = "supervisor";
	return ex(f, &req);
}

static const Berth__Reply *
group(struct fx *f, Berth__Request__VerbCase v, int slots)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Slots s = BERTH__SLOTS__INIT;
	Berth__GroupRef g = BERTH__GROUP_REF__INIT;

	req.verb_case = v;
	if (v == BERTH__REQUEST__VERB_SLOTS) {
		s.has_slots = slots >= 0;
		s.slots = (uint32_t)slots;
		req.slots = &s;
	} else {
		req.pause = &g;
	}
	return ex(f, &req);
}

/* One slot from hello; berth slots 3 lets three runs be claimed, and each
 * grant tells the supervisor 3; back to 1 refuses the next (running jobs
 * go on: nothing is stopped). */
static void
test_slots(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;
	char run[40];
	int i;

	assert_granted(hello(f, "sup", 1));
	for (i = 0; i < 5; i++)
		add(f);
	r = claim_as(f, f->db, NULL, 0, "sup");
	assert_granted(r);
	assert_int_equal(r->granted->claim->slots, 1);
	r = claim_as(f, f->db, NULL, 0, "sup");
	assert_string_equal(denied(r), "slots_full");
	assert_string_equal(fact(r, "slots"), "1");
	r = group(f, BERTH__REQUEST__VERB_SLOTS, 3);
	assert_granted(r);
	assert_int_equal(r->granted->group->slots, 3);
	assert_int_equal(r->granted->group->supervisor_slots, 1);
	r = claim_as(f, f->db, NULL, 0, "sup");
	assert_granted(r);
	assert_int_equal(r->granted->claim->slots, 3);
	snprintf(run, sizeof run, "%s", r->granted->claim->run_id);
	assert_granted(claim_as(f, f->db, NULL, 0, "sup"));
	assert_string_equal(denied(claim_as(f, f->db, NULL, 0, "sup")), "slots_full");
	/* A busy supervisor learns it from its renewals. */
	assert_granted(start(f, run));
	assert_granted(group(f, BERTH__REQUEST__VERB_SLOTS, 1));
	/* (renew goes as instance "test", which said no hello: 1 is the
	 * group's number, not its own) */
	r = renew(f, NULL, run);
	assert_granted(r);
	assert_true(r->granted->lease->has_slots);
	assert_int_equal(r->granted->lease->slots, 1);
	assert_string_equal(denied(claim_as(f, f->db, NULL, 0, "sup")), "slots_full");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE settled_ms IS NULL"), 3);
	/* 0: the supervisors' own again; more than 1024 is refused. */
	assert_int_equal(group(f, BERTH__REQUEST__VERB_SLOTS, 0)->granted->group->slots, 0);
	assert_int_equal(errcode(group(f, BERTH__REQUEST__VERB_SLOTS, 1025)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(group(f, BERTH__REQUEST__VERB_SLOTS, -1)),
			 BERTH__ERROR_CODE__ERR_INVALID);
}

/* Paused, nothing is claimed, and a claim for the next ticket decided
 * nothing (it waits, held, for the resume, which wakes it); running runs
 * are not touched. */
static void
test_pause_resume(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;
	char run[40];

	add(f);
	add(f);
	claim_ok(f, "T1", run, NULL);
	assert_granted(start(f, run));
	r = group(f, BERTH__REQUEST__VERB_PAUSE, 0);
	assert_granted(r);
	assert_true(r->granted->group->paused);
	assert_true(f->res.wake);
	r = claim(f, NULL);
	assert_string_equal(denied(r), "paused");
	assert_true(f->res.decided_nothing);
	assert_string_equal(denied(claim(f, "T2")), "paused");
	assert_string_equal(show(f, "T1")->runs[0]->state, "running");
	assert_granted(record_exit(f, run, 1, 0, 0));
	assert_granted(settle(f, run, NULL));
	r = group(f, BERTH__REQUEST__VERB_RESUME, 0);
	assert_granted(r);
	assert_false(r->granted->group->paused);
	assert_true(f->res.wake);
	r = claim(f, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->claim->ticket, "T2");
}

/* The settings outlive a restart of the coordinator under the same launch
 * and are forgotten by the next launch. */
static void
test_launch_forgets(void **state)
{
	struct fx *f = *state;
	struct coord_settings s;

	assert_int_equal(coord_settings_launch(f->db, "aaaa"), 1);
	assert_granted(group(f, BERTH__REQUEST__VERB_PAUSE, 0));
	assert_granted(group(f, BERTH__REQUEST__VERB_SLOTS, 4));
	assert_int_equal(coord_settings_launch(f->db, "aaaa"), 0);
	assert_int_equal(coord_settings_launch(f->db, ""), 0);
	assert_int_equal(coord_settings_get(f->db, &s), 0);
	assert_true(s.paused);
	assert_int_equal(s.slots, 4);
	assert_int_equal(coord_settings_launch(f->db, "bbbb"), 1);
	assert_int_equal(coord_settings_get(f->db, &s), 0);
	assert_false(s.paused);
	assert_int_equal(s.slots, 0);
}

/* On a shared store the settings are each host's (DESIGN §13): one host's
 * pause, slots and new launch leave another host's alone. */
static void
test_settings_per_host(void **state)
{
	struct fx *f = *state;
	struct coord_host *h = coord_db_host(f->db);
	struct coord_settings s;

	snprintf(h->id, sizeof h->id, "h1");
	assert_int_equal(coord_settings_launch(f->db, "aaaa"), 1);
	assert_granted(group(f, BERTH__REQUEST__VERB_PAUSE, 0));
	assert_granted(group(f, BERTH__REQUEST__VERB_SLOTS, 4));
	snprintf(h->id, sizeof h->id, "h2");
	assert_int_equal(coord_settings_get(f->db, &s), 0);
	assert_false(s.paused);
	assert_int_equal(s.slots, 0);
	assert_int_equal(coord_settings_launch(f->db, "bbbb"), 1);
	snprintf(h->id, sizeof h->id, "h1");
	assert_int_equal(coord_settings_get(f->db, &s), 0);
	assert_true(s.paused);
	assert_int_equal(s.slots, 4);
	assert_int_equal(coord_settings_launch(f->db, "aaaa"), 0);
	h->id[0] = '\0';
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pause_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_forgets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings_per_host, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
