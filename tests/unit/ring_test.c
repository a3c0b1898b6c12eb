/*
 * The trace ring's invariant: a writer never waits, and a reader never
 * returns a torn record; what it cannot read intact it counts as lost.
 * Every record here is derived from one number, so a torn one (bytes of
 * two writes) fails rec_intact().
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
#include <sys/wait.h>
#include <unistd.h>

#include "ring.h"
#include "shm.h"

static char home[64];

static int
setup(void **state)
{
	snprintf(home, sizeof(home), "/tmp/ring_test.XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	shm_unlink_kind(home, SHM_RING);
	rmdir(home);
	return 0;
}

static void
rec_make(struct ring_rec *r, uint32_t writer, uint64_t i)
{
	memset(r, 0, sizeof(*r));
	r->ts_ms = (int64_t)i;
	r->kind = RING_SENT;
	r->pid = (int32_t)writer;
	snprintf(r->actor, sizeof(r->actor), "w%u", writer);
	snprintf(r->verb, sizeof(r->verb), "v%llu", (unsigned long long)i);
	snprintf(r->run, sizeof(r->run), "%032llx", (unsigned long long)(i * 7919 + writer));
	r->req_id = i;
	r->latency_us = (int64_t)(i ^ writer);
	snprintf(r->text, sizeof(r->text), "record %u/%llu %s", writer, (unsigned long long)i,
		 "................................................");
}

static int
rec_intact(const struct ring_rec *r)
{
	struct ring_rec want;

	rec_make(&want, (uint32_t)r->pid, r->req_id);
	return r->ts_ms == want.ts_ms && r->kind == want.kind &&
	       strcmp(r->actor, want.actor) == 0 && strcmp(r->verb, want.verb) == 0 &&
	       strcmp(r->run, want.run) == 0 && r->latency_us == want.latency_us &&
	       strcmp(r->text, want.text) == 0;
}

/* Records come back in order, whole, with their ring sequence. */
static void
test_roundtrip(void **state)
{
	struct ring *t = ring_open(home, 1);
	struct ring_rec r;
	uint64_t cur = 0, lost = 0, i;

	assert_non_null(t);
	assert_int_equal(ring_read(t, &cur, &r, &lost), 0);
	for (i = 0; i < 10; i++) {
		rec_make(&r, 1, i);
		ring_emit(t, &r);
	}
	for (i = 0; i < 10; i++) {
		assert_int_equal(ring_read(t, &cur, &r, &lost), 1);
		assert_true(rec_intact(&r));
		assert_int_equal(r.req_id, i);
		assert_int_equal(r.seq, i + 1);
	}
	assert_int_equal(ring_read(t, &cur, &r, &lost), 0);
	assert_int_equal(lost, 0);
	assert_int_equal(ring_head(t), 10);
	ring_close(t);
}

/* A reader that opens without create finds nothing until someone creates. */
static void
test_open_missing(void **state)
{
	assert_null(ring_open(home, 0));
}

/* A reader lapped by the writer counts exactly the overwritten records and
 * then reads the ones still present. */
static void
test_lapped_reader_counts_loss(void **state)
{
	struct ring *w = ring_open(home, 1), *rd = ring_open(home, 0);
	struct ring_rec r;
	uint64_t cur = 0, lost = 0, i, n = 0, total = 100 + 3 * RING_SLOTS + 17;

	assert_non_null(w);
	assert_non_null(rd);
	for (i = 0; i < 100; i++) {
		rec_make(&r, 1, i);
		ring_emit(w, &r);
	}
	for (i = 0; i < 50; i++)
		assert_int_equal(ring_read(rd, &cur, &r, &lost), 1);
	for (i = 100; i < total; i++) {
		rec_make(&r, 1, i);
		ring_emit(w, &r);
	}
	while (ring_read(rd, &cur, &r, &lost) == 1) {
		assert_true(rec_intact(&r));
		if (n == 0)
			assert_int_equal(r.req_id, total - RING_SLOTS);
		n++;
	}
	assert_int_equal(lost, total - RING_SLOTS - 50);
	assert_int_equal(n, RING_SLOTS);
	assert_int_equal(50 + lost + n, total);
	ring_close(w);
	ring_close(rd);
}

/* Writers in other processes run flat out while this slow reader keeps
 * getting lapped: every record it returns is intact, each writer's records
 * come in that writer's order, and read + lost accounts for every record. */
