/* The coordinator against hostile input: the choices, the server's path
 * and the checks shared by tests/unit/coord_fuzz_test.c and the libFuzzer
 * harness tests/fuzz/fuzz_coord.c (see coord_fz.h); the request generator
 * is coord_fz_value.c and coord_fz_req.c. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "coord_fz.h"
#include "coord_fz_int.h"
#include "coord_verbs.h"
#include "ident.h"
#include "rpc.h"

#define CFZ_NE(a, b) CFZ_CHECK((long long)(a) != (long long)(b))

/* ------------------------------------------------------------ choices */

void
cfz_tape(struct cfz *f, const void *b, size_t n)
{
	if (f->tape == NULL)
		return;
	if (f->tape_len + n > f->tape_cap) {
		f->tape_cap = 2 * (f->tape_len + n);
		f->tape = realloc(f->tape, f->tape_cap);
		CFZ_CHECK(f->tape != NULL);
	}
	memcpy(f->tape + f->tape_len, b, n);
	f->tape_len += n;
}

static uint64_t
cfz_xorshift(struct cfz *f)
{
	/* xorshift64*: fixed seeds give the same inputs on every run */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 2685821657736338717ULL;
}

/* v as n little-endian input bytes, on the tape */
static void
cfz_tape_le(struct cfz *f, uint64_t v, int n)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	cfz_tape(f, b, (size_t)n);
}

uint32_t
cfz_take(struct cfz *f, int n)
{
	uint32_t v = 0;
	int i;

	if (f->in == NULL) {
		v = (uint32_t)cfz_xorshift(f);
		if (n < 4)
			v &= (1u << (8 * n)) - 1;
		cfz_tape_le(f, v, n);
		return v;
	}
	for (i = 0; i < n && f->in_pos < f->in_len; i++)
		v |= (uint32_t)f->in[f->in_pos++] << (8 * i);
	return v;
}

uint64_t
cfz_rnd(struct cfz *f)
{
	uint64_t v = 0;
	int i;

	if (f->in == NULL) {
		v = cfz_xorshift(f);
		cfz_tape_le(f, v, 8);
		return v;
	}
	for (i = 0; i < 8 && f->in_pos < f->in_len; i++)
		v |= (uint64_t)f->in[f->in_pos++] << (8 * i);
	return v;
}

/* From input bytes a choice takes as few bytes as its range needs, so that
 * one byte of the input is one decision and a mutation of it changes that
 * decision only. */
uint32_t
cfz_rn(struct cfz *f, uint32_t n)
{
	int nb = n <= 0x100 ? 1 : n <= 0x10000 ? 2 : 4;
	uint32_t v;

	if (n == 0)
		return 0;
	if (f->in == NULL) {
		v = (uint32_t)(cfz_xorshift(f) % n);
		cfz_tape_le(f, v, nb);
		return v;
	}
	return cfz_take(f, nb) % n;
}

int
cfz_exhausted(const struct cfz *f)
{
	return f->in != NULL && f->in_pos >= f->in_len;
}

/* ------------------------------------------------------------ the store */

static int64_t
sql_int(struct cfz *f, const char *sql)
{
	struct coord_st *st = coord_db_q_once(f->s, sql, "");
	int64_t v = -1;

	CFZ_CHECK(st != NULL);
	if (coord_db_step(f->s, st) == 1)
		v = coord_db_i64(st, 0);
	coord_db_free(st);
	return v;
}

