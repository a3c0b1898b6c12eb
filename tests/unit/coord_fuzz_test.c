/* The coordinator against hostile input: mutated valid requests (bit
 * flips, truncations, splices, absurd field values, missing sub-fields)
 * go through the path the server uses, coord_envelope_check() then
 * coord_exec_request(), and after each one the store must still hold its
 * invariants (DESIGN §3) and every reply must be a well-formed Reply.
 * Fixed seeds, NULL, a bounded number of inputs, a fake clock: the inputs are the
 * same on every run, except the run ids and tokens the coordinator hands
 * out, which are random (a failure prints the verb and request id). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_verbs.h"
#include "coord_envelope.h"
#include "coord_server.h"
#include "rpc.h"

#define INPUTS 20000
#define NSEEDS 4
#define CHECK_EVERY 250
#define MAXRUNS 64

struct run {
	char id[40];
	char token[80];
	char ticket[24];
};

struct fz {
	char dir[64];
	char path[128];
	struct coord_db *s;
	struct coord_db_opts o;
	uint64_t rng;
	uint64_t req_id;
	int64_t now;
	struct run runs[MAXRUNS];
	int nruns;
	int ntickets;
	/* allocations of the request being built, freed after each input */
	void **arena;
	size_t narena, carena;
	/* one stored request, replayed after a reopen */
	uint8_t *kept;
	size_t kept_len;
	uint8_t *kept_reply;
	size_t kept_reply_len;
	/* counts, to show the fuzzer reached the store */
	int decided, granted, refused, replays;
};

/* ------------------------------------------------------------ helpers */

static uint64_t
rnd(struct fz *f)
{
	/* xorshift64*: fixed seeds give the same inputs on every run */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 2685821657736338717ULL;
}

static uint32_t
rn(struct fz *f, uint32_t n)
{
	return n ? (uint32_t)(rnd(f) % n) : 0;
}

static void *
fz_alloc(struct fz *f, size_t n)
{
	void *p = calloc(1, n ? n : 1);

	assert_non_null(p);
	if (f->narena == f->carena) {
		f->carena = f->carena ? f->carena * 2 : 256;
		f->arena = realloc(f->arena, f->carena * sizeof *f->arena);
		assert_non_null(f->arena);
	}
	f->arena[f->narena++] = p;
	return p;
}

static void
fz_free_all(struct fz *f)
{
	size_t i;

	for (i = 0; i < f->narena; i++)
		free(f->arena[i]);
	f->narena = 0;
}

static char *
fz_str(struct fz *f, const char *s)
{
	size_t n = strlen(s);
	char *p = fz_alloc(f, n + 1);

	memcpy(p, s, n);
	return p;
}

static char *
fz_huge(struct fz *f, size_t n, char ch)
{
	char *p = fz_alloc(f, n + 1);

	memset(p, ch, n);
	return p;
}

static const struct run *
pick_run(struct fz *f)
{
	return f->nruns ? &f->runs[rn(f, (uint32_t)f->nruns)] : NULL;
}

/* A string field: mostly plausible, sometimes absurd. */
static char *
any_str(struct fz *f)
{
	static const char *const pool[] = {
		"", "T1", "T2", "T0", "T-1", "t3", "T99999999999999999999", "T1-r1", "T2-r2",
		"T1-r0", "T1-r99999999999999999999", "T", "-r1", "cancel", "timeout", "succeeded",
		"failed", "orphaned", "aborted", "running", "claimed", "ready", "held", "x=y", "=",
		"noequals", "/", "/tmp", "/tmp/fz", "..", "\x01\x02\x7f", "\xff\xfe", "%s%n%s",
		"'; DROP TABLE runs; --", "{\"a\":[1,2]}", "[\"sh\",\"-c\"]",
		"0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789ABCDEF", "k", "owner",
	};
	const struct run *r;
	char buf[64];

	switch (rn(f, 10)) {
	case 0:
		return fz_huge(f, 1 + rn(f, 9000), (char)('a' + rn(f, 26)));
	case 1:
		if (rn(f, 20) == 0)
			return fz_huge(f, 70000 + rn(f, 70000), 'Z');
		return fz_huge(f, 250 + rn(f, 10), 'w');
	case 2:
	case 3:
		if ((r = pick_run(f)) != NULL)
			return fz_str(f, rn(f, 2) ? r->id : r->ticket);
		/* FALLTHROUGH */
	case 4:
		snprintf(buf, sizeof buf, "T%u", 1 + rn(f, (uint32_t)f->ntickets + 2));
		return fz_str(f, buf);
	case 5:
		snprintf(buf, sizeof buf, "T%u-r%u", 1 + rn(f, (uint32_t)f->ntickets + 2),
			 1 + rn(f, 4));
		return fz_str(f, buf);
	default:
		return fz_str(f, pool[rn(f, sizeof pool / sizeof pool[0])]);
	}
}

