/*
 * berth trace's renderers (cli/trace_render.c) without the command: the
 * timeline line, the reasons in words, and the diagrams on a synthetic
 * trace: the SVG is well-formed XML with one lifeline per instance, one
 * arrow per request and per reply, and a denied record_exit drawn as a
 * denial; what a job wrote is escaped in every output.
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
#include "trace_fixture.h"

/* Not inlined: at -O3 gcc 12 takes the pointers into the returned buffer
 * for pointers into the local that open_memstream was given, and
 * -Wdangling-pointer fails the Release build of this test. */
static __attribute__((noinline)) char *
render(int (*fn)(FILE *, const struct trace_ev *, size_t), const struct trace_ev *v, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, v, n), 0);
	fclose(f);
	return buf;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* A small well-formedness check (tags balanced, one root, attributes
 * quoted, only the five entities or character references, no stray '<' or
 * '&'), used whether or not xmllint is installed. */
static int
xml_entity_ok(const char **pp)
{
	static const char *ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	const char *p = *pp;
	size_t i;

	for (i = 0; i < 5; i++) {
		if (strncmp(p, ents[i], strlen(ents[i])) == 0) {
			*pp = p + strlen(ents[i]);
			return 1;
		}
	}
	if (p[1] == '#') {
		p += 2;
		while ((*p >= '0' && *p <= '9') || *p == 'x' || (*p >= 'a' && *p <= 'f'))
			p++;
		if (*p == ';') {
			*pp = p + 1;
			return 1;
		}
	}
	return 0;
}

static int
xml_wellformed(const char *s)
{
	char stack[64][32];
	int depth = 0, roots = 0;
	const char *p = s;

	if (strncmp(p, "<?xml", 5) == 0) {
		p = strstr(p, "?>");
		if (p == NULL)
			return 0;
		p += 2;
	}
	while (*p != '\0') {
		if (*p == '&') {
			if (!xml_entity_ok(&p))
				return 0;
			continue;
		}
		if (*p == '>' && depth == 0)
			return 0;
		if (*p != '<') {
			if (depth == 0 && *p != ' ' && *p != '\n')
				return 0; /* text outside the root */
			p++;
			continue;
		}
		if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			if (p == NULL)
				return 0;
			p += 3;
			continue;
		}
		if (p[1] == '/') {
			size_t n = strcspn(p + 2, ">");

			if (depth == 0 || n != strlen(stack[depth - 1]) ||
			    strncmp(p + 2, stack[depth - 1], n) != 0)
				return 0;
			depth--;
			p += 2 + n + 1;
			continue;
		}
		/* Start tag: name, then name="value" pairs. */
		p++;
		{
			size_t n = strcspn(p, " \t\n/>");

			if (n == 0 || n >= sizeof(stack[0]) || depth >= 64)
				return 0;
			if (depth == 0 && ++roots > 1)
				return 0;
			memcpy(stack[depth], p, n);
			stack[depth][n] = '\0';
			p += n;
		}
		for (;;) {
			while (*p == ' ' || *p == '\n' || *p == '\t')
				p++;
			if (*p == '>') {
				depth++;
				p++;
				break;
			}
			if (p[0] == '/' && p[1] == '>') {
				p += 2;
				break;
			}
			if (strcspn(p, "= \t\n>") == 0)
				return 0;
			p += strcspn(p, "= \t\n>");
			if (*p++ != '=' || *p++ != '"')
				return 0;
			while (*p != '"') {
				if (*p == '\0' || *p == '<')
					return 0;
				if (*p == '&') {
					if (!xml_entity_ok(&p))
						return 0;
					continue;
				}
				p++;
			}
			p++;
		}
	}
	return depth == 0 && roots == 1;
}

static void
test_xml_checker_can_fail(void **state)
{
	assert_true(xml_wellformed("<a x=\"1\"><b/>t &amp; u</a>"));
	assert_false(xml_wellformed("<a><b></a></b>"));
	assert_false(xml_wellformed("<a>x < y</a>"));
	assert_false(xml_wellformed("<a>R&D</a>"));
	assert_false(xml_wellformed("<a t=\"<\"/>"));
	assert_false(xml_wellformed("<a/><b/>"));
	assert_false(xml_wellformed("<a>"));
}