void
cfz_check_store(struct cfz *f, int full)
{
	/* No request may leave its transaction open: the next BEGIN
	 * IMMEDIATE would fail forever. */
	CFZ_EQ(coord_db_in_txn(f->s), 0);
	if (full && coord_db_kind(f->s) == COORD_STORE_SQLITE) {
		struct coord_st *st = coord_db_q_once(f->s, "PRAGMA integrity_check", "");

		CFZ_CHECK(st != NULL);
		CFZ_EQ(coord_db_step(f->s, st), 1);
		CFZ_CHECK(strcmp(coord_db_coltext(st, 0), "ok") == 0);
		coord_db_free(st);
		CFZ_EQ(sql_int(f, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	}
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM runs WHERE (settled_ms IS NULL) !="
			  " (state IN ('claimed','running','aftercare'))"),
	       0);
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM leases l JOIN runs r ON r.id = l.run_id"
			  " WHERE r.settled_ms IS NOT NULL"),
	       0);
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM leases l JOIN runs r ON r.id = l.run_id"
			  " WHERE r.ticket != l.ticket_id"),
	       0);
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM (SELECT ticket FROM runs"
			  " WHERE settled_ms IS NULL GROUP BY ticket HAVING count(*) > 1)"),
	       0);
	/* A ticket is claimed exactly while it has an unsettled run. */
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM tickets t WHERE (t.state = 'claimed') !="
			  " EXISTS (SELECT 1 FROM runs r WHERE r.ticket = t.n"
			  " AND r.settled_ms IS NULL)"),
	       0);
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM seats s JOIN runs r ON r.id = s.run_id"
			  " WHERE r.settled_ms IS NOT NULL"),
	       0);
}

/* A reply must decode, echo the request id and carry exactly one result. */
static Berth__Reply *
check_reply(const struct coord_result *res, const Berth__Request *q)
{
	Berth__Reply *r;
	enum coord_decision want;

	CFZ_CHECK(NULL != res->packed);
	CFZ_CHECK(res->packed_len <= RPC_MAX_MSG);
	r = berth__reply__unpack(NULL, res->packed_len, res->packed);
	CFZ_CHECK(NULL != r);
	CFZ_CHECK(r->has_req_id);
	CFZ_CHECK(r->req_id == q->req_id);
	CFZ_CHECK(r->has_version && r->version == BERTH_PROTOCOL_VERSION);
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED: CFZ_CHECK(NULL != r->granted); break;
	case BERTH__REPLY__RESULT_DENIED:
		CFZ_CHECK(NULL != r->denied);
		CFZ_CHECK(NULL != r->denied->reason);
		CFZ_CHECK(r->denied->reason[0] != '\0');
		break;
	case BERTH__REPLY__RESULT_ERROR:
		CFZ_CHECK(NULL != r->error);
		CFZ_CHECK(r->error->has_code && r->error->code != BERTH__ERROR_CODE__ERR_NONE);
		/* A valid envelope never gets an envelope error from the store,
		 * and the store has no storage faults here. */
		CFZ_NE(r->error->code, BERTH__ERROR_CODE__ERR_STORAGE);
		break;
	default: cfz_fail(__FILE__, __LINE__, "reply without a result");
	}
	want = res->reply == NULL                               ? COORD_REPLAYED
	       : r->result_case == BERTH__REPLY__RESULT_GRANTED ? COORD_GRANTED
	       : r->result_case == BERTH__REPLY__RESULT_DENIED  ? COORD_DENIED
								: COORD_ERROR;
	if (res->decision != want)
		cfz_fail(__FILE__, __LINE__, "decision %d for a reply that is %d",
			 (int)res->decision, (int)want);
	return r;
}

/* A read: the verb table says so (no stored reply to replay). */
static int
is_readonly(const Berth__Request *q)
{
	const struct coord_verb *v = coord_verb_find(q->verb_case);

	return v != NULL && (v->flags & COORD_VERB_READS);
}

/* A claim of the next ticket: its nothing_due decided nothing and is not
 * stored (a claim of a named ticket is). */
static int
claim_next(const Berth__Request *q)
{
	return q->verb_case == BERTH__REQUEST__VERB_CLAIM &&
	       (q->claim->ticket == NULL || q->claim->ticket[0] == '\0');
}

int
cfz_replayable(const Berth__Request *q, const Berth__Reply *r)
{
	/* A verb its caller may not send decided nothing either. */
	return !is_readonly(q) && r->result_case != BERTH__REPLY__RESULT_ERROR &&
	       !(r->result_case == BERTH__REPLY__RESULT_DENIED &&
		 strcmp(r->denied->reason, "not_permitted") == 0) &&
	       !(claim_next(q) && r->result_case == BERTH__REPLY__RESULT_DENIED &&
		 strcmp(r->denied->reason, "nothing_due") == 0);
}

