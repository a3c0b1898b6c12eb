/* log: the line format, level filtering and BERTH_LOG_LEVEL. stderr is
 * redirected to a temp file for each test. */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static char path[64];
static int saved_stderr = -1;

static int
setup(void **state)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/log_test.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
	unsetenv("BERTH_LOG_LEVEL");
	log_init("tester");
	log_set_level(LOG_INFO);
	return 0;
}

static int
teardown(void **state)
{
	dup2(saved_stderr, 2);
	close(saved_stderr);
	unlink(path);
	return 0;
}

static char *
captured(void)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void
test_line_format(void **state)
{
	regex_t re;

	log_info("claimed %s attempt %d", "T3", 2);
	assert_int_equal(regcomp(&re,
				 "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
				 "\\.[0-9]{3}Z tester info claimed T3 attempt 2\n$",
				 REG_EXTENDED),
			 0);
	assert_int_equal(regexec(&re, captured(), 0, NULL, 0), 0);
	regfree(&re);
}

static void
test_min_level_filters(void **state)
{
	log_debug("hidden debug");
	log_info("shown info");
	log_set_level(LOG_ERROR);
	log_warn("hidden warn");
	log_error("shown error");
	assert_null(strstr(captured(), "hidden"));
	assert_non_null(strstr(captured(), "tester info shown info\n"));
	assert_non_null(strstr(captured(), "tester error shown error\n"));
}

static void
test_env_sets_level(void **state)
{
	setenv("BERTH_LOG_LEVEL", "debug", 1);
	log_init("envy");
	log_debug("now visible");
	setenv("BERTH_LOG_LEVEL", "WARN", 1);
	log_init("envy");
	log_info("not visible");
	log_warn("visible warn");
	unsetenv("BERTH_LOG_LEVEL");
	assert_non_null(strstr(captured(), "envy debug now visible\n"));
	assert_null(strstr(captured(), "not visible"));
	assert_non_null(strstr(captured(), "envy warn visible warn\n"));
}

static void
test_one_line_per_message(void **state)
{
	char *out;

	log_info("first\nsecond\n\n");
	out = captured();
	assert_non_null(strstr(out, "tester info first\\nsecond\n"));
	assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
}

/* What a log line quotes from a job cannot reach the terminal raw. */
static void
test_control_characters_escaped(void **state)
{
	char *out;

	log_info("spawn %s", "sh -c '\x1b[2J\x1b[31m\x07'");
	out = captured();
	assert_non_null(strstr(out, "tester info spawn sh -c '\\e[2J\\e[31m\\x07'\n"));
	assert_null(strchr(out, 0x1b));
	assert_null(strchr(out, 0x07));
}

static void
test_long_message_truncated_to_one_line(void **state)
{
	char big[5000], *out;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_info("%s", big);
	out = captured();
	assert_int_equal(out[strlen(out) - 1], '\n');
	assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
}

/* An actor's log (stderr opened for appending) on a full disk, here its
 * size limit: a line that does not fit is lost whole, never left torn, and
 * the next line that fits starts a line of its own. */
static void
test_full_log_loses_lines_whole(void **state)
{
	struct rlimit old, lim;
	struct stat st;
	char *text, *nl;
	int fd, lines = 0;

	(void)state;
	fd = open(path, O_WRONLY | O_APPEND | O_TRUNC);
	assert_true(fd >= 0);
	dup2(fd, 2);
	close(fd);
	signal(SIGXFSZ, SIG_IGN);
	log_info("first line");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 60;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	log_info("a line much too long to fit in the sixty bytes left before the limit");
	log_info("short");
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	text = captured();
	assert_null(strstr(text, "much too long"));
	assert_non_null(strstr(text, "first line\n"));
	assert_non_null(strstr(text, "short\n"));
	for (nl = text; (nl = strchr(nl, '\n')) != NULL; nl++)
		lines++;
	assert_int_equal(lines, 2);
	assert_int_equal(text[strlen(text) - 1], '\n');
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_line_format),
		T(test_full_log_loses_lines_whole),
		T(test_min_level_filters),
		T(test_env_sets_level),
		T(test_one_line_per_message),
		T(test_control_characters_escaped),
		T(test_long_message_truncated_to_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
