#ifndef BERTH_SHM_H
#define BERTH_SHM_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* The shared memory of a home (DESIGN §9): the status board (board.c) and
 * the trace ring (ring.c), one POSIX segment each, named after a hash of
 * the home's real path. Observation only: a segment that cannot be used
 * costs what it would have shown, never a decision.
 *
 * A segment is ours only when this user made it: it is created with
 * O_CREAT|O_EXCL and mode 0600, and one that already exists is used only
 * when its owner is this user and it grants nothing to group or others.
 * Anything else (another user squatting the name, a mode someone widened)
 * is refused, so nobody else can read what the actors write or forge what
 * `berth status` prints. */

enum shm_kind {
	SHM_BOARD, /* "/berth-<hash>" */
	SHM_RING,  /* "/berth-<hash>-ring" */
	SHM_NKINDS
};

/* The magic numbers of the two layouts. */
#define SHM_MAGIC_BOARD 0x42525442u /* "BTRB" */
#define SHM_MAGIC_RING  0x474e5254u /* "TRNG" */

/* The first bytes of every segment: what it is, which build's layout, and
 * whose home it serves (shm_collect removes it once that home is gone). */
struct shm_header {
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t cellsize;
	char home[PATH_MAX];
};

/* What a caller expects of a segment. */
struct shm_layout {
	enum shm_kind kind;
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t cellsize;
	size_t size; /* the whole segment, header included */
};

enum shm_status {
	SHM_OK = 0,
	SHM_ABSENT,  /* no such segment (or one still being made), and not asked to create */
	SHM_REFUSED, /* exists but not ours: another owner, or group/other mode bits */
	SHM_LAYOUT,  /* ours, but another build's layout or another home's segment */
	SHM_FAILED,  /* a system call failed (logged) */
};

/* Flags of shm_attach. */
#define SHM_CREATE 1 /* create the segment when missing (actors) */
#define SHM_QUIET  2 /* a refusal is not logged (short-lived clients: the CLI, shims) */

struct shm_seg {
	int fd;
	void *base;
	size_t size;
	char name[48];
};

/* "/berth-<16 hex of SHA-256 of the real home path>[-ring]" into buf. */
void shm_name(const char *home, enum shm_kind kind, char *buf, size_t n);
/* The absolute, resolved path of home: what names a segment and what its
 * header records. */
void shm_home_path(const char *home, char *buf, size_t n);

/*
 * Opens and maps the segment of home that want describes. With SHM_CREATE
 * a missing one is created (exclusively, 0600), sized and stamped with the
 * header; without, a missing or half-made one is SHM_ABSENT. A segment not
 * ours is SHM_REFUSED: the first refusal in a process is logged as a
 * warning (unless SHM_QUIET), the rest at debug level, so a squatted home
 * says so once per actor. why (may be NULL) gets a sentence for the user.
 */
enum shm_status shm_attach(const char *home, const struct shm_layout *want, int flags,
			   struct shm_seg *seg, char *why, size_t whylen);
void shm_detach(struct shm_seg *seg);
/* 1 while the mapped segment still has its name (shm_unlink_home removes
 * the name, not the memory of whoever has it mapped). */
int shm_linked(const struct shm_seg *seg);

/* Whether a segment of home exists that shm_attach would refuse: 1 with
 * why set (naming the segment, its owner and mode), else 0. For `berth
 * status`, which must say why it shows no board. */
int shm_refused(const char *home, char *why, size_t whylen);

/* Removes the segment(s) of home that are ours (a squatter's segment is
 * left alone; it is not ours to remove). 0, or -1 when one could not be
 * removed (logged). */
int shm_unlink_kind(const char *home, enum shm_kind kind);
int shm_unlink_home(const char *home);

/* Removes our segments whose recorded home no longer exists (a temporary
 * home removed without stopping its group, or a crash). The reaper calls it
 * (reaper/main.c); nothing else scans /dev/shm. Returns how many it removed. */
int shm_collect(void);

#endif