static void
ring_race(int nwriters, uint64_t per_writer)
{
	struct ring *t = ring_open(home, 1);
	struct ring_rec r;
	uint64_t cur = 0, lost = 0, n = 0, next[3] = { 0, 0, 0 }, iter = 0;
	pid_t pids[2];
	int i, w, status, alive;

	assert_non_null(t);
	/* One record read first, so the cursor is past 0 ("oldest present")
	 * and every later overwrite is counted. */
	rec_make(&r, 0, 0);
	ring_emit(t, &r);
	assert_int_equal(ring_read(t, &cur, &r, &lost), 1);
	for (i = 0; i < nwriters; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct ring *c = ring_open(home, 0);
			uint64_t k;

			if (c == NULL)
				_exit(2);
			for (k = 0; k < per_writer; k++) {
				rec_make(&r, (uint32_t)i + 1, k);
				ring_emit(c, &r);
			}
			_exit(0);
		}
	}
	alive = nwriters;
	for (;;) {
		int got = ring_read(t, &cur, &r, &lost);

		if (got == 1) {
			assert_true(rec_intact(&r));
			assert_true(r.pid >= 1 && r.pid <= nwriters);
			/* Per writer, strictly increasing. */
			assert_true(r.req_id >= next[r.pid]);
			next[r.pid] = r.req_id + 1;
			n++;
			/* A slow reader: once, it waits until it is lapped for
			 * sure (however the machine's load paces the writers;
			 * writers already done lapped it anyway), and it
			 * pauses now and then for more laps. */
			if (++iter == 256)
				for (w = 0; w < 10000 && ring_head(t) - cur <= RING_SLOTS + 100;
				     w++)
					usleep(1000);
			if (iter % 512 == 0)
				usleep(2000);
			continue;
		}
		if (alive == 0)
			break;
		for (i = 0; i < nwriters; i++) {
			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
				pids[i] = 0;
				alive--;
			}
		}
		usleep(1000);
	}
	assert_int_equal(cur, ring_head(t));
	assert_int_equal(n + lost, (uint64_t)nwriters * per_writer);
	/* The reader was in fact lapped, so the loss path ran. */
	assert_true(lost > 0);
	ring_close(t);
}

static void
test_one_writer_laps_slow_reader(void **state)
{
	ring_race(1, 100000);
}

static void
test_two_writer_processes(void **state)
{
	ring_race(2, 50000);
}

/* The sharpest race: the reader asks, over and over, for the oldest record
 * still present, the very cell a flat-out writer overwrites next. Whatever
 * comes back must be whole; the rest is counted lost. */
static void
test_reader_at_write_edge(void **state)
{
	struct ring *t = ring_open(home, 1);
	struct ring_rec r;
	uint64_t cur, lost = 0, head, got = 0, tries;
	pid_t pid;
	int status;

	assert_non_null(t);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ring *c = ring_open(home, 0);
		uint64_t j;

		for (j = 0; j < 500000; j++) {
			rec_make(&r, 1, j);
			ring_emit(c, &r);
		}
		_exit(0);
	}
	for (tries = 0; waitpid(pid, &status, WNOHANG) == 0; tries++) {
		head = ring_head(t);
		if (head <= RING_SLOTS)
			continue;
		cur = head - RING_SLOTS;
		if (ring_read(t, &cur, &r, &lost) == 1) {
			assert_true(rec_intact(&r));
			got++;
		}
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(got > 0);
	ring_close(t);
}

/* A writer killed mid-record (its cell's word left odd) neither stalls a
 * reader for good nor makes it return the half-written record: after its
 * patience the reader counts the cell lost and reads on. The kill lands at a
 * random moment of a flat-out writer, so over ten rounds most land inside a
 * record. */
static void
test_killed_writer(void **state)
{
	struct ring *t = ring_open(home, 1);
	struct ring_rec r;
	uint64_t cur = 0, lost = 0, j;
	pid_t pid;
	int k, status, found;
	int waits;

	assert_non_null(t);
	rec_make(&r, 2, 0);
	ring_emit(t, &r);
	assert_int_equal(ring_read(t, &cur, &r, &lost), 1);
	for (k = 1; k <= 10; k++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct ring *c = ring_open(home, 0);

			for (j = 0;; j++) {
				rec_make(&r, 1, j);
				ring_emit(c, &r);
			}
		}
		usleep(2000 + k * 317);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		rec_make(&r, 2, (uint64_t)k);
		ring_emit(t, &r);
		found = 0;
		for (waits = 0; waits < 500 && !found;) {
			if (ring_read(t, &cur, &r, &lost) == 0) {
				usleep(10000);
				waits++;
				continue;
			}
			assert_true(rec_intact(&r));
			if (r.pid == 2 && r.req_id == (uint64_t)k)
				found = 1;
		}
		assert_true(found);
		assert_int_equal(cur, ring_head(t));
	}
	ring_close(t);
}

/* The process-wide helper stamps actor, instance and pid. */
static void
test_global_emit(void **state)
{
	struct ring *t;
	struct ring_rec r;
	uint64_t cur = 0, lost = 0;

	ring_global_emit(RING_NOTE, "x", NULL, NULL, NULL, NULL, 0, 0, "before open");
	assert_int_equal(ring_global_open(home, "supervisor", "0123456789abcdef", 1), 0);
	ring_global_emit(RING_REPLY, "record_exit", "T3", "abcd", "denied", "already_claimed", 42,
			 1500, NULL);
	t = ring_open(home, 0);
	assert_non_null(t);
	assert_int_equal(ring_read(t, &cur, &r, &lost), 1);
	assert_int_equal(r.kind, RING_REPLY);
	assert_string_equal(r.actor, "supervisor");
	assert_string_equal(r.instance, "0123456789abcdef");
	assert_string_equal(r.verb, "record_exit");
	assert_string_equal(r.decision, "denied");
	assert_string_equal(r.reason, "already_claimed");
	assert_int_equal(r.req_id, 42);
	assert_int_equal(r.pid, getpid());
	assert_true(r.ts_ms > 0);
	assert_int_equal(ring_read(t, &cur, &r, &lost), 0);
	assert_string_equal(ring_kind_name(RING_FAILPOINT), "failpoint");
	ring_global_close();
	ring_close(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lapped_reader_counts_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_writer_laps_slow_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_writer_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_at_write_edge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_emit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