static int64_t
any_i64(struct fz *f)
{
	static const int64_t pool[] = {
		0, 1, -1, 2, 100, 1000, 60000, -60000, 3600000, INT64_MAX, INT64_MIN,
		INT64_MAX - 1, INT64_MIN + 1, INT64_MAX / 2, INT64_MIN / 2, (int64_t)1 << 53,
		INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX + 1,
	};

	switch (rn(f, 4)) {
	case 0: return (int64_t)rnd(f);
	case 1: return f->now + (int64_t)rn(f, 100000) - 50000;
	default: return pool[rn(f, sizeof pool / sizeof pool[0])];
	}
}

static uint32_t
any_u32(struct fz *f)
{
	static const uint32_t pool[] = { 0, 1, 2, 50, 1000, 60000, INT32_MAX, UINT32_MAX,
					 (uint32_t)INT32_MAX + 1 };

	return rn(f, 3) == 0 ? (uint32_t)rnd(f) : pool[rn(f, sizeof pool / sizeof pool[0])];
}

static char **
any_strv(struct fz *f, size_t *n)
{
	char **v;
	size_t i;

	*n = rn(f, 5) == 0 ? 0 : 1 + rn(f, 4);
	if (rn(f, 40) == 0)
		*n = 2000 + rn(f, 2000);
	v = fz_alloc(f, (*n ? *n : 1) * sizeof *v);
	for (i = 0; i < *n; i++)
		v[i] = rn(f, 3) ? fz_str(f, rn(f, 2) ? "true" : "echo") : any_str(f);
	return v;
}

static Berth__Ident *
any_ident(struct fz *f)
{
	Berth__Ident *id;

	if (rn(f, 6) == 0)
		return NULL;
	id = fz_alloc(f, sizeof *id);
	berth__ident__init(id);
	if (rn(f, 4))
		id->boot_id = rn(f, 2) ? fz_str(f, "00000000-0000-0000-0000-000000000000") : any_str(f);
	id->has_pid = rn(f, 5) != 0;
	id->pid = rn(f, 2) ? (int32_t)(1 + rn(f, 4000000)) : (int32_t)rnd(f);
	id->has_start_time = rn(f, 5) != 0;
	id->start_time = rnd(f);
	id->has_pgid = rn(f, 2);
	id->pgid = (int32_t)rnd(f);
	return id;
}

static Berth__Add *
any_add(struct fz *f)
{
	Berth__Add *a = fz_alloc(f, sizeof *a);

	berth__add__init(a);
	if (rn(f, 3) == 0)
		a->name = any_str(f);
	if (rn(f, 8)) {
		a->argv = any_strv(f, &a->n_argv);
	}
	if (rn(f, 3) == 0)
		a->workdir = any_str(f);
	if (rn(f, 4) == 0)
		a->env = any_strv(f, &a->n_env);
	if (rn(f, 3) == 0)
		a->key = any_str(f);
	a->has_timeout_ms = rn(f, 3) == 0;
	a->timeout_ms = any_i64(f);
	a->has_retries = rn(f, 3) == 0;
	a->retries = any_u32(f);
	a->has_at_ms = rn(f, 4) == 0;
	a->at_ms = any_i64(f);
	a->has_every_ms = rn(f, 5) == 0;
	a->every_ms = any_i64(f);
	a->has_hold = rn(f, 6) == 0;
	a->hold = 1;
	a->has_priority = rn(f, 3) == 0;
	a->priority = (int32_t)any_i64(f);
	if (rn(f, 5) == 0)
		a->after = any_strv(f, &a->n_after);
	a->has_workdir_default = rn(f, 4) == 0;
	a->workdir_default = rn(f, 2);
	return a;
}

static char *
run_id_or_any(struct fz *f)
{
	const struct run *r = pick_run(f);

	if (r != NULL && rn(f, 3))
		return fz_str(f, r->id);
	return rn(f, 8) ? any_str(f) : NULL;
}

