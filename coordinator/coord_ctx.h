#ifndef BERTH_COORD_CTX_H
#define BERTH_COORD_CTX_H
#include <stdint.h>
#include "berth.pb-c.h"

/* What a verb handler gets: one request being decided, inside the
 * transaction coord_exec.c opened for it. */

/* Seat names (item, owner, key; a ticket's --key too) and workdirs are
 * bounded so a seat row always fits the fixed buffers arbitration uses. */
#define COORD_SEAT_NAME_MAX 255
#define COORD_SEAT_PATH_MAX 4095
/* Free text a worker or a seat holder writes (a progress or activity
 * label, a note, a seat's stop reason) lands in rows that scans and lists
 * carry for every run or seat: bounded, so those replies stay small. */
#define COORD_TEXT_MAX 4096
/* A reply must fit one message (RPC_MAX_MSG, 4 MiB): lists stop short of it
 * and say so. */
#define COORD_REPLY_BUDGET (3 * 1024 * 1024)

struct coord_db;
struct coord_caller;

/* The handler fills reply (coord_reply.h) and the facts the event row and
 * the trace line carry. */
struct coord_ctx {
	struct coord_db *db;
	const Berth__Request *req;
	/* Who asks (coord_caller.h), as the connection says; NULL for the
	 * coordinator's own process (in-process tests, the bench). */
	const struct coord_caller *caller;
	/* The actor roles the request acts in (enum coord_role): the
	 * verified actor's own, or for the coordinator's own process and a
	 * harness the role its actor name gives (any, for another name). */
	unsigned roles;
	int64_t now; /* wall ms, read once per request */
	Berth__Reply *reply;
	char reason[64];
	char ticket[32];
	char run[40];
	/* For the trace only (DESIGN §9): what the decision was about, for a
	 * person reading the diagram ("exit 7", "failed; ticket ready"), and
	 * the run's lease as the decision found it (0: none said). */
	char detail[96];
	int64_t lease_expires_ms, lease_renewed_ms;
	char lease_owner[24];
	int decided_nothing; /* a claim for the next ticket that found nothing */
	int wake;            /* may have made parked claims eligible */
};

/* A verb handler: 0 with c->reply set (granted, denied or an input
 * error), or -1 on a storage fault (the transaction is rolled back). */
typedef int coord_handler_fn(struct coord_ctx *c);

#endif
