/* satelle's seat lease (coordinator/coord_seats.c, docs/SEATS.md): an
 * in-flight transition deduped, confirmed or cleared, healed by its TTL or
 * by its process gone; task seats that neither block nor are blocked; the
 * live seats only; the time an activity was stamped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "clock.h"

/* ------------------------------------------------------------ satelle's lease */

static const Berth__Reply *
activity(struct fx *f, const char *item, int64_t i, int64_t n, const char *label)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatActivity m = BERTH__SEAT_ACTIVITY__INIT;

	m.item = (char *)item;
	m.has_index = m.has_total = 1;
	m.index = i;
	m.total = n;
	m.label = (char *)label;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
	req.seat_activity = &m;
	return ex(f, &req);
}

/* A second engage while a transition is in flight is deduped (satelle's
 * OutcomeInFlight): the holder's own in-flight acquire is denied in_flight;
 * a plain acquire by the holder is still already_held, and anyone else
 * meets the usual conflict. */
static void
test_seat_in_flight_dedupe(void **state)
{
	struct fx *f = *state;
	struct seatopt fl = { .in_flight = 1, .kind = "story", .state = "planning" };
	const Berth__Reply *r;
	const Berth__Seat *st;

	r = seat_acquire(f, "a", "alice@h", &fl);
	assert_string_equal(outcome(r), "acquired");
	st = r->granted->seat->seat;
	assert_true(st->in_flight);
	assert_false(st->in_flight_healed);
	assert_int_equal(st->in_flight_ms, T0);
	assert_string_equal(st->kind, "story");
	assert_string_equal(st->state, "planning");
	clock_fake_set(T0 + 3000);
	r = seat_acquire(f, "a", "alice@h", &fl);
	assert_string_equal(denied(r), "in_flight");
	assert_string_equal(fact(r, "holder"), "a");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_string_equal(fact(r, "in_flight_age_ms"), "3000");
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "already_held");
	assert_true(seat_show(f, "a")->in_flight);
	assert_int_equal(seat_show(f, "a")->in_flight_ms, T0);
	assert_string_equal(denied(seat_acquire(f, "a", "bob@h", &fl)), "conflict");
	assert_int_equal(seat_count(f), 1);
}

/* Confirm ends the transition with the state it committed; the next
 * engage of the holder goes ahead. Owner-only; a seat that is not there
 * cannot be confirmed. */
static void
test_seat_confirm(void **state)
{
	struct fx *f = *state;
	struct seatopt fl = { .in_flight = 1, .state = "planning" };
	const Berth__Reply *r;
	const Berth__Seat *st;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &fl)), "acquired");
	assert_string_equal(outcome(activity(f, "a", 1, 3, "gate")), "activity");
	assert_int_equal(seat_show(f, "a")->activity_index, 1);
	assert_string_equal(denied(seat_confirm(f, "a", "bob@h", "implementing")), "not_owner");
	assert_true(seat_show(f, "a")->in_flight);
	clock_fake_set(T0 + 1000);
	r = seat_confirm(f, "a", "alice@h", "implementing");
	assert_string_equal(outcome(r), "confirmed");
	st = seat_show(f, "a");
	assert_string_equal(st->state, "implementing");
	assert_false(st->in_flight);
	assert_false(st->in_flight_healed);
	assert_false(st->has_in_flight_ms);
	/* the activity described the transition: it is gone with it */
	assert_false(st->has_activity_index);
	/* the heartbeat is the holder's own business */
	assert_int_equal(st->heartbeat_ms, T0);
	r = seat_acquire(f, "a", "alice@h", &(struct seatopt){ .in_flight = 1 });
	assert_string_equal(outcome(r), "already_held");
	assert_true(r->granted->seat->seat->in_flight);
	assert_string_equal(r->granted->seat->seat->state, "implementing");
	assert_int_equal(errcode(seat_confirm(f, "nope", "alice@h", "x")),
			 BERTH__ERROR_CODE__ERR_NOT_FOUND);
	assert_int_equal(errcode(seat_confirm(f, "a", "alice@h", "")),
			 BERTH__ERROR_CODE__ERR_INVALID);
}

