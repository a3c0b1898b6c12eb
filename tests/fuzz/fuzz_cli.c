/*
 * libFuzzer harness: the CLI's argument parsers (cli/cli_args.c) and the
 * duration parser under them (common/util.c dur_parse). The input is a
 * command line: arguments separated by NUL bytes. Every argument goes
 * through every parser, and what a parser accepts must mean what it says:
 *
 *   dur_parse        >= 0, and dur_format of it parses again to no more
 *   cli_parse_dur    agrees with dur_parse and its minimum
 *   cli_parse_int    within [min, max]
 *   cli_parse_frac   0 <= I <= N, N >= 1
 *   cli_parse_env    a non-empty NAME before '='
 *   cli_split_list   non-empty items without ',' that join back to the text
 *   cli_parse_at     --at: a time of day is the next such moment (not in
 *                    the past, within a day and the DST hour); a UTC date
 *                    prints and parses back to the same instant; a local
 *                    one to within the DST hour
 *                    (--in DUR and --every DUR are cli_parse_dur)
 *
 * The local zone is one with daylight saving time (Europe/Berlin), and
 * "now" is one of a few instants around its changes, chosen by the input.
 * The whole input is also read as an `add --batch` file (cli_batch_read),
 * and the arguments as an argv for cli_getopt with add's option table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"
#include "vec.h"

#define MAX_ARGS 32
#define HOUR_MS  3600000LL
#define DAY_MS   (24 * HOUR_MS)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *real_stderr;

static void
die(const char *what, const char *arg)
{
	fprintf(real_stderr, "%s: argument '%s'\n", what, arg);
	fflush(real_stderr);
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	/* cli_getopt's usage errors go nowhere; our own findings and the
	 * sanitizers' reports still reach file descriptor 2. */
	real_stderr = fdopen(dup(2), "w");
	stderr = fopen("/dev/null", "w");
	if (real_stderr == NULL || stderr == NULL)
		abort();
	return 0;
}

static void
check_dur(const char *a)
{
	int64_t v, w, ms;
	char buf[64];
	int rc = dur_parse(a, &v);

	if (rc == 0) {
		if (v < 0)
			die("dur_parse gave a negative duration", a);
		dur_format(v, buf, sizeof buf);
		if (dur_parse(buf, &w) != 0 || w > v)
			die("dur_format's text does not parse back to at most the duration", a);
	}
	if (cli_parse_dur(a, 0, &ms) == 0 && (rc != 0 || ms != v))
		die("cli_parse_dur accepted what dur_parse did not", a);
	if (cli_parse_dur(a, 1, &ms) == 0 && (ms < 1 || ms != v))
		die("cli_parse_dur with a minimum of 1 gave another value", a);
}

static void
check_numbers(const char *a)
{
	long long v;
	int64_t i, n;

	if (cli_parse_int(a, 0, 1000000, &v) == 0 && (v < 0 || v > 1000000))
		die("cli_parse_int left its range", a);
	if (cli_parse_int(a, INT32_MIN, INT32_MAX, &v) == 0 && (v < INT32_MIN || v > INT32_MAX))
		die("cli_parse_int left the int32 range", a);
	if (cli_parse_frac(a, &i, &n) == 0 && (i < 0 || n < 1 || i > n))
		die("cli_parse_frac accepted a fraction out of 0 <= I <= N", a);
}

static void
check_words(const char *a)
{
	char **items, *joined;
	size_t n, k, len = 0;

	if (cli_parse_env(a) == 0) {
		const char *eq = strchr(a, '=');

		if (eq == NULL || eq == a)
			die("cli_parse_env accepted no NAME=", a);
	}
	if (cli_split_list(a, &items, &n) != 0)
		return;
	if (n == 0 || items[n] != NULL)
		die("cli_split_list gave no items or no terminator", a);
	for (k = 0; k < n; k++) {
		if (items[k][0] == '\0' || strchr(items[k], ',') != NULL)
			die("cli_split_list gave an empty item or one with a comma", a);
		len += strlen(items[k]) + 1;
	}
	if ((joined = calloc(1, len + 1)) == NULL)
		abort();
	for (k = 0; k < n; k++) {
		if (k)
			strcat(joined, ",");
		strcat(joined, items[k]);
	}
	if (strcmp(joined, a) != 0)
		die("cli_split_list's items do not join back to the text", a);
	free(joined);
	vec_free_str(items);
}

