/*
 * coord_trace: one JSON line per decided request, seq going on across
 * restarts, a torn last line cut off.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "coord_trace.h"

static char home[64];
static char path[128];

static int
setup(void **state)
{
	(void)state;
	snprintf(home, sizeof(home), "/tmp/coord_trace_test.XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/trace/trace.jsonl", home);
	return 0;
}

static int
teardown(void **state)
{
	char d[128];

	(void)state;
	unlink(path);
	snprintf(d, sizeof(d), "%s/trace", home);
	rmdir(d);
	rmdir(home);
	return 0;
}

static void
rec(struct coord_trace *t, const char *verb, const char *decision)
{
	struct coord_trace_rec r = {
		.ts_ms = 1700000000000,
		.from = "supervisor",
		.instance = "00aa11bb22cc33dd",
		.req_id = 7,
		.verb = verb,
		.ticket = "T1",
		.run = NULL,
		.decision = decision,
		.reason = NULL,
		.latency_us = 42,
	};

	assert_int_equal(coord_trace_write(t, &r), 0);
}

/* The file's lines, read back. */
static int
lines(char out[][512], int max)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	assert_non_null(f);
	while (n < max && fgets(out[n], 512, f) != NULL)
		n++;
	fclose(f);
	return n;
}

static void
test_one_line_per_record_with_every_key(void **state)
{
	struct coord_trace *t;
	char l[4][512];
	struct stat st;

	(void)state;
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "record_exit", "granted");
	rec(t, "claim", "denied");
	assert_int_equal(coord_trace_seq(t), 2);
	coord_trace_close(t);
	assert_int_equal(lines(l, 4), 2);
	assert_string_equal(l[0], "{\"seq\":1,\"ts_ms\":1700000000000,\"from\":\"supervisor\","
				  "\"instance\":\"00aa11bb22cc33dd\",\"req_id\":7,"
				  "\"verb\":\"record_exit\",\"ticket\":\"T1\",\"run\":\"\","
				  "\"decision\":\"granted\",\"reason\":\"\",\"latency_us\":42}\n");
	assert_non_null(strstr(l[1], "{\"seq\":2,"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void
test_seq_goes_on_after_reopen(void **state)
{
	struct coord_trace *t;
	char l[8][512];

	(void)state;
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	rec(t, "add", "granted");
	coord_trace_close(t);
	assert_int_equal(coord_trace_open(&t, home), 0);
	assert_int_equal(coord_trace_seq(t), 2);
	rec(t, "show", "granted");
	coord_trace_close(t);
	assert_int_equal(lines(l, 8), 3);
	assert_non_null(strstr(l[2], "{\"seq\":3,"));
}

static void
test_torn_last_line_is_cut(void **state)
{
	struct coord_trace *t;
	char l[8][512];
	int fd;
	const char torn[] = "{\"seq\":3,\"ts_ms\":17000";

	(void)state;
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	rec(t, "add", "granted");
	coord_trace_close(t);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, torn, strlen(torn)), (ssize_t)strlen(torn));
	close(fd);

	assert_int_equal(coord_trace_open(&t, home), 0);
	assert_int_equal(coord_trace_seq(t), 2);
	rec(t, "list", "granted");
	coord_trace_close(t);
	assert_int_equal(lines(l, 8), 3);
	assert_non_null(strstr(l[2], "{\"seq\":3,"));
	assert_non_null(strstr(l[2], "\"verb\":\"list\""));
}

/* A crash between a decision's COMMIT and its trace write loses the line;
 * the copy the database kept is appended at the next open, once. */
