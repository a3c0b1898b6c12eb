/* util: durations, home directory, JSON strings, atomic file writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

static char tmp[64];

static int
setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/util_test.XXXXXX");
	return mkdtemp(tmp) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_dur_parse_accepts(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} v[] = {
		{ "250ms", 250 },   { "5s", 5000 },      { "2m", 120000 },
		{ "1h", 3600000 },  { "1d", 86400000 },  { "30", 30000 },
		{ "0", 0 },         { "0ms", 0 },        { "1h30m", 5400000 },
		{ "2m5s", 125000 }, { "1s500ms", 1500 }, { "9223372036854775807ms", INT64_MAX },
	};
	size_t i;
	int64_t ms;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ms = -42;
		if (dur_parse(v[i].s, &ms) != 0)
			fail_msg("dur_parse(\"%s\") refused", v[i].s);
		assert_int_equal(ms, v[i].ms);
	}
}

static void
test_dur_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"-5s",
		"-1",
		"+5s",
		"5x",
		"s",
		"ms",
		"5 s",
		" 5s",
		"5s ",
		"1.5s",
		"abc",
		"5sec",
		"1m30",
		"9223372036854775807s",
		"99999999999999999999",
		"9223372036854775807ms1ms",
		"5mss",
		"1hh",
	};
	size_t i;
	int64_t ms = 7;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dur_parse(bad[i], &ms) != -1)
			fail_msg("dur_parse(\"%s\") accepted", bad[i]);
	assert_int_equal(dur_parse(NULL, &ms), -1);
	assert_int_equal(ms, 7); /* untouched on refusal */
}

static void
test_dur_format(void **state)
{
	static const struct {
		int64_t ms;
		const char *s;
	} v[] = {
		{ 0, "0ms" },
		{ 850, "850ms" },
		{ 999, "999ms" },
		{ 1000, "1s" },
		{ 42000, "42s" },
		{ 42999, "42s" },
		{ 180000, "3m" },
		{ 200000, "3m20s" },
		{ 3600000, "1h" },
		{ 7500000, "2h5m" },
		{ 7500999, "2h5m" },
		{ 86400000, "1d" },
		{ 3 * 86400000LL + 4 * 3600000LL, "3d4h" },
		{ -1500, "-1s" },
		{ -850, "-850ms" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		dur_format(v[i].ms, buf, sizeof(buf));
		assert_string_equal(buf, v[i].s);
	}
}

/* What dur_format writes, dur_parse reads back (to the shown precision). */
static void
test_dur_round_trip(void **state)
{
	int64_t v[] = { 850, 42000, 200000, 7500000, 3 * 86400000LL + 4 * 3600000LL };
	char buf[32];
	int64_t ms;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		dur_format(v[i], buf, sizeof(buf));
		assert_int_equal(dur_parse(buf, &ms), 0);
		assert_int_equal(ms, v[i]);
	}
}

static void
test_time_format(void **state)
{
	char buf[32];

	setenv("TZ", "UTC", 1);
	tzset();
	time_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01 00:00:00");
	time_format(1796020251123LL, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-30 06:30:51");
}

static void
test_home_default(void **state)
{
	char *h;

	setenv("BERTH_HOME", "/x/berth-home", 1);
	setenv("XDG_STATE_HOME", "/x/state", 1);
	setenv("HOME", "/x/home", 1);
	h = home_default();
	assert_string_equal(h, "/x/berth-home");
	free(h);
	unsetenv("BERTH_HOME");
	h = home_default();
	assert_string_equal(h, "/x/state/berth");
	free(h);
	setenv("BERTH_HOME", "", 1);
	unsetenv("XDG_STATE_HOME");
	h = home_default();
	assert_string_equal(h, "/x/home/.local/state/berth");
	free(h);
	/* A relative XDG_STATE_HOME is invalid per the XDG spec: ignored. */
	setenv("XDG_STATE_HOME", "relative", 1);
	h = home_default();
	assert_string_equal(h, "/x/home/.local/state/berth");
	free(h);
	unsetenv("XDG_STATE_HOME");
	unsetenv("BERTH_HOME");
}

static int
mode_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	return st.st_mode & 07777;
}