static void
test_svg_race(void **state)
{
	struct trace_ev v[16];
	size_t n = race(v);
	char *svg = render(trace_svg, v, n), *p, path[] = "/tmp/trace_render_test.XXXXXX";
	const char *den;
	char cmd[128];
	int fd;

	assert_true(xml_wellformed(svg));
	/* xmllint, when installed, is the stricter judge. */
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, svg, strlen(svg)), (ssize_t)strlen(svg));
		close(fd);
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
		assert_int_equal(system(cmd), 0);
		unlink(path);
	}
	/* Lifelines: coordinator, cli (both cli processes share one), the
	 * supervisor before and after its restart, recovery, reaper. */
	assert_int_equal(count(svg, "<g class=\"lifeline\""), 6);
	assert_int_equal(count(svg, "data-actor=\"supervisor\""), 2);
	assert_non_null(strstr(svg, "data-instance=\"" SUP_A "\""));
	assert_non_null(strstr(svg, "data-instance=\"" SUP_B "\""));
	assert_int_equal(count(svg, "data-actor=\"cli\""), 1);
	/* The first supervisor's lifeline ends (a cross) before the second's. */
	assert_int_equal(count(svg, "<path class=\"end\""), 1);
	/* One arrow per request and one per reply of the 10 decisions. */
	assert_int_equal(count(svg, "<g class=\"msg req\""), 10);
	assert_int_equal(count(svg, "<g class=\"msg rep "), 10);
	assert_int_equal(count(svg, "<g class=\"msg rep granted\""), 7);
	assert_int_equal(count(svg, "<g class=\"msg rep replayed\""), 1);
	assert_int_equal(count(svg, "<g class=\"msg rep error\""), 1);
	/* The denied record_exit: a red dashed reply arrow. */
	den = strstr(svg, "<g class=\"msg rep denied\" data-seq=\"7\" data-verb=\"record_exit\"");
	assert_non_null(den);
	p = strstr(den, "<line");
	assert_non_null(p);
	assert_true(strstr(p, "stroke=\"#d32f2f\"") < strstr(p, "/>"));
	assert_true(strstr(p, "stroke-dasharray=") < strstr(p, "/>"));
	assert_true(strstr(p, "marker-end=\"url(#ah-denied)\"") < strstr(p, "/>"));
	/* Marks for the failpoint and the kill. */
	assert_int_equal(count(svg, "<g class=\"mark failpoint\""), 1);
	assert_int_equal(count(svg, "<g class=\"mark kill\""), 1);
	assert_non_null(strstr(svg, "supervisor.before_record_exit crash"));
	assert_non_null(strstr(svg, "kill T1 5e2f01ab SIGTERM sent cancel"));
	/* Labels escaped. */
	assert_null(strstr(svg, "<state="));
	assert_non_null(strstr(svg, "&lt;state=aftercare&gt; &amp; &quot;q&quot; &apos;x&apos;"));
	free(svg);
}

/* A few hundred messages: fixed rows, the picture grows downwards and stays
 * well-formed; records with hostile bytes do not break it. */
static void
test_svg_many(void **state)
{
	size_t n = 400, i;
	struct trace_ev *v = calloc(n, sizeof(*v));
	char *svg, want[64];

	assert_non_null(v);
	for (i = 0; i < n; i++) {
		v[i] = mk(0, 0, i + 1, i % 3 == 0 ? "supervisor" : "recovery",
			  i % 3 == 0 ? SUP_A : REC, "renew", "T1", RUN1,
			  i % 5 == 0 ? "denied" : "granted", "lease_not_held", "");
		if (i == 17)
			snprintf(v[i].reason, sizeof(v[i].reason),
				 "bad \x01\x7f utf8 \xff\xc3 <&>");
	}
	svg = render(trace_svg, v, n);
	assert_true(xml_wellformed(svg));
	/* 156: title, legend and heads; 20: the bottom margin. */
	snprintf(want, sizeof(want), "height=\"%d\"", 156 + 800 * 22 + 20);
	assert_non_null(strstr(svg, want));
	assert_int_equal(count(svg, "<g class=\"msg req\""), (int)n);
	assert_int_equal(count(svg, "<g class=\"lifeline\""), 3);
	free(svg);
	free(v);
}

