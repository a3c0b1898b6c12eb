/* cli_print: the JSON objects `berth show --json` promises (DESIGN §12)
 * and the human formats (relative times, progress bars, quoted argv). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

/* Renders with fn into a malloc'd string. */
/* noinline: inlined at -O2, gcc 12 takes the open_memstream buffer for a
 * pointer into the local `buf` and fails the build (-Wdangling-pointer). */
__attribute__((noinline)) static char *
render_run(const Berth__Run *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_json_run(f, r);
	fclose(f);
	return buf;
}

__attribute__((noinline)) static char *
render_ticket(const Berth__Ticket *t, int with_runs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_json_ticket(f, t, with_runs);
	fclose(f);
	return buf;
}

static void
test_run_json_exact(void **state)
{
	Berth__Run r = BERTH__RUN__INIT;
	char *notes[] = { "first \"quoted\"", "line\nbreak" };
	char *s;

	r.id = "0123456789abcdef0123456789abcdef";
	r.alias = "T3-r2";
	r.ticket = "T3";
	r.has_attempt = 1;
	r.attempt = 2;
	r.state = "failed";
	r.has_exit_code_known = 1;
	r.exit_code_known = 1;
	r.has_exit_code = 1;
	r.exit_code = 3;
	r.claimed_ms = 1000;
	r.started_ms = 1500;
	r.ended_ms = 4500;
	r.settled_ms = 4600;
	r.notes = notes;
	r.n_notes = 2;
	r.has_output_bytes = 1;
	r.output_bytes = 12;
	r.capture_complete = 1;
	s = render_run(&r);
	assert_string_equal(
		s, "{\"id\":\"0123456789abcdef0123456789abcdef\",\"alias\":\"T3-r2\","
		   "\"ticket\":\"T3\",\"attempt\":2,\"state\":\"failed\",\"outcome\":\"failed\","
		   "\"exit_code\":3,\"signal\":null,\"reason\":null,\"owner\":null,\"pid\":null,"
		   "\"pgid\":null,\"claimed_ms\":1000,\"started_ms\":1500,\"ended_ms\":4500,"
		   "\"settled_ms\":4600,\"lease_expires_ms\":null,\"heartbeat_ms\":null,"
		   "\"timeout_ms\":null,\"progress\":null,\"stop_reason\":null,\"stop_ms\":null,"
		   "\"notes\":[\"first \\\"quoted\\\"\",\"line\\nbreak\"],\"host\":null,"
		   "\"output_bytes\":12,"
		   "\"capture_complete\":true,\"stragglers\":null,\"disk_full\":null}");
	free(s);
	/* What the shim recorded, once known. */
	r.has_stragglers = 1;
	r.stragglers = 2;
	r.has_disk_full = 1;
	r.disk_full = 1;
	r.capture_complete = 0;
	s = render_run(&r);
	assert_non_null(
		strstr(s, "\"capture_complete\":false,\"stragglers\":2,\"disk_full\":true}"));
	free(s);
}

static void
test_run_json_unknown_exit_is_null(void **state)
{
	Berth__Run r = BERTH__RUN__INIT;
	char *s;

	/* A running run: no exit yet, even if exit_code carries a 0. */
	r.id = "aa";
	r.state = "running";
	r.has_exit_code = 1;
	r.exit_code = 0;
	r.has_exit_code_known = 1;
	r.exit_code_known = 0;
	r.progress_index = 5;
	r.progress_total = 10;
	r.progress_label = "compiling";
	r.progress_ms = 777;
	s = render_run(&r);
	assert_non_null(strstr(s, "\"exit_code\":null,\"signal\":null"));
	assert_non_null(strstr(s, "\"outcome\":null"));
	assert_non_null(strstr(s, "\"progress\":{\"index\":5,\"total\":10,\"label\":\"compiling\","
				  "\"at_ms\":777}"));
	free(s);
}

static void
test_run_json_signal(void **state)
{
	Berth__Run r = BERTH__RUN__INIT;
	Berth__Ident shim = BERTH__IDENT__INIT;
	char *s;

	r.id = "bb";
	r.state = "failed";
	r.has_signal_known = 1;
	r.signal_known = 1;
	r.has_signal = 1;
	r.signal = 9;
	shim.pid = 4242;
	shim.pgid = 4242;
	r.shim = &shim;
	s = render_run(&r);
	assert_non_null(strstr(s, "\"exit_code\":null,\"signal\":9"));
	assert_non_null(strstr(s, "\"pid\":4242,\"pgid\":4242"));
	free(s);
}

