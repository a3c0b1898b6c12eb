/* exitrec: the shim's exit record and started marker, in a temp run dir. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exitrec.h"

static char dir[64];

static int
setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/exitrec_test.XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
write_raw(const char *content)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/exit", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void
test_round_trip_exit_code(void **state)
{
	struct exit_record w = { .has_code = 1,
				 .code = 3,
				 .started_ms = 1796020251123LL,
				 .ended_ms = 1796020252000LL,
				 .utime_us = 1500,
				 .stime_us = 250,
				 .maxrss_kb = 4096 };
	struct exit_record r;

	assert_int_equal(exitrec_write(dir, &w), 0);
	memset(&r, 0x55, sizeof(r));
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.has_code, 1);
	assert_int_equal(r.code, 3);
	assert_int_equal(r.has_signal, 0);
	assert_int_equal(r.signal, 0);
	assert_int_equal(r.started_ms, w.started_ms);
	assert_int_equal(r.ended_ms, w.ended_ms);
	assert_int_equal(r.utime_us, 1500);
	assert_int_equal(r.stime_us, 250);
	assert_int_equal(r.maxrss_kb, 4096);
}

static void
test_round_trip_signal(void **state)
{
	struct exit_record w = { .has_signal = 1, .signal = 9, .started_ms = 1, .ended_ms = 2 };
	struct exit_record r;

	assert_int_equal(exitrec_write(dir, &w), 0);
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.has_signal, 1);
	assert_int_equal(r.signal, 9);
	assert_int_equal(r.has_code, 0);
}

static void
test_rewrite_replaces(void **state)
{
	struct exit_record a = { .has_code = 1, .code = 0 }, b = { .has_code = 1, .code = 1 };
	struct exit_record r;

	assert_int_equal(exitrec_write(dir, &a), 0);
	assert_int_equal(exitrec_write(dir, &b), 0);
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.code, 1);
}

static void
test_write_needs_exactly_one_of_code_and_signal(void **state)
{
	struct exit_record neither = { 0 }, both = { .has_code = 1, .has_signal = 1 };
	struct exit_record r;

	assert_int_equal(exitrec_write(dir, &neither), -1);
	assert_int_equal(exitrec_write(dir, &both), -1);
	assert_int_equal(exitrec_read(dir, &r), -ENOENT);
}

static void
test_missing_is_enoent(void **state)
{
	struct exit_record r;
	char path[128];

	assert_int_equal(exitrec_read(dir, &r), -ENOENT);
	snprintf(path, sizeof(path), "%s/nope", dir);
	assert_int_equal(exitrec_read(path, &r), -ENOENT);
}

static void
test_truncated_is_einval(void **state)
{
	struct exit_record r;

	write_raw("exit_code 3\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 40");
	assert_int_equal(exitrec_read(dir, &r), -EINVAL);
	write_raw("exit_code 3\nstarted_ms 1\nended_ms 2\n");
	assert_int_equal(exitrec_read(dir, &r), -EINVAL);
	write_raw("exit_co");
	assert_int_equal(exitrec_read(dir, &r), -EINVAL);
}

static void
test_garbage_is_einval(void **state)
{
	static const char *const bad[] = {
		"garbage\n",
		"\x01\x02\x03\n",
		"exit_code x\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"exit_code 300\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"exit_code -1\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"exit_code 1\nsignal 9\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"exit_code 1\nexit_code 2\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"started_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
		"exit_code 1 \nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n",
	};
	struct exit_record r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_raw(bad[i]);
		if (exitrec_read(dir, &r) != -EINVAL)
			fail_msg("accepted record %zu", i);
	}
}

static void
test_embedded_nul_is_einval(void **state)
{
	static const char rec[] = "exit_code 0\nstarted_ms 1\nended_ms 2\nutime_us 0\n"
				  "stime_us 0\nmaxrss_kb 4\n\0trailing\n";
	struct exit_record r;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/exit", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(rec, 1, sizeof(rec) - 1, f);
	fclose(f);
	assert_int_equal(exitrec_read(dir, &r), -EINVAL);
}

/* Later versions may add keys; this one ignores what it does not know. */
static void
test_unknown_keys_ignored(void **state)
{
	struct exit_record r;

	write_raw("exit_code 4\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\n"
		  "maxrss_kb 4\ncapture_bytes 100\n");
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.code, 4);
}

static void
test_started_marker(void **state)
{
	char path[128];
	struct stat st;

	assert_int_equal(exitrec_started(dir), 0);
	assert_int_equal(exitrec_mark_started(dir), 0);
	assert_int_equal(exitrec_started(dir), 1);
	snprintf(path, sizeof(path), "%s/started", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 0);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(exitrec_mark_started(path), -1);
}

static off_t
exit_size(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/exit", dir);
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* The reservation: EXITREC_SIZE bytes read as "not yet" (never as a
 * record, never as malformed); the commit overwrites it in place, same
 * size, with every fact, including the two a reservation adds room for. */
static void
test_reserve_then_commit(void **state)
{
	struct exit_record w = { .has_code = 1,
				 .code = 4,
				 .started_ms = 10,
				 .ended_ms = 20,
				 .utime_us = 1,
				 .stime_us = 2,
				 .maxrss_kb = 3,
				 .stragglers = 2,
				 .disk_full = 1 };
	struct exit_record r;
	int fd;

	assert_true((fd = exitrec_reserve(dir)) >= 0);
	assert_int_equal(exit_size(), EXITREC_SIZE);
	assert_int_equal(exitrec_read(dir, &r), -EINPROGRESS);
	assert_int_equal(exitrec_commit(fd, &w), 0);
	close(fd);
	assert_int_equal(exit_size(), EXITREC_SIZE);
	memset(&r, 0x55, sizeof(r));
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.code, 4);
	assert_int_equal(r.ended_ms, 20);
	assert_int_equal(r.stragglers, 2);
	assert_int_equal(r.disk_full, 1);
	/* A record already there is never reserved over. */
	assert_int_equal(exitrec_reserve(dir), -EEXIST);
	assert_int_equal(exitrec_read(dir, &r), 0);
}