/* Remembers what a granted claim handed out, so later inputs name real
 * runs and carry real tokens. */
void
cfz_learn(struct cfz *f, const Berth__Request *q, const Berth__Reply *r)
{
	const Berth__ClaimGranted *g;
	struct cfz_run *slot;

	if (r->result_case != BERTH__REPLY__RESULT_GRANTED)
		return;
	if (q->verb_case == BERTH__REQUEST__VERB_ADD)
		f->ntickets++;
	if (q->verb_case == BERTH__REQUEST__VERB_ADD_BATCH)
		f->ntickets += (int)q->add_batch->n_adds;
	if (q->verb_case != BERTH__REQUEST__VERB_CLAIM ||
	    r->granted->payload_case != BERTH__GRANTED__PAYLOAD_CLAIM)
		return;
	g = r->granted->claim;
	slot = f->nruns < CFZ_MAXRUNS ? &f->runs[f->nruns++] : &f->runs[cfz_rn(f, CFZ_MAXRUNS)];
	snprintf(slot->id, sizeof slot->id, "%s", g->run_id ? g->run_id : "");
	snprintf(slot->token, sizeof slot->token, "%s", g->token ? g->token : "");
	snprintf(slot->ticket, sizeof slot->ticket, "%s", g->ticket ? g->ticket : "");
}

/*
 * The coordinator's API as the server calls it on a received message: the
 * envelope check, then the store. The one place this file names them, so
 * that a rename in coordinator/ is a change here only. 0 with *req and *res
 * set; else the envelope's error code with *req set when the bytes decoded.
 */
static int
cfz_decide(struct cfz *f, const uint8_t *data, size_t len, Berth__Request **req,
	   struct coord_result *res, char *msg, size_t msglen)
{
	struct coord_caller who;
	int code;

	if ((code = coord_envelope_check(data, len, req, msg, msglen)) != 0)
		return code;
	CFZ_EQ(coord_exec_request(f->s, *req, cfz_caller(*req, &who), NULL, res), 0);
	return 0;
}

Berth__Reply *
cfz_feed(struct cfz *f, const uint8_t *data, size_t len, Berth__Request **reqp, int *replayed)
{
	struct coord_result res;
	Berth__Request *req = NULL;
	Berth__Reply *r;
	char msg[256];
	int code;

	*reqp = NULL;
	*replayed = 0;
	code = cfz_decide(f, data, len, &req, &res, msg, sizeof msg);
	if (code != 0) {
		CFZ_CHECK(code == BERTH__ERROR_CODE__ERR_MALFORMED ||
			  code == BERTH__ERROR_CODE__ERR_VERSION ||
			  code == BERTH__ERROR_CODE__ERR_TOO_LARGE ||
			  code == BERTH__ERROR_CODE__ERR_UNKNOWN_VERB);
		CFZ_CHECK(msg[0] != '\0');
		if (req != NULL)
			berth__request__free_unpacked(req, NULL);
		f->refused++;
		return NULL;
	}
	r = check_reply(&res, req);
	*replayed = res.reply == NULL;
	coord_exec_free(&res);
	f->decided++;
	if (r->result_case == BERTH__REPLY__RESULT_GRANTED)
		f->granted++;
	*reqp = req;
	return r;
}

/* The same bytes again: a mutation that was decided must come back as its
 * stored reply, with no second effect (no new event row). */