/* A process talking through two rpc clients (two instances) is one lane
 * once ring records tie both instances to its pid. */
static void
test_svg_lane_per_process(void **state)
{
	struct trace_ev v[4];
	char *svg;

	v[0] = mk(1, RING_NOTE, 1, "supervisor", SUP_A, "", "", "", "", "", "attached");
	v[0].pid = 100;
	v[1] = mk(0, 0, 2, "supervisor", SUP_B, "renew", "T1", RUN1, "granted", "", "");
	v[2] = mk(1, RING_RETRY, 3, "supervisor", SUP_B, "renew", "T1", RUN1, "", "", "");
	v[2].pid = 100;
	v[3] = mk(0, 0, 4, "supervisor", REC, "claim", "T1", RUN1, "granted", "", "");
	svg = render(trace_svg, v, 4);
	/* coordinator, supervisor pid 100 (instances A and B), and the
	 * instance no ring record ties to a pid. */
	assert_int_equal(count(svg, "<g class=\"lifeline\""), 3);
	assert_non_null(strstr(svg, "data-instance=\"" SUP_A "\""));
	assert_null(strstr(svg, "data-instance=\"" SUP_B "\""));
	free(svg);
}

/* A shared store's trace (DESIGN §13): each host's lanes in a group of
 * their own with a coordinator each; the same actor on two hosts is two
 * lanes; an arrow goes to its own host's coordinator; --json and the
 * timeline say the host, --json the store's order. */
static void
test_svg_hosts(void **state)
{
	struct trace_ev v[3];
	char *out;

	(void)state;
	v[0] = mk(0, 0, 1, "supervisor", SUP_A, "claim", "T1", RUN1, "granted", "", "");
	v[1] = mk(0, 0, 1, "supervisor", SUP_B, "claim", "T2", RUN1, "granted", "", "");
	v[2] = mk(0, 0, 2, "supervisor", SUP_A, "start", "T1", RUN1, "granted", "", "");
	snprintf(v[0].host, sizeof v[0].host, "h1");
	snprintf(v[1].host, sizeof v[1].host, "h2");
	snprintf(v[2].host, sizeof v[2].host, "h1");
	v[0].gseq = 7;
	v[1].gseq = 8;
	v[1].remote = 1;
	out = render(trace_svg, v, 3);
	assert_true(xml_wellformed(out));
	assert_int_equal(count(out, "<g class=\"host\""), 2);
	assert_non_null(strstr(out, "<g class=\"host\" data-host=\"h1\">"));
	assert_non_null(strstr(out, "<g class=\"host\" data-host=\"h2\">"));
	assert_int_equal(count(out, "data-actor=\"coordinator\""), 2);
	assert_int_equal(count(out, "data-actor=\"supervisor\""), 2);
	free(out);
	out = render(trace_mermaid, v, 3);
	assert_non_null(strstr(out, "as coordinator on h2"));
	free(out);
	/* One host alone: no groups, as before. */
	v[1].host[0] = v[0].host[0] = v[2].host[0] = '\0';
	out = render(trace_svg, v, 3);
	assert_null(strstr(out, "<g class=\"host\""));
	assert_int_equal(count(out, "data-actor=\"coordinator\""), 1);
	free(out);
	snprintf(v[1].host, sizeof v[1].host, "h2");
	out = NULL;
	{
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		trace_print_json(f, &v[1]);
		trace_print_line(f, &v[1], 0);
		fclose(f);
	}
	assert_non_null(strstr(out, ",\"host\":\"h2\",\"gseq\":8}"));
	assert_non_null(strstr(out, " h2/supervisor "));
	free(out);
}