/* A reservation whose content never reached the disk (a crash right after
 * its creation: empty, or its allocated blocks read as zeros) is a
 * reservation too, not a malformed record. */
static void
test_empty_or_zeros_is_reserved(void **state)
{
	static const char zeros[EXITREC_SIZE];
	struct exit_record r;

	write_raw("");
	assert_int_equal(exitrec_read(dir, &r), -EINPROGRESS);
	assert_int_equal(exitrec_parse(zeros, sizeof(zeros), &r), -EINPROGRESS);
}

/* An overwrite torn by a power loss mixes the old and the new bytes: the
 * sum refuses every such mix, either way round, at every cut. */
static void
test_torn_overwrite_is_einval(void **state)
{
	struct exit_record w = { .has_signal = 1, .signal = 9, .started_ms = 1, .ended_ms = 2 };
	char pending[EXITREC_SIZE], final[EXITREC_SIZE], mix[EXITREC_SIZE];
	struct exit_record r;
	size_t cut, pad;

	assert_int_equal(exitrec_format(NULL, pending, sizeof(pending)), EXITREC_SIZE);
	assert_int_equal(exitrec_format(&w, final, sizeof(final)), EXITREC_SIZE);
	assert_int_equal(exitrec_parse(final, sizeof(final), &r), 0);
	pad = (size_t)(strstr(final, "\npad ") + 1 - final);
	for (cut = 1; cut < EXITREC_SIZE; cut++) {
		int a, b;

		memcpy(mix, final, cut);
		memcpy(mix + cut, pending + cut, EXITREC_SIZE - cut);
		a = exitrec_parse(mix, sizeof(mix), &r);
		memcpy(mix, pending, cut);
		memcpy(mix + cut, final + cut, EXITREC_SIZE - cut);
		b = exitrec_parse(mix, sizeof(mix), &r);
		/* A cut inside the pad changes nothing that counts. */
		if (a != 0 && a != -EINVAL)
			fail_msg("cut %zu: new-then-old read %d", cut, a);
		if (b != -EINPROGRESS && b != -EINVAL)
			fail_msg("cut %zu: old-then-new read %d", cut, b);
		if (a == 0 && cut < pad)
			fail_msg("cut %zu: a torn record was accepted", cut);
	}
	/* One flipped digit. */
	memcpy(mix, final, sizeof(mix));
	mix[7] = mix[7] == '9' ? '8' : '9';
	assert_int_equal(exitrec_parse(mix, sizeof(mix), &r), -EINVAL);
}

/* Records of older shims (no sum, no pad, no stragglers or disk_full)
 * still read. */
static void
test_old_record_reads(void **state)
{
	struct exit_record r;

	write_raw("exit_code 2\nstarted_ms 1\nended_ms 2\nutime_us 0\nstime_us 0\nmaxrss_kb 4\n");
	assert_int_equal(exitrec_read(dir, &r), 0);
	assert_int_equal(r.code, 2);
	assert_int_equal(r.stragglers, 0);
	assert_int_equal(r.disk_full, 0);
}

/* The shim's status message: what it says is what is read back; anything
 * else is refused. */
static void
test_status_message(void **state)
{
	struct exit_record w = {
		.has_code = 1, .code = 4, .started_ms = 5, .ended_ms = 6, .stragglers = 1
	};
	char buf[EXITREC_STATUS_MAX], id[64];
	struct exit_record r;
	int n, durable = -1;

	n = exitrec_status_format(buf, "0123abcd", &w, 0);
	assert_true(n > EXITREC_SIZE);
	assert_int_equal(exitrec_status_parse(buf, (size_t)n, id, sizeof(id), &r, &durable), 0);
	assert_string_equal(id, "0123abcd");
	assert_int_equal(durable, 0);
	assert_int_equal(r.code, 4);
	assert_int_equal(r.stragglers, 1);
	n = exitrec_status_format(buf, "0123abcd", &w, 1);
	assert_int_equal(exitrec_status_parse(buf, (size_t)n, id, sizeof(id), &r, &durable), 0);
	assert_int_equal(durable, 1);
	/* Too short an id buffer, a cut message, a reservation, garbage. */
	assert_int_equal(exitrec_status_parse(buf, (size_t)n, id, 4, &r, &durable), -EINVAL);
	assert_int_equal(exitrec_status_parse(buf, (size_t)n - 1, id, sizeof(id), &r, &durable),
			 -EINVAL);
	assert_int_equal(
		exitrec_status_parse("status 1\nrun x\n", 15, id, sizeof(id), &r, &durable),
		-EINVAL);
	assert_int_equal(exitrec_status_format(buf, "a\nb", &w, 1), -1);
	assert_int_equal(exitrec_status_format(buf, "x", NULL, 1), -1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_round_trip_exit_code),
		T(test_round_trip_signal),
		T(test_rewrite_replaces),
		T(test_write_needs_exactly_one_of_code_and_signal),
		T(test_missing_is_enoent),
		T(test_truncated_is_einval),
		T(test_garbage_is_einval),
		T(test_embedded_nul_is_einval),
		T(test_unknown_keys_ignored),
		T(test_started_marker),
		T(test_reserve_then_commit),
		T(test_empty_or_zeros_is_reserved),
		T(test_torn_overwrite_is_einval),
		T(test_old_record_reads),
		T(test_status_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