/* Clear drops the mark and keeps the state (a gate said no: the step may
 * be tried again). Owner-only; clearing a seat that is not there is
 * success, like releasing one. */
static void
test_seat_clear(void **state)
{
	struct fx *f = *state;
	struct seatopt fl = { .in_flight = 1, .state = "planning" };

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &fl)), "acquired");
	assert_string_equal(denied(seat_verb(f, BERTH__REQUEST__VERB_SEAT_CLEAR, "a", "bob@h")),
			    "not_owner");
	assert_string_equal(outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_CLEAR, "a", "alice@h")),
			    "cleared");
	assert_false(seat_show(f, "a")->in_flight);
	assert_string_equal(seat_show(f, "a")->state, "planning");
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &fl)), "already_held");
	assert_true(seat_show(f, "a")->in_flight);
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_CLEAR, "gone", "alice@h")),
		"already_free");
}

/* An in-flight mark older than its TTL heals itself (the seat's TTL when
 * it has none of its own): the holder's next engage goes ahead, and the
 * transition's activity is no longer shown, though the holder is live. */
static void
test_seat_in_flight_heals_by_ttl(void **state)
{
	struct fx *f = *state;
	struct seatopt fl = {
		.key = "k", .ttl_ms = 60000, .in_flight = 1, .in_flight_ttl_ms = 2000
	};
	struct seatopt fl2 = { .key = "k", .ttl_ms = 5000, .in_flight = 1 };
	const Berth__Reply *r;
	const Berth__Seat *st;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &fl)), "acquired");
	assert_int_equal(seat_show(f, "a")->in_flight_ttl_ms, 2000);
	assert_string_equal(outcome(activity(f, "a", 2, 4, "tests")), "activity");
	clock_fake_set(T0 + 2000); /* exactly the TTL: still in flight */
	assert_string_equal(denied(seat_acquire(f, "a", "alice@h", &fl)), "in_flight");
	clock_fake_set(T0 + 2001);
	st = seat_show(f, "a");
	assert_false(st->stale);
	assert_false(st->in_flight);
	assert_true(st->in_flight_healed);
	assert_false(st->has_activity_index);
	r = seat_acquire(f, "a", "alice@h", &fl);
	assert_string_equal(outcome(r), "already_held");
	assert_true(r->granted->seat->seat->in_flight);
	assert_int_equal(r->granted->seat->seat->in_flight_ms, T0 + 2001);

	/* no TTL of its own: the seat's */
	clock_fake_set(T0);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &fl2)), "acquired");
	clock_fake_set(T0 + 3000);
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "b", "bob@h")),
		"heartbeat");
	clock_fake_set(T0 + 5000);
	assert_string_equal(denied(seat_acquire(f, "b", "bob@h", &fl2)), "in_flight");
	clock_fake_set(T0 + 5001);
	assert_false(seat_show(f, "b")->stale);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &fl2)), "already_held");
}

/* A mark whose process is gone heals at once (satelle's primary self-heal:
 * the transitioning process will never confirm); a live one dedupes. The
 * owner stays pid-less: the seat itself is live. */
static void
test_seat_in_flight_heals_by_dead_pid(void **state)
{
	struct fx *f = *state;
	struct ident dead, self;
	struct seatopt gone = { .in_flight = 1, .in_flight_ident = &dead };
	struct seatopt live = { .in_flight = 1, .in_flight_ident = &self };
	const Berth__Seat *st;

	dead_ident(&dead);
	assert_int_equal(ident_self(&self), 0);
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &gone)), "acquired");
	assert_string_equal(outcome(activity(f, "a", 1, 2, "half")), "activity");
	st = seat_show(f, "a");
	assert_false(st->stale);
	assert_null(st->owner_ident);
	assert_false(st->in_flight);
	assert_true(st->in_flight_healed);
	assert_int_equal(st->in_flight_ident->pid, dead.pid);
	assert_false(st->has_activity_index);
	/* the holder's next engage goes ahead, tied to a live process */
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &live)), "already_held");
	st = seat_show(f, "a");
	assert_true(st->in_flight);
	assert_int_equal(st->in_flight_ident->pid, self.pid);
	assert_string_equal(denied(seat_acquire(f, "a", "alice@h", &live)), "in_flight");
}

