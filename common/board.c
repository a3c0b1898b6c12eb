/*
 * The status board: one shared-memory segment per $BERTH_HOME with a slot per
 * actor (DESIGN §9). It is observation only: nothing reads it to decide
 * anything, so every failure here is logged and survived.
 *
 * Consistency: each slot carries a sequence word. Its writer makes it odd,
 * changes the slot, and makes it even again (a seqlock), so board_read()
 * copies a slot only when the word was even and unchanged around the copy.
 * The counters are bumped with relaxed atomics outside the seqlock: a reader
 * sees each one either before or after an increment, which is all a counter
 * needs. Slot allocation (board_attach) is serialised with flock() on the
 * segment, which the kernel drops when a holder dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <signal.h>
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
#include "ident.h"
#include "ids.h"
#include "log.h"
#include "shm.h"

#define BOARD_VERSION 2u
/* A reader waits for a slot's writer to finish; but a writer that died
 * mid-update never does, leaving the same odd word for good. When the word
 * stays odd and the slot's process is gone, or it stays odd this long (a
 * writer stopped mid-update), the copy is taken as it is. */
#define BOARD_STUCK_MS 1000

struct board_cell {
	_Atomic uint32_t seq; /* odd while the owner writes the slot */
	uint32_t pad;
	struct board_slot slot;
};

struct board_shm {
	struct shm_header hdr; /* the home recorded there: shm_collect removes it once gone */
	struct board_cell cells[BOARD_SLOTS];
};

struct board {
	struct shm_seg seg;
	struct board_shm *shm;
	char home[PATH_MAX]; /* as given: board_leave removes its segments */
};

static void
board_copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

struct board *
board_open(const char *home, int create)
{
	const struct shm_layout want = {
		.kind = SHM_BOARD,
		.magic = SHM_MAGIC_BOARD,
		.version = BOARD_VERSION,
		.nslots = BOARD_SLOTS,
		.cellsize = sizeof(struct board_cell),
		.size = sizeof(struct board_shm),
	};
	struct board *b;

	if ((b = calloc(1, sizeof(*b))) == NULL) {
		log_warn("board: out of memory");
		return NULL;
	}
	/* An actor makes the board (and says so when it cannot use one); a
	 * reader only looks at one that exists. */
	if (shm_attach(home, &want, create ? SHM_CREATE : SHM_QUIET, &b->seg, NULL, 0) != SHM_OK) {
		free(b);
		return NULL;
	}
	b->shm = b->seg.base;
	snprintf(b->home, sizeof(b->home), "%s", home);
	return b;
}

void
board_close(struct board *b)
{
	if (b == NULL)
		return;
	shm_detach(&b->seg);
	free(b);
}

static struct board_cell *
board_cell_of(struct board_slot *s)
{
	return (struct board_cell *)((char *)s - offsetof(struct board_cell, slot));
}

