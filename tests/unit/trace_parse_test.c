/*
 * berth trace's JSON-line reader (cli/trace_parse.c) without the command:
 * good, garbage and torn lines, numbers and text too long for their
 * fields, a record written and read back, and the launcher's log lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "ring.h"

#define RUN1 "5e2f01ab5e2f01ab5e2f01ab5e2f01ab"

static const char *good =
	"{\"seq\":5,\"ts_ms\":1764485003100,\"from\":\"supervisor\",\"instance\":\"9999aaaabbbbcccc\","
	"\"req_id\":18446744073709551615,\"verb\":\"record_exit\",\"ticket\":\"T1\",\"run\":\"" RUN1
	"\","
	"\"decision\":\"denied\",\"reason\":\"already_claimed\",\"latency_us\":700}";

static void
test_parse_good(void **state)
{
	struct trace_ev ev;

	assert_int_equal(trace_parse_line(good, strlen(good), &ev), 0);
	assert_int_equal(ev.ring, 0);
	assert_int_equal(ev.seq, 5);
	assert_int_equal(ev.ts_ms, 1764485003100LL);
	assert_string_equal(ev.from, "supervisor");
	assert_string_equal(ev.instance, "9999aaaabbbbcccc");
	assert_true(ev.req_id == UINT64_MAX);
	assert_string_equal(ev.verb, "record_exit");
	assert_string_equal(ev.ticket, "T1");
	assert_string_equal(ev.run, RUN1);
	assert_string_equal(ev.decision, "denied");
	assert_string_equal(ev.reason, "already_claimed");
	assert_int_equal(ev.latency_us, 700);
}

/* null reads as empty; unknown keys of any shape are skipped; escapes,
 * including a surrogate pair, decode to UTF-8; whitespace is allowed. */
static void
test_parse_nulls_unknown_escapes(void **state)
{
	const char *l =
		" { \"verb\" : \"claim\", \"ticket\":null, \"run\":null, \"reason\":null,"
		"\"latency_us\":null, \"new\":{\"a\":[1,2.5e3,\"}\",{\"b\":null}],\"c\":true},"
		"\"more\":[], \"flag\":false, \"from\":\"cli\\n\\\"x\\\"\\u00e9\\ud83d\\ude00\\/\","
		"\"seq\":1, \"ts_ms\":-3 } ";
	struct trace_ev ev;

	assert_int_equal(trace_parse_line(l, strlen(l), &ev), 0);
	assert_string_equal(ev.verb, "claim");
	assert_string_equal(ev.ticket, "");
	assert_string_equal(ev.run, "");
	assert_int_equal(ev.latency_us, -1);
	assert_string_equal(ev.from, "cli\n\"x\"\xc3\xa9\xf0\x9f\x98\x80/");
	assert_int_equal(ev.ts_ms, -3);
}