/* One request of a random verb with random (sometimes missing) fields. */
static void
any_verb(struct fz *f, Berth__Request *q)
{
	const struct run *r = pick_run(f);

	if (r != NULL && rn(f, 2))
		q->token = fz_str(f, rn(f, 4) ? r->token : pick_run(f)->token);
	else if (rn(f, 4) == 0)
		q->token = any_str(f);

	/* Now and then a well-formed next step of a known run, so runs get
	 * started, exit and settle (and tickets retry, repeat and finish). */
	if (r != NULL && rn(f, 4) == 0) {
		switch (rn(f, 4)) {
		case 0: {
			Berth__Start *m = fz_alloc(f, sizeof *m);

			berth__start__init(m);
			m->run_id = fz_str(f, r->id);
			m->shim = any_ident(f);
			q->verb_case = BERTH__REQUEST__VERB_START;
			q->start = m;
			return;
		}
		case 1: {
			Berth__RecordExit *m = fz_alloc(f, sizeof *m);

			berth__record_exit__init(m);
			m->run_id = fz_str(f, r->id);
			m->has_has_record = 1;
			m->has_record = rn(f, 4) != 0;
			m->has_exit_code = 1;
			m->exit_code = rn(f, 2) ? 0 : (int32_t)rn(f, 256);
			q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
			q->record_exit = m;
			return;
		}
		case 2: {
			Berth__Settle *m = fz_alloc(f, sizeof *m);

			berth__settle__init(m);
			m->run_id = fz_str(f, r->id);
			q->verb_case = BERTH__REQUEST__VERB_SETTLE;
			q->settle = m;
			return;
		}
		default: {
			Berth__Claim *m = fz_alloc(f, sizeof *m);

			berth__claim__init(m);
			q->verb_case = BERTH__REQUEST__VERB_CLAIM;
			q->claim = m;
			return;
		}
		}
	}

	switch (rn(f, 32)) {
	case 0: {
		Berth__Claim *m = fz_alloc(f, sizeof *m);

		berth__claim__init(m);
		if (rn(f, 2))
			m->ticket = any_str(f);
		m->has_lease_ms = rn(f, 2);
		m->lease_ms = any_u32(f);
		m->has_wait_ms = rn(f, 3) == 0;
		m->wait_ms = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_CLAIM;
		q->claim = m;
		break;
	}
	case 1: {
		Berth__Start *m = fz_alloc(f, sizeof *m);

		berth__start__init(m);
		m->run_id = run_id_or_any(f);
		m->shim = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_START;
		q->start = m;
		break;
	}
	case 2:
	case 3: {
		Berth__Renew *m = fz_alloc(f, sizeof *m);

		berth__renew__init(m);
		m->ticket = r && rn(f, 2) ? fz_str(f, r->ticket) : any_str(f);
		m->run_id = run_id_or_any(f);
		m->has_lease_ms = rn(f, 2);
		m->lease_ms = any_u32(f);
		if (rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_RENEW;
			q->renew = m;
		} else {
			Berth__Readopt *o = fz_alloc(f, sizeof *o);

			berth__readopt__init(o);
			o->ticket = m->ticket;
			o->run_id = m->run_id;
			o->has_lease_ms = m->has_lease_ms;
			o->lease_ms = m->lease_ms;
			if (rn(f, 2))
				o->new_owner = rn(f, 2) ? fz_str(f, "fuzzsup") : any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_READOPT;
			q->readopt = o;
		}
		break;
	}
	case 4: {
		Berth__RecordExit *m = fz_alloc(f, sizeof *m);

		berth__record_exit__init(m);
		m->run_id = run_id_or_any(f);
		m->has_has_record = rn(f, 2);
		m->has_record = rn(f, 2);
		m->has_exit_code = rn(f, 2);
		m->exit_code = (int32_t)any_i64(f);
		m->has_signal = rn(f, 2);
		m->signal = (int32_t)any_i64(f);
		m->has_ended_ms = rn(f, 2);
		m->ended_ms = any_i64(f);
		q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
		q->record_exit = m;
		break;
	}
	case 5: {
		Berth__Abandon *m = fz_alloc(f, sizeof *m);

		berth__abandon__init(m);
		m->run_id = run_id_or_any(f);
		if (rn(f, 2))
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_ABANDON;
		q->abandon = m;
		break;
	}
	case 6:
	case 7: {
		Berth__Settle *m = fz_alloc(f, sizeof *m);

		berth__settle__init(m);
		m->run_id = run_id_or_any(f);
		if (rn(f, 2))
			m->outcome = any_str(f);
		m->has_output_bytes = rn(f, 2);
		m->output_bytes = any_i64(f);
		m->has_capture_complete = rn(f, 2);
		m->capture_complete = rn(f, 2);
		if (rn(f, 3) == 0)
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SETTLE;
		q->settle = m;
		break;
	}
	case 8: {
		Berth__Hello *m = fz_alloc(f, sizeof *m);

		berth__hello__init(m);
		m->ident = any_ident(f);
		m->has_slots = rn(f, 2);
		m->slots = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_HELLO;
		q->hello = m;
		break;
	}
	case 9: {
		Berth__Scan *m = fz_alloc(f, sizeof *m);

		berth__scan__init(m);
		m->has_settled = rn(f, 2);
		m->settled = rn(f, 2);
		m->has_settled_since_ms = rn(f, 2);
		m->settled_since_ms = any_i64(f);
		m->has_settled_before_ms = rn(f, 2);
		m->settled_before_ms = any_i64(f);
		q->verb_case = BERTH__REQUEST__VERB_SCAN;
		q->scan = m;
		break;
	}
	case 10: {
		Berth__MarkStop *m = fz_alloc(f, sizeof *m);

		berth__mark_stop__init(m);
		m->run_id = run_id_or_any(f);
		if (rn(f, 4))
			m->reason = rn(f, 2) ? fz_str(f, "cancel") : any_str(f);
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
		Berth__AddBatch *m = fz_alloc(f, sizeof *m);
		size_t i;

		berth__add_batch__init(m);
		m->n_adds = rn(f, 5);
		m->adds = fz_alloc(f, (m->n_adds ? m->n_adds : 1) * sizeof *m->adds);
		for (i = 0; i < m->n_adds; i++)
			m->adds[i] = any_add(f);
		q->verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
		q->add_batch = m;
		break;
	}
	case 14: {
		Berth__List *m = fz_alloc(f, sizeof *m);

		berth__list__init(m);
		if (rn(f, 2))
			m->state = any_str(f);
		m->has_limit = rn(f, 2);
		m->limit = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_LIST;
		q->list = m;
		break;
	}
	case 15: {
		Berth__Show *m = fz_alloc(f, sizeof *m);

		berth__show__init(m);
		if (rn(f, 6))
			m->id = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SHOW;
		q->show = m;
		break;
	}
	case 16:
	case 17: {
		Berth__TicketRef *m = fz_alloc(f, sizeof *m);

		berth__ticket_ref__init(m);
		if (rn(f, 6))
			m->id = any_str(f);
		switch (rn(f, 4)) {
		case 0: q->verb_case = BERTH__REQUEST__VERB_HOLD; q->hold = m; break;
		case 1: q->verb_case = BERTH__REQUEST__VERB_RELEASE; q->release = m; break;
		case 2: q->verb_case = BERTH__REQUEST__VERB_RETRY; q->retry = m; break;
		default: q->verb_case = BERTH__REQUEST__VERB_CANCEL; q->cancel = m; break;
		}
		break;
	}
	case 18: {
		Berth__Status *m = fz_alloc(f, sizeof *m);

		berth__status__init(m);
		q->verb_case = BERTH__REQUEST__VERB_STATUS;
		q->status = m;
		break;
	}
	case 19:
	case 20: {
		Berth__WorkerRef *m = fz_alloc(f, sizeof *m);

		berth__worker_ref__init(m);
		m->run_id = run_id_or_any(f);
		if (rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_HEARTBEAT;
			q->heartbeat = m;
		} else {
			q->verb_case = BERTH__REQUEST__VERB_SHOULD_STOP;
			q->should_stop = m;
		}
		break;
	}
	case 21: {
		Berth__Progress *m = fz_alloc(f, sizeof *m);

		berth__progress__init(m);
		m->run_id = run_id_or_any(f);
		m->has_index = rn(f, 2);
		m->index = any_i64(f);
		m->has_total = rn(f, 2);
		m->total = any_i64(f);
		if (rn(f, 2))
			m->label = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_PROGRESS;
		q->progress = m;
		break;
	}
	case 22: {
		Berth__Note *m = fz_alloc(f, sizeof *m);

		berth__note__init(m);
		m->run_id = run_id_or_any(f);
		if (rn(f, 4))
			m->text = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_NOTE;
		q->note = m;
		break;
	}
	case 23:
	case 24: {
		Berth__SeatAcquire *m = fz_alloc(f, sizeof *m);

		berth__seat_acquire__init(m);
		if (rn(f, 8))
			m->item = rn(f, 2) ? fz_str(f, rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (rn(f, 2))
			m->key = rn(f, 2) ? fz_str(f, "k") : any_str(f);
		if (rn(f, 2))
			m->workdir = rn(f, 2) ? fz_str(f, "/tmp/fz") : any_str(f);
		if (rn(f, 8))
			m->owner = rn(f, 2) ? fz_str(f, rn(f, 2) ? "o1" : "o2") : any_str(f);
		m->has_ttl_ms = rn(f, 2);
		m->ttl_ms = any_i64(f);
		m->owner_ident = any_ident(f);
		if (rn(f, 4) == 0)
			m->kind = any_str(f);
		if (rn(f, 4) == 0)
			m->state = any_str(f);
		m->has_task = rn(f, 2);
		m->task = rn(f, 4) == 0;
		m->has_in_flight = rn(f, 2);
		m->in_flight = rn(f, 2);
		m->has_in_flight_ttl_ms = rn(f, 4) == 0;
		m->in_flight_ttl_ms = any_i64(f);
		if (rn(f, 4) == 0)
			m->in_flight_ident = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
		q->seat_acquire = m;
		break;
	}
	case 25:
	case 26: {
		Berth__SeatRelease *m = fz_alloc(f, sizeof *m);

		berth__seat_release__init(m);
		if (rn(f, 8))
			m->item = rn(f, 2) ? fz_str(f, rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (rn(f, 4))
			m->owner = rn(f, 2) ? fz_str(f, rn(f, 2) ? "o1" : "o2") : any_str(f);
		switch (rn(f, 5)) {
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
		Berth__SeatStop *m = fz_alloc(f, sizeof *m);
		Berth__SeatConfirm *c;

		if (rn(f, 2)) {
			c = fz_alloc(f, sizeof *c);
			berth__seat_confirm__init(c);
			if (rn(f, 8))
				c->item = rn(f, 2) ? fz_str(f, "s1") : any_str(f);
			if (rn(f, 4))
				c->owner = rn(f, 2) ? fz_str(f, "o1") : any_str(f);
			if (rn(f, 4))
				c->state = any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_SEAT_CONFIRM;
			q->seat_confirm = c;
			break;
		}
		berth__seat_stop__init(m);
		if (rn(f, 8))
			m->item = rn(f, 2) ? fz_str(f, "s1") : any_str(f);
		if (rn(f, 2))
			m->reason = any_str(f);
		if (rn(f, 2))
			m->requester = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
		q->seat_stop = m;
		break;
	}
	case 28: {
		Berth__SeatActivity *m = fz_alloc(f, sizeof *m);

		berth__seat_activity__init(m);
		if (rn(f, 8))
			m->item = rn(f, 2) ? fz_str(f, "s1") : any_str(f);
		m->has_index = rn(f, 2);
		m->index = any_i64(f);
		m->has_total = rn(f, 2);
		m->total = any_i64(f);
		if (rn(f, 2))
			m->label = any_str(f);
		if (rn(f, 4))
			m->owner = rn(f, 2) ? fz_str(f, "o1") : any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
		q->seat_activity = m;
		break;
	}
	case 29: {
		Berth__SeatList *m = fz_alloc(f, sizeof *m);

		berth__seat_list__init(m);
		m->has_live_only = rn(f, 2);
		m->live_only = rn(f, 2);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
		q->seat_list = m;
		break;
	}
	default: {
		Berth__SeatReap *m = fz_alloc(f, sizeof *m);

		berth__seat_reap__init(m);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
		q->seat_reap = m;
		break;
	}
	}
}

/* ------------------------------------------------------------ the store */

static int64_t
sql_int(struct fz *f, const char *sql)
{
	sqlite3 *db = coord_db_handle(f->s);
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void
check_store(struct fz *f, int full)
{
	sqlite3 *db = coord_db_handle(f->s);
	sqlite3_stmt *st;

	/* No request may leave its transaction open: the next BEGIN
	 * IMMEDIATE would fail forever. */
	assert_int_equal(sqlite3_get_autocommit(db), 1);
	if (full) {
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
		assert_int_equal(sql_int(f, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs WHERE (settled_ms IS NULL) !="
				    " (state IN ('claimed','running','aftercare'))"),
			 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases l JOIN runs r ON r.id = l.run_id"
				    " WHERE r.settled_ms IS NOT NULL"),
			 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM leases l JOIN runs r ON r.id = l.run_id"
				    " WHERE r.ticket != l.ticket_id"),
			 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM (SELECT ticket FROM runs"
				    " WHERE settled_ms IS NULL GROUP BY ticket HAVING count(*) > 1)"),
			 0);
	/* A ticket is claimed exactly while it has an unsettled run. */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets t WHERE (t.state = 'claimed') !="
				    " EXISTS (SELECT 1 FROM runs r WHERE r.ticket = t.n"
				    " AND r.settled_ms IS NULL)"),
			 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM seats s JOIN runs r ON r.id = s.run_id"
				    " WHERE r.settled_ms IS NOT NULL"),
			 0);
}