static void
test_ticket_json_runs_oldest_first(void **state)
{
	Berth__Ticket t = BERTH__TICKET__INIT;
	Berth__Run r1 = BERTH__RUN__INIT, r2 = BERTH__RUN__INIT;
	Berth__Run *runs[] = { &r1, &r2 };
	char *argv[] = { "sh", "-c", "exit 3" };
	char *s, *a, *b;

	t.id = "T3";
	t.state = "failed";
	t.attempts = 2;
	t.argv = argv;
	t.n_argv = 3;
	t.workdir = "/src/app";
	t.name = "";
	t.runs = runs;
	t.n_runs = 2;
	r1.id = "r1id";
	r1.attempt = 1;
	r1.state = "orphaned";
	r2.id = "r2id";
	r2.attempt = 2;
	r2.state = "failed";
	r2.has_exit_code_known = r2.exit_code_known = 1;
	r2.exit_code = 3;
	s = render_ticket(&t, 1);
	assert_true(strncmp(s, "{\"id\":\"T3\",\"name\":null,\"state\":\"failed\",\"attempts\":2,",
			    53) == 0);
	assert_non_null(strstr(s, "\"argv\":[\"sh\",\"-c\",\"exit 3\"]"));
	assert_non_null(strstr(s, "\"workdir\":\"/src/app\""));
	a = strstr(s, "\"id\":\"r1id\",");
	b = strstr(s, "\"id\":\"r2id\",");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_non_null(strstr(a, "\"attempt\":1,\"state\":\"orphaned\",\"outcome\":\"orphaned\","
				  "\"exit_code\":null,\"signal\":null"));
	assert_non_null(strstr(b, "\"attempt\":2,\"state\":\"failed\",\"outcome\":\"failed\","
				  "\"exit_code\":3,\"signal\":null"));
	assert_int_equal(s[strlen(s) - 1], '}');
	free(s);

	/* list --json leaves runs out. */
	s = render_ticket(&t, 0);
	assert_null(strstr(s, "\"runs\""));
	free(s);
}

static void
test_seat_json_hides_activity_of_stale_holder(void **state)
{
	Berth__Seat seat = BERTH__SEAT__INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	seat.item = "repo";
	seat.owner = "alice@host";
	seat.heartbeat_ms = 10000;
	seat.ttl_ms = 60000;
	seat.activity_index = 2;
	seat.activity_total = 4;
	seat.activity_label = "tests";
	seat.has_activity_ms = 1;
	seat.activity_ms = 50000;
	f = open_memstream(&buf, &len);
	cli_json_seat(f, &seat, 52000);
	fclose(f);
	assert_non_null(strstr(buf, "\"heartbeat_age_ms\":42000"));
	assert_non_null(strstr(buf, "\"activity\":{\"index\":2,\"total\":4,\"label\":\"tests\","
				    "\"at_ms\":50000,\"age_ms\":2000}"));
	/* nothing in flight, no stop, no kind: false and null, never made up */
	assert_non_null(strstr(buf, "\"kind\":null,\"state\":null,\"task\":false"));
	assert_non_null(strstr(buf, "\"in_flight\":false,\"in_flight_healed\":false,"
				    "\"in_flight_ms\":null,\"in_flight_age_ms\":null,"
				    "\"in_flight_ttl_ms\":null,\"in_flight_pid\":null"));
	assert_non_null(strstr(buf, "\"stop_by\":null,\"stop_ms\":null"));
	free(buf);

	/* a transition in flight, and a stop with its requester */
	seat.in_flight = 1;
	seat.has_in_flight_ms = seat.has_in_flight_ttl_ms = 1;
	seat.in_flight_ms = 49000;
	seat.in_flight_ttl_ms = 600000;
	seat.stop_reason = "wrap up";
	seat.stop_by = "bob@host";
	seat.has_stop_ms = 1;
	seat.stop_ms = 51000;
	buf = NULL;
	f = open_memstream(&buf, &len);
	cli_json_seat(f, &seat, 52000);
	fclose(f);
	assert_non_null(strstr(buf, "\"in_flight\":true,\"in_flight_healed\":false,"
				    "\"in_flight_ms\":49000,\"in_flight_age_ms\":3000,"
				    "\"in_flight_ttl_ms\":600000,\"in_flight_pid\":null"));
	assert_non_null(strstr(buf, "\"stop_reason\":\"wrap up\",\"stop_by\":\"bob@host\","
				    "\"stop_ms\":51000"));
	free(buf);

	seat.stale = 1;
	buf = NULL;
	f = open_memstream(&buf, &len);
	cli_json_seat(f, &seat, 52000);
	fclose(f);
	assert_non_null(strstr(buf, "\"stale\":true"));
	assert_non_null(strstr(buf, "\"activity\":null"));
	free(buf);
}

