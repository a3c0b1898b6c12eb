#ifndef BERTH_RING_H
#define BERTH_RING_H
#include <stddef.h>
#include <stdint.h>

/* The trace ring (DESIGN §9): fixed-size records in POSIX shared memory,
 * written by every actor and the CLI with their client-side view. A writer
 * never blocks: it takes a slot with an atomic head and publishes it with a
 * per-slot sequence, so a reader detects torn or overwritten records and
 * reports the loss instead of returning them. Observation only. */

enum ring_kind {
	RING_SENT = 1,  /* request sent */
	RING_REPLY,     /* reply received, with decision */
	RING_TIMEOUT,   /* no reply in time */
	RING_RETRY,     /* resent with the same request id */
	RING_FAILPOINT, /* a failpoint fired */
	RING_STATE,     /* a run changed state in an actor */
	RING_KILL,      /* a group was signalled */
	RING_NOTE,      /* anything else worth a line */
};

struct ring_rec {
	uint64_t seq; /* set by the ring */
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

struct ring;

#define RING_SLOTS 4096

/* Opens the ring of home (shm.h): create=1 for the actors (made when
 * missing), 0 for clients and readers (only one the group made). NULL when
 * there is none to use. */
struct ring *ring_open(const char *home, int create);
void ring_close(struct ring *t);
/* Never blocks. */
void ring_emit(struct ring *t, const struct ring_rec *r);
/* Reads the record after *cursor (0: oldest still present). Returns 1 with
 * out filled and *cursor advanced, 0 when nothing new; *lost counts records
 * overwritten before they could be read. */
int ring_read(struct ring *t, uint64_t *cursor, struct ring_rec *out, uint64_t *lost);
/* The position the next record will take: a cursor that reads only what
 * is emitted from now on (berth trace --follow). */
uint64_t ring_head(struct ring *t);
/* "sent", "reply", "timeout", ... for a ring_kind. */
const char *ring_kind_name(uint32_t kind);

/* The process-wide ring every event of this process goes to: no-ops until
 * ring_global_open() (create as for ring_open). */
int ring_global_open(const char *home, const char *actor, const char *instance, int create);
void ring_global_close(void);
void ring_global_emit(uint32_t kind, const char *verb, const char *ticket, const char *run,
		      const char *decision, const char *reason, uint64_t req_id, int64_t latency_us,
		      const char *text);
/* Emits r on the process-wide ring, filling ts_ms, pid, actor and instance
 * where r leaves them zero/empty (the rpc observer names the instance of
 * the client that sent, which a process with several clients needs). */
void ring_global_emit_rec(struct ring_rec *r);

#endif