static void
test_home_ensure_creates_0700(void **state)
{
	char path[128], parent[128];

	snprintf(parent, sizeof(parent), "%s/a/b", tmp);
	snprintf(path, sizeof(path), "%s/a/b/berth/", tmp);
	assert_int_equal(home_ensure(path), 0);
	assert_int_equal(mode_of(path), 0700);
	assert_int_equal(mode_of(parent), 0700);
	/* Idempotent. */
	assert_int_equal(home_ensure(path), 0);
}

/* An existing home is checked, never changed (issue 10: `--home` on a
 * 1777 directory silently became 0700). */
static void
test_home_check_refuses_writable_and_leaves_it(void **state)
{
	static const int modes[] = { 01777, 0777, 0770, 0720, 0702 };
	char path[128], err[512];
	size_t i;

	snprintf(path, sizeof(path), "%s/shared", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char want[64];

		assert_int_equal(chmod(path, modes[i]), 0);
		err[0] = '\0';
		assert_int_equal(home_check(path, 1, err, sizeof(err)), -1);
		assert_int_equal(mode_of(path), modes[i]);
		snprintf(want, sizeof(want), " is mode %o (group- or world-writable)", modes[i]);
		assert_non_null(strstr(err, want));
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, "refusing to use it as BERTH_HOME"));
		assert_int_equal(home_ensure(path), -1);
		assert_int_equal(mode_of(path), modes[i]);
	}
	/* Readable by others is their business; it is left as it is too. */
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(home_check(path, 0, err, sizeof(err)), 0);
	assert_int_equal(mode_of(path), 0755);
}

/* Owned by someone else: refused, whatever the mode (root can make one). */
static void
test_home_check_refuses_other_owner(void **state)
{
	char path[128], err[512];

	if (geteuid() != 0)
		skip();
	snprintf(path, sizeof(path), "%s/theirs", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(home_check(path, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "belongs to uid 65534, not to you (uid 0)"));
	assert_non_null(strstr(err, "permission denied"));
	assert_int_equal(mode_of(path), 0700);
}

static void
test_home_check_missing(void **state)
{
	char path[128], err[512];

	snprintf(path, sizeof(path), "%s/nothing/here", tmp);
	assert_int_equal(home_check(path, 0, err, sizeof(err)), 1);
	assert_int_equal(mode_of(path), -1); /* not created */
	assert_int_equal(home_check(path, 1, err, sizeof(err)), 0);
	assert_int_equal(mode_of(path), 0700);
}

static void
test_home_ensure_refuses_file(void **state)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/file", tmp);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(home_ensure(path), -1);
	assert_int_equal(home_ensure(""), -1);
}