/* The pause of the race, in time: the supervisor held at a failpoint is a
 * bar on its lifeline from the firing to its next record, labelled with
 * how long; each quiet stretch of 250 ms or more is a gap row saying how
 * long it was; a picture of one ticket and one run names them in its title
 * and leaves them out of every label. */
static void
test_svg_hold_and_gaps(void **state)
{
	struct trace_ev v[5];
	char *svg;

	v[0] = mk(0, 0, 1, "supervisor", SUP_A, "start", "T1", RUN1, "granted", "", "");
	v[1] = mk(1, RING_FAILPOINT, 2, "supervisor", SUP_A, "", "", "", "", "",
		  "supervisor.before_record_exit pause");
	v[2] = mk(0, 0, 3, "recovery", REC, "record_exit", "T1", RUN1, "granted", "", "");
	v[3] = mk(0, 0, 4, "supervisor", SUP_A, "record_exit", "T1", RUN1, "denied",
		  "already_claimed", "");
	v[4] = mk(0, 0, 5, "recovery", REC, "settle", "T1", RUN1, "granted", "", "");
	v[2].ts_ms = v[1].ts_ms + 1000; /* recovery acts a second later */
	v[3].ts_ms = v[1].ts_ms + 1500; /* the supervisor, released */
	v[4].ts_ms = v[3].ts_ms + 10;
	svg = render(trace_svg, v, 5);
	assert_true(xml_wellformed(svg));
	assert_int_equal(count(svg, "<g class=\"hold\""), 1);
	assert_non_null(strstr(svg, "held 1.50 s</text>"));
	assert_int_equal(count(svg, "<g class=\"gap\">"), 2);
	assert_non_null(strstr(svg, "1.00 s later"));
	assert_non_null(strstr(svg, "500 ms later"));
	assert_non_null(strstr(svg, "ticket T1 run 5e2f01ab"));
	assert_null(strstr(svg, "record_exit T1"));
	free(svg);

	/* Two runs: every label names its run again, and no hold without a
	 * pause or sleep. */
	snprintf(v[4].run, sizeof(v[4].run), "%s", RUN2);
	snprintf(v[1].text, sizeof(v[1].text), "supervisor.before_record_exit error");
	svg = render(trace_svg, v, 5);
	assert_non_null(strstr(svg, "record_exit T1 5e2f01ab"));
	assert_null(strstr(svg, "<g class=\"hold\""));
	free(svg);
}

static void
test_mermaid(void **state)
{
	struct trace_ev v[16];
	size_t n = race(v);
	char *m = render(trace_mermaid, v, n);

	assert_int_equal(strncmp(m, "sequenceDiagram\n", 16), 0);
	assert_int_equal(count(m, "    participant "), 6);
	assert_int_equal(count(m, "->>C: "), 10);
	assert_int_equal(count(m, "--x"), 2); /* denied + error */
	assert_non_null(strstr(m, "--xP"));
	assert_non_null(strstr(m, "Note over "));
	assert_null(strchr(m, ';'));
	free(m);
}

static void
test_timeline_line(void **state)
{
	struct trace_ev v[16];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	race(v);
	f = open_memstream(&buf, &len);
	trace_print_line(f, &v[6], 0);
	trace_print_line(f, &v[3], 0);
	fclose(f);
	assert_non_null(strstr(buf, "supervisor 9999aaaa -> coordinator  record_exit"));
	assert_non_null(strstr(buf, "T1 5e2f01ab"));
	/* The reason in words; the code stays in --json. */
	assert_non_null(strstr(buf, "denied: the exit was already recorded"));
	assert_null(strstr(buf, "already_claimed"));
	assert_non_null(strstr(buf, "[failpoint] supervisor.before_record_exit crash"));
	assert_null(strchr(buf, '\033'));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	trace_print_line(f, &v[6], 1);
	fclose(f);
	assert_non_null(strstr(buf, "\033[31mdenied"));
	free(buf);
}

