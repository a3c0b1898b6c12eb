/* The retention watermark file (reaper/reap_mark.c), on real files in a
 * temporary home. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
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
	(void)state;
	snprintf(home, sizeof(home), "/tmp/reap_mark_test.XXXXXX");
	return mkdtemp(home) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes text (len bytes) as the watermark file. */
static void
put(const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/reaper", home);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/reaper/retention", home);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
put_str(const char *text)
{
	put(text, strlen(text));
}

static void
test_path_is_under_home(void **state)
{
	char want[512], got[512];

	(void)state;
	snprintf(want, sizeof(want), "%s/reaper/retention", home);
	assert_int_equal(reap_mark_path(home, got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_int_equal(reap_mark_path(home, got, 8), -1);
}

static void
test_missing_file_means_the_beginning(void **state)
{
	char dir[512];

	(void)state;
	assert_int_equal(reap_mark_load(home), 0);
	/* Nor does loading create anything. */
	snprintf(dir, sizeof(dir), "%s/reaper", home);
	assert_int_equal(access(dir, F_OK), -1);
}

static void
test_empty_file_means_the_beginning(void **state)
{
	(void)state;
	put_str("");
	assert_int_equal(reap_mark_load(home), 0);
}

static void
test_garbage_means_the_beginning(void **state)
{
	static const char *const bad[] = {
		"abc\n", "-5\n",       "+5\n",  " 5\n",
		"12x\n", "123\n456\n", "5\n\n", "99999999999999999999999\n",
		"\n",    "0x10\n",
	};
	char big[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_str(bad[i]);
		assert_int_equal(reap_mark_load(home), 0);
	}
	/* Longer than any number, even if it starts like one. */
	memset(big, '7', sizeof(big));
	put(big, sizeof(big));
	assert_int_equal(reap_mark_load(home), 0);
	/* A NUL inside. */
	put("12\0003\n", 5);
	assert_int_equal(reap_mark_load(home), 0);
}

static void
test_unreadable_means_the_beginning(void **state)
{
	char path[512];

	(void)state;
	/* A directory where the file should be: open works, read fails. */
	snprintf(path, sizeof(path), "%s/reaper", home);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/reaper/retention", home);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(reap_mark_load(home), 0);
	/* And saving over it fails without harm. */
	assert_int_equal(reap_mark_save(home, 42), -1);
	assert_int_equal(reap_mark_load(home), 0);
}

static void
test_valid_value_is_read(void **state)
{
	(void)state;
	put_str("1700000000000\n");
	assert_int_equal(reap_mark_load(home), 1700000000000LL);
	put_str("1700000000001"); /* no newline: still whole */
	assert_int_equal(reap_mark_load(home), 1700000000001LL);
	put_str("0\n");
	assert_int_equal(reap_mark_load(home), 0);
}

/* save creates reaper/, writes the value and a load reads it back; a
 * second save replaces the file by rename (a new inode, never the old one
 * rewritten in place) and leaves no temp file behind. */
static void
test_save_is_atomic_and_read_back(void **state)
{
	char path[512], dirpath[512];
	struct stat a, b;
	struct dirent *de;
	DIR *d;
	FILE *f;
	char text[64];
	int n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/reaper/retention", home);
	snprintf(dirpath, sizeof(dirpath), "%s/reaper", home);
	assert_int_equal(reap_mark_save(home, 1700000000000LL), 0);
	assert_int_equal(stat(dirpath, &a), 0);
	assert_int_equal(a.st_mode & 0777, 0700);
	assert_int_equal(reap_mark_load(home), 1700000000000LL);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, "1700000000000\n");

	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(reap_mark_save(home, 1700000099999LL), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_true(a.st_ino != b.st_ino);
	assert_int_equal(reap_mark_load(home), 1700000099999LL);

	assert_non_null(d = opendir(dirpath));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			assert_string_equal(de->d_name, "retention");
			n++;
		}
	closedir(d);
	assert_int_equal(n, 1);
}

/* A home where reaper/ cannot be made: -1, nothing crashes. */
static void
test_save_fails_cleanly(void **state)
{
	char path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/reaper", home);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	assert_int_equal(reap_mark_save(home, 5), -1);
	assert_int_equal(reap_mark_load(home), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_is_under_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file_means_the_beginning, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_means_the_beginning, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage_means_the_beginning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_means_the_beginning, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_valid_value_is_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_is_atomic_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_fails_cleanly, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