/* A reply must decode, echo the request id and carry exactly one result. */
static Berth__Reply *
check_reply(const struct coord_result *res, const Berth__Request *q)
{
	Berth__Reply *r;

	assert_non_null(res->packed);
	assert_true(res->packed_len <= RPC_MAX_MSG);
	r = berth__reply__unpack(NULL, res->packed_len, res->packed);
	assert_non_null(r);
	assert_true(r->has_req_id);
	assert_true(r->req_id == q->req_id);
	assert_true(r->has_version && r->version == BERTH_PROTOCOL_VERSION);
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED:
		assert_non_null(r->granted);
		break;
	case BERTH__REPLY__RESULT_DENIED:
		assert_non_null(r->denied);
		assert_non_null(r->denied->reason);
		assert_true(r->denied->reason[0] != '\0');
		break;
	case BERTH__REPLY__RESULT_ERROR:
		assert_non_null(r->error);
		assert_true(r->error->has_code && r->error->code != BERTH__ERROR_CODE__ERR_NONE);
		/* A valid envelope never gets an envelope error from the store,
		 * and the store has no storage faults here. */
		assert_int_not_equal(r->error->code, BERTH__ERROR_CODE__ERR_STORAGE);
		break;
	default:
		fail_msg("reply without a result");
	}
	assert_int_equal(res->decision, res->reply == NULL ? COORD_REPLAYED
				: r->result_case == BERTH__REPLY__RESULT_GRANTED ? COORD_GRANTED
				: r->result_case == BERTH__REPLY__RESULT_DENIED ? COORD_DENIED
				: COORD_ERROR);
	return r;
}

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