/* No byte below 0x20 but the newlines that end a line or an element, no
 * DEL, and none of a C1 control (0xc2 0x80..0x9f). */
static void
assert_no_controls(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fail_msg("control byte 0x%02x at offset %ld", *p,
				 (long)(p - (const unsigned char *)s));
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			fail_msg("C1 control at offset %ld", (long)(p - (const unsigned char *)s));
	}
}

/* A record carrying what a job wrote (issue 10: clear the screen, colour,
 * a forged row, a bell): every output spells it out, none passes it on. */
static void
test_hostile_text_escaped(void **state)
{
	struct trace_ev v[3];
	char *out = NULL, *svg, *m;
	size_t len = 0;
	FILE *f;

	v[0] = mk(0, 0, 1, "worker", "w\x1b[2J", "note", "T1", RUN1, "denied",
		  "\x1b[31mred\nT9 granted\x07", "");
	v[1] = mk(1, RING_STATE, 2, "supervisor", SUP_A, "", "T1", RUN1, "", "",
		  "label \x1b]0;title\x07 \xc2\x9b"
		  "2J \xff");
	v[2] = mk(1, RING_REPLY, 3, "cli", "c1c1c1c1c1c1c1c1", "sh\x1b[2Jow", "T1", "", "error",
		  "bad\rline", "");
	f = open_memstream(&out, &len);
	trace_print_line(f, &v[0], 0);
	trace_print_line(f, &v[1], 0);
	trace_print_line(f, &v[2], 0);
	fclose(f);
	assert_no_controls(out);
	assert_int_equal(count(out, "\n"), 3); /* one line per record, no forged row */
	assert_non_null(strstr(out, "denied: \\e[31mred\\nT9 granted\\x07"));
	assert_non_null(strstr(out, "w\\e[2J"));
	assert_non_null(strstr(out, "label \\e]0;title\\x07 \\xc2\\x9b2J \\xff"));
	assert_non_null(strstr(out, "sh\\e[2Jow"));
	assert_non_null(strstr(out, "bad\\rline"));
	free(out);

	svg = render(trace_svg, v, 3);
	assert_true(xml_wellformed(svg));
	assert_no_controls(svg);
	assert_non_null(strstr(svg, "\\e[31mred\\nT9 granted\\x07"));
	free(svg);

	m = render(trace_mermaid, v, 3);
	assert_no_controls(m);
	assert_non_null(strstr(m, "\\e[31mred\\nT9 granted\\x07"));
	free(m);
}

/* A lease a decision found run out becomes a mark at its expiry, once, on
 * the lane of the owner that did not renew it; the held bar of that owner
 * goes on past it; the request says why recovery acted; the reply says the
 * exit and the reason in words. */
static void
test_svg_lease_and_reasons(void **state)
{
	struct trace_ev v[6], *w;
	size_t n = 0, nw;
	char *svg;

	v[n++] = mk(0, 0, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "granted", "", "");
	v[n] = mk(1, RING_FAILPOINT, 2, "supervisor", SUP_A, "", "", "", "", "",
		  "supervisor.before_record_exit pause");
	v[n++].pid = 40;
	v[0].pid = 40;
	v[n] = mk(0, 0, 30, "recovery", REC, "record_exit", "T1", RUN1, "granted", "", "");
	snprintf(v[n].detail, sizeof(v[n].detail), "exit 7");
	v[n].lease_expires_ms = v[n].ts_ms - 50;
	v[n].lease_renewed_ms = v[0].ts_ms;
	snprintf(v[n++].lease_owner, sizeof(v[0].lease_owner), "%s", SUP_A);
	v[n] = v[n - 1];
	v[n].seq = 31;
	snprintf(v[n++].verb, sizeof(v[0].verb), "settle");
	v[n] = mk(0, 0, 40, "supervisor", SUP_A, "record_exit", "T1", RUN1, "denied",
		  "already_claimed", "");
	v[n++].pid = 40;
	assert_int_equal(trace_add_leases(v, n, &w, &nw), 0);
	assert_int_equal(nw, n + 1); /* one mark for the two decisions */
	assert_int_equal(w[2].kind, TRACE_KIND_LEASE);
	assert_string_equal(w[2].instance, SUP_A);
	assert_int_equal(w[2].ts_ms, v[2].lease_expires_ms);
	free(w);
	svg = render(trace_svg, v, n);
	assert_true(xml_wellformed(svg));
	assert_int_equal(count(svg, "<g class=\"mark lease\""), 1);
	assert_non_null(strstr(svg, "record_exit (lease expired 50ms before)"));
	assert_non_null(strstr(svg, "granted exit 7"));
	assert_non_null(strstr(svg, "denied the exit was already recorded"));
	assert_null(strstr(svg, "already_claimed<"));
	/* The hold lasts until the supervisor's own next record (3.8 s). */
	assert_non_null(strstr(svg, "held 3.80 s"));
	free(svg);
}