static void
board_write_begin(struct board_cell *c)
{
	uint32_t v = atomic_load_explicit(&c->seq, memory_order_relaxed);

	/* An odd word left by a writer that died mid-update is simply carried
	 * on: we are the slot's writer now. */
	atomic_store_explicit(&c->seq, (v | 1u), memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void
board_write_end(struct board_cell *c)
{
	uint32_t v = atomic_load_explicit(&c->seq, memory_order_relaxed);

	atomic_store_explicit(&c->seq, (v | 1u) + 1, memory_order_release);
}

struct board_slot *
board_attach(struct board *b, const char *actor, const char *instance)
{
	struct board_cell *c = NULL, *free_cell = NULL, *gone_cell = NULL;
	struct board_slot *s;
	struct ident self;
	uint32_t restarts = 0;
	int64_t now = clock_wall_ms();
	int i;

	if (b == NULL || actor == NULL || actor[0] == '\0')
		return NULL;
	if (ident_self(&self) != 0)
		memset(&self, 0, sizeof(self));
	self.pid = getpid();
	if (flock(b->seg.fd, LOCK_EX) == -1) {
		log_warn("board: flock: %s", strerror(errno));
		return NULL;
	}
	/* The last actor of the group may have removed the board between our
	 * open and this lock (board_leave): a slot there would be seen by
	 * nobody. The caller opens the board again. */
	if (!shm_linked(&b->seg)) {
		flock(b->seg.fd, LOCK_UN);
		errno = ESTALE;
		return NULL;
	}
	for (i = 0; i < BOARD_SLOTS; i++) {
		struct board_cell *x = &b->shm->cells[i];

		if (strncmp(x->slot.actor, actor, sizeof(x->slot.actor)) == 0 &&
		    x->slot.actor[0] != '\0') {
			c = x;
			break;
		}
		if (x->slot.actor[0] == '\0' && free_cell == NULL)
			free_cell = x;
		if (x->slot.actor[0] != '\0' && gone_cell == NULL &&
		    board_slot_stale(&x->slot, now, INT64_MAX))
			gone_cell = x;
	}
	if (c != NULL) {
		restarts = c->slot.restarts;
		if (c->slot.pid != 0 && c->slot.pid != self.pid)
			restarts++;
	} else if (free_cell != NULL) {
		c = free_cell;
	} else if (gone_cell != NULL) {
		/* Full board: an actor name that is gone yields its slot. */
		log_info("board: slot of dead %s reused for %s", gone_cell->slot.actor, actor);
		c = gone_cell;
	} else {
		log_warn("board: no free slot for %s", actor);
		flock(b->seg.fd, LOCK_UN);
		errno = ENOSPC;
		return NULL;
	}
	board_write_begin(c);
	s = &c->slot;
	memset(s, 0, sizeof(*s));
	board_copy_str(s->actor, sizeof(s->actor), actor);
	board_copy_str(s->instance, sizeof(s->instance), instance);
	board_copy_str(s->state, sizeof(s->state), BOARD_STARTING);
	s->pid = self.pid;
	s->start_time = self.start_time;
	s->started_ms = now;
	s->heartbeat_ms = now;
	s->restarts = restarts;
	board_write_end(c);
	flock(b->seg.fd, LOCK_UN);
	return s;
}

/* A slot whose actor still counts as part of the group: it has not said
 * it stopped and its process lives (by identity). */
static int
board_slot_live(const struct board_slot *s)
{
	return s->actor[0] != '\0' && strcmp(s->state, BOARD_STOPPED) != 0 &&
	       !board_slot_stale(s, 0, INT64_MAX);
}

/*
 * The group's shared memory goes with its last actor (DESIGN §9): a home
 * used once must not keep 1.25 MB of RAM until reboot. Under the board's
 * lock, so that an actor starting now either took its slot before (and we
 * see it live) or finds the name gone and makes new segments.
 */
int
board_leave(struct board *b, struct board_slot *s, const char *state)
{
	int i, last = 1;

	if (b == NULL || s == NULL)
		return 0;
	board_beat(s, state);
	if (flock(b->seg.fd, LOCK_EX) == -1) {
		log_warn("board: flock: %s", strerror(errno));
		return 0;
	}
	for (i = 0; i < BOARD_SLOTS && last; i++) {
		const struct board_slot *x = &b->shm->cells[i].slot;

		if (x != s && board_slot_live(x))
			last = 0;
	}
	if (last && shm_linked(&b->seg))
		shm_unlink_home(b->home);
	flock(b->seg.fd, LOCK_UN);
	return last;
}

void
board_beat(struct board_slot *s, const char *state)
{
	struct board_cell *c;

	if (s == NULL)
		return;
	c = board_cell_of(s);
	board_write_begin(c);
	if (state != NULL)
		board_copy_str(s->state, sizeof(s->state), state);
	__atomic_store_n(&s->heartbeat_ms, clock_wall_ms(), __ATOMIC_RELAXED);
	board_write_end(c);
}

int
board_read(struct board *b, struct board_slot *out, int max)
{
	int64_t since;
	int i, n = 0, tries;

	if (b == NULL)
		return 0;
	for (i = 0; i < BOARD_SLOTS && n < max; i++) {
		struct board_cell *c = &b->shm->cells[i];
		struct board_slot copy;
		uint32_t s1, s2, last;

		for (tries = 0, last = 0, since = 0;; tries++) {
			s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
			memcpy(&copy, &c->slot, sizeof(copy));
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&c->seq, memory_order_relaxed);
			if (s1 == s2 && (s1 & 1u) == 0)
				break;
			/* A live writer moves the word on, or is only
			 * preempted; a dead one left it odd. Its slot is shown
			 * as it is: showing what is left of a dead actor is
			 * the board's purpose. */
			if (s1 != s2 || s2 != last) {
				last = s2;
				since = 0;
			} else if (since == 0) {
				since = clock_mono_ms();
			} else if ((kill(copy.pid, 0) == -1 && errno == ESRCH) ||
				   clock_mono_ms() - since > BOARD_STUCK_MS) {
				break;
			}
			if (tries > 10)
				sched_yield();
		}
		copy.actor[sizeof(copy.actor) - 1] = '\0';
		copy.instance[sizeof(copy.instance) - 1] = '\0';
		copy.state[sizeof(copy.state) - 1] = '\0';
		if (copy.actor[0] == '\0')
			continue;
		out[n++] = copy;
	}
	return n;
}

int
board_slot_stale(const struct board_slot *s, int64_t now_ms, int64_t stale_ms)
{
	struct ident id;

	if (s->pid <= 0)
		return 1;
	memset(&id, 0, sizeof(id));
	/* The segment lives in tmpfs and cannot outlive a boot, so a recorded
	 * process belongs to this boot. */
	if (ident_boot_id(id.boot_id) != 0)
		id.boot_id[0] = '\0';
	id.pid = s->pid;
	id.start_time = s->start_time;
	if (ident_check(&id) == IDENT_GONE)
		return 1;
	if (stale_ms != INT64_MAX && now_ms - s->heartbeat_ms > stale_ms)
		return 1;
	return 0;
}

void
board_count(struct board_slot *s, enum board_counter which)
{
	uint64_t *p;

	if (s == NULL)
		return;
	switch (which) {
	case BOARD_SENT: p = &s->sent; break;
	case BOARD_GRANTED: p = &s->granted; break;
	case BOARD_DENIED: p = &s->denied; break;
	case BOARD_ERRORS: p = &s->errors; break;
	case BOARD_TIMEOUTS: p = &s->timeouts; break;
	default: return;
	}
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

void
board_set_slots(struct board_slot *s, uint32_t total, uint32_t used)
{
	if (s == NULL)
		return;
	__atomic_store_n(&s->slots_total, total, __ATOMIC_RELAXED);
	__atomic_store_n(&s->slots_used, used, __ATOMIC_RELAXED);
}
