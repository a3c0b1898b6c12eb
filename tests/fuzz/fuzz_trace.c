/*
 * libFuzzer harness: `berth trace`'s reader of trace.jsonl lines
 * (cli/trace_parse.c), and what it hands its parsed events to. The input
 * is a file of lines. Each line goes through trace_parse_line; every
 * accepted event must come back from our own --json output
 * (trace_print_json, which `berth trace --json` prints and tools read
 * again): the same numbers, the same strings where they were plain ASCII,
 * and after one such round the text is a fixed point. The accepted events
 * are then filtered and rendered as the timeline, SVG and Mermaid, as
 * `berth trace` does with a hostile trace file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "trace.h"

#define MAX_EVENTS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
die(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "%s: line '%.*s'\n", what, (int)(len > 400 ? 400 : len), line);
	abort();
}

static int
ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* ev printed as --json and parsed again into back. */
static void
json_round(const struct trace_ev *ev, struct trace_ev *back, const char *line, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (f == NULL)
		abort();
	trace_print_json(f, ev);
	if (fclose(f) != 0 || n == 0 || buf[n - 1] != '\n')
		die("trace_print_json wrote no line", line, len);
	if (trace_parse_line(buf, n - 1, back) != 0)
		die("our own --json output does not parse", buf, n);
	free(buf);
}

static int
same_numbers(const struct trace_ev *a, const struct trace_ev *b)
{
	return a->ring == b->ring && a->seq == b->seq && a->ts_ms == b->ts_ms &&
	       a->req_id == b->req_id &&
	       (a->latency_us < 0 ? b->latency_us == -1 : a->latency_us == b->latency_us) &&
	       (!a->ring || (a->kind == b->kind && a->pid == b->pid));
}

#define STR_FIELDS(X) X(from) X(instance) X(verb) X(ticket) X(run) X(decision) X(reason)

static void
check_line(const char *line, size_t len, struct trace_ev *ev)
{
	struct trace_ev back, again;

	json_round(ev, &back, line, len);
	if (!same_numbers(ev, &back))
		die("a number changed through --json", line, len);
#define X(s)                                            \
	if (ascii(ev->s) && strcmp(ev->s, back.s) != 0) \
		die("field " #s " changed through --json", line, len);
	STR_FIELDS(X)
#undef X
	if (ev->ring && ascii(ev->text) && strcmp(ev->text, back.text) != 0)
		die("field text changed through --json", line, len);
	json_round(&back, &again, line, len);
	if (!same_numbers(&back, &again) || memcmp(back.from, again.from, sizeof back.from) != 0)
		die("--json is not a fixed point", line, len);
#define X(s)                              \
	if (strcmp(back.s, again.s) != 0) \
		die("field " #s " is not a fixed point of --json", line, len);
	STR_FIELDS(X)
#undef X
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_ev ev[MAX_EVENTS];
	const char *p = (const char *)data, *end = p + size, *nl;
	struct trace_filter flt[3];
	size_t n = 0, i, k;
	FILE *out;

	while (p < end && n < MAX_EVENTS) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (trace_parse_line(p, (size_t)(nl - p), &ev[n]) == 0) {
			check_line(p, (size_t)(nl - p), &ev[n]);
			n++;
		}
		p = nl + 1;
	}
	if (n == 0)
		return 0;

	/* What `berth trace` does with them: filter, then render. */
	trace_filter_init(&flt[0], "T1-r1", NULL, NULL, NULL);
	trace_filter_init(&flt[1], ev[0].run, ev[0].ticket, NULL, NULL);
	trace_filter_init(&flt[2], NULL, NULL, ev[n - 1].from, ev[n - 1].verb);
	if ((out = fopen("/dev/null", "w")) == NULL)
		abort();
	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++) {
			trace_filter_see(&flt[k], &ev[i]);
			(void)trace_filter_match(&flt[k], &ev[i]);
		}
		(void)trace_filter_routine(&ev[i]);
		trace_print_line(out, &ev[i], (int)(i & 1));
	}
	if (trace_svg(out, ev, n) != 0 || trace_mermaid(out, ev, n) != 0)
		die("a renderer failed on /dev/null", (const char *)data, size);
	fclose(out);
	return 0;
}
