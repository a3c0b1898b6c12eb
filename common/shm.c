/*
 * The shared-memory segments of a home: their names, the one way they are
 * opened, and their removal (DESIGN §9).
 *
 * Who may use a segment is decided here, once, for the board and the ring
 * alike. POSIX shared memory lives in one directory every user can write
 * (/dev/shm, sticky), and our names are predictable from the home's path, so
 * anyone could create "our" segment first. Created exclusively with mode
 * 0600, a segment of ours can be opened by nobody else; a segment that
 * exists already is used only when fstat says it is this user's and grants
 * nothing to group or others. A refused segment leaves that home without
 * the observation it carries (the actors run on; decisions never read it).
 *
 * Sizing and stamping the header happen under flock, because the actors of
 * a group start at the same moment: whoever locks first stamps, the others
 * see the stamp. A segment whose name was removed while we waited for the
 * lock (the last actor of a group leaving, board.c) is not used: its memory
 * is nobody's any more, so we open the name again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ids.h"
#include "log.h"
#include "shm.h"

/* Where glibc keeps POSIX shared memory on Linux: shm_refused and
 * shm_collect read the directory itself. */
#define SHM_DIR "/dev/shm"

static const char *const shm_suffix[SHM_NKINDS] = {
	[SHM_BOARD] = "",
	[SHM_RING] = "-ring",
};

/* A refusal is a fact about the home, not about each open: said once. */
static int shm_warned;

