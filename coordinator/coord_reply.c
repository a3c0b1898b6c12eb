/* Reply builders: see coord_reply.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_mem.h"
#include "coord_reply.h"
#include "log.h"
#include "states.h"

/* A fresh reply in c: a denial replaces nothing, but an error may follow a
 * half-built grant, so what was built is dropped. */
static Berth__Reply *
reply_new(struct coord_ctx *c)
{
	if (c->reply != NULL)
		berth__reply__free_unpacked(c->reply, NULL);
	c->reply = coord_mem_alloc(sizeof *c->reply);
	berth__reply__init(c->reply);
	return c->reply;
}

Berth__Granted *
coord_reply_granted(struct coord_ctx *c)
{
	Berth__Reply *r = reply_new(c);
	Berth__Granted *g = coord_mem_alloc(sizeof *g);

	berth__granted__init(g);
	r->result_case = BERTH__REPLY__RESULT_GRANTED;
	r->granted = g;
	c->reason[0] = '\0';
	return g;
}

Berth__Fact *
coord_reply_fact(const char *key, const char *value)
{
	Berth__Fact *f = coord_mem_alloc(sizeof *f);

	berth__fact__init(f);
	f->key = coord_mem_strdup(key);
	f->value = coord_mem_strdup(value);
	return f;
}

void
coord_reply_deny(struct coord_ctx *c, const char *reason, ...)
{
	Berth__Reply *r = reply_new(c);
	Berth__Denied *d = coord_mem_alloc(sizeof *d);
	const char *k, *v;
	va_list ap;
	size_t n = 0;

	berth__denied__init(d);
	d->reason = coord_mem_strdup(reason);
	va_start(ap, reason);
	while ((k = va_arg(ap, const char *)) != NULL) {
		(void)va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	d->facts = coord_mem_alloc((n ? n : 1) * sizeof *d->facts);
	va_start(ap, reason);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		d->facts[d->n_facts++] = coord_reply_fact(k, v);
	}
	va_end(ap);
	r->result_case = BERTH__REPLY__RESULT_DENIED;
	r->denied = d;
	snprintf(c->reason, sizeof c->reason, "%s", reason);
}

void
coord_reply_fail(struct coord_ctx *c, Berth__ErrorCode code, const char *fmt, ...)
{
	Berth__Reply *r;
	Berth__Error *e;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r = reply_new(c);
	e = coord_mem_alloc(sizeof *e);
	berth__error__init(e);
	e->has_code = 1;
	e->code = code;
	e->message = coord_mem_strdup(msg);
	r->result_case = BERTH__REPLY__RESULT_ERROR;
	r->error = e;
	snprintf(c->reason, sizeof c->reason, "%.63s", msg);
}

void
coord_reply_seal(Berth__Reply *r, const Berth__Request *req)
{
	r->has_req_id = req->has_req_id;
	r->req_id = req->req_id;
	r->has_version = 1;
	r->version = BERTH_PROTOCOL_VERSION;
}

int
coord_reply_pack(const Berth__Reply *r, uint8_t **buf, size_t *len)
{
	*len = berth__reply__get_packed_size(r);
	if ((*buf = malloc(*len ? *len : 1)) == NULL) {
		log_error("coordinator: out of memory packing a reply of %zu bytes", *len);
		return -1;
	}
	berth__reply__pack(r, *buf);
	return 0;
}

/*
 * Protobuf's encoding of a message is the concatenation of its fields, and
 * a repeated message field is one (tag, length, bytes) record per element,
 * wherever it appears: appending such a record to a packed reply is the
 * packing of that reply with one more element. So the answers to a
 * request's parts, each packed once (and stored as packed), become the
 * Reply.then of the answer sent without unpacking anything.
 */
int
coord_reply_append(uint8_t **buf, size_t *len, unsigned field, const uint8_t *part, size_t partlen)
{
	uint8_t head[20], *grown;
	uint64_t v;
	size_t n = 0;

	for (v = ((uint64_t)field << 3) | 2; v >= 0x80; v >>= 7)
		head[n++] = (uint8_t)(v | 0x80);
	head[n++] = (uint8_t)v;
	for (v = partlen; v >= 0x80; v >>= 7)
		head[n++] = (uint8_t)(v | 0x80);
	head[n++] = (uint8_t)v;
	if ((grown = realloc(*buf, *len + n + partlen)) == NULL) {
		log_error("coordinator: out of memory joining a reply of %zu bytes",
			  *len + partlen);
		return -1;
	}
	memcpy(grown + *len, head, n);
	if (partlen > 0)
		memcpy(grown + *len + n, part, partlen);
	*buf = grown;
	*len += n + partlen;
	return 0;
}
