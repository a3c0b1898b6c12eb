/*
 * coord_envelope: the check every request passes before it is decided
 * (a full envelope, garbage, a version mismatch naming both versions,
 * missing fields, a verb from a newer sender), on packed bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coord_envelope.h"
#include "coord_verbs.h"
#include "coord_live.h"

static int
check(const Berth__Request *r, char *msg, size_t n, Berth__Request **out)
{
	size_t len;
	uint8_t *buf = pack(r, &len);
	int code = coord_envelope_check(buf, len, out, msg, n);

	free(buf);
	return code;
}

static void
test_check_accepts_a_full_envelope(void **state)
{
	struct env e;
	Berth__Request *out;
	char msg[256];

	(void)state;
	env_init(&e);
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), 0);
	assert_non_null(out);
	assert_int_equal(out->req_id, 9);
	assert_string_equal(coord_verb_name(out), "hold");
	berth__request__free_unpacked(out, NULL);
}

static void
test_check_garbage_truncated_empty_oversized(void **state)
{
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x13, 0x37 };
	Berth__Request *out;
	struct env e;
	uint8_t *buf, *big;
	size_t len;
	char msg[256];

	(void)state;
	assert_int_equal(coord_envelope_check(garbage, sizeof(garbage), &out, msg, sizeof(msg)),
			 BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_null(out);
	assert_int_equal(coord_envelope_check(garbage, 0, &out, msg, sizeof(msg)),
			 BERTH__ERROR_CODE__ERR_MALFORMED);

	/* A valid request cut in the middle of a string. */
	env_init(&e);
	buf = pack(&e.req, &len);
	assert_int_equal(coord_envelope_check(buf, len - 2, &out, msg, sizeof(msg)),
			 BERTH__ERROR_CODE__ERR_MALFORMED);
	if (out != NULL)
		berth__request__free_unpacked(out, NULL);
	free(buf);

	big = calloc(1, RPC_MAX_MSG + 1);
	assert_int_equal(coord_envelope_check(big, RPC_MAX_MSG + 1, &out, msg, sizeof(msg)),
			 BERTH__ERROR_CODE__ERR_TOO_LARGE);
	assert_null(out);
	assert_non_null(strstr(msg, "limit"));
	free(big);
}

static void
test_check_version_mismatch_names_both(void **state)
{
	struct env e;
	Berth__Request *out;
	char msg[256], want[32];

	(void)state;
	env_init(&e);
	e.req.version = BERTH_PROTOCOL_VERSION + 6;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_VERSION);
	assert_non_null(out); /* decoded: the reply carries its req_id */
	snprintf(want, sizeof(want), "version %d", BERTH_PROTOCOL_VERSION + 6);
	assert_non_null(strstr(msg, want));
	snprintf(want, sizeof(want), "version %d", BERTH_PROTOCOL_VERSION);
	assert_non_null(strstr(msg, want));
	berth__request__free_unpacked(out, NULL);
}

static void
test_check_missing_fields(void **state)
{
	struct env e;
	Berth__Request *out;
	char msg[256];

	(void)state;
	env_init(&e);
	e.req.has_version = 0;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);

	env_init(&e);
	e.req.actor = NULL;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "actor"));
	berth__request__free_unpacked(out, NULL);

	env_init(&e);
	e.req.instance = "";
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "instance"));
	berth__request__free_unpacked(out, NULL);

	env_init(&e);
	e.req.has_req_id = 0;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "request id"));
	berth__request__free_unpacked(out, NULL);

	/* actor and instance are short names: they key stored replies and
	 * land in every trace line */
	{
		static const char *const bad[] = {
			"a b", "x\ny", "\"quote", "\xc3\xa9t\xc3\xa9",
			"01234567890123456789012345678901234567890123456789012345678901234"
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			env_init(&e);
			e.req.instance = (char *)bad[i];
			assert_int_equal(check(&e.req, msg, sizeof(msg), &out),
					 BERTH__ERROR_CODE__ERR_MALFORMED);
			assert_non_null(strstr(msg, "instance"));
			berth__request__free_unpacked(out, NULL);
			env_init(&e);
			e.req.actor = (char *)bad[i];
			assert_int_equal(check(&e.req, msg, sizeof(msg), &out),
					 BERTH__ERROR_CODE__ERR_MALFORMED);
			berth__request__free_unpacked(out, NULL);
		}
		env_init(&e); /* the longest name passes */
		e.req.instance = "0123456789012345678901234567890123456789012345678901234567890123";
		e.req.actor = "sup.1:a@h-x_y";
		assert_int_equal(check(&e.req, msg, sizeof(msg), &out), 0);
		berth__request__free_unpacked(out, NULL);
	}

	env_init(&e);
	e.req.verb_case = BERTH__REQUEST__VERB__NOT_SET;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "verb"));
	berth__request__free_unpacked(out, NULL);
}

