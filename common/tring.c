/*
 * The trace ring: TRING_SLOTS fixed-size records in one shared-memory segment
 * per $BERTH_HOME, written by every actor and the CLI (DESIGN §9).
 *
 * The invariant: a writer never blocks or waits for anyone, and a reader
 * never returns a torn record; whatever it cannot read intact it counts as
 * lost. Position p (0, 1, 2, ...) lives in cell p % TRING_SLOTS, whose
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

#include "board.h"
#include "clock.h"
#include "log.h"
#include "tring.h"

#define TRING_VERSION 2u
/* A record still unpublished this long after a reader first met it belongs
 * to a writer that died or stalled: the reader skips it as lost. */
#define TRING_PATIENCE_MS 500
#define TRING_SPINS 64

struct tring_cell {
	_Atomic uint64_t seq;
	uint64_t sum;
	struct tring_rec rec;
};

struct tring_shm {
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t cellsize;
	char home[PATH_MAX]; /* whose ring: board_gc() removes it once home is gone */
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) struct tring_cell cells[TRING_SLOTS];
};

struct tring {
	int fd;
	struct tring_shm *shm;
	/* Reader-local: the unpublished position met last and since when. */
	uint64_t pend_pos;
	int64_t pend_since_ms;
};

static struct tring *tring_g;
static char tring_g_actor[16];
static char tring_g_instance[17];

void tring_name(const char *home, char *buf, size_t n)
{
	char base[48];

	board_name(home, base, sizeof(base));
	snprintf(buf, n, "%s-ring", base);
}

struct tring *tring_open(const char *home, int create)
{
	struct tring *t = NULL;
	struct stat st;
	char name[64];
	void *p;
	int fd;

