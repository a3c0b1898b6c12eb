/* Placement names (common/labels.c): the one rule for host ids and labels,
 * lists checked whole (empty names, too long, strange characters, twice,
 * too many), joined, and the cover a claim asks of a host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "labels.h"

static void
test_name(void **state)
{
	char long_name[LABELS_NAME_MAX + 2];

	(void)state;
	assert_true(labels_name_ok("gpu"));
	assert_true(labels_name_ok("a.b_c-9"));
	assert_false(labels_name_ok(""));
	assert_false(labels_name_ok(NULL));
	assert_false(labels_name_ok("a b"));
	assert_false(labels_name_ok("a,b"));
	assert_false(labels_name_ok("gpu\n"));
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	assert_false(labels_name_ok(long_name));
	long_name[LABELS_NAME_MAX] = '\0';
	assert_true(labels_name_ok(long_name));
}

static void
test_check_list(void **state)
{
	char why[200], many[200] = "";
	int i;

	(void)state;
	assert_int_equal(labels_check_list("gpu", "--on", why, sizeof why), 0);
	assert_int_equal(labels_check_list("gpu,ssd,x.y", "--on", why, sizeof why), 0);
	assert_int_equal(labels_check_list("", "--on", why, sizeof why), -1);
	assert_non_null(strstr(why, "empty"));
	assert_int_equal(labels_check_list("gpu,", "--on", why, sizeof why), -1);
	assert_non_null(strstr(why, "empty"));
	assert_int_equal(labels_check_list("gpu,,ssd", "--on", why, sizeof why), -1);
	assert_int_equal(labels_check_list("gpu,g\x1b[2Jx", "--labels", why, sizeof why), -1);
	assert_non_null(strstr(why, "character"));
	assert_null(strchr(why, '\x1b')); /* shown safely */
	assert_int_equal(strncmp(why, "--labels: ", 10), 0);
	assert_int_equal(labels_check_list("gpu,ssd,gpu", "--on", why, sizeof why), -1);
	assert_non_null(strstr(why, "'gpu' is given twice"));
	for (i = 0; i < LABELS_MAX; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%sl%d", i ? "," : "", i);
	assert_int_equal(labels_check_list(many, "--on", why, sizeof why), 0);
	strcat(many, ",one-more");
	assert_int_equal(labels_check_list(many, "--on", why, sizeof why), -1);
	assert_non_null(strstr(why, "more than"));
	assert_int_equal(
		labels_check_list(
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "--on",
			why, sizeof why),
		-1);
	assert_non_null(strstr(why, "65 bytes"));
}

static void
test_check_vector(void **state)
{
	char *ok[] = { "gpu", "ssd" }, *dup[] = { "gpu", "gpu" }, *bad[] = { "gpu", "" };
	char *comma[] = { "a,b" }, *null[] = { NULL };
	char why[200];

	(void)state;
	assert_int_equal(labels_check(ok, 2, "labels", why, sizeof why), 0);
	assert_int_equal(labels_check(ok, 0, "labels", why, sizeof why), 0);
	assert_int_equal(labels_check(dup, 2, "labels", why, sizeof why), -1);
	assert_int_equal(labels_check(bad, 2, "labels", why, sizeof why), -1);
	assert_int_equal(labels_check(comma, 1, "labels", why, sizeof why), -1);
	assert_int_equal(labels_check(null, 1, "labels", why, sizeof why), -1);
	assert_int_equal(labels_check(ok, LABELS_MAX + 1, "labels", why, sizeof why), -1);
}

static void
test_join_cover(void **state)
{
	char *v[] = { "gpu", "ssd" };
	char out[16], tiny[6];

	(void)state;
	assert_int_equal(labels_join(v, 2, out, sizeof out), 0);
	assert_string_equal(out, "gpu,ssd");
	assert_int_equal(labels_join(v, 0, out, sizeof out), 0);
	assert_string_equal(out, "");
	assert_int_equal(labels_join(v, 2, tiny, sizeof tiny), -1);
	assert_true(labels_cover("gpu,ssd", ""));
	assert_true(labels_cover("", ""));
	assert_true(labels_cover("gpu,ssd", "ssd"));
	assert_true(labels_cover("gpu,ssd", "ssd,gpu"));
	assert_false(labels_cover("gpu,ssd", "gpu,big"));
	assert_false(labels_cover("", "gpu"));
	assert_false(labels_cover("gpu2", "gpu")); /* whole names, not prefixes */
	assert_false(labels_cover("gpu", "gp"));
	assert_false(labels_cover("a_b", "axb"));
	assert_true(labels_cover("x,a_b", "a_b"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_check_list),
		cmocka_unit_test(test_check_vector),
		cmocka_unit_test(test_join_cover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