static void
test_restore_appends_the_missing_line(void **state)
{
	struct coord_trace *t;
	struct coord_trace_rec r = { .ts_ms = 1700000000001,
				     .from = "supervisor",
				     .instance = "00aa11bb22cc33dd",
				     .req_id = 9,
				     .verb = "record_exit",
				     .ticket = "T1",
				     .run = "r1",
				     .decision = "granted",
				     .latency_us = 5 };
	char l[8][512], *line3 = coord_trace_format(&r, 3);
	const char torn[] = "{\"seq\":3,\"ts_ms\":17";
	int fd;

	(void)state;
	assert_non_null(line3);
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	rec(t, "claim", "granted");
	/* Nothing missing: the kept line is the last one written. */
	assert_int_equal(coord_trace_restore(t, 2, line3), 0);
	coord_trace_close(t);
	/* The write of line 3 was torn by the crash. */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, torn, strlen(torn)), (ssize_t)strlen(torn));
	close(fd);

	assert_int_equal(coord_trace_open(&t, home), 0);
	assert_int_equal(coord_trace_seq(t), 2);
	assert_int_equal(coord_trace_restore(t, 3, line3), 1);
	assert_int_equal(coord_trace_seq(t), 3);
	assert_int_equal(coord_trace_restore(t, 3, line3), 0); /* once */
	rec(t, "settle", "granted");
	coord_trace_close(t);
	assert_int_equal(lines(l, 8), 4);
	assert_string_equal(l[2], line3);
	assert_non_null(strstr(l[3], "{\"seq\":4,"));
	free(line3);
}

/* Lines that waited in a coordinator that stopped before the file took them
 * are lost, but the kept last decision's line is appended after the gap,
 * and seq goes on after it: no seq is ever given twice. */
static void
test_restore_after_a_gap_never_reuses_seq(void **state)
{
	struct coord_trace_rec r = { .ts_ms = 1, .verb = "settle", .decision = "granted" };
	char l[8][512], *line5 = coord_trace_format(&r, 5), *bad = "garbage\n";
	struct coord_trace *t;

	(void)state;
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	rec(t, "add", "granted");
	assert_int_equal(coord_trace_restore(t, 5, line5), 1);
	assert_int_equal(coord_trace_seq(t), 5);
	rec(t, "show", "granted");
	/* A kept copy that is not a line is not written, but its seq is
	 * still never given again. */
	assert_int_equal(coord_trace_restore(t, 9, bad), 0);
	assert_int_equal(coord_trace_seq(t), 9);
	rec(t, "list", "granted");
	coord_trace_close(t);
	assert_int_equal(lines(l, 8), 5);
	assert_string_equal(l[2], line5);
	assert_non_null(strstr(l[3], "{\"seq\":6,"));
	assert_non_null(strstr(l[4], "{\"seq\":10,"));
	free(line5);
}

/* The file refuses lines (a full disk; here its size limit, which makes a
 * write short, then fail): no line is ever torn, each keeps its seq, and
 * the waiting lines are written in order once the file takes them. */
static void
test_full_file_never_tears_a_line(void **state)
{
	struct rlimit old, lim;
	struct coord_trace *t;
	char l[16][512];
	struct stat st;
	int i, n;

	(void)state;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	rec(t, "add", "granted");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 40; /* room for part of one line */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 0; i < 3; i++)
		rec(t, "record_exit", "error");
	assert_int_equal(coord_trace_seq(t), 5);
	assert_int_equal(coord_trace_flush(t), 3);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(lines(l, 16), 2); /* whole lines only, meanwhile */
	rec(t, "settle", "granted");       /* after the waiting ones */
	assert_int_equal(coord_trace_flush(t), 0);
	coord_trace_close(t);
	n = lines(l, 16);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "{\"seq\":%d,", i + 1);
		assert_true(strncmp(l[i], want, strlen(want)) == 0);
		assert_int_equal(l[i][strlen(l[i]) - 1], '\n');
		assert_non_null(strstr(l[i], "\"latency_us\":42}\n"));
	}
	signal(SIGXFSZ, SIG_DFL);
}

/* A group's lines are written in one append and kept as one copy; after
 * a crash, those the file lacks are restored, in order, each once. The
 * fused verb's line says which verb carried it. */
