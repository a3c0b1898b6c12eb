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
#include <dirent.h>
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
#include "ring.h"

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
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t cellsize;
	char home[PATH_MAX]; /* whose board: board_gc() removes it once home is gone */
	struct board_cell cells[BOARD_SLOTS];
};

/* The prefix every berth segment (board and ring) starts with. */
struct board_shm_prefix {
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t cellsize;
	char home[PATH_MAX];
};

struct board {
	int fd;
	struct board_shm *shm;
};

void board_home_path(const char *home, char *buf, size_t n)
{
	char abs[PATH_MAX], cwd[PATH_MAX];

	if (realpath(home, abs) != NULL)
		snprintf(buf, n, "%s", abs);
	else if (home[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
		snprintf(buf, n, "%s/%s", cwd, home);
	else
		snprintf(buf, n, "%s", home);
}

/* The hash that names both segments of a home: the same home reached through
 * a symlink or a relative path must give the same board. */
static void board_home_hash(const char *home, char out[17])
{
	char abs[2 * PATH_MAX + 2];
	uint8_t h[32];
	int i;

	board_home_path(home, abs, sizeof(abs));
	ids_sha256(abs, strlen(abs), h);
	for (i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

void board_name(const char *home, char *buf, size_t n)
{
	char hash[17];

	board_home_hash(home, hash);
	snprintf(buf, n, "/berth-%s", hash);
}

static void board_copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

struct board *board_open(const char *home, int create)
{
	struct board *b = NULL;
	struct stat st;
	char name[64];
	void *p;
	int fd = -1;

	board_name(home, name, sizeof(name));
	fd = shm_open(name, create ? O_RDWR | O_CREAT : O_RDWR, 0600);
	if (fd == -1) {
		if (errno != ENOENT || create)
			log_warn("board: shm_open %s: %s", name, strerror(errno));
		goto fail;
	}
	/* Creation and sizing race between actors starting together; flock
	 * makes the first one initialise the header and the others see it. */
	if (flock(fd, LOCK_EX) == -1) {
		log_warn("board: flock %s: %s", name, strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) == -1) {
		log_warn("board: fstat %s: %s", name, strerror(errno));
		goto fail_unlock;
	}
	if ((size_t)st.st_size < sizeof(struct board_shm)) {
		if (!create) {
			/* A creator is between shm_open and ftruncate. */
			errno = ENOENT;
			goto fail_unlock;
		}
		if (ftruncate(fd, sizeof(struct board_shm)) == -1) {
			log_warn("board: ftruncate %s: %s", name, strerror(errno));
			goto fail_unlock;
		}
	}
	p = mmap(NULL, sizeof(struct board_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		log_warn("board: mmap %s: %s", name, strerror(errno));
		goto fail_unlock;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL) {
		munmap(p, sizeof(struct board_shm));
		goto fail_unlock;
	}
	b->fd = fd;
	b->shm = p;
	if (b->shm->magic == 0 && create) {
		board_home_path(home, b->shm->home, sizeof(b->shm->home));
		b->shm->version = BOARD_VERSION;
		b->shm->nslots = BOARD_SLOTS;
		b->shm->cellsize = sizeof(struct board_cell);
		atomic_store_explicit((_Atomic uint32_t *)&b->shm->magic, BOARD_SHM_MAGIC,
		                      memory_order_release);
	}
	if (b->shm->magic != BOARD_SHM_MAGIC || b->shm->version != BOARD_VERSION ||
	    b->shm->nslots != BOARD_SLOTS || b->shm->cellsize != sizeof(struct board_cell)) {
		/* Another build's layout: refuse rather than misread it. */
		log_warn("board: %s has an unknown layout (magic %08x version %u)", name,
		         b->shm->magic, b->shm->version);
		munmap(p, sizeof(struct board_shm));
		free(b);
		b = NULL;
		goto fail_unlock;
	}
	flock(fd, LOCK_UN);
	return b;

fail_unlock:
	flock(fd, LOCK_UN);
fail:
	if (fd != -1)
		close(fd);
	return NULL;
}

void board_close(struct board *b)
{
	if (b == NULL)
		return;
	munmap(b->shm, sizeof(struct board_shm));
	close(b->fd);
	free(b);
}

/* "berth-" and 16 hex, then nothing or "-ring": one of our segments. */
static int board_gc_name(const char *n)
{
	int i;

	if (strncmp(n, "berth-", 6) != 0)
		return 0;
	for (i = 6; i < 22; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return 0;
	return n[22] == '\0' || strcmp(n + 22, "-ring") == 0;
}

/*
 * Segments live in /dev/shm until reboot, and a home that was removed (every
 * test's temporary home) would leave its board and ring there for good. So
 * each long-lived actor, once at its start (observe_attach), removes those whose
 * recorded home no longer exists. Only our own layout is touched, and only
 * when the home is certainly gone (ENOENT): an unreadable home keeps its
 * segments. The scan costs milliseconds per thousand segments: the shims
 * and CLI calls, started per job and per command, never run it.
 */
int board_gc(void)
{
	struct board_shm_prefix pre;
	struct dirent *e;
	struct stat st;
	char name[300];
	DIR *d;
	void *p;
	int fd, n = 0;

	if ((d = opendir("/dev/shm")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!board_gc_name(e->d_name))
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		if ((fd = shm_open(name, O_RDONLY, 0)) == -1)
			continue;
		if (fstat(fd, &st) == -1 || (size_t)st.st_size < sizeof(pre)) {
			close(fd);
			continue;
		}
		p = mmap(NULL, sizeof(pre), PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			continue;
		memcpy(&pre, p, sizeof(pre));
		munmap(p, sizeof(pre));
		if ((pre.magic != BOARD_SHM_MAGIC && pre.magic != RING_SHM_MAGIC) ||
		    pre.version < 2 || pre.home[0] != '/' ||
		    memchr(pre.home, '\0', sizeof(pre.home)) == NULL)
			continue;
		if (stat(pre.home, &st) == -1 && errno == ENOENT && shm_unlink(name) == 0) {
			log_debug("board: removed %s of the removed home %s", name, pre.home);
			n++;
		}
	}
	closedir(d);
	return n;
}

int board_unlink(const char *home)
{
	char name[64];

	board_name(home, name, sizeof(name));
	if (shm_unlink(name) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

static struct board_cell *board_cell_of(struct board_slot *s)
{
	return (struct board_cell *)((char *)s - offsetof(struct board_cell, slot));
}

static void board_write_begin(struct board_cell *c)
{
	uint32_t v = atomic_load_explicit(&c->seq, memory_order_relaxed);

	/* An odd word left by a writer that died mid-update is simply carried
	 * on: we are the slot's writer now. */
	atomic_store_explicit(&c->seq, (v | 1u), memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void board_write_end(struct board_cell *c)
{
	uint32_t v = atomic_load_explicit(&c->seq, memory_order_relaxed);

	atomic_store_explicit(&c->seq, (v | 1u) + 1, memory_order_release);
}

struct board_slot *board_attach(struct board *b, const char *actor, const char *instance)
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
	if (flock(b->fd, LOCK_EX) == -1) {
		log_warn("board: flock: %s", strerror(errno));
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
		flock(b->fd, LOCK_UN);
		return NULL;
	}
	board_write_begin(c);
	s = &c->slot;
	memset(s, 0, sizeof(*s));
	board_copy_str(s->actor, sizeof(s->actor), actor);
	board_copy_str(s->instance, sizeof(s->instance), instance);
	board_copy_str(s->state, sizeof(s->state), "starting");
	s->pid = self.pid;
	s->start_time = self.start_time;
	s->started_ms = now;
	s->heartbeat_ms = now;
	s->restarts = restarts;
	board_write_end(c);
	flock(b->fd, LOCK_UN);
	return s;
}

void board_beat(struct board_slot *s, const char *state)
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

int board_read(struct board *b, struct board_slot *out, int max)
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

int board_slot_stale(const struct board_slot *s, int64_t now_ms, int64_t stale_ms)
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

void board_count(struct board_slot *s, enum board_counter which)
{
	uint64_t *p;

	if (s == NULL)
		return;
	switch (which) {
	case BOARD_SENT:
		p = &s->sent;
		break;
	case BOARD_GRANTED:
		p = &s->granted;
		break;
	case BOARD_DENIED:
		p = &s->denied;
		break;
	case BOARD_ERRORS:
		p = &s->errors;
		break;
	case BOARD_TIMEOUTS:
		p = &s->timeouts;
		break;
	default:
		return;
	}
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

void board_set_slots(struct board_slot *s, uint32_t total, uint32_t used)
{
	if (s == NULL)
		return;
	__atomic_store_n(&s->slots_total, total, __ATOMIC_RELAXED);
	__atomic_store_n(&s->slots_used, used, __ATOMIC_RELAXED);
}
