/* The worker verbs (coordinator/coord_worker.c): the token, and the bound
 * on the free text workers and seat holders write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_worker_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_text_bounded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
