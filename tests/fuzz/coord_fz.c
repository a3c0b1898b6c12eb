/* The coordinator against hostile input: the generator, the server's path
 * and the checks shared by tests/unit/coord_fuzz_test.c and the libFuzzer
 * harness tests/fuzz/fuzz_coord.c (see coord_fz.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "coord_fz.h"
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

/* ------------------------------------------------------------ the request */

static void *
cfz_alloc(struct cfz *f, size_t n)
{
	void *p = calloc(1, n ? n : 1);

	CFZ_CHECK(NULL != p);
	if (f->narena == f->carena) {
		f->carena = f->carena ? f->carena * 2 : 256;
		f->arena = realloc(f->arena, f->carena * sizeof *f->arena);
		CFZ_CHECK(NULL != f->arena);
	}
	f->arena[f->narena++] = p;
	return p;
}

void
cfz_free_all(struct cfz *f)
{
	size_t i;

	for (i = 0; i < f->narena; i++)
		free(f->arena[i]);
	f->narena = 0;
}

static char *
cfz_str(struct cfz *f, const char *s)
{
	size_t n = strlen(s);
	char *p = cfz_alloc(f, n + 1);

	memcpy(p, s, n);
	return p;
}

static char *
cfz_huge(struct cfz *f, size_t n, char ch)
{
	char *p = cfz_alloc(f, n + 1);

	memset(p, ch, n);
	return p;
}

static const struct cfz_run *
pick_run(struct cfz *f)
{
	return f->nruns ? &f->runs[cfz_rn(f, (uint32_t)f->nruns)] : NULL;
}

/* A string field: mostly plausible, sometimes absurd. */
static char *
any_str(struct cfz *f)
{
	static const char *const pool[] = {
		"",
		"T1",
		"T2",
		"T0",
		"T-1",
		"t3",
		"T99999999999999999999",
		"T1-r1",
		"T2-r2",
		"T1-r0",
		"T1-r99999999999999999999",
		"T",
		"-r1",
		"cancel",
		"timeout",
		"succeeded",
		"failed",
		"orphaned",
		"aborted",
		"running",
		"claimed",
		"ready",
		"held",
		"x=y",
		"=",
		"noequals",
		"/",
		"/tmp",
		"/tmp/fz",
		"..",
		"\x01\x02\x7f",
		"\xff\xfe",
		"%s%n%s",
		"'; DROP TABLE runs; --",
		"{\"a\":[1,2]}",
		"[\"sh\",\"-c\"]",
		"0123456789abcdef0123456789abcdef",
		"0123456789ABCDEF0123456789ABCDEF",
		"k",
		"owner",
	};
	const struct cfz_run *r;
	char buf[64];

	switch (cfz_rn(f, 10)) {
	case 0: return cfz_huge(f, 1 + cfz_rn(f, 9000), (char)('a' + cfz_rn(f, 26)));
	case 1:
		if (cfz_rn(f, 20) == 0)
			return cfz_huge(f, 70000 + cfz_rn(f, 70000), 'Z');
		return cfz_huge(f, 250 + cfz_rn(f, 10), 'w');
	case 2:
	case 3:
		if ((r = pick_run(f)) != NULL)
			return cfz_str(f, cfz_rn(f, 2) ? r->id : r->ticket);
		/* FALLTHROUGH */
	case 4:
		snprintf(buf, sizeof buf, "T%u", 1 + cfz_rn(f, (uint32_t)f->ntickets + 2));
		return cfz_str(f, buf);
	case 5:
		snprintf(buf, sizeof buf, "T%u-r%u", 1 + cfz_rn(f, (uint32_t)f->ntickets + 2),
			 1 + cfz_rn(f, 4));
		return cfz_str(f, buf);
	default: return cfz_str(f, pool[cfz_rn(f, sizeof pool / sizeof pool[0])]);
	}
}

static int64_t
any_i64(struct cfz *f)
{
	static const int64_t pool[] = {
		0,
		1,
		-1,
		2,
		100,
		1000,
		60000,
		-60000,
		3600000,
		INT64_MAX,
		INT64_MIN,
		INT64_MAX - 1,
		INT64_MIN + 1,
		INT64_MAX / 2,
		INT64_MIN / 2,
		(int64_t)1 << 53,
		INT32_MAX,
		INT32_MIN,
		(int64_t)UINT32_MAX + 1,
	};

	switch (cfz_rn(f, 4)) {
	case 0: return (int64_t)cfz_rnd(f);
	case 1: return f->now + (int64_t)cfz_rn(f, 100000) - 50000;
	default: return pool[cfz_rn(f, sizeof pool / sizeof pool[0])];
	}
}