static void
test_group_lines_appended_and_restored(void **state)
{
	struct coord_trace *t;
	struct coord_trace_rec r = { .ts_ms = 1700000000001,
				     .from = "supervisor",
				     .instance = "00aa11bb22cc33dd",
				     .req_id = 9,
				     .verb = "claim",
				     .ticket = "T1",
				     .run = "r1",
				     .decision = "granted",
				     .latency_us = 5 };
	char l[8][512], *a, *b, *c, all[2048];

	(void)state;
	a = coord_trace_format(&r, 2);
	r.verb = "start";
	r.fused = "claim";
	b = coord_trace_format(&r, 3);
	r.verb = "add";
	r.fused = NULL;
	c = coord_trace_format(&r, 4);
	assert_non_null(strstr(b, ",\"fused\":\"claim\"}"));
	assert_null(strstr(a, "fused"));
	assert_int_equal(coord_trace_open(&t, home), 0);
	rec(t, "add", "granted");
	/* Lines 2..3 in one append: seq goes on after both. */
	snprintf(all, sizeof all, "%s%s", a, b);
	assert_int_equal(coord_trace_append(t, 2, all), 0);
	assert_int_equal(coord_trace_seq(t), 3);
	coord_trace_close(t);
	/* The crash lost line 4, kept with 2..3 and 4 of a later group. */
	snprintf(all, sizeof all, "%s%s%s", a, b, c);
	assert_int_equal(coord_trace_open(&t, home), 0);
	assert_int_equal(coord_trace_restore(t, 2, all), 1);
	assert_int_equal(coord_trace_seq(t), 4);
	assert_int_equal(coord_trace_restore(t, 2, all), 0); /* once */
	coord_trace_close(t);
	assert_int_equal(lines(l, 8), 4);
	assert_string_equal(l[1], a);
	assert_string_equal(l[2], b);
	assert_string_equal(l[3], c);
	free(a);
	free(b);
	free(c);
}

static void
test_strings_are_escaped(void **state)
{
	struct coord_trace *t;
	struct coord_trace_rec r;
	char l[2][512];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.from = "cli";
	r.verb = "add";
	r.decision = "error";
	r.reason = "bad \"argv\"\n";
	assert_int_equal(coord_trace_open(&t, home), 0);
	assert_int_equal(coord_trace_write(t, &r), 0);
	coord_trace_close(t);
	assert_int_equal(lines(l, 2), 1);
	assert_non_null(strstr(l[0], "\"reason\":\"bad \\\"argv\\\"\\n\""));
}

/* The optional keys: written only when set, after reason, strings
 * escaped like every other. */
static void
test_format_detail_and_lease(void **state)
{
	struct coord_trace_rec r = { .ts_ms = 1700000000001,
				     .from = "recovery",
				     .instance = "00aa11bb22cc33dd",
				     .req_id = 9,
				     .verb = "record_exit",
				     .ticket = "T1",
				     .run = "r1",
				     .decision = "granted",
				     .latency_us = 5 };
	char *line;

	(void)state;
	line = coord_trace_format(&r, 1);
	assert_null(strstr(line, "detail"));
	assert_null(strstr(line, "lease"));
	free(line);
	r.detail = "exit 7";
	r.lease_expires_ms = 1700000000000;
	r.lease_renewed_ms = 1699999999000;
	r.lease_owner = "7392204e\n";
	line = coord_trace_format(&r, 2);
	assert_non_null(strstr(line, "\"reason\":\"\",\"detail\":\"exit 7\","
				     "\"lease_expires_ms\":1700000000000,"
				     "\"lease_renewed_ms\":1699999999000,"
				     "\"lease_owner\":\"7392204e\\n\",\"latency_us\":5}\n"));
	free(line);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_line_per_record_with_every_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_seq_goes_on_after_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_last_line_is_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_after_a_gap_never_reuses_seq, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_file_never_tears_a_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_appends_the_missing_line, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_group_lines_appended_and_restored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_strings_are_escaped, setup, teardown),
		cmocka_unit_test(test_format_detail_and_lease),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
