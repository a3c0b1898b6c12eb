/* Arrays that grow (common/vec.c): doubling from 8 to at least what is
 * asked, nothing moved when there is room, overflow refused with the array
 * untouched; string vectors stay NULL-terminated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

static void
test_grow(void **state)
{
	int *v = NULL, *before;
	size_t cap = 0, i;

	assert_int_equal(vec_grow(&v, &cap, 1, sizeof(*v)), 0);
	assert_int_equal(cap, 8);
	for (i = 0; i < 8; i++)
		v[i] = (int)i;
	before = v;
	assert_int_equal(vec_grow(&v, &cap, 8, sizeof(*v)), 0);
	assert_ptr_equal(v, before); /* room enough: nothing moves */
	assert_int_equal(vec_grow(&v, &cap, 9, sizeof(*v)), 0);
	assert_int_equal(cap, 16);
	assert_int_equal(vec_grow(&v, &cap, 100, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	for (i = 0; i < 8; i++)
		assert_int_equal(v[i], (int)i);
	free(v);
}

static void
test_overflow(void **state)
{
	char *v = NULL;
	size_t cap = 0;

	assert_int_equal(vec_grow(&v, &cap, 4, 1), 0);
	errno = 0;
	assert_int_equal(vec_grow(&v, &cap, SIZE_MAX, 1), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(cap, 8);
	assert_int_equal(vec_grow(&v, &cap, SIZE_MAX / 4, 16), -1);
	assert_int_equal(cap, 8);
	assert_non_null(v);
	free(v);
}

static void
test_strings(void **state)
{
	char **v = NULL, s[8];
	size_t n = 0, cap = 0, i;

	for (i = 0; i < 20; i++) {
		snprintf(s, sizeof(s), "s%zu", i);
		assert_int_equal(vec_push_str(&v, &n, &cap, s), 0);
		assert_null(v[n]);
	}
	assert_int_equal(n, 20);
	assert_string_equal(v[0], "s0");
	assert_string_equal(v[19], "s19");
	vec_free_str(v);
	vec_free_str(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
