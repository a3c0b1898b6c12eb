/* cli_table: tables that fit the terminal (berth list, berth status): no
 * row wider than the terminal, no trailing blanks, the shrinkable columns
 * cut widest first down to their floor, UTF-8 measured in columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

static const char *const heads[] = { "ID", "STATE", "COMMAND", "WAITING" };
static const size_t floors[] = { 0, 0, 10, 8 };

/* Prints tb at width into a buffer (caller frees). */
static char *
render(const struct cli_table *tb, size_t width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_table_print(f, tb, width);
	fclose(f);
	return buf;
}

static void
fill(struct cli_table *tb)
{
	const char *r1[] = { "T1", "ready", "sh -c 'for i in 1 2 3; do make -C pkg/$i lint; done'",
			     "blocked: waiting for T7 to succeed (claimed)" };
	const char *r2[] = { "T12", "succeeded", "true", "" };

	assert_int_equal(cli_table_init(tb, 4, heads, floors), 0);
	assert_int_equal(cli_table_add(tb, r1), 0);
	assert_int_equal(cli_table_add(tb, r2), 0);
}

/* Every line at most width columns, none ending in a blank. */
static void
assert_fits(const char *out, size_t width)
{
	const char *p = out, *nl;

	while ((nl = strchr(p, '\n')) != NULL) {
		char line[512];
		size_t len = (size_t)(nl - p);

		assert_true(len < sizeof line);
		memcpy(line, p, len);
		line[len] = '\0';
		if (width > 0)
			assert_true(cli_text_width(line) <= width);
		assert_true(len == 0 || line[len - 1] != ' ');
		p = nl + 1;
	}
	assert_int_equal(*p, '\0');
}

static void
test_unlimited_is_whole(void **state)
{
	struct cli_table tb;
	char *out;

	fill(&tb);
	out = render(&tb, 0);
	assert_fits(out, 0);
	assert_non_null(strstr(out, "make -C pkg/$i lint; done'"));
	assert_non_null(strstr(out, "(claimed)\n"));
	/* Columns line up: the STATE column starts where its head does. */
	assert_non_null(strstr(out, "ID  STATE     COMMAND"));
	assert_non_null(strstr(out, "T12 succeeded true\n"));
	free(out);
	cli_table_free(&tb);
}

static void
test_narrow_cuts_the_widest_first(void **state)
{
	struct cli_table tb;
	size_t w[4];
	char *out;

	fill(&tb);
	cli_table_fit(&tb, 80, w);
	assert_int_equal(w[0], 3);
	assert_int_equal(w[1], 9);
	assert_true(w[0] + w[1] + w[2] + w[3] + 3 <= 80);
	/* Both gave up width, neither below its floor, and they end within
	 * a column of each other (widest first). */
	assert_true(w[2] >= 10 && w[3] >= 8);
	assert_true(w[2] + 1 >= w[3] && w[3] + 1 >= w[2]);
	out = render(&tb, 80);
	assert_fits(out, 80);
	assert_non_null(strstr(out, "..."));
	assert_non_null(strstr(out, "T12 succeeded true\n"));
	free(out);
	cli_table_free(&tb);
}

/* Narrower than the floors allow: the row is cut at the edge, never
 * wrapped. */
static void
test_below_the_floors_cuts_at_the_edge(void **state)
{
	struct cli_table tb;
	char *out;

	fill(&tb);
	out = render(&tb, 20);
	assert_fits(out, 20);
	assert_int_equal(strncmp(out, "ID  STATE     COM...\n", 21), 0);
	free(out);
	cli_table_free(&tb);
}

static void
test_utf8_is_measured_in_columns(void **state)
{
	const char *row[] = { "T1", "ready", "echo h\xc3\xa9llo \xe6\xbc\xa2\xe5\xad\x97", "-" };
	struct cli_table tb;
	char *out;

	assert_int_equal(cli_text_width("h\xc3\xa9llo"), 5);
	assert_int_equal(cli_text_width("\xe6\xbc\xa2\xe5\xad\x97"), 4);
	assert_int_equal(cli_text_width("e\xcc\x81"), 1);
	assert_int_equal(cli_table_init(&tb, 4, heads, floors), 0);
	assert_int_equal(cli_table_add(&tb, row), 0);
	out = render(&tb, 25);
	assert_fits(out, 25);
	/* Never half a character. */
	assert_null(strstr(out, "\xe6\xbc\n"));
	free(out);
	cli_table_free(&tb);
}

static void
test_term_width_from_columns(void **state)
{
	setenv("COLUMNS", "57", 1);
	assert_int_equal(cli_term_width(), 57);
	setenv("COLUMNS", "junk", 1);
	/* Not a number, and stdout of a test is not a terminal. */
	assert_int_equal(cli_term_width(), 0);
	unsetenv("COLUMNS");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unlimited_is_whole),
		cmocka_unit_test(test_narrow_cuts_the_widest_first),
		cmocka_unit_test(test_below_the_floors_cuts_at_the_edge),
		cmocka_unit_test(test_utf8_is_measured_in_columns),
		cmocka_unit_test(test_term_width_from_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
