/*
 * A reader for exactly the JSON lines of trace.jsonl: one flat object per
 * line, string, number, boolean and null values. Unknown keys are skipped
 * (nested values included), so the coordinator may add keys freely. A line
 * that is not a whole object is refused, never half-read: the last line of
 * a file being appended to may be torn.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "trace.h"
#include "ring.h"

struct trace_pp {
	const char *p;
	const char *end;
};

static void
trace_ws(struct trace_pp *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

/* A string at s->p (opening quote) into out (may be NULL: skipped), cut at
 * a character boundary when it does not fit (common/json.c). */
static int
trace_string(struct trace_pp *s, char *out, size_t cap)
{
	return json_read_str(&s->p, s->end, out, cap, NULL);
}

/* A number; *isnum says whether it had a fraction or exponent. */
static int
trace_number(struct trace_pp *s, int64_t *i64, uint64_t *u64)
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

static int
trace_word(struct trace_pp *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/* Skips any value (objects and arrays of unknown keys included). */
static int
trace_skip(struct trace_pp *s, int depth)
{
	int64_t i;
	uint64_t u;

	trace_ws(s);
	if (s->p >= s->end || depth > 32)
		return -1;
	switch (*s->p) {
	case '"': return trace_string(s, NULL, 0);
	case 't': return trace_word(s, "true");
	case 'f': return trace_word(s, "false");
	case 'n': return trace_word(s, "null");
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
	default: return trace_number(s, &i, &u);
	}
}

const char *
trace_kind_name(uint32_t kind)
{
	switch (kind) {
	case TRACE_KIND_LEASE: return "lease";
	case TRACE_KIND_DEATH: return "died";
	case TRACE_KIND_START: return "restarted";
	}
	return ring_kind_name(kind);
}

static uint32_t
trace_kind_of(const char *name)
{
	uint32_t k;

	for (k = RING_SENT; k <= RING_NOTE; k++)
		if (strcmp(ring_kind_name(k), name) == 0)
			return k;
	for (k = TRACE_KIND_LEASE; k <= TRACE_KIND_START; k++)
		if (strcmp(trace_kind_name(k), name) == 0)
			return k;
	return RING_NOTE;
}

/* "2026-12-01T15:00:07.747+0100" (or ...Z) at s: wall ms, the rest in
 * *rest. -1 when s does not start so. */
static int
launcher_time(const char *s, int64_t *ms, const char **rest)
{
	int y, mo, d, h, mi, sec, frac, n = 0, off = 0;
	struct tm tm;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%n", &y, &mo, &d, &h, &mi, &sec, &frac, &n) !=
		    7 ||
	    n != 23)
		return -1;
	s += n;
	if (*s == 'Z') {
		s++;
	} else if ((*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
		   isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3]) &&
		   isdigit((unsigned char)s[4])) {
		off = ((s[1] - '0') * 10 + (s[2] - '0')) * 60 + (s[3] - '0') * 10 + (s[4] - '0');
		off *= *s == '-' ? -1 : 1;
		s += 5;
	} else {
		return -1;
	}
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	*ms = ((int64_t)t - (int64_t)off * 60) * 1000 + frac;
	*rest = s;
	return 0;
}

int
trace_parse_launcher(const char *line, struct trace_ev *ev)
{
	const char *p, *how;
	char actor[24];
	int pid, n = 0;

	memset(ev, 0, sizeof(*ev));
	ev->latency_us = -1;
	ev->ring = 1;
	if (launcher_time(line, &ev->ts_ms, &p) < 0 || strncmp(p, " launcher ", 10) != 0)
		return 0;
	p += 10;
	if (sscanf(p, "started %23s pid %d:%n", actor, &pid, &n) == 2 && n > 0) {
		ev->kind = TRACE_KIND_START;
		snprintf(ev->text, sizeof(ev->text), "started by the launcher");
	} else if (sscanf(p, "%23s pid %d died after %*d ms: %n", actor, &pid, &n) == 2 && n > 0) {
		ev->kind = TRACE_KIND_DEATH;
		how = p + n;
		snprintf(ev->text, sizeof(ev->text), "%.*s", (int)strcspn(how, ";\n"), how);
	} else {
		return 0;
	}
	/* The first pass of recovery is not a lane of its own. */
	if (strcmp(actor, "recovery-once") == 0 || pid <= 0)
		return 0;
	snprintf(ev->from, sizeof(ev->from), "%s", actor);
	ev->pid = pid;
	return 1;
}

int
trace_parse_line(const char *line, size_t len, struct trace_ev *ev)
{
	struct trace_pp s = { line, line + len };
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
			{ "from", ev->from, sizeof(ev->from), NULL, NULL },
			{ "actor", ev->from, sizeof(ev->from), NULL, NULL },
			{ "instance", ev->instance, sizeof(ev->instance), NULL, NULL },
			{ "verb", ev->verb, sizeof(ev->verb), NULL, NULL },
			{ "ticket", ev->ticket, sizeof(ev->ticket), NULL, NULL },
			{ "run", ev->run, sizeof(ev->run), NULL, NULL },
			{ "decision", ev->decision, sizeof(ev->decision), NULL, NULL },
			{ "reason", ev->reason, sizeof(ev->reason), NULL, NULL },
			{ "caller", ev->caller, sizeof(ev->caller), NULL, NULL },
			{ "text", ev->text, sizeof(ev->text), NULL, NULL },
			{ "detail", ev->detail, sizeof(ev->detail), NULL, NULL },
			{ "lease_owner", ev->lease_owner, sizeof(ev->lease_owner), NULL, NULL },
			{ "fused", ev->fused, sizeof(ev->fused), NULL, NULL },
			{ "lease_expires_ms", NULL, 0, &ev->lease_expires_ms, NULL },
			{ "lease_renewed_ms", NULL, 0, &ev->lease_renewed_ms, NULL },
			{ "source", source, sizeof(source), NULL, NULL },
			{ "event", event, sizeof(event), NULL, NULL },
			{ "seq", NULL, 0, NULL, &ev->seq },
			{ "req_id", NULL, 0, NULL, &ev->req_id },
			{ "ts_ms", NULL, 0, &ev->ts_ms, NULL },
			{ "latency_us", NULL, 0, &ev->latency_us, NULL },
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

static void
trace_copy(char *dst, size_t n, const char *src, size_t srcmax)
{
	size_t len = strnlen(src, srcmax);

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void
trace_from_ring(const struct ring_rec *r, struct trace_ev *ev)
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
