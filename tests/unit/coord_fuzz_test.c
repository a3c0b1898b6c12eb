/* The coordinator against hostile input: mutated valid requests (bit
 * flips, truncations, splices, absurd field values, missing sub-fields)
 * go through the path the server uses, coord_envelope_check() then
 * coord_exec_request(), and after each one the store must still hold its
 * invariants (DESIGN §3) and every reply must be a well-formed Reply.
 * Fixed seeds, a bounded number of inputs, a fake clock: the inputs are the
 * same on every run, except the run ids and tokens the coordinator hands
 * out, which are random (a failure prints the verb and request id). The
 * generator and the checks live in tests/fuzz/coord_fz.c, shared with the
 * libFuzzer harness, which draws the same choices from its input bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_fz.h"
#include "coord_db.h"
#include "rpc.h"

#define INPUTS      20000
#define NSEEDS      4
#define CHECK_EVERY 250

/* A broken check fails the running cmocka test (cmocka's _fail jumps back
 * to the runner; abort() only if it ever returned). */
void
cfz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_error(fmt, ap);
	va_end(ap);
	print_error("\n");
	_fail(file, line);
	abort();
}

static int64_t
sql_int(struct cfz *f, const char *sql)
{
	struct coord_st *st = coord_db_q_once(f->s, sql, "");
	int64_t v = -1;

	assert_non_null(st);
	if (coord_db_step(f->s, st) == 1)
		v = coord_db_i64(st, 0);
	coord_db_free(st);
	return v;
}

static void
fuzz_seed(uint64_t seed)
{
	struct cfz *f = calloc(1, sizeof *f);
	size_t cap = 512 * 1024;
	uint8_t *buf = malloc(cap);
	/* one stored request, replayed after a reopen */
	uint8_t *kept = NULL, *kept_reply = NULL;
	size_t kept_len = 0, kept_reply_len = 0;
	char dir[64], path[128], cmd[128];
	int i;

	assert_non_null(f);
	assert_non_null(buf);
	f->rng = seed;
	snprintf(dir, sizeof dir, "/tmp/coord_fuzz_test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/berth.db", dir);
	cfz_open(f, path, 1700000000000LL);

	for (i = 0; i < INPUTS / NSEEDS; i++) {
		Berth__Request q = BERTH__REQUEST__INIT, *dq;
		Berth__Reply *r;
		size_t len;
		int replayed, damaged = 0;

		/* time moves on, now and then by a lot (leases lapse, activations
		 * fall due, seats go stale) */
		f->now +=
			cfz_rn(f, 50) == 0 ? (int64_t)cfz_rn(f, 3600000) : (int64_t)cfz_rn(f, 2000);
		clock_fake_set(f->now);

		cfz_build(f, &q);
		len = berth__request__get_packed_size(&q);
		if (len > cap) {
			cfz_free_all(f);
			continue;
		}
		berth__request__pack(&q, buf);
		if (cfz_rn(f, 4) == 0) {
			len = cfz_mutate(f, buf, len, cap);
			damaged = 1;
		}
		cfz_free_all(f);

		r = cfz_feed(f, buf, len, &dq, &replayed);
		cfz_check_store(f, i % CHECK_EVERY == 0);
		if (r == NULL)
			continue;
		cfz_learn(f, dq, r);
		/* a retry of what was just decided */
		if (!replayed && cfz_rn(f, 5) == 0)
			cfz_check_replay(f, buf, len, dq, r);
		/* keep one decided mutation to replay after a reopen */
		if (!replayed && !damaged && cfz_replayable(dq, r) && cfz_rn(f, 20) == 0) {
			free(kept);
			kept = malloc(len + 1);
			memcpy(kept, buf, len);
			kept_len = len;
			free(kept_reply);
			kept_reply_len = berth__reply__get_packed_size(r);
			kept_reply = malloc(kept_reply_len + 1);
			berth__reply__pack(r, kept_reply);
		}
		berth__reply__free_unpacked(r, NULL);
		berth__request__free_unpacked(dq, NULL);

		/* a coordinator restart: the kept request still replays */
		if (i % 1000 == 999 && kept != NULL) {
			Berth__Reply *first;

			cfz_reopen(f);
			cfz_check_store(f, 1);
			first = berth__reply__unpack(NULL, kept_reply_len, kept_reply);
			assert_non_null(first);
			r = cfz_feed(f, kept, kept_len, &dq, &replayed);
			assert_non_null(r);
			berth__reply__free_unpacked(r, NULL);
			cfz_check_replay(f, kept, kept_len, dq, first);
			berth__request__free_unpacked(dq, NULL);
			berth__reply__free_unpacked(first, NULL);
		}
	}
	cfz_check_store(f, 1);
	print_message("seed %llu: %d decided (%d granted, %d replays), %d refused, %d runs"
		      " (%lld settled, %lld succeeded)\n",
		      (unsigned long long)seed, f->decided, f->granted, f->replays, f->refused,
		      f->nruns,
		      (long long)sql_int(f, "SELECT count(*) FROM runs WHERE settled_ms > 0"),
		      (long long)sql_int(f, "SELECT count(*) FROM runs WHERE state = 'succeeded'"));
	/* the fuzzer must have reached deep: runs were claimed and replays checked */
	assert_true(f->granted > 100);
	assert_true(f->replays > 50);

	cfz_close(f);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(kept);
	free(kept_reply);
	free(f);
	free(buf);
}

static void
test_fuzz_seed1(void **state)
{
	(void)state;
	fuzz_seed(0x9e3779b97f4a7c15ULL);
}

static void
test_fuzz_seed2(void **state)
{
	(void)state;
	fuzz_seed(0xd1b54a32d192ed03ULL);
}

static void
test_fuzz_seed3(void **state)
{
	(void)state;
	fuzz_seed(0x2545f4914f6cdd1dULL);
}

static void
test_fuzz_seed4(void **state)
{
	(void)state;
	fuzz_seed(0xbf58476d1ce4e5b9ULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_seed1),
		cmocka_unit_test(test_fuzz_seed2),
		cmocka_unit_test(test_fuzz_seed3),
		cmocka_unit_test(test_fuzz_seed4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