static void
check_at(const char *a, int64_t now)
{
	int64_t at, back;
	struct tm tm;
	time_t t;
	char buf[64];

	if (cli_parse_at(a, now, &at) != 0)
		return;
	if (at % 1000 != 0)
		die("--at gave a time that is not whole seconds", a);
	if (strchr(a, '-') == NULL) {
		/* the next such time of day: not past, and within a day and
		 * the hour a DST change may add */
		if (at < now - 999 || at > now + DAY_MS + HOUR_MS)
			die("--at TIME of day is not the next such moment", a);
		return;
	}
	t = (time_t)(at / 1000);
	if (a[strlen(a) - 1] == 'Z') {
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			die("--at gave a UTC time gmtime cannot show", a);
		if (cli_parse_at(buf, now, &back) != 0 || back != at)
			die("--at's UTC time does not print and parse back", a);
		return;
	}
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		die("--at gave a local time localtime cannot show", a);
	/* the hour repeated when the clocks go back is read as one of its
	 * two instants */
	if (cli_parse_at(buf, now, &back) != 0 || back < at - HOUR_MS || back > at + HOUR_MS)
		die("--at's local time does not print and parse back", a);
}

/* add's options, as cmd_add.c declares them */
static const struct option add_opts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "after", required_argument, NULL, 'a' },
	{ "key", required_argument, NULL, 'k' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "timeout", required_argument, NULL, 't' },
	{ "retries", required_argument, NULL, 'r' },
	{ "at", required_argument, NULL, 'A' },
	{ "in", required_argument, NULL, 'I' },
	{ "every", required_argument, NULL, 'E' },
	{ "hold", no_argument, NULL, 'H' },
	{ "priority", required_argument, NULL, 'p' },
	{ "env", required_argument, NULL, 'e' },
	{ "batch", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
check_getopt(int argc, char **argv)
{
	size_t rounds = 0, chars = 0;
	int c, i;

	/* at most one option per character (-hhh is three) */
	for (i = 1; i < argc; i++)
		chars += strlen(argv[i]) + 1;
	optind = 0;
	while ((c = cli_getopt(argc, argv, "+h", add_opts)) != -1 && c != '?') {
		if (optind > argc || ++rounds > chars)
			die("cli_getopt ran past argv", argv[0]);
		if (c != 'h' && c != 'H' && optarg == NULL)
			die("cli_getopt gave an option without its value", argv[0]);
	}
	if (optind > argc)
		die("cli_getopt left optind past argv", argv[0]);
}

static void
check_batch(const uint8_t *data, size_t size)
{
	struct cli_batch b;
	char err[256];
	FILE *f;
	size_t i;

	if (size == 0 || (f = fmemopen((void *)data, size, "r")) == NULL)
		return;
	if (cli_batch_read(f, &b, err, sizeof err) == 0) {
		if (b.n == 0)
			die("cli_batch_read accepted a file without commands", "(batch)");
		for (i = 0; i < b.n; i++) {
			const char *l = b.lines[i];
			size_t n = strlen(l);

			if (n == 0 || l[0] == '#' || strchr(l, '\n') != NULL || l[0] == ' ' ||
			    l[0] == '\t' || l[n - 1] == ' ' || l[n - 1] == '\t')
				die("cli_batch_read kept a blank, comment or untrimmed line", l);
		}
		cli_batch_free(&b);
	} else if (err[0] == '\0') {
		die("cli_batch_read refused without saying why", "(batch)");
	}
	fclose(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* instants around Berlin's DST changes of 2026 and an ordinary day */
	static const int64_t nows[] = {
		1774746000000LL, /* 2026-03-29 01:00 UTC, the clocks jump 02:00 -> 03:00 */
		1774742400000LL, /* an hour before */
		1792976400000LL, /* 2026-10-25 01:00 UTC, 03:00 -> 02:00 */
		1792972800000LL, /* an hour before */
		1796020251123LL, /* 2026-11-30, no change near */
	};
	char *copy, *argv[MAX_ARGS + 2];
	int argc = 1, i;
	int64_t now;
	size_t p;

	check_batch(data, size);
	if ((copy = malloc(size + 1)) == NULL)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	now = nows[size ? data[0] % (sizeof nows / sizeof nows[0]) : 0];
	argv[0] = (char *)"add";
	for (p = 0; p <= size && argc <= MAX_ARGS; p += strlen(copy + p) + 1)
		argv[argc++] = copy + p;
	argv[argc] = NULL;
	for (i = 1; i < argc; i++) {
		check_dur(argv[i]);
		check_numbers(argv[i]);
		check_words(argv[i]);
		check_at(argv[i], now);
	}
	check_getopt(argc, argv);
	free(copy);
	return 0;
}
