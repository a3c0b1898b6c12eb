/*
 * The trace ring: RING_SLOTS fixed-size records in one shared-memory segment
 * per $BERTH_HOME, written by every actor and the CLI (DESIGN §9).
 *
 * The invariant: a writer never blocks or waits for anyone, and a reader
 * never returns a torn record; whatever it cannot read intact it counts as
 * lost. Position p (0, 1, 2, ...) lives in cell p % RING_SLOTS, whose
 * sequence word is 2p+1 while p is being written and 2p+2 once p is
 * published. A writer takes p with an atomic fetch-add on the head and
 * claims the cell by compare-and-swap only if the word is older than its own
 * position, so two writers never publish into the same cell at once. A writer
 * that was itself lapped gives up (its record counts as lost). A writer that
 * stalls mid-copy can still be overtaken by a newer one, so every record also
 * carries a checksum over its position and bytes: a late scribble makes the
 * cell fail the check instead of reading as valid data.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "ring.h"
#include "shm.h"

#define RING_VERSION 2u
/* A record still unpublished this long after a reader first met it belongs
 * to a writer that died or stalled: the reader skips it as lost. */
#define RING_PATIENCE_MS 500
#define RING_SPINS       64

struct ring_cell {
	_Atomic uint64_t seq;
	uint64_t sum;
	struct ring_rec rec;
};

struct ring_shm {
	struct shm_header hdr; /* the home recorded there: shm_collect removes it once gone */
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) struct ring_cell cells[RING_SLOTS];
};

struct ring {
	struct shm_seg seg;
	struct ring_shm *shm;
	/* Reader-local: the unpublished position met last and since when. */
	uint64_t pend_pos;
	int64_t pend_since_ms;
};

static struct ring *ring_g;
static char ring_g_actor[16];
static char ring_g_instance[17];

struct ring *
ring_open(const char *home, int create)
{
	const struct shm_layout want = {
		.kind = SHM_RING,
		.magic = SHM_MAGIC_RING,
		.version = RING_VERSION,
		.nslots = RING_SLOTS,
		.cellsize = sizeof(struct ring_cell),
		.size = sizeof(struct ring_shm),
	};
	struct ring *t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		log_warn("ring: out of memory");
		return NULL;
	}
	/* Actors make the ring; clients (the CLI, workers, shims) only join
	 * one the group made, and stay quiet when it is not there or not ours. */
	if (shm_attach(home, &want, create ? SHM_CREATE : SHM_QUIET, &t->seg, NULL, 0) != SHM_OK) {
		free(t);
		return NULL;
	}
	t->shm = t->seg.base;
	t->pend_pos = UINT64_MAX;
	return t;
}

void
ring_close(struct ring *t)
{
	if (t == NULL)
		return;
	shm_detach(&t->seg);
	free(t);
}

