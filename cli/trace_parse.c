/*
 * A reader for exactly the JSON lines of trace.jsonl: one flat object per
 * line, string, number, boolean and null values. Unknown keys are skipped
 * (nested values included), so the coordinator may add keys freely. A line
 * that is not a whole object is refused, never half-read: the last line of
 * a file being appended to may be torn.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "trace.h"
#include "ring.h"

struct trace_pp {
	const char *p;
	const char *end;
};

static void trace_ws(struct trace_pp *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

/* A string at s->p (opening quote) into out (may be NULL: skipped), cut at
 * a character boundary when it does not fit (common/json.c). */
static int trace_string(struct trace_pp *s, char *out, size_t cap)
{
	return json_read_str(&s->p, s->end, out, cap, NULL);
}

/* A number; *isnum says whether it had a fraction or exponent. */
static int trace_number(struct trace_pp *s, int64_t *i64, uint64_t *u64)
{
	char buf[64];
	size_t n = 0;
	int frac = 0;

	while (s->p < s->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", *s->p) != NULL) {
		if (*s->p == '.' || *s->p == 'e' || *s->p == 'E')
			frac = 1;
		buf[n++] = *s->p++;
	}
	buf[n] = '\0';
	if (n == 0 || !(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return -1;
	if (frac) {
		char *e;
		double d = strtod(buf, &e);

		if (*e != '\0')
			return -1;
		/* Past the integer range (1e300, or 1e999 read as inf) the value
		 * saturates: converting it is undefined behaviour in C. */
		*i64 = d >= 9223372036854775808.0    ? INT64_MAX
		       : d <= -9223372036854775808.0 ? INT64_MIN
		                                     : (int64_t)d;
		*u64 = d <= 0 ? 0 : d >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)d;
	} else {
		char *e;

		if (buf[0] == '-') {
			*i64 = strtoll(buf, &e, 10);
			*u64 = 0;
		} else {
			*u64 = strtoull(buf, &e, 10);
			*i64 = (int64_t)*u64;
		}
		if (*e != '\0')
			return -1;
	}
	return 0;
}

static int trace_word(struct trace_pp *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/* Skips any value (objects and arrays of unknown keys included). */
static int trace_skip(struct trace_pp *s, int depth)
{
	int64_t i;
	uint64_t u;

	trace_ws(s);
	if (s->p >= s->end || depth > 32)
		return -1;
	switch (*s->p) {
	case '"':
		return trace_string(s, NULL, 0);
	case 't':
		return trace_word(s, "true");
	case 'f':
		return trace_word(s, "false");
	case 'n':
		return trace_word(s, "null");
	case '{':
	case '[': {
		char close = *s->p == '{' ? '}' : ']';

		s->p++;
		trace_ws(s);
		if (s->p < s->end && *s->p == close) {
			s->p++;
			return 0;
		}
		for (;;) {
			if (close == '}') {
				trace_ws(s);
				if (trace_string(s, NULL, 0) == -1)
					return -1;
				trace_ws(s);
				if (s->p >= s->end || *s->p++ != ':')
					return -1;
			}
			if (trace_skip(s, depth + 1) == -1)
				return -1;
			trace_ws(s);
			if (s->p >= s->end)
				return -1;
			if (*s->p == ',') {
				s->p++;
				continue;
			}
			if (*s->p++ == close)
				return 0;
			return -1;
		}
	}
	default:
		return trace_number(s, &i, &u);
	}
}

static uint32_t trace_kind_of(const char *name)
{
	uint32_t k;

	for (k = RING_SENT; k <= RING_NOTE; k++)
		if (strcmp(ring_kind_name(k), name) == 0)
			return k;
	return RING_NOTE;
}

int trace_parse_line(const char *line, size_t len, struct trace_ev *ev)
{
	struct trace_pp s = {line, line + len};
	char key[32], source[16] = "", event[16] = "";
	int have_verb = 0;

	memset(ev, 0, sizeof(*ev));
	ev->latency_us = -1;
	trace_ws(&s);
	if (s.p >= s.end || *s.p++ != '{')
		return -1;
	trace_ws(&s);
	if (s.p < s.end && *s.p == '}') {
		s.p++;
		goto done;
	}
	for (;;) {
		struct {
			const char *name;
			char *str;
			size_t cap;
			int64_t *i64;
			uint64_t *u64;
		} keys[] = {
		    {"from", ev->from, sizeof(ev->from), NULL, NULL},
		    {"actor", ev->from, sizeof(ev->from), NULL, NULL},
		    {"instance", ev->instance, sizeof(ev->instance), NULL, NULL},
		    {"verb", ev->verb, sizeof(ev->verb), NULL, NULL},
		    {"ticket", ev->ticket, sizeof(ev->ticket), NULL, NULL},
		    {"run", ev->run, sizeof(ev->run), NULL, NULL},
		    {"decision", ev->decision, sizeof(ev->decision), NULL, NULL},
		    {"reason", ev->reason, sizeof(ev->reason), NULL, NULL},
		    {"caller", ev->caller, sizeof(ev->caller), NULL, NULL},
		    {"text", ev->text, sizeof(ev->text), NULL, NULL},
		    {"source", source, sizeof(source), NULL, NULL},
		    {"event", event, sizeof(event), NULL, NULL},
		    {"seq", NULL, 0, NULL, &ev->seq},
		    {"req_id", NULL, 0, NULL, &ev->req_id},
		    {"ts_ms", NULL, 0, &ev->ts_ms, NULL},
		    {"latency_us", NULL, 0, &ev->latency_us, NULL},
		};
		size_t k, nkeys = sizeof(keys) / sizeof(keys[0]);
		int64_t i64;
		uint64_t u64;

		trace_ws(&s);
		if (trace_string(&s, key, sizeof(key)) == -1)
			return -1;
		trace_ws(&s);
		if (s.p >= s.end || *s.p++ != ':')
			return -1;
		trace_ws(&s);
		for (k = 0; k < nkeys; k++)
			if (strcmp(keys[k].name, key) == 0)
				break;
		if (k == nkeys && strcmp(key, "pid") == 0) {
			if (trace_number(&s, &i64, &u64) == -1)
				return -1;
			ev->pid = (int32_t)i64;
		} else if (k == nkeys) {
			if (trace_skip(&s, 0) == -1)
				return -1;
		} else if (s.p < s.end && *s.p == 'n') {
			if (trace_word(&s, "null") == -1)
				return -1;
		} else if (keys[k].str != NULL) {
			if (trace_string(&s, keys[k].str, keys[k].cap) == -1)
				return -1;
			if (keys[k].str == ev->verb)
				have_verb = 1;
		} else {
			if (trace_number(&s, &i64, &u64) == -1)
				return -1;
			if (keys[k].i64 != NULL)
				*keys[k].i64 = i64;
			else
				*keys[k].u64 = u64;
		}
		trace_ws(&s);
		if (s.p >= s.end)
			return -1;
		if (*s.p == ',') {
			s.p++;
			continue;
		}
		if (*s.p++ == '}')
			break;
		return -1;
	}
done:
	trace_ws(&s);
	if (s.p != s.end || !have_verb)
		return -1;
	if (strcmp(source, "ring") == 0) {
		ev->ring = 1;
		ev->kind = trace_kind_of(event);
	}
	return 0;
}

static void trace_copy(char *dst, size_t n, const char *src, size_t srcmax)
{
	size_t len = strnlen(src, srcmax);

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void trace_from_ring(const struct ring_rec *r, struct trace_ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ring = 1;
	ev->kind = r->kind;
	ev->seq = r->seq;
	ev->ts_ms = r->ts_ms;
	ev->pid = r->pid;
	ev->req_id = r->req_id;
	ev->latency_us = r->kind == RING_REPLY || r->kind == RING_TIMEOUT ? r->latency_us : -1;
	trace_copy(ev->from, sizeof(ev->from), r->actor, sizeof(r->actor));
	trace_copy(ev->instance, sizeof(ev->instance), r->instance, sizeof(r->instance));
	trace_copy(ev->verb, sizeof(ev->verb), r->verb, sizeof(r->verb));
	trace_copy(ev->ticket, sizeof(ev->ticket), r->ticket, sizeof(r->ticket));
	trace_copy(ev->run, sizeof(ev->run), r->run, sizeof(r->run));
	trace_copy(ev->decision, sizeof(ev->decision), r->decision, sizeof(r->decision));
	trace_copy(ev->reason, sizeof(ev->reason), r->reason, sizeof(r->reason));
	trace_copy(ev->text, sizeof(ev->text), r->text, sizeof(r->text));
}