	tring_name(home, name, sizeof(name));
	fd = shm_open(name, create ? O_RDWR | O_CREAT : O_RDWR, 0600);
	if (fd == -1) {
		if (errno != ENOENT || create)
			log_warn("tring: shm_open %s: %s", name, strerror(errno));
		return NULL;
	}
	/* The first opener sizes and stamps the segment; flock orders it
	 * against actors starting at the same moment. */
	if (flock(fd, LOCK_EX) == -1) {
		log_warn("tring: flock %s: %s", name, strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) == -1) {
		log_warn("tring: fstat %s: %s", name, strerror(errno));
		goto fail;
	}
	if ((size_t)st.st_size < sizeof(struct tring_shm)) {
		if (!create)
			goto fail;
		if (ftruncate(fd, sizeof(struct tring_shm)) == -1) {
			log_warn("tring: ftruncate %s: %s", name, strerror(errno));
			goto fail;
		}
	}
	p = mmap(NULL, sizeof(struct tring_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		log_warn("tring: mmap %s: %s", name, strerror(errno));
		goto fail;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		munmap(p, sizeof(struct tring_shm));
		goto fail;
	}
	t->shm = p;
	t->fd = fd;
	t->pend_pos = UINT64_MAX;
	if (t->shm->magic == 0 && create) {
		board_home_path(home, t->shm->home, sizeof(t->shm->home));
		t->shm->version = TRING_VERSION;
		t->shm->nslots = TRING_SLOTS;
		t->shm->cellsize = sizeof(struct tring_cell);
		t->shm->magic = TRING_SHM_MAGIC;
	}
	if (t->shm->magic != TRING_SHM_MAGIC || t->shm->version != TRING_VERSION ||
	    t->shm->nslots != TRING_SLOTS || t->shm->cellsize != sizeof(struct tring_cell)) {
		log_warn("tring: %s has an unknown layout (magic %08x version %u)", name,
		         t->shm->magic, t->shm->version);
		munmap(p, sizeof(struct tring_shm));
		free(t);
		t = NULL;
		goto fail;
	}
	flock(fd, LOCK_UN);
	return t;

fail:
	flock(fd, LOCK_UN);
	close(fd);
	return NULL;
}

void tring_close(struct tring *t)
{
	if (t == NULL)
		return;
	munmap(t->shm, sizeof(struct tring_shm));
	close(t->fd);
	free(t);
}

int tring_unlink(const char *home)
{
	char name[64];

	tring_name(home, name, sizeof(name));
	if (shm_unlink(name) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

/* FNV-1a over the position and the record's bytes. */
static uint64_t tring_sum(uint64_t pos, const struct tring_rec *r)
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

void tring_emit(struct tring *t, const struct tring_rec *r)
{
	struct tring_cell *c;
	struct tring_rec tmp;
	uint64_t pos, want, v, sum;

	if (t == NULL)
		return;
	pos = atomic_fetch_add_explicit(&t->shm->head, 1, memory_order_relaxed);
	c = &t->shm->cells[pos % TRING_SLOTS];
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
	sum = tring_sum(pos, &tmp);
	memcpy(&c->rec, &tmp, sizeof(tmp));
	c->sum = sum;
	/* Publish, unless a newer writer took the cell meanwhile. */
	v = want;
	atomic_compare_exchange_strong_explicit(&c->seq, &v, want + 1, memory_order_release,
	                                        memory_order_relaxed);
}

uint64_t tring_head(struct tring *t)
{
	if (t == NULL)
		return 0;
	return atomic_load_explicit(&t->shm->head, memory_order_acquire);
}

int tring_read(struct tring *t, uint64_t *cursor, struct tring_rec *out, uint64_t *lost)
{
	struct tring_cell *cell;
	struct tring_rec tmp;
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
		if (head - c > TRING_SLOTS) {
			/* Lapped: those positions are overwritten. A fresh
			 * reader (cursor 0) asked for the oldest present and
			 * lost nothing. */
			if (c != 0)
				*lost += head - TRING_SLOTS - c;
			c = *cursor = head - TRING_SLOTS;
		}
		cell = &t->shm->cells[c % TRING_SLOTS];
		for (spins = 0;; spins++) {
			s1 = atomic_load_explicit(&cell->seq, memory_order_acquire);
			if (s1 != 2 * c + 1 || spins >= TRING_SPINS)
				break;
			sched_yield();
		}
		if (s1 == 2 * c + 2) {
			memcpy(&tmp, &cell->rec, sizeof(tmp));
			sum = cell->sum;
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&cell->seq, memory_order_relaxed);
			*cursor = c + 1;
			if (s2 == s1 && tmp.seq == c + 1 && tring_sum(c, &tmp) == sum) {
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
		if (clock_mono_ms() - t->pend_since_ms < TRING_PATIENCE_MS)
			return 0;
		*cursor = c + 1;
		(*lost)++;
	}
}

int tring_global_open(const char *home, const char *actor, const char *instance)
{
	snprintf(tring_g_actor, sizeof(tring_g_actor), "%s", actor != NULL ? actor : "");
	snprintf(tring_g_instance, sizeof(tring_g_instance), "%s",
	         instance != NULL ? instance : "");
	if (tring_g != NULL)
		return 0;
	tring_g = tring_open(home, 1);
	return tring_g != NULL ? 0 : -1;
}

void tring_global_close(void)
{
	tring_close(tring_g);
	tring_g = NULL;
}

static void tring_copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

void tring_global_emit(uint32_t kind, const char *verb, const char *ticket, const char *run,
                       const char *decision, const char *reason, uint64_t req_id,
                       int64_t latency_us, const char *text)
{
	struct tring_rec r;

	if (tring_g == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.ts_ms = clock_wall_ms();
	r.kind = kind;
	r.pid = getpid();
	tring_copy_str(r.actor, sizeof(r.actor), tring_g_actor);
	tring_copy_str(r.instance, sizeof(r.instance), tring_g_instance);
	tring_copy_str(r.verb, sizeof(r.verb), verb);
	tring_copy_str(r.ticket, sizeof(r.ticket), ticket);
	tring_copy_str(r.run, sizeof(r.run), run);
	tring_copy_str(r.decision, sizeof(r.decision), decision);
	tring_copy_str(r.reason, sizeof(r.reason), reason);
	r.req_id = req_id;
	r.latency_us = latency_us;
	tring_copy_str(r.text, sizeof(r.text), text);
	tring_emit(tring_g, &r);
}

void tring_global_emit_rec(struct tring_rec *r)
{
	if (tring_g == NULL)
		return;
	if (r->ts_ms == 0)
		r->ts_ms = clock_wall_ms();
	if (r->pid == 0)
		r->pid = getpid();
	if (r->actor[0] == '\0')
		tring_copy_str(r->actor, sizeof(r->actor), tring_g_actor);
	if (r->instance[0] == '\0')
		tring_copy_str(r->instance, sizeof(r->instance), tring_g_instance);
	tring_emit(tring_g, r);
}

const char *tring_kind_name(uint32_t kind)
{
	switch (kind) {
	case TRING_SENT:
		return "sent";
	case TRING_REPLY:
		return "reply";
	case TRING_TIMEOUT:
		return "timeout";
	case TRING_RETRY:
		return "retry";
	case TRING_FAILPOINT:
		return "failpoint";
	case TRING_STATE:
		return "state";
	case TRING_KILL:
		return "kill";
	case TRING_NOTE:
		return "note";
	}
	return "unknown";
}