void
shm_home_path(const char *home, char *buf, size_t n)
{
	char abs[PATH_MAX], cwd[PATH_MAX];

	if (realpath(home, abs) != NULL)
		snprintf(buf, n, "%s", abs);
	else if (home[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL &&
		 (size_t)snprintf(buf, n, "%s/%s", cwd, home) < n)
		return;
	else
		snprintf(buf, n, "%s", home);
}

/* The same home reached through a symlink or a relative path names the
 * same segments. */
void
shm_name(const char *home, enum shm_kind kind, char *buf, size_t n)
{
	char abs[2 * PATH_MAX + 2];
	uint8_t h[32];

	shm_home_path(home, abs, sizeof(abs));
	ids_sha256(abs, strlen(abs), h);
	snprintf(buf, n, "/berth-%02x%02x%02x%02x%02x%02x%02x%02x%s", h[0], h[1], h[2], h[3], h[4],
		 h[5], h[6], h[7], shm_suffix[kind]);
}

/* 0 when st is a segment of ours; else -1 with why. */
static int
shm_check(const char *name, const struct stat *st, char *why, size_t n)
{
	if (st->st_uid != geteuid()) {
		snprintf(why, n, SHM_DIR "%s is owned by uid %u, not by this user (uid %u)", name,
			 (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((st->st_mode & 077) != 0) {
		snprintf(why, n, SHM_DIR "%s has mode %04o: group or others may use it", name,
			 (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/* shm_check of the name as the directory shows it: -1 with why when it
 * exists and is not ours, 0 otherwise. */
static int
shm_stat_check(const char *name, char *why, size_t n)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	if (stat(path, &st) == -1)
		return 0;
	return shm_check(name, &st, why, n);
}

static void
shm_say_refused(const char *why, int flags)
{
	if ((flags & SHM_QUIET) || shm_warned) {
		log_debug("shared memory not used: %s", why);
		return;
	}
	shm_warned = 1;
	log_warn("shared memory not used: %s; observation (status board, trace ring) is off for "
		 "this home, decisions are not affected",
		 why);
}

/* Opens the name: exclusively when creating, else as it is. -1 with errno;
 * *created says which. */
static int
shm_open_name(const char *name, int flags, int *created)
{
	int fd;

	*created = 0;
	if (flags & SHM_CREATE) {
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd != -1) {
			*created = 1;
			return fd;
		}
		if (errno != EEXIST)
			return -1;
	}
	return shm_open(name, O_RDWR | O_CLOEXEC, 0);
}

/* The header of a segment we may use: stamped by its first opener, then
 * checked by everyone, so a layout from another build (or another home's
 * segment under a colliding name) is never misread. */
static enum shm_status
shm_stamp(const char *home, const struct shm_layout *want, int flags, struct shm_header *h,
	  const char *name, char *why, size_t n)
{
	char path[PATH_MAX];

	shm_home_path(home, path, sizeof(path));
	if (h->magic == 0 && (flags & SHM_CREATE)) {
		snprintf(h->home, sizeof(h->home), "%s", path);
		h->version = want->version;
		h->nslots = want->nslots;
		h->cellsize = want->cellsize;
		atomic_store_explicit((_Atomic uint32_t *)&h->magic, want->magic,
				      memory_order_release);
	}
	if (h->magic != want->magic || h->version != want->version || h->nslots != want->nslots ||
	    h->cellsize != want->cellsize) {
		snprintf(why, n, SHM_DIR "%s has an unknown layout (magic %08x version %u)", name,
			 h->magic, h->version);
		return SHM_LAYOUT;
	}
	if (memchr(h->home, '\0', sizeof(h->home)) == NULL || strcmp(h->home, path) != 0) {
		snprintf(why, n, SHM_DIR "%s belongs to another home", name);
		return SHM_LAYOUT;
	}
	return SHM_OK;
}

/* One try at the name: SHM_ABSENT with *again set when the name went away
 * under us and is worth another try. */
static enum shm_status
shm_try(const char *home, const struct shm_layout *want, int flags, struct shm_seg *seg, char *why,
	size_t n, int *again)
{
	enum shm_status rc = SHM_FAILED;
	struct stat st;
	void *p;
	int fd, created;

	*again = 0;
	if ((fd = shm_open_name(seg->name, flags, &created)) == -1) {
		if (errno == ENOENT) {
			*again = (flags & SHM_CREATE) != 0; /* removed between the two opens */
			snprintf(why, n, SHM_DIR "%s does not exist", seg->name);
			return SHM_ABSENT;
		}
		if (errno == EACCES) {
			/* Another user's segment that does not let us in:
			 * refused all the same, with what stat says of it. */
			if (shm_stat_check(seg->name, why, n) == 0)
				snprintf(why, n, SHM_DIR "%s: permission denied", seg->name);
			return SHM_REFUSED;
		}
		snprintf(why, n, "shm_open %s: %s", seg->name, strerror(errno));
		return SHM_FAILED;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(why, n, "fstat %s: %s", seg->name, strerror(errno));
		goto out;
	}
	if (!created && shm_check(seg->name, &st, why, n) < 0) {
		rc = SHM_REFUSED;
		goto out;
	}
	if (flock(fd, LOCK_EX) == -1) {
		snprintf(why, n, "flock %s: %s", seg->name, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(why, n, "fstat %s: %s", seg->name, strerror(errno));
		goto out;
	}
	if (st.st_nlink == 0) {
		/* The last actor of the group removed it while we waited. */
		*again = 1;
		rc = SHM_ABSENT;
		snprintf(why, n, SHM_DIR "%s was removed", seg->name);
		goto out;
	}
	if ((size_t)st.st_size < want->size) {
		if (!(flags & SHM_CREATE)) {
			rc = SHM_ABSENT; /* its creator is between creating and sizing it */
			snprintf(why, n, SHM_DIR "%s is not ready yet", seg->name);
			goto out;
		}
		if (ftruncate(fd, (off_t)want->size) == -1) {
			snprintf(why, n, "ftruncate %s: %s", seg->name, strerror(errno));
			goto out;
		}
	}
	p = mmap(NULL, want->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(why, n, "mmap %s: %s", seg->name, strerror(errno));
		goto out;
	}
	if ((rc = shm_stamp(home, want, flags, p, seg->name, why, n)) != SHM_OK) {
		munmap(p, want->size);
		goto out;
	}
	flock(fd, LOCK_UN);
	seg->fd = fd;
	seg->base = p;
	seg->size = want->size;
	return SHM_OK;
out:
	close(fd); /* drops the lock too */
	return rc;
}

enum shm_status
shm_attach(const char *home, const struct shm_layout *want, int flags, struct shm_seg *seg,
	   char *why, size_t whylen)
{
	enum shm_status rc;
	char buf[PATH_MAX + 128];
	int tries, again;

	memset(seg, 0, sizeof(*seg));
	seg->fd = -1;
	shm_name(home, want->kind, seg->name, sizeof(seg->name));
	for (tries = 0; tries < 3; tries++) {
		rc = shm_try(home, want, flags, seg, buf, sizeof(buf), &again);
		if (rc != SHM_ABSENT || !again)
			break;
	}
	switch (rc) {
	case SHM_OK:
	case SHM_ABSENT: break;
	case SHM_REFUSED: shm_say_refused(buf, flags); break;
	case SHM_LAYOUT:
	case SHM_FAILED:
		if (flags & SHM_QUIET)
			log_debug("%s", buf);
		else
			log_warn("%s", buf);
		break;
	}
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", rc == SHM_OK ? "" : buf);
	return rc;
}

void
shm_detach(struct shm_seg *seg)
{
	if (seg->base != NULL)
		munmap(seg->base, seg->size);
	if (seg->fd != -1)
		close(seg->fd);
	seg->base = NULL;
	seg->fd = -1;
}

int
shm_linked(const struct shm_seg *seg)
{
	struct stat st;

	return seg->fd != -1 && fstat(seg->fd, &st) == 0 && st.st_nlink > 0;
}

int
shm_refused(const char *home, char *why, size_t whylen)
{
	char name[48];
	int k;

	for (k = 0; k < SHM_NKINDS; k++) {
		shm_name(home, (enum shm_kind)k, name, sizeof(name));
		if (shm_stat_check(name, why, whylen) < 0)
			return 1;
	}
	return 0;
}

/* Removes one name when the segment behind it is ours. */
static int
shm_unlink_name(const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (st.st_uid != geteuid())
		return 0;
	if (shm_unlink(name) == -1 && errno != ENOENT) {
		log_warn("shm_unlink %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int
shm_unlink_kind(const char *home, enum shm_kind kind)
{
	char name[48];

	shm_name(home, kind, name, sizeof(name));
	return shm_unlink_name(name);
}

int
shm_unlink_home(const char *home)
{
	int rc = 0, k;

	for (k = 0; k < SHM_NKINDS; k++)
		if (shm_unlink_kind(home, (enum shm_kind)k) < 0)
			rc = -1;
	return rc;
}

/* "berth-" and 16 hex, then nothing or "-ring": one of our names. */
static int
shm_our_name(const char *n)
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
 * Segments live in /dev/shm until reboot, and a home removed while its
 * segments were left (a crash, a test's temporary home) would keep them
 * there for good: about 1.25 MB each. Only our own segments are looked at
 * (this user's, our layout), and only when the recorded home is certainly
 * gone (ENOENT): an unreadable home keeps its segments. Costs milliseconds
 * per thousand segments.
 */
int
shm_collect(void)
{
	struct shm_header pre;
	struct dirent *e;
	struct stat st;
	char name[300];
	DIR *d;
	void *p;
	int fd, n = 0;

	if ((d = opendir(SHM_DIR)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!shm_our_name(e->d_name))
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		if ((fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0)) == -1)
			continue;
		if (fstat(fd, &st) == -1 || st.st_uid != geteuid() ||
		    (size_t)st.st_size < sizeof(pre)) {
			close(fd);
			continue;
		}
		p = mmap(NULL, sizeof(pre), PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			continue;
		memcpy(&pre, p, sizeof(pre));
		munmap(p, sizeof(pre));
		if ((pre.magic != SHM_MAGIC_BOARD && pre.magic != SHM_MAGIC_RING) ||
		    pre.version < 2 || pre.home[0] != '/' ||
		    memchr(pre.home, '\0', sizeof(pre.home)) == NULL)
			continue;
		if (stat(pre.home, &st) == -1 && errno == ENOENT && shm_unlink(name) == 0) {
			log_info("shared memory: removed %s of the removed home %s", name,
				 pre.home);
			n++;
		}
	}
	closedir(d);
	return n;
}
