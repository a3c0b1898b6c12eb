/*
 * What a run left behind, read once (common/aftercare.c): the started
 * marker and its age, the exit record whole, damaged or absent, the output's
 * size, the spawn error, and the one capture rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aftercare.h"
#include "exitrec.h"

static char dir[64];

static int
setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/aftercare_test.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
put_record(int code)
{
	struct exit_record r = { .has_code = 1, .code = code, .started_ms = 5, .ended_ms = 9 };

	assert_int_equal(exitrec_write(dir, &r), 0);
}

static void
test_nothing_left(void **state)
{
	struct aftercare a;

	memset(&a, 0x55, sizeof(a));
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_false(a.started);
	assert_int_equal(a.started_ms, 0);
	assert_false(a.exit_present);
	assert_false(a.has_record);
	assert_false(a.has_output);
	assert_int_equal(a.output_bytes, 0);
	assert_false(a.has_spawn_error);
	assert_false(a.capture_complete);
}

static void
test_everything_left(void **state)
{
	struct timespec ts[2] = { { 1600000000, 250000000 }, { 1600000000, 250000000 } };
	struct aftercare a;
	char path[128];

	put("started", "");
	snprintf(path, sizeof(path), "%s/started", dir);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	put("output.log", "hello\n");
	put_record(3);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.started);
	assert_int_equal(a.started_ms, 1600000000250LL);
	assert_true(a.exit_present);
	assert_true(a.has_record);
	assert_true(a.rec.has_code);
	assert_int_equal(a.rec.code, 3);
	assert_int_equal(a.rec.ended_ms, 9);
	assert_true(a.has_output);
	assert_int_equal(a.output_bytes, 6);
	assert_true(a.capture_complete);
}

/* The capture rule, every row: complete only with both the record and the
 * output file. */
static void
test_capture_rule(void **state)
{
	struct aftercare a;
	char path[128];

	put_record(0);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.has_record);
	assert_false(a.has_output);
	assert_false(a.capture_complete); /* the record alone: nothing kept */
	snprintf(path, sizeof(path), "%s/exit", dir);
	unlink(path);
	put("output.log", "x");
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_false(a.capture_complete); /* output alone: the shim died first */
	put_record(0);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.capture_complete);
	/* An output "file" that is not one captures nothing. */
	snprintf(path, sizeof(path), "%s/output.log", dir);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_false(a.has_output);
	assert_false(a.capture_complete);
}

/* A damaged record is there but tells nothing: present (recovery does not
 * take the run for one that never executed), not a record. */
static void
test_damaged_record(void **state)
{
	struct aftercare a;

	put("exit", "exit_code 3\nstarted_ms");
	put("output.log", "x");
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.exit_present);
	assert_false(a.has_record);
	assert_false(a.capture_complete);
}

static void
test_spawn_error(void **state)
{
	struct aftercare a;

	put("spawn_error", "exec nosuch: No such file or directory\r\n");
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.has_spawn_error);
	assert_string_equal(a.spawn_error, "exec nosuch: No such file or directory");
}

/* A marker that cannot be looked at counts as there: abandoning a run that
 * may have executed could run its job twice. */
static void
test_unknowable_marker_counts_as_started(void **state)
{
	struct aftercare a;
	char bad[128];

	put("file", "");
	snprintf(bad, sizeof(bad), "%s/file/run", dir); /* ENOTDIR */
	assert_int_equal(aftercare_read(bad, &a), 0);
	assert_true(a.started);
	assert_false(a.has_record);
}

/* A reservation (the record's space taken at the go) is no record and not
 * a damaged one: a shim that died before writing left nothing to read, so
 * recovery may still tell a run that never executed. */
static void
test_reservation_is_no_record(void **state)
{
	struct aftercare a;
	int fd;

	assert_true((fd = exitrec_reserve(dir)) >= 0);
	close(fd);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_false(a.exit_present);
	assert_false(a.has_record);
	assert_int_equal(a.unreadable, 0);
}

/* The disk was full: the record says so, and the capture is incomplete
 * although record and output are both there. */
static void
test_disk_full_cuts_capture(void **state)
{
	struct exit_record r = { .has_code = 1, .code = 0, .disk_full = 1, .stragglers = 2 };
	struct aftercare a;

	put("output.log", "partial");
	assert_int_equal(exitrec_write(dir, &r), 0);
	assert_int_equal(aftercare_read(dir, &a), 0);
	assert_true(a.has_record);
	assert_int_equal(a.rec.stragglers, 2);
	assert_false(a.capture_complete);
}

/* A record that is there but cannot be read now is neither absent nor
 * damaged: unreadable, so nobody decides from it. Here: no descriptor left
 * to open it with. */
static void
test_unreadable_record(void **state)
{
	struct rlimit old, low;
	struct aftercare a;
	int fd, keep[64], n = 0;

	put_record(4);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 16;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < 64 && (fd = open("/dev/null", O_RDONLY)) != -1)
		keep[n++] = fd;
	assert_int_equal(aftercare_read(dir, &a), 0);
	while (n > 0)
		close(keep[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_false(a.has_record);
	assert_int_equal(a.unreadable, EMFILE);
	assert_int_equal(a.record_unreadable, EMFILE);
	/* The shim's status stands in for the record it could not read. */
	{
		struct exit_record st = { .has_code = 1, .code = 4, .ended_ms = 77 };

		a.spawn_error_unreadable = 0;
		aftercare_use_status(&a, &st);
		assert_true(a.has_record);
		assert_true(a.from_status);
		assert_true(a.started);
		assert_int_equal(a.unreadable, 0);
		assert_int_equal(a.rec.ended_ms, 77);
	}
}

/* A status never overrides a record read from the disk. */
static void
test_status_only_without_record(void **state)
{
	struct exit_record st = { .has_signal = 1, .signal = 9 };
	struct aftercare a;

	put("output.log", "x");
	put_record(3);
	assert_int_equal(aftercare_read(dir, &a), 0);
	aftercare_use_status(&a, &st);
	assert_false(a.from_status);
	assert_int_equal(a.rec.code, 3);
	assert_true(a.capture_complete);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_everything_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spawn_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknowable_marker_counts_as_started, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reservation_is_no_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full_cuts_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_only_without_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
