/*
 * Wall and monotonic time in milliseconds, with a fake clock for tests.
 *
 * Every decision that compares times reads these functions, so a test that
 * sets the fake clock controls lease expiry, due activations and backoff
 * without sleeping. The fake is atomic because nng callbacks may read the
 * clock from their own threads.
 */
#include <stdatomic.h>
#include <time.h>

#include "clock.h"

static atomic_int clock_faked;
static _Atomic int64_t clock_fake_ms;

static int64_t
clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_wall_ms(void)
{
	if (atomic_load(&clock_faked))
		return atomic_load(&clock_fake_ms);
	return clock_read(CLOCK_REALTIME);
}

/* While faked, monotonic time is the fake wall time: both advance together,
 * which is all a test of deadlines needs. */
int64_t
clock_mono_ms(void)
{
	if (atomic_load(&clock_faked))
		return atomic_load(&clock_fake_ms);
	return clock_read(CLOCK_MONOTONIC);
}

void
clock_fake_set(int64_t wall_ms)
{
	atomic_store(&clock_fake_ms, wall_ms);
	atomic_store(&clock_faked, 1);
}

/* Advancing a clock that is not faked starts faking from the real time, so
 * a test never jumps back to the epoch by accident. */
void
clock_fake_advance(int64_t delta_ms)
{
	if (!atomic_load(&clock_faked))
		clock_fake_set(clock_read(CLOCK_REALTIME));
	atomic_fetch_add(&clock_fake_ms, delta_ms);
}

void
clock_fake_clear(void)
{
	atomic_store(&clock_faked, 0);
}