/* Remembers what a granted claim handed out, so later inputs name real
 * runs and carry real tokens. */
static void
learn(struct fz *f, const Berth__Request *q, const Berth__Reply *r)
{
	const Berth__ClaimGranted *g;
	struct run *slot;

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
	slot = f->nruns < MAXRUNS ? &f->runs[f->nruns++] : &f->runs[rn(f, MAXRUNS)];
	snprintf(slot->id, sizeof slot->id, "%s", g->run_id ? g->run_id : "");
	snprintf(slot->token, sizeof slot->token, "%s", g->token ? g->token : "");
	snprintf(slot->ticket, sizeof slot->ticket, "%s", g->ticket ? g->ticket : "");
}

/* The server's path: envelope check, then the store. Returns the decoded
 * reply (NULL when the envelope was refused) and sets *replayed. */
static Berth__Reply *
feed(struct fz *f, const uint8_t *data, size_t len, Berth__Request **reqp, int *replayed)
{
	struct coord_result res;
	Berth__Request *req;
	Berth__Reply *r;
	char msg[256];
	int code;

	*reqp = NULL;
	*replayed = 0;
	code = coord_envelope_check(data, len, &req, msg, sizeof msg);
	if (code != 0) {
		assert_true(code == BERTH__ERROR_CODE__ERR_MALFORMED ||
			    code == BERTH__ERROR_CODE__ERR_VERSION ||
			    code == BERTH__ERROR_CODE__ERR_TOO_LARGE ||
			    code == BERTH__ERROR_CODE__ERR_UNKNOWN_VERB);
		assert_true(msg[0] != '\0');
		if (req != NULL)
			berth__request__free_unpacked(req, NULL);
		f->refused++;
		return NULL;
	}
	assert_int_equal(coord_exec_request(f->s, req, NULL, &res), 0);
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
static void
check_replay(struct fz *f, const uint8_t *data, size_t len, const Berth__Request *q,
	     const Berth__Reply *first)
{
	Berth__Request *q2;
	Berth__Reply *r2;
	int64_t events = sql_int(f, "SELECT count(*) FROM events");
	int replayed;
	uint8_t *a, *b;
	size_t la, lb;

	r2 = feed(f, data, len, &q2, &replayed);
	assert_non_null(r2);
	if (is_readonly(q) || first->result_case == BERTH__REPLY__RESULT_ERROR ||
	    (claim_next(q) && first->result_case == BERTH__REPLY__RESULT_DENIED &&
	     strcmp(first->denied->reason, "nothing_due") == 0)) {
		if (replayed)
			fail_msg("%s req %llu (first %s %s, claim ticket '%s') replayed though it"
				 " decided nothing",
				 msg_verb_name(q), (unsigned long long)q->req_id,
				 first->result_case == BERTH__REPLY__RESULT_ERROR ? "error" : "denied",
				 first->result_case == BERTH__REPLY__RESULT_ERROR ? first->error->message
				 : first->result_case == BERTH__REPLY__RESULT_DENIED ? first->denied->reason : "",
				 q->verb_case == BERTH__REQUEST__VERB_CLAIM && q->claim->ticket ? q->claim->ticket : "-");
		goto out;
	}
	if (!replayed)
		fail_msg("%s req %llu decided twice", msg_verb_name(q), (unsigned long long)q->req_id);
	assert_true(r2->replayed);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM events"), events);
	/* The stored reply is the first one, bit for bit, but for replayed. */
	r2->has_replayed = 0;
	r2->replayed = 0;
	la = berth__reply__get_packed_size(first);
	lb = berth__reply__get_packed_size(r2);
	assert_int_equal(la, lb);
	a = malloc(la + 1);
	b = malloc(lb + 1);
	berth__reply__pack(first, a);
	berth__reply__pack(r2, b);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	f->replays++;
out:
	berth__reply__free_unpacked(r2, NULL);
	berth__request__free_unpacked(q2, NULL);
}

/* Byte-level damage to a packed request. */
static size_t
mutate(struct fz *f, uint8_t *buf, size_t len, size_t cap)
{
	size_t i, n = 1 + rn(f, 4);

	for (i = 0; i < n && len > 0; i++) {
		switch (rn(f, 6)) {
		case 0: /* bit flip */
			buf[rn(f, (uint32_t)len)] ^= (uint8_t)(1u << rn(f, 8));
			break;
		case 1: /* truncation */
			len = rn(f, (uint32_t)len);
			break;
		case 2: /* a random byte */
			buf[rn(f, (uint32_t)len)] = (uint8_t)rnd(f);
			break;
		case 3: /* extension with garbage */
			while (len < cap && rn(f, 16))
				buf[len++] = (uint8_t)rnd(f);
			break;
		case 4: { /* a duplicated chunk (repeated fields, last one wins) */
			size_t at = rn(f, (uint32_t)len), k = 1 + rn(f, (uint32_t)(len - at));

			if (len + k <= cap) {
				memmove(buf + len, buf + at, k);
				len += k;
			}
			break;
		}
		default: /* an absurd varint somewhere */
			buf[rn(f, (uint32_t)len)] = 0xff;
			break;
		}
	}
	return len;
}

static void
reopen(struct fz *f)
{
	char err[256];

	coord_db_close(f->s);
	f->s = NULL;
	assert_int_equal(coord_db_open(&f->s, f->path, &f->o, err, sizeof err), 0);
}

static void
fuzz_seed(uint64_t seed)
{
	struct fz *f = calloc(1, sizeof *f);
	size_t cap = 512 * 1024;
	uint8_t *buf = malloc(cap);
	char err[256], cmd[128];
	int i;

	assert_non_null(f);
	assert_non_null(buf);
	f->rng = seed;
	f->o.sync_full = 0;
	f->o.default_lease_ms = 30000;
	f->o.backoff_base_ms = 10;
	f->o.backoff_max_ms = 1000;
	snprintf(f->dir, sizeof f->dir, "/tmp/coord_fuzz_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/berth.db", f->dir);
	f->now = 1700000000000LL;
	clock_fake_set(f->now);
	assert_int_equal(coord_db_open(&f->s, f->path, &f->o, err, sizeof err), 0);

	for (i = 0; i < INPUTS / NSEEDS; i++) {
		Berth__Request q = BERTH__REQUEST__INIT, *dq;
		Berth__Reply *r;
		size_t len;
		int replayed, damaged = 0;

		/* time moves on, now and then by a lot (leases lapse, activations
		 * fall due, seats go stale) */
		f->now += rn(f, 50) == 0 ? (int64_t)rn(f, 3600000) : (int64_t)rn(f, 2000);
		clock_fake_set(f->now);

		q.has_version = rn(f, 100) != 0;
		q.version = rn(f, 100) ? BERTH_PROTOCOL_VERSION : (uint32_t)rnd(f);
		q.actor = rn(f, 100) ? fz_str(f, rn(f, 2) ? "supervisor" : "cli") : any_str(f);
		q.instance = rn(f, 100) ? fz_str(f, rn(f, 2) ? "fuzzsup" : "fuzzcli") : NULL;
		q.has_req_id = rn(f, 100) != 0;
		q.req_id = rn(f, 50) ? ++f->req_id : (rn(f, 2) ? 0 : (uint64_t)rnd(f));
		if (rn(f, 60))
			any_verb(f, &q);

		len = berth__request__get_packed_size(&q);
		if (len > cap) {
			fz_free_all(f);
			continue;
		}
		berth__request__pack(&q, buf);
		if (rn(f, 4) == 0) {
			len = mutate(f, buf, len, cap);
			damaged = 1;
		}
		fz_free_all(f);

		r = feed(f, buf, len, &dq, &replayed);
		check_store(f, i % CHECK_EVERY == 0);
		if (r == NULL)
			continue;
		learn(f, dq, r);
		/* a retry of what was just decided */
		if (!replayed && rn(f, 5) == 0)
			check_replay(f, buf, len, dq, r);
		/* keep one decided mutation to replay after a reopen */
		if (!replayed && !damaged && !is_readonly(dq) &&
		    r->result_case != BERTH__REPLY__RESULT_ERROR &&
		    !(claim_next(dq) && r->result_case == BERTH__REPLY__RESULT_DENIED) &&
		    rn(f, 20) == 0) {
			free(f->kept);
			f->kept = malloc(len + 1);
			memcpy(f->kept, buf, len);
			f->kept_len = len;
			free(f->kept_reply);
			f->kept_reply_len = berth__reply__get_packed_size(r);
			f->kept_reply = malloc(f->kept_reply_len + 1);
			berth__reply__pack(r, f->kept_reply);
		}
		berth__reply__free_unpacked(r, NULL);
		berth__request__free_unpacked(dq, NULL);

		/* a coordinator restart: the kept request still replays */
		if (i % 1000 == 999 && f->kept != NULL) {
			Berth__Reply *first;

			reopen(f);
			check_store(f, 1);
			first = berth__reply__unpack(NULL, f->kept_reply_len, f->kept_reply);
			assert_non_null(first);
			r = feed(f, f->kept, f->kept_len, &dq, &replayed);
			assert_non_null(r);
			berth__reply__free_unpacked(r, NULL);
			check_replay(f, f->kept, f->kept_len, dq, first);
			berth__request__free_unpacked(dq, NULL);
			berth__reply__free_unpacked(first, NULL);
		}
	}
	check_store(f, 1);
	print_message("seed %llu: %d decided (%d granted, %d replays), %d refused, %d runs"
		      " (%lld settled, %lld succeeded)\n",
		      (unsigned long long)seed, f->decided, f->granted, f->replays, f->refused,
		      f->nruns, (long long)sql_int(f, "SELECT count(*) FROM runs WHERE settled_ms > 0"),
		      (long long)sql_int(f, "SELECT count(*) FROM runs WHERE state = 'succeeded'"));
	/* the fuzzer must have reached deep: runs were claimed and replays checked */
	assert_true(f->granted > 100);
	assert_true(f->replays > 50);

	coord_db_close(f->s);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	clock_fake_clear();
	free(f->kept);
	free(f->kept_reply);
	free(f->arena);
	free(f);
	free(buf);
}

static void
test_fuzz_seed1(void **state)
{
	(void)state;
	fuzz_seed(0x9e3779b97f4a7c15ULL);
}

static void
test_fuzz_seed2(void **state)
{
	(void)state;
	fuzz_seed(0xd1b54a32d192ed03ULL);
}

static void
test_fuzz_seed3(void **state)
{
	(void)state;
	fuzz_seed(0x2545f4914f6cdd1dULL);
}

static void
test_fuzz_seed4(void **state)
{
	(void)state;
	fuzz_seed(0xbf58476d1ce4e5b9ULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_seed1),
		cmocka_unit_test(test_fuzz_seed2),
		cmocka_unit_test(test_fuzz_seed3),
		cmocka_unit_test(test_fuzz_seed4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