static void
test_check_unknown_verb_from_a_newer_sender(void **state)
{
	struct env e;
	Berth__Request *out;
	uint32_t tag = (99 << 3) | 2;
	uint8_t *buf;
	size_t len;
	char msg[256];

	(void)state;
	env_init(&e);
	e.req.verb_case = BERTH__REQUEST__VERB__NOT_SET;
	buf = pack(&e.req, &len);
	/* Field 99, length-delimited, empty: a verb from the future. */
	buf[len++] = (uint8_t)((tag & 0x7f) | 0x80);
	buf[len++] = (uint8_t)(tag >> 7);
	buf[len++] = 0;
	assert_int_equal(coord_envelope_check(buf, len, &out, msg, sizeof(msg)),
			 BERTH__ERROR_CODE__ERR_UNKNOWN_VERB);
	assert_non_null(strstr(msg, "99"));
	berth__request__free_unpacked(out, NULL);
	free(buf);
}

/* A request's parts (Request.then): a verb and a request id each, unique,
 * nothing of an envelope, no parts of their own, at most eight. */
static void
test_check_parts(void **state)
{
	struct env e;
	Berth__Request *out, part[9], *parts[9];
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	char msg[256];
	int i;

	(void)state;
	ref.id = "T2";
	for (i = 0; i < 9; i++) {
		berth__request__init(&part[i]);
		part[i].has_req_id = 1;
		part[i].req_id = 100 + i;
		part[i].verb_case = BERTH__REQUEST__VERB_RELEASE;
		part[i].release = &ref;
		parts[i] = &part[i];
	}
	env_init(&e);
	e.req.n_then = 2;
	e.req.then = parts;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), 0);
	assert_int_equal(out->n_then, 2);
	berth__request__free_unpacked(out, NULL);

	e.req.n_then = 9;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "limit"));
	berth__request__free_unpacked(out, NULL);

	e.req.n_then = 2;
	part[1].req_id = 100; /* the same as part 1's */
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "same request id"));
	berth__request__free_unpacked(out, NULL);
	part[1].req_id = e.req.req_id; /* the envelope's */
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);
	part[1].req_id = 101;

	/* A part may not speak for another sender. */
	part[1].instance = "feedfacefeedface";
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_non_null(strstr(msg, "envelope"));
	berth__request__free_unpacked(out, NULL);
	part[1].instance = NULL;
	part[1].actor = "recovery";
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);
	part[1].actor = NULL;
	part[1].token = "t";
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);
	part[1].token = NULL;

	/* No verb, or parts of its own. */
	part[1].verb_case = BERTH__REQUEST__VERB__NOT_SET;
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);
	part[1].verb_case = BERTH__REQUEST__VERB_RELEASE;
	part[1].n_then = 1;
	part[1].then = &parts[2];
	assert_int_equal(check(&e.req, msg, sizeof(msg), &out), BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__request__free_unpacked(out, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_accepts_a_full_envelope),
		cmocka_unit_test(test_check_garbage_truncated_empty_oversized),
		cmocka_unit_test(test_check_version_mismatch_names_both),
		cmocka_unit_test(test_check_missing_fields),
		cmocka_unit_test(test_check_unknown_verb_from_a_newer_sender),
		cmocka_unit_test(test_check_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
