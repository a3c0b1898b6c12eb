/* clock: real wall and monotonic time, and the fake clock tests rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

static int
teardown(void **state)
{
	clock_fake_clear();
	return 0;
}

/* The real clock around the call, read the way the kernel keeps it: time()
 * reads a coarse copy that may lag by a tick, which across a second boundary
 * could put "after" before "now" (the test failed once under load). */
static int64_t
real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
test_wall_is_epoch_ms(void **state)
{
	int64_t before = real_ms(), now = clock_wall_ms(), after = real_ms();

	assert_true(now >= before && now <= after);
}

static void
test_mono_never_goes_back(void **state)
{
	int64_t a = clock_mono_ms(), b;
	struct timespec ts = { 0, 20 * 1000000L };

	nanosleep(&ts, NULL);
	b = clock_mono_ms();
	assert_true(b >= a + 20);
}

static void
test_fake_set_fixes_both_clocks(void **state)
{
	clock_fake_set(1000000);
	assert_int_equal(clock_wall_ms(), 1000000);
	assert_int_equal(clock_mono_ms(), 1000000);
	assert_int_equal(clock_wall_ms(), 1000000);
}

static void
test_fake_advance_moves_both(void **state)
{
	clock_fake_set(5000);
	clock_fake_advance(250);
	assert_int_equal(clock_wall_ms(), 5250);
	assert_int_equal(clock_mono_ms(), 5250);
	clock_fake_advance(-50);
	assert_int_equal(clock_wall_ms(), 5200);
}

static void
test_advance_without_set_starts_from_real_time(void **state)
{
	int64_t before = clock_wall_ms();

	clock_fake_advance(60000);
	assert_true(clock_wall_ms() >= before + 60000);
	assert_true(clock_wall_ms() < before + 61000);
}

static void
test_clear_restores_real_time(void **state)
{
	clock_fake_set(42);
	clock_fake_clear();
	assert_true(clock_wall_ms() > (int64_t)1600000000 * 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_wall_is_epoch_ms, teardown),
		cmocka_unit_test_teardown(test_mono_never_goes_back, teardown),
		cmocka_unit_test_teardown(test_fake_set_fixes_both_clocks, teardown),
		cmocka_unit_test_teardown(test_fake_advance_moves_both, teardown),
		cmocka_unit_test_teardown(test_advance_without_set_starts_from_real_time, teardown),
		cmocka_unit_test_teardown(test_clear_restores_real_time, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