/* A task seat is visible to everyone, never blocked and never blocking:
 * not by key, not by tree, not runs. Its own item is still one seat. */
static void
test_seat_task_neither_blocks_nor_blocked(void **state)
{
	struct fx *f = *state;
	struct seatopt task = { .task = 1, .kind = "task", .workdir = "/w" };
	struct seatopt tree = { .workdir = "/w" };
	struct addopt keyed = { .key = "db" }, treed = { .workdir = "/w" };
	const Berth__Reply *r;
	char r1[40], r2[40];

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	/* never blocked: alice's single seat does not keep the task out */
	r = seat_acquire(f, "t", "bob@h", &task);
	assert_string_equal(outcome(r), "acquired");
	assert_true(r->granted->seat->seat->task);
	assert_string_equal(r->granted->seat->seat->kind, "task");
	/* the conflict names alice, not the task */
	r = seat_acquire(f, "c", "carol@h", NULL);
	assert_string_equal(denied(r), "conflict");
	assert_string_equal(fact(r, "holder"), "a");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "alice@h"));
	/* never blocking: by key, by tree, and runs */
	assert_string_equal(outcome(seat_acquire(f, "c", "carol@h", &tree)), "acquired");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "c", "carol@h"));
	add_opt(f, &keyed);
	add_opt(f, &treed);
	claim_ok(f, "T1", r1, NULL);
	claim_ok(f, "T2", r2, NULL);
	/* and a task comes in beside runs and seats */
	assert_string_equal(outcome(seat_acquire(f, "t2", "dave@h", &task)), "acquired");
	/* its item is its own */
	assert_string_equal(denied(seat_acquire(f, "t", "erin@h", &task)), "conflict");
	r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_LIST, NULL, NULL);
	assert_int_equal(r->granted->seats->n_seats, 4);
}

/* any-active: the live seats only (SeatList.live_only). */
static void
test_seat_list_live_only(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatList m = BERTH__SEAT_LIST__INIT;
	struct ident dead;
	struct seatopt gone = { .key = "k", .ident = &dead };
	struct seatopt co = { .key = "k" };
	const Berth__Reply *r;

	dead_ident(&dead);
	req.verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
	req.seat_list = &m;
	m.has_live_only = m.live_only = 1;
	assert_int_equal(ex(f, &req)->granted->seats->n_seats, 0);
	assert_string_equal(outcome(seat_acquire(f, "ghost", "gone@h", &gone)), "acquired");
	req.has_req_id = 0;
	assert_int_equal(ex(f, &req)->granted->seats->n_seats, 0);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &co)), "acquired");
	req.has_req_id = 0;
	r = ex(f, &req);
	assert_int_equal(r->granted->seats->n_seats, 1);
	assert_string_equal(r->granted->seats->seats[0]->item, "b");
	m.live_only = 0;
	req.has_req_id = 0;
	assert_int_equal(ex(f, &req)->granted->seats->n_seats, 2);
}

/* Activity carries the time it was stamped. */
static void
test_seat_activity_age(void **state)
{
	struct fx *f = *state;
	const Berth__Seat *st;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	clock_fake_set(T0 + 1000);
	assert_string_equal(outcome(activity(f, "a", 1, 2, "one")), "activity");
	clock_fake_set(T0 + 4000);
	st = seat_show(f, "a");
	assert_true(st->has_activity_ms);
	assert_int_equal(st->activity_ms, T0 + 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seat_in_flight_dedupe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_confirm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_in_flight_heals_by_ttl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_in_flight_heals_by_dead_pid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_seat_task_neither_blocks_nor_blocked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_seat_list_live_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_activity_age, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
