#ifndef BERTH_TRING_H
#define BERTH_TRING_H
#include <stddef.h>
#include <stdint.h>

/* The trace ring (DESIGN §9): fixed-size records in POSIX shared memory,
 * written by every actor and the CLI with their client-side view. A writer
 * never blocks: it takes a slot with an atomic head and publishes it with a
 * per-slot sequence, so a reader detects torn or overwritten records and
 * reports the loss instead of returning them. Observation only. */

enum tring_kind {
	TRING_SENT = 1,  /* request sent */
	TRING_REPLY,     /* reply received, with decision */
	TRING_TIMEOUT,   /* no reply in time */
	TRING_RETRY,     /* resent with the same request id */
	TRING_FAILPOINT, /* a failpoint fired */
	TRING_STATE,     /* a run changed state in an actor */
	TRING_KILL,      /* a group was signalled */
	TRING_NOTE,      /* anything else worth a line */
};

struct tring_rec {
	uint64_t seq;  /* set by the ring */
	int64_t ts_ms;
	uint32_t kind;
	int32_t pid;
	char actor[16];
	char instance[17];
	char verb[20];
	char ticket[16];
	char run[40];
	char decision[12];
	char reason[40];
	uint64_t req_id;
	int64_t latency_us;
	char text[80];
};

struct tring;

struct tring *tring_open(const char *home, int create);
void tring_close(struct tring *t);
/* Never blocks. */
void tring_emit(struct tring *t, const struct tring_rec *r);
/* Reads the record after *cursor (0: oldest still present). Returns 1 with
 * out filled and *cursor advanced, 0 when nothing new; *lost counts records
 * overwritten before they could be read. */
int tring_read(struct tring *t, uint64_t *cursor, struct tring_rec *out, uint64_t *lost);

/* Process-wide ring for convenience: no-ops until tring_global_open(). */
int tring_global_open(const char *home, const char *actor, const char *instance);
void tring_global_emit(uint32_t kind, const char *verb, const char *ticket, const char *run,
		       const char *decision, const char *reason, uint64_t req_id,
		       int64_t latency_us, const char *text);

/* Additions. */
#define TRING_SLOTS 4096
#define TRING_SHM_MAGIC 0x474e5254u /* "TRNG" */
/* "/berth-<hash>-ring" (see board_name) into buf. */
void tring_name(const char *home, char *buf, size_t n);
/* Removes the ring segment of home (tests, a full uninstall): 0 or -1. */
int tring_unlink(const char *home);
/* The position the next record will take: a cursor that reads only what
 * is emitted from now on (berth trace --follow). */
uint64_t tring_head(struct tring *t);
void tring_global_close(void);
/* Emits r on the process-wide ring, filling ts_ms, pid, actor and instance
 * where r leaves them zero/empty (the rpc observer names the instance of
 * the client that sent, which a process with several clients needs). */
void tring_global_emit_rec(struct tring_rec *r);
/* "sent", "reply", "timeout", ... for a tring_kind. */
const char *tring_kind_name(uint32_t kind);

#endif