static uint32_t
any_u32(struct cfz *f)
{
	static const uint32_t pool[] = { 0,         1,          2,
					 50,        1000,       60000,
					 INT32_MAX, UINT32_MAX, (uint32_t)INT32_MAX + 1 };

	return cfz_rn(f, 3) == 0 ? (uint32_t)cfz_rnd(f)
				 : pool[cfz_rn(f, sizeof pool / sizeof pool[0])];
}

static char **
any_strv(struct cfz *f, size_t *n)
{
	char **v;
	size_t i;

	*n = cfz_rn(f, 5) == 0 ? 0 : 1 + cfz_rn(f, 4);
	if (cfz_rn(f, 40) == 0)
		*n = 2000 + cfz_rn(f, 2000);
	v = cfz_alloc(f, (*n ? *n : 1) * sizeof *v);
	for (i = 0; i < *n; i++)
		v[i] = cfz_rn(f, 3) ? cfz_str(f, cfz_rn(f, 2) ? "true" : "echo") : any_str(f);
	return v;
}

static Berth__Ident *
any_ident(struct cfz *f)
{
	Berth__Ident *id;

	if (cfz_rn(f, 6) == 0)
		return NULL;
	id = cfz_alloc(f, sizeof *id);
	berth__ident__init(id);
	if (cfz_rn(f, 4))
		id->boot_id = cfz_rn(f, 2) ? cfz_str(f, "00000000-0000-0000-0000-000000000000")
					   : any_str(f);
	id->has_pid = cfz_rn(f, 5) != 0;
	id->pid = cfz_rn(f, 2) ? (int32_t)(1 + cfz_rn(f, 4000000)) : (int32_t)cfz_rnd(f);
	id->has_start_time = cfz_rn(f, 5) != 0;
	id->start_time = cfz_rnd(f);
	id->has_pgid = cfz_rn(f, 2);
	id->pgid = (int32_t)cfz_rnd(f);
	return id;
}

static Berth__Add *
any_add(struct cfz *f)
{
	Berth__Add *a = cfz_alloc(f, sizeof *a);

	berth__add__init(a);
	if (cfz_rn(f, 3) == 0)
		a->name = any_str(f);
	if (cfz_rn(f, 8)) {
		a->argv = any_strv(f, &a->n_argv);
	}
	if (cfz_rn(f, 3) == 0)
		a->workdir = any_str(f);
	if (cfz_rn(f, 4) == 0)
		a->env = any_strv(f, &a->n_env);
	if (cfz_rn(f, 3) == 0)
		a->key = any_str(f);
	a->has_timeout_ms = cfz_rn(f, 3) == 0;
	a->timeout_ms = any_i64(f);
	a->has_retries = cfz_rn(f, 3) == 0;
	a->retries = any_u32(f);
	a->has_at_ms = cfz_rn(f, 4) == 0;
	a->at_ms = any_i64(f);
	a->has_every_ms = cfz_rn(f, 5) == 0;
	a->every_ms = any_i64(f);
	a->has_hold = cfz_rn(f, 6) == 0;
	a->hold = 1;
	a->has_priority = cfz_rn(f, 3) == 0;
	a->priority = (int32_t)any_i64(f);
	if (cfz_rn(f, 5) == 0)
		a->after = any_strv(f, &a->n_after);
	a->has_workdir_default = cfz_rn(f, 4) == 0;
	a->workdir_default = cfz_rn(f, 2);
	return a;
}

static char *
run_id_or_any(struct cfz *f)
{
	const struct cfz_run *r = pick_run(f);

	if (r != NULL && cfz_rn(f, 3))
		return cfz_str(f, r->id);
	return cfz_rn(f, 8) ? any_str(f) : NULL;
}