/* Anything that is not one whole object with a verb is refused. */
static void
test_parse_garbage(void **state)
{
	static const char *bad[] = {
		"",
		"   ",
		"garbage line here",
		"[1,2]",
		"{",
		"{}",
		"{\"seq\":1}",
		"{\"verb\":}",
		"{\"verb\":\"x\",}",
		"{\"verb\":\"x\"} trailing",
		"{\"verb\":\"x\" \"ticket\":\"T1\"}",
		"{\"verb\":\"bad \\q escape\"}",
		"{\"verb\":\"ctl \x01 char\"}",
		"{\"verb\":\"x\",\"seq\":abc}",
		"{\"verb\":\"x\",\"u\":nul}",
		"{\"verb\":\"x\",\"u\":\"\\ud83\"}",
		"{verb:\"x\"}",
	};
	struct trace_ev ev;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (trace_parse_line(bad[i], strlen(bad[i]), &ev) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
}

/* A torn line (a prefix of a good one, as a reader sees mid-append) is
 * never taken for a record, whatever the cut. */
static void
test_parse_every_prefix_refused(void **state)
{
	struct trace_ev ev;
	size_t n, len = strlen(good);

	for (n = 0; n < len; n++)
		if (trace_parse_line(good, n, &ev) != -1)
			fail_msg("prefix of %zu bytes accepted", n);
	assert_int_equal(trace_parse_line(good, len, &ev), 0);
}

/* A number past the integer range saturates (found by fuzz_trace: the
 * cast of 1e21 to int64_t was undefined behaviour, and on x86 it read as
 * INT64_MIN). The input is in tests/fuzz/corpus/trace/. */
static void
test_parse_huge_numbers_saturate(void **state)
{
	const char *l = "{\"verb\":\"v\",\"ts_ms\":1e300,\"latency_us\":-1e999,"
			"\"seq\":999999999999999999999.5,\"req_id\":-2.5,\"pid\":1e30}";
	struct trace_ev ev;

	assert_int_equal(trace_parse_line(l, strlen(l), &ev), 0);
	assert_true(ev.ts_ms == INT64_MAX);
	assert_true(ev.latency_us == INT64_MIN);
	assert_true(ev.seq == UINT64_MAX);
	assert_true(ev.req_id == 0);
}

/* A string longer than its field is cut on a character boundary. */
static void
test_parse_long_utf8_cut(void **state)
{
	char line[1024], reason[400];
	struct trace_ev ev;
	size_t i;

	reason[0] = '\0';
	for (i = 0; i < 100; i++)
		strcat(reason, "\xc3\xa9");
	snprintf(line, sizeof(line), "{\"verb\":\"v\",\"reason\":\"x%s\"}", reason);
	assert_int_equal(trace_parse_line(line, strlen(line), &ev), 0);
	assert_true(strlen(ev.reason) < sizeof(ev.reason));
	/* "x" then whole two-byte characters only. */
	assert_int_equal((strlen(ev.reason) - 1) % 2, 0);
}

/* Our own --json output reads back, ring fields included. */
static void
test_json_roundtrip(void **state)
{
	struct ring_rec r;
	struct trace_ev ev, back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(&r, 0, sizeof(r));
	r.seq = 9;
	r.ts_ms = 1000;
	r.kind = RING_FAILPOINT;
	r.pid = 4242;
	snprintf(r.actor, sizeof(r.actor), "supervisor");
	snprintf(r.instance, sizeof(r.instance), "0123456789abcdef");
	snprintf(r.text, sizeof(r.text), "supervisor.before_settle crash");
	trace_from_ring(&r, &ev);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	trace_print_json(f, &ev);
	fclose(f);
	assert_non_null(strstr(buf, "\"source\":\"ring\""));
	assert_non_null(strstr(buf, "\"event\":\"failpoint\""));
	assert_int_equal(buf[len - 1], '\n');
	assert_int_equal(trace_parse_line(buf, len - 1, &back), 0);
	assert_int_equal(back.ring, 1);
	assert_int_equal(back.kind, RING_FAILPOINT);
	assert_int_equal(back.pid, 4242);
	assert_string_equal(back.text, "supervisor.before_settle crash");
	assert_string_equal(back.instance, "0123456789abcdef");
	free(buf);
}

/* A fused verb's line says so, in the timeline and in --json (and --json
 * reads back the same). */
static void
test_fused_shown(void **state)
{
	static const char line[] =
		"{\"seq\":16,\"ts_ms\":1000,\"from\":\"supervisor\",\"instance\":\"ab\","
		"\"req_id\":3,\"verb\":\"start\",\"ticket\":\"T1\",\"run\":\"r1\","
		"\"decision\":\"granted\",\"reason\":\"\",\"latency_us\":257,\"fused\":\"claim\"}";
	struct trace_ev ev, back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(trace_parse_line(line, sizeof(line) - 1, &ev), 0);
	assert_string_equal(ev.fused, "claim");
	f = open_memstream(&buf, &len);
	trace_print_line(f, &ev, 0);
	fclose(f);
	assert_non_null(strstr(buf, "fused with claim"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	trace_print_json(f, &ev);
	fclose(f);
	assert_non_null(strstr(buf, "\"fused\":\"claim\""));
	assert_int_equal(trace_parse_line(buf, len - 1, &back), 0);
	assert_string_equal(back.fused, "claim");
	free(buf);
}

/* The launcher's log lines berth trace reads: deaths and starts, with
 * their time (an offset or Z), actor and pid; anything else is no record. */
static void
test_parse_launcher(void **state)
{
	struct trace_ev ev;

	assert_int_equal(
		trace_parse_launcher("2026-12-01T15:07:11.608+0000 launcher supervisor pid "
				     "17057 died after 763 ms: killed by signal 9 "
				     "(SIGKILL); restart #1 in 100 ms\n",
				     &ev),
		1);
	assert_int_equal(ev.kind, TRACE_KIND_DEATH);
	assert_string_equal(ev.from, "supervisor");
	assert_int_equal(ev.pid, 17057);
	assert_string_equal(ev.text, "killed by signal 9 (SIGKILL)");
	assert_int_equal(ev.ts_ms, 1796137631608LL);
	/* The same moment an hour east, and as UTC. */
	assert_int_equal(trace_parse_launcher("2026-12-01T16:07:11.608+0100 launcher started "
					      "supervisor pid 17210: /bin/berth-supervisor\n",
					      &ev),
			 1);
	assert_int_equal(ev.kind, TRACE_KIND_START);
	assert_int_equal(ev.pid, 17210);
	assert_int_equal(ev.ts_ms, 1796137631608LL);
	assert_int_equal(
		trace_parse_launcher("2026-12-01T15:07:11.608Z launcher started supervisor "
				     "pid 1: x\n",
				     &ev),
		1);
	assert_int_equal(ev.ts_ms, 1796137631608LL);
	assert_int_equal(
		trace_parse_launcher("2026-12-01T15:07:11.608+0000 launcher group running: "
				     "coordinator\n",
				     &ev),
		0);
	assert_int_equal(trace_parse_launcher("2026-12-01T15:07:11.608+0000 launcher started "
					      "recovery-once pid 9: x\n",
					      &ev),
			 0);
	assert_int_equal(trace_parse_launcher("garbage\n", &ev), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_nulls_unknown_escapes),
		cmocka_unit_test(test_parse_garbage),
		cmocka_unit_test(test_parse_every_prefix_refused),
		cmocka_unit_test(test_parse_long_utf8_cut),
		cmocka_unit_test(test_parse_huge_numbers_saturate),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_fused_shown),
		cmocka_unit_test(test_parse_launcher),
	};

	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