static void
test_fmt_rel(void **state)
{
	char b[64];

	cli_fmt_rel(0, 5000, b, sizeof b);
	assert_string_equal(b, "-");
	cli_fmt_rel(47000, 5000, b, sizeof b);
	assert_string_equal(b, "in 42s");
	cli_fmt_rel(5000, 185000, b, sizeof b);
	assert_string_equal(b, "3m ago");
	cli_fmt_rel(5000, 5400, b, sizeof b);
	assert_string_equal(b, "now");
	cli_fmt_rel(1, 1 + 2 * 3600000 + 5 * 60000, b, sizeof b);
	assert_string_equal(b, "2h5m ago");
}

static void
test_fmt_when_has_date_and_relative(void **state)
{
	char b[96];

	setenv("TZ", "UTC", 1);
	/* 2026-11-30 06:40:01 UTC */
	cli_fmt_when(1796020801000LL, 1796020801000LL + 180000, b, sizeof b);
	assert_string_equal(b, "2026-11-30 06:40:01 (3m ago)");
}

static void
test_fmt_bar(void **state)
{
	char b[32];

	cli_fmt_bar(5, 10, b, sizeof b);
	assert_string_equal(b, "[#####.....]");
	cli_fmt_bar(0, 10, b, sizeof b);
	assert_string_equal(b, "[..........]");
	cli_fmt_bar(3, 3, b, sizeof b);
	assert_string_equal(b, "[##########]");
	cli_fmt_bar(1, 3, b, sizeof b);
	assert_string_equal(b, "[###.......]");
	cli_fmt_bar(7, 0, b, sizeof b);
	assert_string_equal(b, "[..........]");
}

static void
test_fmt_argv_quotes_for_a_shell(void **state)
{
	char *argv[] = { "sh", "-c", "echo 'hi' && exit 3", "" };
	char b[128];

	cli_fmt_argv(argv, 4, b, sizeof b);
	assert_string_equal(b, "sh -c 'echo '\\''hi'\\'' && exit 3' ''");
	/* Truncation never overruns and always terminates. */
	cli_fmt_argv(argv, 4, b, 10);
	assert_int_equal(strlen(b), 9);
}

static void
test_states(void **state)
{
	assert_true(cli_ticket_settled("succeeded"));
	assert_true(cli_ticket_settled("failed"));
	assert_true(cli_ticket_settled("cancelled"));
	assert_false(cli_ticket_settled("ready"));
	assert_false(cli_ticket_settled("held"));
	assert_false(cli_ticket_settled("claimed"));
	assert_false(cli_ticket_settled("blocked"));
	assert_false(cli_ticket_settled(NULL));
	assert_true(cli_run_terminal("timed_out"));
	assert_true(cli_run_terminal("aborted"));
	assert_false(cli_run_terminal("aftercare"));
	assert_false(cli_run_terminal("running"));
}

/* A raw control byte (C0 or DEL) anywhere in s fails the test. */
static void
assert_no_raw_controls(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			fail_msg("raw control byte 0x%02x at offset %ld in %s", *p,
				 (long)(p - (const unsigned char *)s), s);
}

#define HOSTILE      "\x1b[2J\x1b[31m\n\x07\x7f\xff"
#define HOSTILE_JSON "\\u001b[2J\\u001b[31m\\n\\u0007\\u007f\\ufffd"

/* Every string member of the JSON objects is escaped as JSON escapes it,
 * DEL included: a script reading `show --json` sees the text, a terminal
 * showing it sees no control byte. */