/* One request of a random verb with random (sometimes missing) fields. */
static void
any_verb(struct cfz *f, Berth__Request *q)
{
	const struct cfz_run *r = pick_run(f);

	if (r != NULL && cfz_rn(f, 2))
		q->token = cfz_str(f, cfz_rn(f, 4) ? r->token : pick_run(f)->token);
	else if (cfz_rn(f, 4) == 0)
		q->token = any_str(f);

	/* Now and then a well-formed next step of a known run, so runs get
	 * started, exit and settle (and tickets retry, repeat and finish). */
	if (r != NULL && cfz_rn(f, 4) == 0) {
		switch (cfz_rn(f, 4)) {
		case 0: {
			Berth__Start *m = cfz_alloc(f, sizeof *m);

			berth__start__init(m);
			m->run_id = cfz_str(f, r->id);
			m->shim = any_ident(f);
			q->verb_case = BERTH__REQUEST__VERB_START;
			q->start = m;
			return;
		}
		case 1: {
			Berth__RecordExit *m = cfz_alloc(f, sizeof *m);

			berth__record_exit__init(m);
			m->run_id = cfz_str(f, r->id);
			m->has_has_record = 1;
			m->has_record = cfz_rn(f, 4) != 0;
			m->has_exit_code = 1;
			m->exit_code = cfz_rn(f, 2) ? 0 : (int32_t)cfz_rn(f, 256);
			/* The fast path's fused settle (DESIGN §4), now and then
			 * naming the run itself, another, or a made-up outcome. */
			if (cfz_rn(f, 2)) {
				Berth__Settle *se = cfz_alloc(f, sizeof *se);

				berth__settle__init(se);
				if (cfz_rn(f, 4) == 0)
					se->run_id =
						cfz_str(f, cfz_rn(f, 2) ? r->id : pick_run(f)->id);
				if (cfz_rn(f, 4) == 0)
					se->outcome = any_str(f);
				se->has_capture_complete = cfz_rn(f, 2);
				se->capture_complete = cfz_rn(f, 2);
				m->settle = se;
			}
			q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
			q->record_exit = m;
			return;
		}
		case 2: {
			Berth__Settle *m = cfz_alloc(f, sizeof *m);

			berth__settle__init(m);
			m->run_id = cfz_str(f, r->id);
			q->verb_case = BERTH__REQUEST__VERB_SETTLE;
			q->settle = m;
			return;
		}
		default: {
			Berth__Claim *m = cfz_alloc(f, sizeof *m);

			berth__claim__init(m);
			/* The fused claim + start, with a waiting shim. */
			if (cfz_rn(f, 2))
				m->shim = any_ident(f);
			q->verb_case = BERTH__REQUEST__VERB_CLAIM;
			q->claim = m;
			return;
		}
		}
	}

	switch (cfz_rn(f, 32)) {
	case 0: {
		Berth__Claim *m = cfz_alloc(f, sizeof *m);

		berth__claim__init(m);
		if (cfz_rn(f, 2))
			m->ticket = any_str(f);
		m->has_lease_ms = cfz_rn(f, 2);
		m->lease_ms = any_u32(f);
		m->has_wait_ms = cfz_rn(f, 3) == 0;
		m->wait_ms = any_u32(f);
		if (cfz_rn(f, 3) == 0)
			m->shim = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_CLAIM;
		q->claim = m;
		break;
	}
	case 1: {
		Berth__Start *m = cfz_alloc(f, sizeof *m);

		berth__start__init(m);
		m->run_id = run_id_or_any(f);
		m->shim = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_START;
		q->start = m;
		break;
	}
	case 2:
	case 3: {
		Berth__Renew *m = cfz_alloc(f, sizeof *m);

		berth__renew__init(m);
		m->ticket = r && cfz_rn(f, 2) ? cfz_str(f, r->ticket) : any_str(f);
		m->run_id = run_id_or_any(f);
		m->has_lease_ms = cfz_rn(f, 2);
		m->lease_ms = any_u32(f);
		if (cfz_rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_RENEW;
			q->renew = m;
		} else {
			Berth__Readopt *o = cfz_alloc(f, sizeof *o);

			berth__readopt__init(o);
			o->ticket = m->ticket;
			o->run_id = m->run_id;
			o->has_lease_ms = m->has_lease_ms;
			o->lease_ms = m->lease_ms;
			if (cfz_rn(f, 2))
				o->new_owner = cfz_rn(f, 2) ? cfz_str(f, "fuzzsup") : any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_READOPT;
			q->readopt = o;
		}
		break;
	}
	case 4: {
		Berth__RecordExit *m = cfz_alloc(f, sizeof *m);

		berth__record_exit__init(m);
		m->run_id = run_id_or_any(f);
		m->has_has_record = cfz_rn(f, 2);
		m->has_record = cfz_rn(f, 2);
		m->has_exit_code = cfz_rn(f, 2);
		m->exit_code = (int32_t)any_i64(f);
		m->has_signal = cfz_rn(f, 2);
		m->signal = (int32_t)any_i64(f);
		m->has_ended_ms = cfz_rn(f, 2);
		m->ended_ms = any_i64(f);
		if (cfz_rn(f, 3) == 0) {
			Berth__Settle *se = cfz_alloc(f, sizeof *se);

			berth__settle__init(se);
			if (cfz_rn(f, 2))
				se->run_id = run_id_or_any(f);
			if (cfz_rn(f, 2))
				se->outcome = any_str(f);
			m->settle = se;
		}
		q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
		q->record_exit = m;
		break;
	}
	case 5: {
		Berth__Abandon *m = cfz_alloc(f, sizeof *m);

		berth__abandon__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2))
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_ABANDON;
		q->abandon = m;
		break;
	}
	case 6:
	case 7: {
		Berth__Settle *m = cfz_alloc(f, sizeof *m);

		berth__settle__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2))
			m->outcome = any_str(f);
		m->has_output_bytes = cfz_rn(f, 2);
		m->output_bytes = any_i64(f);
		m->has_capture_complete = cfz_rn(f, 2);
		m->capture_complete = cfz_rn(f, 2);
		if (cfz_rn(f, 3) == 0)
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SETTLE;
		q->settle = m;
		break;
	}
	case 8: {
		Berth__Hello *m = cfz_alloc(f, sizeof *m);

		berth__hello__init(m);
		m->ident = any_ident(f);
		m->has_slots = cfz_rn(f, 2);
		m->slots = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_HELLO;
		q->hello = m;
		break;
	}
	case 9: {
		Berth__Scan *m = cfz_alloc(f, sizeof *m);

		berth__scan__init(m);
		m->has_settled = cfz_rn(f, 2);
		m->settled = cfz_rn(f, 2);
		m->has_settled_since_ms = cfz_rn(f, 2);
		m->settled_since_ms = any_i64(f);
		m->has_settled_before_ms = cfz_rn(f, 2);
		m->settled_before_ms = any_i64(f);
		q->verb_case = BERTH__REQUEST__VERB_SCAN;
		q->scan = m;
		break;
	}
	case 10: {
		Berth__MarkStop *m = cfz_alloc(f, sizeof *m);

		berth__mark_stop__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 4))
			m->reason = cfz_rn(f, 2) ? cfz_str(f, "cancel") : any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_MARK_STOP;
		q->mark_stop = m;
		break;
	}
	case 11:
	case 12:
		q->verb_case = BERTH__REQUEST__VERB_ADD;
		q->add = any_add(f);
		break;
	case 13: {
		Berth__AddBatch *m = cfz_alloc(f, sizeof *m);
		size_t i;

		berth__add_batch__init(m);
		m->n_adds = cfz_rn(f, 5);
		m->adds = cfz_alloc(f, (m->n_adds ? m->n_adds : 1) * sizeof *m->adds);
		for (i = 0; i < m->n_adds; i++)
			m->adds[i] = any_add(f);
		q->verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
		q->add_batch = m;
		break;
	}
	case 14: {
		Berth__List *m = cfz_alloc(f, sizeof *m);

		berth__list__init(m);
		if (cfz_rn(f, 2))
			m->state = any_str(f);
		m->has_limit = cfz_rn(f, 2);
		m->limit = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_LIST;
		q->list = m;
		break;
	}
	case 15: {
		Berth__Show *m = cfz_alloc(f, sizeof *m);

		berth__show__init(m);
		if (cfz_rn(f, 6))
			m->id = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SHOW;
		q->show = m;
		break;
	}
	case 16:
	case 17: {
		Berth__TicketRef *m = cfz_alloc(f, sizeof *m);

		berth__ticket_ref__init(m);
		if (cfz_rn(f, 6))
			m->id = any_str(f);
		switch (cfz_rn(f, 4)) {
		case 0:
			q->verb_case = BERTH__REQUEST__VERB_HOLD;
			q->hold = m;
			break;
		case 1:
			q->verb_case = BERTH__REQUEST__VERB_RELEASE;
			q->release = m;
			break;
		case 2:
			q->verb_case = BERTH__REQUEST__VERB_RETRY;
			q->retry = m;
			break;
		default:
			q->verb_case = BERTH__REQUEST__VERB_CANCEL;
			q->cancel = m;
			break;
		}
		break;
	}
	case 18: {
		Berth__Status *m = cfz_alloc(f, sizeof *m);

		berth__status__init(m);
		q->verb_case = BERTH__REQUEST__VERB_STATUS;
		q->status = m;
		break;
	}
	case 19:
	case 20: {
		Berth__WorkerRef *m = cfz_alloc(f, sizeof *m);

		berth__worker_ref__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_HEARTBEAT;
			q->heartbeat = m;
		} else {
			q->verb_case = BERTH__REQUEST__VERB_SHOULD_STOP;
			q->should_stop = m;
		}
		break;
	}
	case 21: {
		Berth__Progress *m = cfz_alloc(f, sizeof *m);

		berth__progress__init(m);
		m->run_id = run_id_or_any(f);
		m->has_index = cfz_rn(f, 2);
		m->index = any_i64(f);
		m->has_total = cfz_rn(f, 2);
		m->total = any_i64(f);
		if (cfz_rn(f, 2))
			m->label = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_PROGRESS;
		q->progress = m;
		break;
	}
	case 22: {
		Berth__Note *m = cfz_alloc(f, sizeof *m);

		berth__note__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 4))
			m->text = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_NOTE;
		q->note = m;
		break;
	}
	case 23:
	case 24: {
		Berth__SeatAcquire *m = cfz_alloc(f, sizeof *m);

		berth__seat_acquire__init(m);
		if (cfz_rn(f, 8))
			m->item =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (cfz_rn(f, 2))
			m->key = cfz_rn(f, 2) ? cfz_str(f, "k") : any_str(f);
		if (cfz_rn(f, 2))
			m->workdir = cfz_rn(f, 2) ? cfz_str(f, "/tmp/fz") : any_str(f);
		if (cfz_rn(f, 8))
			m->owner =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "o1" : "o2") : any_str(f);
		m->has_ttl_ms = cfz_rn(f, 2);
		m->ttl_ms = any_i64(f);
		m->owner_ident = any_ident(f);
		if (cfz_rn(f, 4) == 0)
			m->kind = any_str(f);
		if (cfz_rn(f, 4) == 0)
			m->state = any_str(f);
		m->has_task = cfz_rn(f, 2);
		m->task = cfz_rn(f, 4) == 0;
		m->has_in_flight = cfz_rn(f, 2);
		m->in_flight = cfz_rn(f, 2);
		m->has_in_flight_ttl_ms = cfz_rn(f, 4) == 0;
		m->in_flight_ttl_ms = any_i64(f);
		if (cfz_rn(f, 4) == 0)
			m->in_flight_ident = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
		q->seat_acquire = m;
		break;
	}
	case 25:
	case 26: {
		Berth__SeatRelease *m = cfz_alloc(f, sizeof *m);

		berth__seat_release__init(m);
		if (cfz_rn(f, 8))
			m->item =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (cfz_rn(f, 4))
			m->owner =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "o1" : "o2") : any_str(f);
		switch (cfz_rn(f, 5)) {
		case 0:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_RELEASE;
			q->seat_release = m;
			break;
		case 4:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_CLEAR;
			q->seat_clear = m;
			break;
		case 1:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE;
			q->seat_force_release = m;
			break;
		case 2:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_HEARTBEAT;
			q->seat_heartbeat = m;
			break;
		default:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_SHOW;
			q->seat_show = m;
			break;
		}
		break;
	}
	case 27: {
		Berth__SeatStop *m = cfz_alloc(f, sizeof *m);
		Berth__SeatConfirm *c;

		if (cfz_rn(f, 2)) {
			c = cfz_alloc(f, sizeof *c);
			berth__seat_confirm__init(c);
			if (cfz_rn(f, 8))
				c->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
			if (cfz_rn(f, 4))
				c->owner = cfz_rn(f, 2) ? cfz_str(f, "o1") : any_str(f);
			if (cfz_rn(f, 4))
				c->state = any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_SEAT_CONFIRM;
			q->seat_confirm = c;
			break;
		}
		berth__seat_stop__init(m);
		if (cfz_rn(f, 8))
			m->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
		if (cfz_rn(f, 2))
			m->reason = any_str(f);
		if (cfz_rn(f, 2))
			m->requester = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
		q->seat_stop = m;
		break;
	}
	case 28: {
		Berth__SeatActivity *m = cfz_alloc(f, sizeof *m);

		berth__seat_activity__init(m);
		if (cfz_rn(f, 8))
			m->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
		m->has_index = cfz_rn(f, 2);
		m->index = any_i64(f);
		m->has_total = cfz_rn(f, 2);
		m->total = any_i64(f);
		if (cfz_rn(f, 2))
			m->label = any_str(f);
		if (cfz_rn(f, 4))
			m->owner = cfz_rn(f, 2) ? cfz_str(f, "o1") : any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
		q->seat_activity = m;
		break;
	}
	case 29: {
		Berth__SeatList *m = cfz_alloc(f, sizeof *m);

		berth__seat_list__init(m);
		m->has_live_only = cfz_rn(f, 2);
		m->live_only = cfz_rn(f, 2);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
		q->seat_list = m;
		break;
	}
	default: {
		Berth__SeatReap *m = cfz_alloc(f, sizeof *m);

		berth__seat_reap__init(m);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
		q->seat_reap = m;
		break;
	}
	}
}