/* An actor killed and restarted: its lifeline ends at the death, and the
 * launcher's restart is a new lane, started with a mark. */
static void
test_svg_death_and_restart(void **state)
{
	struct trace_ev v[5];
	size_t n = 0;
	char *svg;

	v[n] = mk(0, 0, 1, "supervisor", SUP_A, "renew", "T1", RUN1, "granted", "", "");
	v[n++].pid = 40;
	v[n] = mk(1, TRACE_KIND_DEATH, 2, "supervisor", SUP_A, "", "", "", "", "",
		  "killed by signal 9 (SIGKILL)");
	v[n++].pid = 40;
	v[n] = mk(1, TRACE_KIND_START, 3, "supervisor", SUP_B, "", "", "", "", "",
		  "restarted by the launcher");
	v[n++].pid = 41;
	v[n] = mk(0, 0, 4, "supervisor", SUP_B, "renew", "T1", RUN1, "granted", "", "");
	v[n++].pid = 41;
	svg = render(trace_svg, v, n);
	assert_true(xml_wellformed(svg));
	assert_int_equal(count(svg, "<g class=\"lifeline\" data-actor=\"supervisor\""), 2);
	assert_int_equal(count(svg, "<g class=\"mark death\""), 1);
	assert_non_null(strstr(svg, "died: killed by signal 9 (SIGKILL)"));
	assert_int_equal(count(svg, "<g class=\"mark restart\""), 1);
	/* A death is no graceful end: no end cross on the killed lane. */
	assert_int_equal(count(svg, "<path class=\"end\""), 0);
	free(svg);
}

static void
test_reason_words(void **state)
{
	char buf[128];
	struct trace_ev ev = mk(1, RING_STATE, 1, "recovery", REC, "", "T1", RUN1, "record_exit",
				"gone", "owner alive");

	trace_fmt_reason("record_exit", "already_claimed", buf, sizeof(buf));
	assert_string_equal(buf, "the exit was already recorded");
	trace_fmt_reason("claim", "already_claimed", buf, sizeof(buf));
	assert_string_equal(buf, "already_claimed");
	trace_fmt_reason("claim", "slots_full", buf, sizeof(buf));
	assert_string_equal(buf, "every slot is busy");
	trace_fmt_verdict(&ev, buf, sizeof(buf));
	assert_string_equal(
		buf, "recovery: record_exit (job gone; its supervisor alive, lease ran out)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_checker_can_fail),
		cmocka_unit_test(test_svg_race),
		cmocka_unit_test(test_svg_many),
		cmocka_unit_test(test_svg_lane_per_process),
		cmocka_unit_test(test_svg_hosts),
		cmocka_unit_test(test_svg_hold_and_gaps),
		cmocka_unit_test(test_mermaid),
		cmocka_unit_test(test_timeline_line),
		cmocka_unit_test(test_hostile_text_escaped),
		cmocka_unit_test(test_svg_lease_and_reasons),
		cmocka_unit_test(test_svg_death_and_restart),
		cmocka_unit_test(test_reason_words),
	};

	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
