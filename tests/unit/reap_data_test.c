/* run data past retention (reaper/reap_data.c), on real files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reap_pass.h"

static char home[256];

static int
setup(void **state)
{
	snprintf(home, sizeof(home), "/tmp/reap_data_test.XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

static void
put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static int
exists(const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	return stat(path, &st) == 0;
}

static void
test_removes_run_dir_and_files(void **state)
{
	const char *run = "0123456789abcdef0123456789abcdef";
	char path[512];

	snprintf(path, sizeof(path), "%s/runs", home);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/runs/%s", home, run);
	assert_int_equal(mkdir(path, 0700), 0);
	put("runs/0123456789abcdef0123456789abcdef/output.log", "hello\n");
	put("runs/0123456789abcdef0123456789abcdef/exit", "exit_code 0\n");
	put("runs/0123456789abcdef0123456789abcdef/started", "");
	/* A neighbour must survive. */
	assert_int_equal(mkdir(strcat(strcpy(path, home), "/runs/ffff"), 0700), 0);
	put("runs/ffff/output.log", "keep\n");

	assert_int_equal(reap_data_remove(home, run), 0);
	assert_false(exists("runs/0123456789abcdef0123456789abcdef"));
	assert_true(exists("runs/ffff/output.log"));
	/* Gone already: still success. */
	assert_int_equal(reap_data_remove(home, run), 0);
}

static void
test_refuses_odd_ids(void **state)
{
	put("precious", "x");
	assert_int_equal(reap_data_remove(home, "../precious"), -1);
	assert_int_equal(reap_data_remove(home, ""), -1);
	assert_int_equal(reap_data_remove(home, "abc/def"), -1);
	assert_true(exists("precious"));
	assert_true(reap_run_id_valid("0af9"));
	assert_false(reap_run_id_valid("T3-r1"));
	assert_false(reap_run_id_valid(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removes_run_dir_and_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_odd_ids, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