void
cfz_check_replay(struct cfz *f, const uint8_t *data, size_t len, const Berth__Request *q,
		 const Berth__Reply *first)
{
	Berth__Request *q2;
	Berth__Reply *r2;
	int64_t events = sql_int(f, "SELECT count(*) FROM events");
	int replayed;
	uint8_t *a, *b;
	size_t la, lb;

	r2 = cfz_feed(f, data, len, &q2, &replayed);
	CFZ_CHECK(NULL != r2);
	if (!cfz_replayable(q, first)) {
		if (replayed)
			cfz_fail(__FILE__, __LINE__,
				 "%s req %llu (first %s %s, claim ticket '%s') replayed though it"
				 " decided nothing",
				 msg_verb_name(q), (unsigned long long)q->req_id,
				 first->result_case == BERTH__REPLY__RESULT_ERROR ? "error"
										  : "denied",
				 first->result_case == BERTH__REPLY__RESULT_ERROR
					 ? first->error->message
				 : first->result_case == BERTH__REPLY__RESULT_DENIED
					 ? first->denied->reason
					 : "",
				 q->verb_case == BERTH__REQUEST__VERB_CLAIM && q->claim->ticket
					 ? q->claim->ticket
					 : "-");
		goto out;
	}
	if (!replayed)
		cfz_fail(__FILE__, __LINE__, "%s req %llu decided twice", msg_verb_name(q),
			 (unsigned long long)q->req_id);
	CFZ_CHECK(r2->replayed);
	CFZ_EQ(sql_int(f, "SELECT count(*) FROM events"), events);
	/* The stored reply is the first one, bit for bit, but for replayed. */
	r2->has_replayed = 0;
	r2->replayed = 0;
	la = berth__reply__get_packed_size(first);
	lb = berth__reply__get_packed_size(r2);
	CFZ_EQ(la, lb);
	a = malloc(la + 1);
	b = malloc(lb + 1);
	berth__reply__pack(first, a);
	berth__reply__pack(r2, b);
	CFZ_CHECK(memcmp(a, b, la) == 0);
	free(a);
	free(b);
	f->replays++;
out:
	berth__reply__free_unpacked(r2, NULL);
	berth__request__free_unpacked(q2, NULL);
}

/* Byte-level damage to a packed request. */
size_t
cfz_mutate(struct cfz *f, uint8_t *buf, size_t len, size_t cap)
{
	size_t i, n = 1 + cfz_rn(f, 4);

	for (i = 0; i < n && len > 0; i++) {
		switch (cfz_rn(f, 6)) {
		case 0: /* bit flip */
			buf[cfz_rn(f, (uint32_t)len)] ^= (uint8_t)(1u << cfz_rn(f, 8));
			break;
		case 1: /* truncation */ len = cfz_rn(f, (uint32_t)len); break;
		case 2: /* a random byte */
			buf[cfz_rn(f, (uint32_t)len)] = (uint8_t)cfz_rnd(f);
			break;
		case 3: /* extension with garbage */
			while (len < cap && cfz_rn(f, 16))
				buf[len++] = (uint8_t)cfz_rnd(f);
			break;
		case 4: { /* a duplicated chunk (repeated fields, last one wins) */
			size_t at = cfz_rn(f, (uint32_t)len),
			       k = 1 + cfz_rn(f, (uint32_t)(len - at));

			if (len + k <= cap) {
				memmove(buf + len, buf + at, k);
				len += k;
			}
			break;
		}
		default: /* an absurd varint somewhere */
			buf[cfz_rn(f, (uint32_t)len)] = 0xff;
			break;
		}
	}
	return len;
}

/* ------------------------------------------------------------ lifetime */

void
cfz_open(struct cfz *f, const char *path, int64_t now)
{
	char err[256];

	snprintf(f->path, sizeof f->path, "%s", path);
	f->o.sync_full = 0;
	f->o.default_lease_ms = 30000;
	f->o.backoff_base_ms = 10;
	f->o.backoff_max_ms = 1000;
	f->now = now;
	clock_fake_set(f->now);
	if (coord_db_open(&f->s, f->path, &f->o, err, sizeof err) != 0)
		cfz_fail(__FILE__, __LINE__, "coord_db_open %s: %s", f->path, err);
}

void
cfz_reopen(struct cfz *f)
{
	char err[256];

	coord_db_close(f->s);
	f->s = NULL;
	if (coord_db_open(&f->s, f->path, &f->o, err, sizeof err) != 0)
		cfz_fail(__FILE__, __LINE__, "coord_db_open %s again: %s", f->path, err);
}

void
cfz_close(struct cfz *f)
{
	coord_db_close(f->s);
	f->s = NULL;
	cfz_free_all(f);
	free(f->arena);
	f->arena = NULL;
	f->carena = 0;
	clock_fake_clear();
}
