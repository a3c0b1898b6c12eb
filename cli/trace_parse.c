/*
 * A reader for exactly the JSON lines of trace.jsonl: one flat object per
 * line, string, number, boolean and null values. Unknown keys are skipped
 * (nested values included), so the coordinator may add keys freely. A line
 * that is not a whole object is refused, never half-read: the last line of
 * a file being appended to may be torn.
 */
#include <stdlib.h>
#include <string.h>

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

/* Appends the UTF-8 encoding of cp to out (len/cap), dropping what does not
 * fit whole: a cut record keeps valid UTF-8. */
static void trace_put_cp(char *out, size_t cap, size_t *len, unsigned long cp)
{
	unsigned char b[4];
	size_t n, i;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (out == NULL || *len + n >= cap)
		return;
	for (i = 0; i < n; i++)
		out[(*len)++] = (char)b[i];
	out[*len] = '\0';
}

static int trace_hex4(const char *p, unsigned long *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned long)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* A string at s->p (opening quote) into out (may be NULL: skipped). Raw
 * bytes are copied as they are, but a multi-byte sequence that does not fit
 * is dropped whole. */
static int trace_string(struct trace_pp *s, char *out, size_t cap)
{
	size_t len = 0;
	unsigned long cp, lo;

	if (out != NULL && cap > 0)
		out[0] = '\0';
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p++;

		if (c == '"')
			return 0;
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			size_t n = 1, i;

			if (c >= 0xf0)
				n = 4;
			else if (c >= 0xe0)
				n = 3;
			else if (c >= 0xc0)
				n = 2;
			if (s->p + (n - 1) > s->end)
				return -1;
			if (out != NULL && len + n < cap) {
				out[len++] = (char)c;
				for (i = 1; i < n; i++)
					out[len++] = s->p[i - 1];
				out[len] = '\0';
			}
			s->p += n - 1;
			continue;
		}
		if (s->p >= s->end)
			return -1;
		c = (unsigned char)*s->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			cp = c;
			break;
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			if (s->end - s->p < 4 || trace_hex4(s->p, &cp) == -1)
				return -1;
			s->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && s->end - s->p >= 6 && s->p[0] == '\\' &&
			    s->p[1] == 'u' && trace_hex4(s->p + 2, &lo) == 0 && lo >= 0xdc00 &&
			    lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s->p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd; /* a lone surrogate */
			}
			break;
		default:
			return -1;
		}
		trace_put_cp(out, cap, &len, cp);
	}
	return -1; /* unterminated: a torn line */
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
