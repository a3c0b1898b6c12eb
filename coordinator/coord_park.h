#ifndef BERTH_COORD_PARK_H
#define BERTH_COORD_PARK_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_caller.h"

/*
 * Held (parked) claims. A claim for the next ticket that finds nothing due
 * may wait (Claim.wait_ms): it is held, with its nng context, and executed
 * again whenever a decision may have made work eligible, when the next
 * activation falls due, at least every COORD_PARK_RETRY_MS, and one last
 * time at its deadline, when it is answered whatever the outcome. A held
 * claim decided nothing, so nothing about it is stored or traced until it
 * is answered. This file keeps the list and says when to try again; the
 * server executes.
 */

#define COORD_PARK_RETRY_MS 5000

struct rpc_server;
struct rpc_incoming;

/* A request being decided: a claim that waits stays one while held. */
struct coord_pending {
	struct rpc_incoming *in;
	Berth__Request *req;
	int64_t t0_us;           /* when it was received: its trace latency */
	int64_t deadline_us;     /* monotonic, when it may wait */
	struct coord_caller who; /* who asks, as its connection says (coord_caller.h) */
	uint8_t *last;           /* its latest nothing_due reply, answered at shutdown */
	size_t last_len;
	struct coord_pending *next;
};

struct coord_park {
	struct coord_pending *head; /* in arrival order */
	int64_t next_due;           /* wall ms of the next wake-up (coord_sched_next_wake) */
	int64_t retried_us;         /* when the held claims were last tried */
};

void coord_park_init(struct coord_park *pk);
/* Frees p and its request (not its context: answered or dropped before). */
void coord_pending_free(struct coord_pending *p);
/* Holds p (at the end of the list) with packed, its latest answer. */
void coord_park_hold(struct coord_park *pk, struct coord_pending *p, const uint8_t *packed,
		     size_t len);
/* Takes the held claims out, in arrival order: all of them, or (expired)
 * only those whose wait is over at now_us. */
struct coord_pending *coord_park_take(struct coord_park *pk, int expired, int64_t now_us);
/* Drops a held claim with np's instance and request id from np's process:
 * the sender resent it and has given up on the held copy. */
void coord_park_drop_same(struct coord_park *pk, struct rpc_server *rpc,
			  const struct coord_pending *np);
/* Drops the held claims whose connection closed (logged). */
void coord_park_drop_orphans(struct coord_park *pk, struct rpc_server *rpc);
/* Drops every held claim without an answer. */
void coord_park_drop_all(struct coord_park *pk, struct rpc_server *rpc);
/* How long the loop may sleep for the held claims (ms, at most max_ms):
 * the next deadline, next_due (wall ms, kept for coord_park_retry_now) and
 * the next safety-net retry. */
int coord_park_sleep_ms(struct coord_park *pk, int64_t now_us, int64_t wall_ms, int64_t next_due,
			int max_ms);
/* 1 when the held claims should be tried again now (and the moment is
 * remembered): a decision may have made work claimable (wake), the next
 * wake-up has come, or the safety-net interval passed (what time alone
 * makes claimable, a seat whose holder went stale, is noticed that way). */
int coord_park_retry_now(struct coord_park *pk, int wake, int64_t now_us, int64_t wall_ms);
/* 1 when a held claim's wait is over at now_us. */
int coord_park_expired(const struct coord_park *pk, int64_t now_us);

#endif
