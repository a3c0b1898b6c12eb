/*
 * The skeleton of an actor's main (common/actor.c): signals arrive on the
 * signalfd and never run logic, a stop signal ends the tick loop between
 * ticks, a tick that cannot go on ends it with failure, and the tick's
 * delay is kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor.h"
#include "clock.h"
#include "failpoint.h"

static int sigfd = -1;
static char home[] = "/tmp/actor_test.XXXXXX";

/* actor_init checks its home: a private one, made once. */
static const char *
test_home(void)
{
	static int made;

	if (!made && mkdtemp(home) != NULL)
		made = 1;
	return home;
}

static int
setup(void **state)
{
	static const int extra[] = { SIGCHLD, 0 };
	int usage;

	unsetenv("BERTH_FAILPOINTS");
	if (sigfd == -1)
		sigfd = actor_init(test_home(), extra, &usage);
	return sigfd >= 0 ? 0 : -1;
}

struct count {
	int ticks;
	int stop_at; /* raise SIGTERM at this tick */
	int fail_at; /* return -1 at this tick */
	int64_t delay;
	int64_t first_ms, last_ms;
};

static int64_t
tick(void *arg)
{
	struct count *c = arg;

	c->ticks++;
	if (c->ticks == 1)
		c->first_ms = clock_mono_ms();
	c->last_ms = clock_mono_ms();
	if (c->ticks == c->fail_at)
		return -1;
	if (c->ticks == c->stop_at)
		kill(getpid(), SIGTERM); /* blocked: pending until the loop reads it */
	return c->delay;
}

/* A SIGTERM raised during a tick ends the loop after it, with success. */
static void
test_stop_between_ticks(void **state)
{
	struct count c = { .stop_at = 3, .delay = 10 };

	assert_int_equal(actor_tick_loop(sigfd, tick, &c), 0);
	assert_int_equal(c.ticks, 3);
	/* Ticks are the tick's delay apart. */
	assert_true(c.last_ms - c.first_ms >= 20);
}

static void
test_failed_tick_ends_the_loop(void **state)
{
	struct count c = { .fail_at = 2, .delay = 1 };

	assert_int_equal(actor_tick_loop(sigfd, tick, &c), -1);
	assert_int_equal(c.ticks, 2);
}

static void
test_signals_read(void **state)
{
	int chld = 0;

	assert_int_equal(actor_signals_read(sigfd, &chld), 0);
	assert_false(chld);
	kill(getpid(), SIGCHLD);
	assert_int_equal(actor_signals_read(sigfd, &chld), 0);
	assert_true(chld);
	kill(getpid(), SIGINT);
	kill(getpid(), SIGCHLD);
	assert_int_equal(actor_signals_read(sigfd, &chld), 1);
	assert_true(chld);
	/* Nothing pending any more. */
	assert_int_equal(actor_signals_read(sigfd, &chld), 0);
	assert_false(chld);
}

/* Bad failpoints are a usage error the main reports as one. */
static void
test_bad_failpoints(void **state)
{
	int usage = 0;

	setenv("BERTH_FAILPOINTS", "no.such.point=crash", 1);
	assert_int_equal(actor_init(test_home(), NULL, &usage), -1);
	assert_true(usage);
	unsetenv("BERTH_FAILPOINTS");
	fp_reset();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_stop_between_ticks, setup),
		cmocka_unit_test_setup(test_failed_tick_ends_the_loop, setup),
		cmocka_unit_test_setup(test_signals_read, setup),
		cmocka_unit_test_setup(test_bad_failpoints, setup),
	};

	int rv = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	if (strcmp(home + 5, "actor_test.XXXXXX") != 0 && system(cmd) != 0)
		rv = 1;
	return rv;
}
