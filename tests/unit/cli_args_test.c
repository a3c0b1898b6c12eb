/* cli_args: the CLI's argument parsers (--at times, I/N, durations,
 * numbers, --env, --after lists, batch files) and its option errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "berth_limits.h"
#include "cli.h"
#include "vec.h"

/* Wall ms of a UTC date-time, for building "now". */
static int64_t
utc_ms(int y, int mon, int d, int h, int m, int s)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = s;
	return (int64_t)timegm(&tm) * 1000;
}

static void
set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static void
test_at_time_later_today(void **state)
{
	int64_t now = utc_ms(2026, 11, 30, 6, 40, 1) + 500, at;

	set_tz("UTC");
	assert_int_equal(cli_parse_at("18:30", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 11, 30, 18, 30, 0));
	assert_int_equal(cli_parse_at("6:41:02", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 11, 30, 6, 41, 2));
}

static void
test_at_time_past_means_tomorrow(void **state)
{
	int64_t now = utc_ms(2026, 11, 30, 6, 40, 1) + 500, at;

	set_tz("UTC");
	assert_int_equal(cli_parse_at("06:40", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 1, 6, 40, 0));
	/* The same second that is already half over has passed too. */
	assert_int_equal(cli_parse_at("06:40:01", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 1, 6, 40, 1));
	/* Across a month and a year end. */
	now = utc_ms(2026, 12, 31, 23, 0, 0);
	assert_int_equal(cli_parse_at("01:15", now, &at), 0);
	assert_int_equal(at, utc_ms(2027, 1, 1, 1, 15, 0));
}