static const char *const cfz_instances[8] = {
	"fuzzsup",     "fuzzcli",   "fuzzsup",       "fuzzcli",
	"fz-operator", "fz-worker", "fz-supervisor", "fz-recovery",
};

/* Who a request with this instance comes from: NULL (the coordinator's
 * own process, every role) for most; for an "fz-" instance, the caller a
 * connection of that class would be (an actor of this very process, so
 * a hello with its identity binds it). A function of the request's bytes,
 * so a retry comes from the same sender. */
static const struct coord_caller *
cfz_caller(const Berth__Request *q, struct coord_caller *who)
{
	static struct ident self;
	static int have_self;

	if (q->instance == NULL || strncmp(q->instance, "fz-", 3) != 0)
		return NULL;
	if (!have_self)
		have_self = ident_self(&self) == 0;
	memset(who, 0, sizeof *who);
	who->pid = self.pid;
	who->start_time = self.start_time;
	who->uid = getuid();
	if (strcmp(q->instance, "fz-worker") == 0) {
		who->cls = CALLER_WORKER;
	} else if (strcmp(q->instance, "fz-supervisor") == 0) {
		who->cls = CALLER_ACTOR;
		who->roles = ROLE_SUPERVISOR;
		who->verified = 1;
	} else if (strcmp(q->instance, "fz-recovery") == 0) {
		who->cls = CALLER_ACTOR;
		who->roles = ROLE_RECOVERY;
		who->verified = 1;
	} else {
		who->cls = CALLER_OPERATOR;
	}
	snprintf(who->what, sizeof who->what, "%s", q->instance + 3);
	return who;
}

