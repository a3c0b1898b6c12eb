/*
 * JSON strings (common/json.c): the writer's two forms — valid text for
 * output, bytes kept for storage — and the reader, which gives back what
 * either wrote, refuses what is not a whole string, and cuts a long one at a
 * character boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void
assert_json(const char *in, const char *want)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	json_str(f, in);
	fclose(f);
	assert_string_equal(out, want);
	free(out);
}

/* json_put writes what json_write writes, within json_size. */
static void
assert_bytes(const char *in, const char *want)
{
	size_t n = json_size(in);
	char *buf = malloc(n + 1), *end;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	end = json_put(buf, in, JSON_BYTES);
	assert_true((size_t)(end - buf) <= n);
	*end = '\0';
	assert_string_equal(buf, want);
	json_write(f, in, JSON_BYTES);
	fclose(f);
	assert_string_equal(out, want);
	free(out);
	free(buf);
}

static void
test_text_escapes(void **state)
{
	assert_json("", "\"\"");
	assert_json(NULL, "\"\"");
	assert_json("plain text", "\"plain text\"");
	assert_json("q\"b\\s/", "\"q\\\"b\\\\s/\"");
	assert_json("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	assert_json("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
}

static void
test_text_valid_utf8_passes(void **state)
{
	assert_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\xa2",
		    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\xa2\"");
}

/* Each byte that does not start a valid sequence becomes one U+FFFD, and
 * the bytes after it are read afresh. */
static void
test_text_invalid_utf8_replaced(void **state)
{
	assert_json("a\xff"
		    "b",
		    "\"a\\ufffdb\"");
	assert_json("\x80", "\"\\ufffd\"");
	assert_json("\xc0\xaf", "\"\\ufffd\\ufffd\"");                       /* overlong '/' */
	assert_json("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");            /* overlong */
	assert_json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");            /* surrogate */
	assert_json("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	assert_json("x\xe2\x82", "\"x\\ufffd\\ufffd\"");                     /* truncated */
	assert_json("\xc3"
		    "A",
		    "\"\\ufffdA\"");
}

/* The storage form escapes only what JSON requires and keeps every other
 * byte, UTF-8 or not. */
static void
test_bytes_form(void **state)
{
	assert_bytes("", "\"\"");
	assert_bytes("a\"b\\c", "\"a\\\"b\\\\c\"");
	assert_bytes("\n\t\x01\x1f", "\"\\u000a\\u0009\\u0001\\u001f\"");
	assert_bytes("\x7f\xff\xc3", "\"\x7f\xff\xc3\"");
	assert_bytes("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	assert_int_equal(json_size("ab"), 14);
}

static int
read_str(const char *in, char *out, size_t cap, int *lossy, size_t *used)
{
	const char *p = in;
	int rc = json_read_str(&p, in + strlen(in), out, cap, lossy);

	*used = (size_t)(p - in);
	return rc;
}

static void
test_read(void **state)
{
	char out[64];
	size_t used;
	int lossy = 7;

	assert_int_equal(read_str("\"plain\",next", out, sizeof(out), &lossy, &used), 0);
	assert_string_equal(out, "plain");
	assert_int_equal(used, 7);
	assert_false(lossy);
	assert_int_equal(
		read_str("\"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t\"", out, sizeof(out), NULL, &used), 0);
	assert_string_equal(out, "q\"b\\s/\b\f\n\r\t");
	/* \u escapes, a surrogate pair joined into one character. */
	assert_int_equal(
		read_str("\"\\u00e9\\u20AC\\ud83d\\ude80\"", out, sizeof(out), &lossy, &used), 0);
	assert_string_equal(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80");
	assert_false(lossy);
	/* Raw bytes are kept as they are. */
	assert_int_equal(read_str("\"\xff\xc3\xa9\x7f\"", out, sizeof(out), NULL, &used), 0);
	assert_string_equal(out, "\xff\xc3\xa9\x7f");
	/* Skipping. */
	assert_int_equal(read_str("\"skip \\u0041\" x", NULL, 0, NULL, &used), 0);
	assert_int_equal(used, 13);
}

/* What a C string cannot say exactly is flagged: a caller that must keep
 * bytes (the coordinator's argv) asks someone else; a reader of trace lines
 * takes U+FFFD. */
static void
test_read_lossy(void **state)
{
	char out[64];
	size_t used;
	int lossy = 0;

	assert_int_equal(read_str("\"a\\u0000b\"", out, sizeof(out), &lossy, &used), 0);
	assert_true(lossy);
	assert_string_equal(out, "a\xef\xbf\xbd"
				 "b");
	lossy = 0;
	assert_int_equal(read_str("\"\\ud800x\"", out, sizeof(out), &lossy, &used), 0);
	assert_true(lossy);
	assert_string_equal(out, "\xef\xbf\xbdx");
	lossy = 0;
	assert_int_equal(read_str("\"\\udc00\"", out, sizeof(out), &lossy, &used), 0);
	assert_true(lossy);
}

static void
test_read_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"plain",
		"\"unterminated",
		"\"torn\\",
		"\"bad \\x escape\"",
		"\"raw\nnewline\"",
		"\"short \\u12\"",
		"\"not hex \\u12g4\"",
	};
	char out[64];
	size_t i, used;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(read_str(bad[i], out, sizeof(out), NULL, &used), -1);
	/* end bounds the input: a string cut before its quote is torn. */
	{
		const char *in = "\"abc\"", *p = in;

		assert_int_equal(json_read_str(&p, in + 4, out, sizeof(out), NULL), -1);
	}
}

/* A string longer than the room is cut at a character boundary. */
static void
test_read_cut(void **state)
{
	char out[5];
	size_t used;

	assert_int_equal(read_str("\"ab\\u20ac\"", out, sizeof(out), NULL, &used), 0);
	assert_string_equal(out, "ab"); /* the euro sign needs 3 more bytes */
	assert_int_equal(read_str("\"ab\xc3\xa9z\"", out, sizeof(out), NULL, &used), 0);
	assert_string_equal(out, "ab\xc3\xa9");
	assert_int_equal(read_str("\"abcdefg\"", out, sizeof(out), NULL, &used), 0);
	assert_string_equal(out, "abcd");
}

/* What the writer writes, the reader reads back: exactly in the storage
 * form, and as valid UTF-8 in the text form. */
static void
test_round_trip(void **state)
{
	static const char *const in[] = {
		"",
		"plain",
		"q\"b\\s",
		"\n\t\x01\x1f\x7f",
		"caf\xc3\xa9 \xf0\x9f\x9a\xa2",
		"\xff\xfe raw",
		"\xc3",
	};
	char buf[256], out[256];
	const char *p;
	size_t i;
	int lossy;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		*json_put(buf, in[i], JSON_BYTES) = '\0';
		p = buf;
		assert_int_equal(json_read_str(&p, buf + strlen(buf), out, sizeof(out), &lossy), 0);
		assert_false(lossy);
		assert_string_equal(out, in[i]);
		assert_int_equal(*p, '\0');
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_escapes),
		cmocka_unit_test(test_text_valid_utf8_passes),
		cmocka_unit_test(test_text_invalid_utf8_replaced),
		cmocka_unit_test(test_bytes_form),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_lossy),
		cmocka_unit_test(test_read_refuses),
		cmocka_unit_test(test_read_cut),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
