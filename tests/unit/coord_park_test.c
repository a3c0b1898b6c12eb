/* Held claims (coordinator/coord_park.c): arrival order, the latest answer
 * kept, deadlines, and when the loop tries them again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coord_park.h"

static const uint8_t none[1];

static struct coord_pending *
pending(int64_t deadline_us)
{
	struct coord_pending *p = calloc(1, sizeof *p);

	assert_non_null(p);
	p->deadline_us = deadline_us;
	return p;
}

static void
free_list(struct coord_pending *p)
{
	struct coord_pending *next;

	for (; p != NULL; p = next) {
		next = p->next;
		coord_pending_free(p);
	}
}

/* Held in arrival order, each with its latest answer; taken out whole. */
static void
test_hold_and_take(void **state)
{
	struct coord_park pk;
	struct coord_pending *a = pending(10), *b = pending(20), *t;
	const uint8_t one[] = "one", two[] = "two!";

	(void)state;
	coord_park_init(&pk);
	coord_park_hold(&pk, a, one, sizeof one);
	coord_park_hold(&pk, b, one, sizeof one);
	t = coord_park_take(&pk, 0, 0);
	assert_null(pk.head);
	assert_ptr_equal(t, a);
	assert_ptr_equal(t->next, b);
	assert_null(b->next);
	/* Held again with a newer answer: the newer one is kept. */
	coord_park_hold(&pk, a, two, sizeof two);
	assert_int_equal(a->last_len, sizeof two);
	assert_memory_equal(a->last, two, sizeof two);
	coord_park_hold(&pk, b, one, sizeof one);
	free_list(coord_park_take(&pk, 0, 0));
}

/* Taking the expired leaves the others held, in their order. */
static void
test_take_expired(void **state)
{
	struct coord_park pk;
	struct coord_pending *a = pending(30), *b = pending(10), *c = pending(40), *t;

	(void)state;
	coord_park_init(&pk);
	coord_park_hold(&pk, a, none, 0);
	coord_park_hold(&pk, b, none, 0);
	coord_park_hold(&pk, c, none, 0);
	assert_false(coord_park_expired(&pk, 9));
	assert_true(coord_park_expired(&pk, 10));
	t = coord_park_take(&pk, 1, 30);
	assert_ptr_equal(t, a);
	assert_ptr_equal(t->next, b);
	assert_null(b->next);
	assert_ptr_equal(pk.head, c);
	assert_null(c->next);
	free_list(t);
	free_list(coord_park_take(&pk, 0, 0));
}

/* The loop sleeps until the nearest of: a deadline, the next wake-up, the
 * safety-net retry, its own beat. */
static void
test_sleep_ms(void **state)
{
	struct coord_park pk;
	struct coord_pending *a = pending(50 * 1000);

	(void)state;
	coord_park_init(&pk);
	coord_park_hold(&pk, a, none, 0);
	pk.retried_us = 0;
	/* now 10 ms: the deadline in 40 ms, nothing due, beat 1000 */
	assert_int_equal(coord_park_sleep_ms(&pk, 10 * 1000, 5000, INT64_MAX, 1000), 40);
	/* the next wake-up in 7 ms comes first, and is kept */
	assert_int_equal(coord_park_sleep_ms(&pk, 10 * 1000, 5000, 5007, 1000), 7);
	assert_int_equal(pk.next_due, 5007);
	/* a deadline passed: no sleep */
	assert_int_equal(coord_park_sleep_ms(&pk, 60 * 1000, 5000, INT64_MAX, 1000), 0);
	free_list(coord_park_take(&pk, 0, 0));
	/* the safety net: COORD_PARK_RETRY_MS after the last retry */
	a = pending(INT64_MAX / 2);
	coord_park_hold(&pk, a, none, 0);
	pk.retried_us = 1000 * 1000;
	assert_int_equal(coord_park_sleep_ms(&pk, 1000 * 1000 + 4900 * 1000, 0, INT64_MAX, 1000),
			 COORD_PARK_RETRY_MS - 4900);
	free_list(coord_park_take(&pk, 0, 0));
}

/* Tried again on a wake, once the next wake-up has come, and after the
 * safety-net interval; each retry is remembered. */
static void
test_retry_now(void **state)
{
	struct coord_park pk;
	int64_t now = 100 * 1000 * 1000;

	(void)state;
	coord_park_init(&pk);
	pk.retried_us = now;
	assert_false(coord_park_retry_now(&pk, 0, now + 1000, 5000));
	assert_true(coord_park_retry_now(&pk, 1, now + 1000, 5000));
	assert_int_equal(pk.retried_us, now + 1000);
	pk.next_due = 6000;
	assert_false(coord_park_retry_now(&pk, 0, now + 2000, 5999));
	assert_true(coord_park_retry_now(&pk, 0, now + 2000, 6000));
	assert_int_equal(pk.next_due, INT64_MAX);
	assert_false(coord_park_retry_now(&pk, 0, now + 3000, 7000));
	assert_true(coord_park_retry_now(&pk, 0, now + 2000 + COORD_PARK_RETRY_MS * 1000, 7000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_and_take),
		cmocka_unit_test(test_take_expired),
		cmocka_unit_test(test_sleep_ms),
		cmocka_unit_test(test_retry_now),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