void
cfz_build(struct cfz *f, Berth__Request *q)
{
	q->has_version = cfz_rn(f, 100) != 0;
	q->version = cfz_rn(f, 100) ? BERTH_PROTOCOL_VERSION : (uint32_t)cfz_rnd(f);
	q->actor = cfz_rn(f, 100) ? cfz_str(f, cfz_rn(f, 2) ? "supervisor" : "cli") : any_str(f);
	/* Most requests come from the coordinator's own process (the
	 * whole protocol is reachable); the "fz-" instances come as a
	 * connection would present them (cfz_caller): every caller class. */
	q->instance = cfz_rn(f, 100) ? cfz_str(f, cfz_instances[cfz_rn(f, 8)]) : NULL;
	q->has_req_id = cfz_rn(f, 100) != 0;
	q->req_id = cfz_rn(f, 50) ? ++f->req_id : (cfz_rn(f, 2) ? 0 : cfz_rnd(f));
	if (cfz_rn(f, 60))
		any_verb(f, q);
}

/* ------------------------------------------------------------ the store */

static int64_t
sql_int(struct cfz *f, const char *sql)
{
	sqlite3 *db = coord_db_handle(f->s);
	sqlite3_stmt *st;
	int64_t v = -1;

	CFZ_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void
cfz_check_store(struct cfz *f, int full)
{
	sqlite3 *db = coord_db_handle(f->s);
	sqlite3_stmt *st;

	/* No request may leave its transaction open: the next BEGIN
	 * IMMEDIATE would fail forever. */
	CFZ_EQ(sqlite3_get_autocommit(db), 1);
	if (full) {
		CFZ_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
		CFZ_EQ(sqlite3_step(st), SQLITE_ROW);
		CFZ_CHECK(strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0);
		sqlite3_finalize(st);
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