static void
test_json_escapes_job_text(void **state)
{
	Berth__Ticket t = BERTH__TICKET__INIT;
	Berth__Run r = BERTH__RUN__INIT, *runs[] = { &r };
	Berth__Seat st = BERTH__SEAT__INIT;
	char *argv[] = { "sh", "-c", HOSTILE }, *env[] = { HOSTILE "=s3cret" },
	     *notes[] = { HOSTILE };
	char *after[] = { HOSTILE };
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	t.id = "T1";
	t.name = HOSTILE;
	t.state = "ready";
	t.argv = argv;
	t.n_argv = 3;
	t.workdir = HOSTILE;
	t.key = HOSTILE;
	t.env = env;
	t.n_env = 1;
	t.after = after;
	t.n_after = 1;
	t.waiting = HOSTILE;
	t.runs = runs;
	t.n_runs = 1;
	r.id = "aa";
	r.state = "running";
	r.reason = HOSTILE;
	r.owner = HOSTILE;
	r.progress_total = 2;
	r.progress_label = HOSTILE;
	r.stop_reason = HOSTILE;
	r.notes = notes;
	r.n_notes = 1;
	s = render_ticket(&t, 1);
	assert_no_raw_controls(s);
	/* The environment is shown by its names, never a value. */
	assert_null(strstr(s, "s3cret"));
	/* name argv workdir key env after waiting reason owner label stop note */
	{
		const char *p = s;
		int n = 0;

		while ((p = strstr(p, HOSTILE_JSON)) != NULL) {
			n++;
			p++;
		}
		assert_int_equal(n, 12);
	}
	free(s);

	st.item = HOSTILE;
	st.key = HOSTILE;
	st.workdir = HOSTILE;
	st.owner = HOSTILE;
	st.stop_reason = HOSTILE;
	st.activity_total = 3;
	st.activity_label = HOSTILE;
	st.run_id = HOSTILE;
	s = NULL;
	f = open_memstream(&s, &len);
	cli_json_seat(f, &st, 1000);
	fclose(f);
	assert_no_raw_controls(s);
	assert_non_null(strstr(s, "\"item\":\"" HOSTILE_JSON "\""));
	assert_non_null(strstr(s, "\"label\":\"" HOSTILE_JSON "\""));
	free(s);
}

static void
test_esc_for_printf(void **state)
{
	const char *r[CLI_ESC_SLOTS];
	char in[32], want[32], *big;
	size_t i;

	assert_string_equal(cli_esc(HOSTILE), "\\e[2J\\e[31m\\n\\x07\\x7f\\xff");
	assert_string_equal(cli_esc(NULL), "");
	/* The results of CLI_ESC_SLOTS calls in a row are all still valid, as
	 * the arguments of one printf are. */
	for (i = 0; i < CLI_ESC_SLOTS; i++) {
		snprintf(in, sizeof in, "%zu\x1b", i);
		r[i] = cli_esc(in);
	}
	for (i = 0; i < CLI_ESC_SLOTS; i++) {
		snprintf(want, sizeof want, "%zu\\e", i);
		assert_string_equal(r[i], want);
	}
	/* Long text is escaped whole, never cut. */
	big = malloc(100001);
	assert_non_null(big);
	memset(big, '\a', 100000);
	big[100000] = '\0';
	assert_int_equal(strlen(cli_esc(big)), 400000);
	free(big);
}

/* cli_fail and cli_usage_error escape their whole message: an id, a path
 * or a denial's facts quoted in an error cannot steer the terminal. */
static void
test_errors_escaped(void **state)
{
	char path[] = "/tmp/cli_print_test.XXXXXX", buf[512];
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	assert_int_equal(cli_fail("show %s: denied: %s", "T\x1b[2J", "x\ny"), CLI_FAIL);
	assert_int_equal(cli_usage_error("show", "bad id '%s'", "\x07"), CLI_USAGE);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof buf - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
	unlink(path);
	assert_string_equal(buf, "berth: show T\\e[2J: denied: x\\ny\n"
				 "berth show: bad id '\\x07'\nTry 'berth show --help'.\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_json_exact),
		cmocka_unit_test(test_run_json_unknown_exit_is_null),
		cmocka_unit_test(test_run_json_signal),
		cmocka_unit_test(test_ticket_json_runs_oldest_first),
		cmocka_unit_test(test_seat_json_hides_activity_of_stale_holder),
		cmocka_unit_test(test_fmt_rel),
		cmocka_unit_test(test_fmt_when_has_date_and_relative),
		cmocka_unit_test(test_fmt_bar),
		cmocka_unit_test(test_fmt_argv_quotes_for_a_shell),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_json_escapes_job_text),
		cmocka_unit_test(test_esc_for_printf),
		cmocka_unit_test(test_errors_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
