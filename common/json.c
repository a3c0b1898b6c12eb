/*
 * The one JSON string writer and the one reader (json.h). Job output, argv
 * and notes are arbitrary bytes and JSON is Unicode, so the writer says what
 * becomes of bytes that are not UTF-8: replaced for output, kept for storage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* The escape of the byte at p, or NULL when the byte is not escaped; *len
 * gets how many input bytes the output stands for. */
static const char *
json_escape(const unsigned char *p, enum json_form form, char buf[8], size_t *len)
{
	*len = 1;
	switch (*p) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	}
	if (form == JSON_BYTES) {
		if (*p >= 0x20)
			return NULL;
		snprintf(buf, 8, "\\u%04x", *p);
		return buf;
	}
	switch (*p) {
	case '\b': return "\\b";
	case '\f': return "\\f";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	}
	if (*p < 0x20 || *p == 0x7f) {
		snprintf(buf, 8, "\\u%04x", *p);
		return buf;
	}
	if ((*len = utf8_len(p)) == 0) {
		*len = 1;
		return "\\ufffd";
	}
	return NULL;
}

/* The one writer: to f, or (f NULL) at *out. */
static void
json_emit(FILE *f, char **out, const char *s, enum json_form form)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
	const char *esc;
	char buf[8];
	size_t len, n;

	if (f != NULL)
		fputc('"', f);
	else
		*(*out)++ = '"';
	while (*p != '\0') {
		esc = json_escape(p, form, buf, &len);
		n = esc != NULL ? strlen(esc) : len;
		if (f != NULL)
			fwrite(esc != NULL ? esc : (const char *)p, 1, n, f);
		else {
			memcpy(*out, esc != NULL ? esc : (const char *)p, n);
			*out += n;
		}
		p += len;
	}
	if (f != NULL)
		fputc('"', f);
	else
		*(*out)++ = '"';
}

void
json_write(FILE *f, const char *s, enum json_form form)
{
	json_emit(f, NULL, s, form);
}

void
json_str(FILE *f, const char *s)
{
	json_emit(f, NULL, s, JSON_TEXT);
}

char *
json_put(char *out, const char *s, enum json_form form)
{
	json_emit(NULL, &out, s, form);
	return out;
}

size_t
json_size(const char *s)
{
	return (s != NULL ? strlen(s) : 0) * 6 + 2;
}

/* The code unit of the four hex digits at p, or -1. */
static long
json_u16(const char *p, const char *end)
{
	long v = 0;
	int i, d;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((d = hex_digit(p[i])) < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Appends cp as UTF-8 when it fits whole. */
static void
json_put_cp(char *out, size_t cap, size_t *len, unsigned long cp)
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

/* Copies the raw bytes at *p: a valid UTF-8 sequence whole (when it fits
 * whole), anything else byte by byte. */
static void
json_put_raw(const char **p, const char *end, char *out, size_t cap, size_t *len)
{
	unsigned char seq[4] = { 0 };
	size_t n, avail = (size_t)(end - *p);

	memcpy(seq, *p, avail < 4 ? avail : 4);
	if ((n = utf8_len(seq)) == 0 || n > avail)
		n = 1;
	if (out != NULL && *len + n < cap) {
		memcpy(out + *len, *p, n);
		*len += n;
		out[*len] = '\0';
	}
	*p += n;
}

/* The escape after a backslash at *p into out; -1 when it is none. */
static int
json_read_escape(const char **pp, const char *end, char *out, size_t cap, size_t *len, int *lossy)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = *pp, *k;
	long u, lo;

	if (p >= end)
		return -1;
	if (*p != 'u') {
		if (*p == '\0' || (k = strchr(from, *p)) == NULL)
			return -1;
		json_put_cp(out, cap, len, (unsigned char)to[k - from]);
		*pp = p + 1;
		return 0;
	}
	if ((u = json_u16(p + 1, end)) < 0)
		return -1;
	p += 5;
	if (u >= 0xd800 && u < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
	    (lo = json_u16(p + 2, end)) >= 0xdc00 && lo < 0xe000) {
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		p += 6;
	} else if ((u >= 0xd800 && u < 0xe000) || u == 0) {
		u = 0xfffd; /* a lone surrogate, or a NUL a C string cannot hold */
		*lossy = 1;
	}
	json_put_cp(out, cap, len, (unsigned long)u);
	*pp = p;
	return 0;
}

int
json_read_str(const char **pp, const char *end, char *out, size_t cap, int *lossy)
{
	const char *p = *pp;
	size_t len = 0;
	int lost = 0;

	if (out != NULL && cap > 0)
		out[0] = '\0';
	if (out != NULL && cap == 0)
		out = NULL;
	if (p >= end || *p != '"')
		return -1;
	p++;
	while (p < end) {
		if (*p == '"') {
			*pp = p + 1;
			if (lossy != NULL)
				*lossy = lost;
			return 0;
		}
		if ((unsigned char)*p < 0x20)
			return -1;
		if (*p != '\\') {
			json_put_raw(&p, end, out, cap, &len);
			continue;
		}
		p++;
		if (json_read_escape(&p, end, out, cap, &len, &lost) < 0)
			return -1;
	}
	return -1; /* unterminated: a torn line */
}