/* FNV-1a over the position and the record's bytes. */
static uint64_t
ring_sum(uint64_t pos, const struct ring_rec *r)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t h = 0xcbf29ce484222325ull ^ pos;
	size_t i;

	for (i = 0; i < sizeof(*r); i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void
ring_emit(struct ring *t, const struct ring_rec *r)
{
	struct ring_cell *c;
	struct ring_rec tmp;
	uint64_t pos, want, v, sum;

	if (t == NULL)
		return;
	pos = atomic_fetch_add_explicit(&t->shm->head, 1, memory_order_relaxed);
	c = &t->shm->cells[pos % RING_SLOTS];
	want = 2 * pos + 1;
	v = atomic_load_explicit(&c->seq, memory_order_relaxed);
	do {
		/* A newer position already holds the cell: this writer was
		 * lapped between the fetch-add and here; its record is lost. */
		if (v >= want)
			return;
	} while (!atomic_compare_exchange_weak_explicit(&c->seq, &v, want, memory_order_relaxed,
							memory_order_relaxed));
	/* The odd word must be visible before any byte of the record. */
	atomic_thread_fence(memory_order_release);
	memcpy(&tmp, r, sizeof(tmp));
	tmp.seq = pos + 1;
	sum = ring_sum(pos, &tmp);
	memcpy(&c->rec, &tmp, sizeof(tmp));
	c->sum = sum;
	/* Publish, unless a newer writer took the cell meanwhile. */
	v = want;
	atomic_compare_exchange_strong_explicit(&c->seq, &v, want + 1, memory_order_release,
						memory_order_relaxed);
}

uint64_t
ring_head(struct ring *t)
{
	if (t == NULL)
		return 0;
	return atomic_load_explicit(&t->shm->head, memory_order_acquire);
}

int
ring_read(struct ring *t, uint64_t *cursor, struct ring_rec *out, uint64_t *lost)
{
	struct ring_cell *cell;
	struct ring_rec tmp;
	uint64_t head, c, s1, s2, sum;
	int spins;

	if (t == NULL)
		return 0;
	for (;;) {
		head = atomic_load_explicit(&t->shm->head, memory_order_acquire);
		c = *cursor;
		if (c > head) {
			/* The ring was recreated under us: start over. */
			c = *cursor = 0;
		}
		if (c >= head)
			return 0;
		if (head - c > RING_SLOTS) {
			/* Lapped: those positions are overwritten. A fresh
			 * reader (cursor 0) asked for the oldest present and
			 * lost nothing. */
			if (c != 0)
				*lost += head - RING_SLOTS - c;
			c = *cursor = head - RING_SLOTS;
		}
		cell = &t->shm->cells[c % RING_SLOTS];
		for (spins = 0;; spins++) {
			s1 = atomic_load_explicit(&cell->seq, memory_order_acquire);
			if (s1 != 2 * c + 1 || spins >= RING_SPINS)
				break;
			sched_yield();
		}
		if (s1 == 2 * c + 2) {
			memcpy(&tmp, &cell->rec, sizeof(tmp));
			sum = cell->sum;
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&cell->seq, memory_order_relaxed);
			*cursor = c + 1;
			if (s2 == s1 && tmp.seq == c + 1 && ring_sum(c, &tmp) == sum) {
				memcpy(out, &tmp, sizeof(*out));
				return 1;
			}
			(*lost)++;
			continue;
		}
		if (s1 > 2 * c + 2) {
			/* Overwritten by a newer position before we got here. */
			*cursor = c + 1;
			(*lost)++;
			continue;
		}
		/* Not published yet: a writer between its fetch-add and its
		 * publish. Wait for it across calls, but not forever: a writer
		 * that died there never publishes. */
		if (t->pend_pos != c) {
			t->pend_pos = c;
			t->pend_since_ms = clock_mono_ms();
			return 0;
		}
		if (clock_mono_ms() - t->pend_since_ms < RING_PATIENCE_MS)
			return 0;
		*cursor = c + 1;
		(*lost)++;
	}
}

int
ring_global_open(const char *home, const char *actor, const char *instance, int create)
{
	snprintf(ring_g_actor, sizeof(ring_g_actor), "%s", actor != NULL ? actor : "");
	snprintf(ring_g_instance, sizeof(ring_g_instance), "%s", instance != NULL ? instance : "");
	if (ring_g != NULL)
		return 0;
	ring_g = ring_open(home, create);
	return ring_g != NULL ? 0 : -1;
}

void
ring_global_close(void)
{
	ring_close(ring_g);
	ring_g = NULL;
}

static void
ring_copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

void
ring_global_emit(uint32_t kind, const char *verb, const char *ticket, const char *run,
		 const char *decision, const char *reason, uint64_t req_id, int64_t latency_us,
		 const char *text)
{
	struct ring_rec r;

	if (ring_g == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.ts_ms = clock_wall_ms();
	r.kind = kind;
	r.pid = getpid();
	ring_copy_str(r.actor, sizeof(r.actor), ring_g_actor);
	ring_copy_str(r.instance, sizeof(r.instance), ring_g_instance);
	ring_copy_str(r.verb, sizeof(r.verb), verb);
	ring_copy_str(r.ticket, sizeof(r.ticket), ticket);
	ring_copy_str(r.run, sizeof(r.run), run);
	ring_copy_str(r.decision, sizeof(r.decision), decision);
	ring_copy_str(r.reason, sizeof(r.reason), reason);
	r.req_id = req_id;
	r.latency_us = latency_us;
	ring_copy_str(r.text, sizeof(r.text), text);
	ring_emit(ring_g, &r);
}

void
ring_global_emit_rec(struct ring_rec *r)
{
	if (ring_g == NULL)
		return;
	if (r->ts_ms == 0)
		r->ts_ms = clock_wall_ms();
	if (r->pid == 0)
		r->pid = getpid();
	if (r->actor[0] == '\0')
		ring_copy_str(r->actor, sizeof(r->actor), ring_g_actor);
	if (r->instance[0] == '\0')
		ring_copy_str(r->instance, sizeof(r->instance), ring_g_instance);
	ring_emit(ring_g, r);
}

const char *
ring_kind_name(uint32_t kind)
{
	switch (kind) {
	case RING_SENT: return "sent";
	case RING_REPLY: return "reply";
	case RING_TIMEOUT: return "timeout";
	case RING_RETRY: return "retry";
	case RING_FAILPOINT: return "failpoint";
	case RING_STATE: return "state";
	case RING_KILL: return "kill";
	case RING_NOTE: return "note";
	}
	return "unknown";
}
