/* ids: random hex ids, SHA-256 against FIPS 180-4 vectors, comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ids.h"

static void
hex_of(const char *msg, size_t len, char out[65])
{
	uint8_t d[32];
	int i;

	ids_sha256(msg, len, d);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void
test_sha256_empty(void **state)
{
	char h[IDS_HASH_LEN + 1];

	ids_hash_hex("", h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void
test_sha256_abc(void **state)
{
	char h[IDS_HASH_LEN + 1];

	ids_hash_hex("abc", h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void
test_sha256_448_bits(void **state)
{
	char h[IDS_HASH_LEN + 1];

	ids_hash_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void
test_sha256_896_bits(void **state)
{
	char h[IDS_HASH_LEN + 1];

	ids_hash_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		     h);
	assert_string_equal(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void
test_sha256_million_a(void **state)
{
	char *m = malloc(1000000), h[65];

	assert_non_null(m);
	memset(m, 'a', 1000000);
	hex_of(m, 1000000, h);
	free(m);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Lengths around the padding boundary: 55 bytes pad in one block, 56 need
 * two; 64 and 119/120 cross the next ones. */
static void
test_sha256_padding_boundaries(void **state)
{
	static const struct {
		size_t n;
		const char *h;
	} v[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
		{ 120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
	};
	char buf[128], h[65];
	size_t i;

	memset(buf, 'a', sizeof(buf));
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex_of(buf, v[i].n, h);
		assert_string_equal(h, v[i].h);
	}
}

static void
assert_lower_hex(const char *s, size_t len)
{
	size_t i;

	assert_int_equal(strlen(s), len);
	for (i = 0; i < len; i++)
		assert_non_null(strchr("0123456789abcdef", s[i]));
}

static void
test_random_ids_have_their_lengths(void **state)
{
	char run[IDS_RUN_LEN + 1], tok[IDS_TOKEN_LEN + 1], inst[17];

	assert_int_equal(ids_run_id(run), 0);
	assert_lower_hex(run, 32);
	assert_int_equal(ids_token(tok), 0);
	assert_lower_hex(tok, 64);
	assert_int_equal(ids_instance(inst), 0);
	assert_lower_hex(inst, 16);
}

static void
test_random_ids_differ(void **state)
{
	char a[IDS_RUN_LEN + 1], b[IDS_RUN_LEN + 1];

	assert_int_equal(ids_run_id(a), 0);
	assert_int_equal(ids_run_id(b), 0);
	assert_string_not_equal(a, b);
}

static void
test_random_hex_refuses_oversize(void **state)
{
	char big[2 * 128 + 1];

	assert_int_equal(ids_random_hex(big, 128), -1);
}

static void
test_consttime_eq(void **state)
{
	assert_int_equal(ids_consttime_eq("abcdef", "abcdef", 6), 1);
	assert_int_equal(ids_consttime_eq("abcdef", "abcdeg", 6), 0);
	assert_int_equal(ids_consttime_eq("xbcdef", "abcdef", 6), 0);
	assert_int_equal(ids_consttime_eq("abc", "abd", 2), 1);
	assert_int_equal(ids_consttime_eq("", "", 0), 1);
}

static void
digest_hex(const uint8_t d[32], char out[65])
{
	int i;

	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* RFC 4231, test cases 1, 2 and 6 (a key longer than the block). */
static void
test_hmac_sha256_rfc4231(void **state)
{
	uint8_t key[131], d[32];
	char hex[65];

	memset(key, 0x0b, 20);
	ids_hmac_sha256(key, 20, "Hi There", 8, d);
	digest_hex(d, hex);
	assert_string_equal(hex,
			    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	ids_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
	digest_hex(d, hex);
	assert_string_equal(hex,
			    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key));
	ids_hmac_sha256(key, sizeof(key), "Test Using Larger Than Block-Size Key - Hash Key First",
			54, d);
	digest_hex(d, hex);
	assert_string_equal(hex,
			    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void
test_token_for_is_keyed_and_per_run(void **state)
{
	uint8_t k1[IDS_KEY_LEN], k2[IDS_KEY_LEN];
	char a[IDS_TOKEN_LEN + 1], b[IDS_TOKEN_LEN + 1], c[IDS_TOKEN_LEN + 1];

	memset(k1, 1, sizeof(k1));
	memset(k2, 2, sizeof(k2));
	ids_token_for(k1, "0123456789abcdef0123456789abcdef", a);
	ids_token_for(k1, "0123456789abcdef0123456789abcdef", b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), IDS_TOKEN_LEN);
	ids_token_for(k2, "0123456789abcdef0123456789abcdef", c);
	assert_string_not_equal(a, c);
	ids_token_for(k1, "0123456789abcdef0123456789abcdee", c);
	assert_string_not_equal(a, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_empty),
		cmocka_unit_test(test_sha256_abc),
		cmocka_unit_test(test_sha256_448_bits),
		cmocka_unit_test(test_sha256_896_bits),
		cmocka_unit_test(test_sha256_million_a),
		cmocka_unit_test(test_sha256_padding_boundaries),
		cmocka_unit_test(test_random_ids_have_their_lengths),
		cmocka_unit_test(test_random_ids_differ),
		cmocka_unit_test(test_random_hex_refuses_oversize),
		cmocka_unit_test(test_consttime_eq),
		cmocka_unit_test(test_hmac_sha256_rfc4231),
		cmocka_unit_test(test_token_for_is_keyed_and_per_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