static void
test_home_paths(void **state)
{
	char buf[256], longhome[200];

	assert_int_equal(home_socket_url("/tmp/h", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ipc:///tmp/h/coordinator.sock");
	assert_int_equal(home_socket_url("/tmp/h", buf, 10), -1);
	memset(longhome, 'x', sizeof(longhome) - 1);
	longhome[0] = '/';
	longhome[sizeof(longhome) - 1] = '\0';
	assert_int_equal(home_socket_url(longhome, buf, sizeof(buf)), -1);

	assert_int_equal(home_run_dir("/tmp/h", "0123abcd", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/h/runs/0123abcd");
	assert_int_equal(home_run_dir("/tmp/h", "../etc", buf, sizeof(buf)), -1);
	assert_int_equal(home_run_dir("/tmp/h", "a/b", buf, sizeof(buf)), -1);
	assert_int_equal(home_run_dir("/tmp/h", "", buf, sizeof(buf)), -1);
	assert_int_equal(home_run_dir("/tmp/h", "..", buf, sizeof(buf)), -1);
	assert_int_equal(home_run_dir("/tmp/h", "abc", buf, 8), -1);
}

/* esc_text and esc_fputs agree, and esc_text's return is the length. */
static void
assert_esc(const char *in, const char *want)
{
	char buf[256], *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	esc_fputs(f, in);
	fclose(f);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(esc_text(buf, sizeof(buf), in), strlen(want));
	assert_string_equal(buf, want);
}

static void
test_esc_controls(void **state)
{
	assert_esc("", "");
	assert_esc(NULL, "");
	assert_esc("plain text, 'quotes' \"too\"", "plain text, 'quotes' \"too\"");
	/* The attacks of issue 10: clear the screen, colour, a forged row. */
	assert_esc("\x1b[2J\x1b[31mred", "\\e[2J\\e[31mred");
	assert_esc("a\nT9  ready", "a\\nT9  ready");
	assert_esc("bell\x07", "bell\\x07");
	assert_esc("\t\r\\", "\\t\\r\\\\");
	assert_esc("\x01\x1f\x7f\b\f\v", "\\x01\\x1f\\x7f\\x08\\x0c\\x0b");
	/* A literal backslash-e is not mistaken for an escape. */
	assert_esc("\\e", "\\\\e");
}

static void
test_esc_utf8(void **state)
{
	/* Valid UTF-8 passes through. */
	assert_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\xa2",
		   "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\xa2");
	/* U+00A0, the first character after the C1 block, too. */
	assert_esc("\xc2\xa0", "\xc2\xa0");
	/* C1 controls (U+009B is CSI on some terminals) are escaped. */
	assert_esc("\xc2\x9b"
		   "2J\xc2\x80",
		   "\\xc2\\x9b"
		   "2J\\xc2\\x80");
	/* Invalid bytes, one escape each. */
	assert_esc("a\xff"
		   "b",
		   "a\\xffb");
	assert_esc("\xc0\xaf", "\\xc0\\xaf");
	assert_esc("\xed\xa0\x80", "\\xed\\xa0\\x80");
	assert_esc("x\xe2\x82", "x\\xe2\\x82");
}

/* A short buffer holds a prefix of whole pieces; the return says how long
 * the whole would be. */
static void
test_esc_text_truncates_whole_pieces(void **state)
{
	char buf[8];

	assert_int_equal(esc_text(buf, sizeof(buf), "abcdef\x1b[2J"), 11);
	assert_string_equal(buf, "abcdef"); /* "\e" would not fit with its NUL */
	assert_int_equal(esc_text(buf, 5, "ab\xe2\x82\xac"), 5);
	assert_string_equal(buf, "ab"); /* not half a euro sign */
	assert_int_equal(esc_text(NULL, 0, "\x07"), 4);
	assert_int_equal(esc_text(buf, 1, "x"), 1);
	assert_string_equal(buf, "");
}

static char *
read_all(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static int
count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void
test_file_write_atomic(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/rec", tmp);
	assert_int_equal(file_write_atomic(path, "first\n", 6), 0);
	assert_string_equal(read_all(path), "first\n");
	assert_int_equal(file_write_atomic(path, "second, longer\n", 15), 0);
	assert_string_equal(read_all(path), "second, longer\n");
	assert_int_equal(file_write_atomic(path, "", 0), 0);
	assert_string_equal(read_all(path), "");
	/* No temp file is left behind. */
	assert_int_equal(count_entries(tmp), 1);
}

static void
test_file_write_atomic_fails_cleanly(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/missing/rec", tmp);
	assert_int_equal(file_write_atomic(path, "x", 1), -1);
	/* Renaming onto a directory fails; the temp file is removed. */
	snprintf(path, sizeof(path), "%s/adir", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(file_write_atomic(path, "x", 1), -1);
	assert_int_equal(count_entries(tmp), 1);
}

/* Runs one opt_parse_ms with stderr sent to a file; returns its result and
 * leaves what it wrote in msg. */
static int
opt_ms_quiet(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out, char *msg,
	     size_t n)
{
	char path[128];
	int saved, fd, rc;

	snprintf(path, sizeof(path), "%s/stderr", tmp);
	fflush(stderr);
	saved = dup(2);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
	dup2(fd, 2);
	close(fd);
	rc = opt_parse_ms(opt, s, min, max, out);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	snprintf(msg, n, "%s", read_all(path));
	return rc;
}

static void
test_opt_parse_ms_accepts_plain_numbers_in_range(void **state)
{
	int64_t v = -1;

	assert_int_equal(opt_parse_ms("--tick-ms", "0", 0, 100, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(opt_parse_ms("--tick-ms", "100", 0, 100, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(opt_parse_ms("--lease-ms", "2592000000", 1, 2592000000LL, &v), 0);
	assert_int_equal(v, 2592000000LL);
}

static void
test_opt_parse_ms_refuses_out_of_range_and_non_numbers(void **state)
{
	static const char *bad[] = { "",    "x",  "5s",  "1.5",
				     "12 ", "-1", "101", "99999999999999999999" };
	char msg[256];
	int64_t v = 42;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(opt_ms_quiet("--tick-ms", bad[i], 0, 100, &v, msg, sizeof(msg)),
				 -1);
		assert_int_equal(v, 42);
	}
	/* A lower bound above 0: the coordinator wants positive durations. */
	assert_int_equal(opt_ms_quiet("--lease-ms", "0", 1, 100, &v, msg, sizeof(msg)), -1);
	assert_int_equal(v, 42);
}

static void
test_opt_parse_ms_says_program_option_and_value(void **state)
{
	char msg[256];
	int64_t v;

	assert_int_equal(opt_ms_quiet("--grace-ms", "soon", 0, 100, &v, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, program_invocation_short_name));
	assert_non_null(strstr(msg, "--grace-ms"));
	assert_non_null(strstr(msg, "'soon'"));
	assert_non_null(strstr(msg, "from 0 to 100"));
	assert_non_null(strchr(msg, '\n'));
}

static void
test_opt_parse_int(void **state)
{
	int v = 7;

	assert_int_equal(opt_parse_int("--slots", "3", 1, INT_MAX, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(opt_parse_int("--slots", "2147483647", 1, INT_MAX, &v), 0);
	assert_int_equal(v, INT_MAX);
	assert_int_equal(opt_parse_int("--slots", "0", 1, INT_MAX, &v), -1);
	assert_int_equal(opt_parse_int("--slots", "2147483648", 1, INT_MAX, &v), -1);
	assert_int_equal(v, INT_MAX);
}

static void
test_hex_digit(void **state)
{
	const char *digits = "0123456789abcdef", *upper = "ABCDEF";
	int i, c;

	for (i = 0; i < 16; i++)
		assert_int_equal(hex_digit(digits[i]), i);
	for (i = 0; i < 6; i++)
		assert_int_equal(hex_digit(upper[i]), 10 + i);
	for (c = -1; c < 256; c++)
		if (c <= 0 || strchr("0123456789abcdefABCDEF", c) == NULL)
			assert_int_equal(hex_digit(c), -1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dur_parse_accepts),
		T(test_dur_parse_refuses),
		T(test_dur_format),
		T(test_dur_round_trip),
		T(test_time_format),
		T(test_home_default),
		T(test_home_ensure_creates_0700),
		T(test_home_check_refuses_writable_and_leaves_it),
		T(test_home_check_refuses_other_owner),
		T(test_home_check_missing),
		T(test_home_ensure_refuses_file),
		T(test_home_paths),
		T(test_esc_controls),
		T(test_esc_utf8),
		T(test_esc_text_truncates_whole_pieces),
		T(test_file_write_atomic),
		T(test_file_write_atomic_fails_cleanly),
		T(test_opt_parse_ms_accepts_plain_numbers_in_range),
		T(test_opt_parse_ms_refuses_out_of_range_and_non_numbers),
		T(test_opt_parse_ms_says_program_option_and_value),
		T(test_opt_parse_int),
		T(test_hex_digit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