static void
test_at_time_is_local(void **state)
{
	int64_t now = utc_ms(2026, 7, 1, 6, 0, 0), at;

	/* Berlin is UTC+2 in July: 10:00 local is 08:00 UTC. */
	set_tz("Europe/Berlin");
	assert_int_equal(cli_parse_at("10:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 7, 1, 8, 0, 0));
	set_tz("UTC");
}

static void
test_at_tomorrow_across_dst_change(void **state)
{
	/* Saturday 2026-03-28 12:00 CET; clocks go forward that night. "10:00"
	 * has passed, so it means Sunday 10:00 CEST = 08:00 UTC, which is 23
	 * hours later, not 24. */
	int64_t now = utc_ms(2026, 3, 28, 11, 0, 0), at;

	set_tz("Europe/Berlin");
	assert_int_equal(cli_parse_at("10:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 3, 29, 8, 0, 0));
	set_tz("UTC");
}

static void
test_at_iso_date_time(void **state)
{
	int64_t now = utc_ms(2026, 11, 30, 6, 40, 0), at;

	set_tz("UTC");
	assert_int_equal(cli_parse_at("2026-12-24T18:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 24, 18, 0, 0));
	assert_int_equal(cli_parse_at("2026-12-24 18:00:30", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 24, 18, 0, 30));
	assert_int_equal(cli_parse_at("2028-02-29T00:00:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2028, 2, 29, 0, 0, 0));
	/* A date in the past is accepted: it is simply due at once. */
	assert_int_equal(cli_parse_at("2026-01-01T00:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 1, 1, 0, 0, 0));
	/* Trailing Z: UTC whatever the local zone. */
	set_tz("Europe/Berlin");
	assert_int_equal(cli_parse_at("2026-12-24T18:00:00Z", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 24, 18, 0, 0));
	assert_int_equal(cli_parse_at("2026-12-24T18:00:00", now, &at), 0);
	assert_int_equal(at, utc_ms(2026, 12, 24, 17, 0, 0));
	set_tz("UTC");
}

static void
test_at_rejects_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"25:00",
		"12:60",
		"12:00:60",
		"12:5",
		"1200",
		"12",
		"12:00:5",
		"12:00pm",
		" 12:00",
		"12:00 ",
		"-1:00",
		"2026-02-30T10:00",
		"2026-13-01T00:00",
		"2026-11-30",
		"2026-11-30T10",
		"2026-11-30X10:00",
		"26-11-30 10:00",
		"2026-1-30 10:00",
		"2026-11-30T10:00x",
		"2027-02-29T00:00",
		"tomorrow",
		"1969-12-31T23:59",
		"12:00Z",
	};
	int64_t at = 42;
	size_t i;

	set_tz("UTC");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (cli_parse_at(bad[i], utc_ms(2026, 11, 30, 6, 0, 0), &at) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(at, 42); /* untouched on failure */
	}
}

static void
test_frac_accepts(void **state)
{
	int64_t i, n;

	assert_int_equal(cli_parse_frac("5/10", &i, &n), 0);
	assert_int_equal(i, 5);
	assert_int_equal(n, 10);
	assert_int_equal(cli_parse_frac("0/1", &i, &n), 0);
	assert_int_equal(i, 0);
	assert_int_equal(n, 1);
	assert_int_equal(cli_parse_frac("10/10", &i, &n), 0);
	assert_int_equal(i, 10);
}

static void
test_frac_rejects(void **state)
{
	static const char *const bad[] = { "",      "5",      "5/",    "/5",    "11/10", "5/0",
					   "-1/5",  "5/-10",  "+5/10", " 5/10", "5/10x", "a/b",
					   "5//10", "5/10/2", "1.5/3", "5 /10" };
	int64_t i = 7, n = 7;
	size_t k;

	for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		if (cli_parse_frac(bad[k], &i, &n) != -1)
			fail_msg("accepted '%s'", bad[k]);
		assert_int_equal(i, 7);
		assert_int_equal(n, 7);
	}
}

static void
test_int_bounds(void **state)
{
	long long v;

	assert_int_equal(cli_parse_int("3", 0, 10, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(cli_parse_int("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(cli_parse_int("11", 0, 10, &v), -1);
	assert_int_equal(cli_parse_int("-1", 0, 10, &v), -1);
	assert_int_equal(cli_parse_int("3x", 0, 10, &v), -1);
	assert_int_equal(cli_parse_int("", 0, 10, &v), -1);
	assert_int_equal(cli_parse_int(" 3", 0, 10, &v), -1);
	assert_int_equal(cli_parse_int("99999999999999999999", 0, INT64_MAX, &v), -1);
}

static void
test_dur(void **state)
{
	int64_t ms;

	assert_int_equal(cli_parse_dur("250ms", 0, &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(cli_parse_dur("5s", 0, &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(cli_parse_dur("2m", 0, &ms), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(cli_parse_dur("1h", 0, &ms), 0);
	assert_int_equal(ms, 3600000);
	assert_int_equal(cli_parse_dur("10", 0, &ms), 0); /* bare number: seconds */
	assert_int_equal(ms, 10000);
	assert_int_equal(cli_parse_dur("0", 0, &ms), 0);
	assert_int_equal(cli_parse_dur("0", 1, &ms), -1); /* below the minimum */
	assert_int_equal(cli_parse_dur("-5s", 0, &ms), -1);
	assert_int_equal(cli_parse_dur("5x", 0, &ms), -1);
	assert_int_equal(cli_parse_dur("1.5s", 0, &ms), -1);
	assert_int_equal(cli_parse_dur("", 0, &ms), -1);
	assert_int_equal(cli_parse_dur(" 5s", 0, &ms), -1);
}

static void
test_env(void **state)
{
	assert_int_equal(cli_parse_env("A=1"), 0);
	assert_int_equal(cli_parse_env("MY_VAR="), 0);
	assert_int_equal(cli_parse_env("X=a=b"), 0);
	assert_int_equal(cli_parse_env("=1"), -1);
	assert_int_equal(cli_parse_env("A"), -1);
	assert_int_equal(cli_parse_env("1A=2"), -1);
	assert_int_equal(cli_parse_env("A-B=1"), -1);
}

static void
test_split_list(void **state)
{
	char **v;
	size_t n;

	assert_int_equal(cli_split_list("T1,T22,T3", &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "T1");
	assert_string_equal(v[1], "T22");
	assert_string_equal(v[2], "T3");
	assert_null(v[3]);
	vec_free_str(v);
	assert_int_equal(cli_split_list("T1", &v, &n), 0);
	assert_int_equal(n, 1);
	vec_free_str(v);
	assert_int_equal(cli_split_list("", &v, &n), -1);
	assert_int_equal(cli_split_list("T1,,T2", &v, &n), -1);
	assert_int_equal(cli_split_list(",T1", &v, &n), -1);
	assert_int_equal(cli_split_list("T1,", &v, &n), -1);
}

static int
batch_from(const char *text, struct cli_batch *b, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = cli_batch_read(f, b, err, errlen);
	fclose(f);
	return rc;
}

static void
test_batch_skips_blank_and_comments(void **state)
{
	struct cli_batch b;
	char err[128];

	assert_int_equal(batch_from("# build everything\n"
				    "make -C a\n"
				    "\n"
				    "   \t\n"
				    "  make -C 'b c' && echo done  \n"
				    "   # indented comment\n"
				    "echo '#not a comment'\r\n"
				    "last-without-newline",
				    &b, err, sizeof err),
			 0);
	assert_int_equal(b.n, 4);
	assert_string_equal(b.lines[0], "make -C a");
	assert_string_equal(b.lines[1], "make -C 'b c' && echo done");
	assert_string_equal(b.lines[2], "echo '#not a comment'");
	assert_string_equal(b.lines[3], "last-without-newline");
	cli_batch_free(&b);
	assert_int_equal(b.n, 0);
	assert_null(b.lines);
}

static void
test_batch_empty_is_an_error(void **state)
{
	struct cli_batch b;
	char err[128];

	assert_int_equal(batch_from("", &b, err, sizeof err), -1);
	assert_non_null(strstr(err, "no commands"));
	assert_int_equal(batch_from("# only\n\n  # comments\n", &b, err, sizeof err), -1);
	assert_non_null(strstr(err, "no commands"));
	assert_int_equal(b.n, 0);
}

static void
test_batch_nul_byte_names_line(void **state)
{
	static const char text[] = "echo one\necho t\0wo\n";
	struct cli_batch b;
	char err[128];
	FILE *f = fmemopen((void *)text, sizeof text - 1, "r");

	assert_non_null(f);
	assert_int_equal(cli_batch_read(f, &b, err, sizeof err), -1);
	fclose(f);
	assert_non_null(strstr(err, "line 2"));
	assert_int_equal(b.n, 0);
}

/* Lines keep the file's line numbers (a failed batch names them), and any
 * number of lines is taken; one over the exec limit is refused by number. */
static void
test_batch_line_numbers_and_limit(void **state)
{
	struct cli_batch b;
	char err[128], *text, *p;
	size_t i, n = 30000;

	assert_int_equal(batch_from("a\n\n# c\nb\n", &b, err, sizeof err), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.lineno[0], 1);
	assert_int_equal(b.lineno[1], 4);
	cli_batch_free(&b);
	assert_null(b.lineno);
	assert_non_null(text = malloc(n * 8 + 1));
	for (p = text, i = 0; i < n; i++)
		p += sprintf(p, "echo %zu\n", i % 100);
	assert_int_equal(batch_from(text, &b, err, sizeof err), 0);
	assert_int_equal(b.n, n);
	assert_int_equal(b.lineno[n - 1], (long)n);
	cli_batch_free(&b);
	free(text);
	assert_non_null(text = malloc(BERTH_ARG_MAX + 16));
	strcpy(text, "ok\n");
	memset(text + 3, 'x', BERTH_ARG_MAX + 1);
	strcpy(text + 3 + BERTH_ARG_MAX + 1, "\n");
	assert_int_equal(batch_from(text, &b, err, sizeof err), -1);
	assert_non_null(strstr(err, "line 2"));
	assert_non_null(strstr(err, "at most 131071"));
	text[3 + BERTH_ARG_MAX] = '\n';
	text[4 + BERTH_ARG_MAX] = '\0';
	assert_int_equal(batch_from(text, &b, err, sizeof err), 0); /* exactly the limit */
	cli_batch_free(&b);
	free(text);
}

/* stderr into a temporary file between capture_begin and capture_end,
 * which reads it into err. */
struct capture {
	FILE *tmp;
	int saved;
};

static void
capture_begin(struct capture *c)
{
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved = dup(2);
	fflush(stderr);
	dup2(fileno(c->tmp), 2);
}

static void
capture_end(struct capture *c, char *err, size_t errlen)
{
	size_t len;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	rewind(c->tmp);
	len = fread(err, 1, errlen - 1, c->tmp);
	err[len] = '\0';
	fclose(c->tmp);
}

/* Runs cli_getopt over argv with stderr captured into err. */
static int
getopt_capture(int argc, char **argv, const char *os, const struct option *lo, char *err,
	       size_t errlen, int *last)
{
	struct capture cap;
	int c, n = 0;

	capture_begin(&cap);
	optind = 0;
	while ((c = cli_getopt(argc, argv, os, lo)) != -1) {
		*last = c;
		n++;
		if (c == '?')
			break;
	}
	capture_end(&cap, err, errlen);
	return n;
}

static void
test_getopt_errors_name_the_option(void **state)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	char *unknown[] = { "add", "--bogus", "x", NULL };
	char *missing[] = { "add", "--name", NULL };
	char *good[] = { "show", "T1", "--json", NULL };
	char err[512];
	int last = 0;

	getopt_capture(3, unknown, "n:j", lo, err, sizeof err, &last);
	assert_int_equal(last, '?');
	assert_non_null(strstr(err, "berth add: unknown option --bogus"));
	assert_non_null(strstr(err, "berth add --help"));

	getopt_capture(2, missing, "n:j", lo, err, sizeof err, &last);
	assert_int_equal(last, '?');
	assert_non_null(strstr(err, "option --name needs a value"));

	/* Permutation: options after the positional argument still count. */
	last = 0;
	assert_int_equal(getopt_capture(3, good, "n:j", lo, err, sizeof err, &last), 1);
	assert_int_equal(last, 'j');
	assert_string_equal(err, "");
	assert_string_equal(good[optind], "T1");

	/* A value given to a flag names the flag, not a short option. */
	{
		char *flagval[] = { "list", "--json=yes", NULL };
		char *abbrev[] = { "list", "--js=1", NULL };

		getopt_capture(2, flagval, "n:j", lo, err, sizeof err, &last);
		assert_int_equal(last, '?');
		assert_non_null(strstr(err, "option --json takes no value (got '--json=yes')"));
		assert_null(strstr(err, "unknown option -j"));
		getopt_capture(2, abbrev, "n:j", lo, err, sizeof err, &last);
		assert_non_null(strstr(err, "option --js takes no value"));
	}
}

static void
test_ids(void **state)
{
	char buf[CLI_ID_MAX];

	assert_int_equal(cli_parse_id("T3", buf, sizeof buf), CLI_ID_TICKET);
	assert_string_equal(buf, "T3");
	/* The tsp habit: a bare number is a ticket. */
	assert_int_equal(cli_parse_id("3", buf, sizeof buf), CLI_ID_TICKET);
	assert_string_equal(buf, "T3");
	assert_int_equal(cli_parse_id("t007", buf, sizeof buf), CLI_ID_TICKET);
	assert_string_equal(buf, "T7");
	assert_int_equal(cli_parse_id("T3-r2", buf, sizeof buf), CLI_ID_ALIAS);
	assert_string_equal(buf, "T3-r2");
	assert_int_equal(cli_parse_id("last", buf, sizeof buf), CLI_ID_LAST);
	assert_string_equal(buf, "last");
	/* A run id, or 8+ of its hex digits, lower-cased. */
	assert_int_equal(cli_parse_id("5A6A3C69", buf, sizeof buf), CLI_ID_RUN);
	assert_string_equal(buf, "5a6a3c69");
	assert_int_equal(cli_parse_id("5a6a3c699855628bc360f07257e3ffdf", buf, sizeof buf),
			 CLI_ID_RUN);
	/* Neither: a usage error, never a question for the coordinator. */
	assert_int_equal(cli_parse_id("5a6a3c6", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("5a6a3c699855628bc360f07257e3ffdf0", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("bogus", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T0", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("0", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("-3", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T3-", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T3-r", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T3-r0", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T3-x1", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T3x", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("T 3", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("../etc", buf, sizeof buf), -1);
	assert_int_equal(cli_parse_id("99999999999999999999999", buf, sizeof buf), -1);
}

/* Bad numbers and durations name the range they must be in. */
static void
test_opt_ranges(void **state)
{
	struct capture cap;
	char err[512];
	long long n;
	int64_t ms;

	capture_begin(&cap);
	assert_int_equal(cli_opt_int("add", "--retries", "12", 0, 1000000, &n), CLI_OK);
	assert_int_equal(n, 12);
	assert_int_equal(cli_opt_int("add", "--retries", "x", 0, 1000000, &n), CLI_USAGE);
	assert_int_equal(cli_opt_dur("add", "--every", "1ms", 1000, INT64_MAX, &ms), CLI_USAGE);
	assert_int_equal(cli_opt_dur("add", "--every", "5x", 1000, INT64_MAX, &ms), CLI_USAGE);
	assert_int_equal(cli_opt_dur("add", "--every", "2s", 1000, INT64_MAX, &ms), CLI_OK);
	assert_int_equal(ms, 2000);
	assert_int_equal(cli_opt_dur("x", "--t", "3h", 0, 3600000, &ms), CLI_USAGE);
	capture_end(&cap, err, sizeof err);
	assert_non_null(
		strstr(err, "--retries: bad number 'x' (a whole number from 0 to 1000000)"));
	assert_non_null(strstr(err, "--every: 1ms is too short (at least 1s)"));
	assert_non_null(strstr(err, "--every: bad duration '5x' (use e.g. 500ms"));
	assert_non_null(strstr(err, "1s or more)"));
	assert_non_null(strstr(err, "--t: 3h is too long (at most 1h)"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_at_time_later_today),
		cmocka_unit_test(test_at_time_past_means_tomorrow),
		cmocka_unit_test(test_at_time_is_local),
		cmocka_unit_test(test_at_tomorrow_across_dst_change),
		cmocka_unit_test(test_at_iso_date_time),
		cmocka_unit_test(test_at_rejects_malformed),
		cmocka_unit_test(test_frac_accepts),
		cmocka_unit_test(test_frac_rejects),
		cmocka_unit_test(test_int_bounds),
		cmocka_unit_test(test_dur),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_split_list),
		cmocka_unit_test(test_batch_skips_blank_and_comments),
		cmocka_unit_test(test_batch_empty_is_an_error),
		cmocka_unit_test(test_batch_nul_byte_names_line),
		cmocka_unit_test(test_batch_line_numbers_and_limit),
		cmocka_unit_test(test_getopt_errors_name_the_option),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_opt_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
