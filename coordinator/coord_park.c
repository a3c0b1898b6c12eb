/* Held claims: see coord_park.h. */
#include <stdlib.h>
#include <string.h>

#include "coord_park.h"
#include "log.h"
#include "rpc.h"

void
coord_park_init(struct coord_park *pk)
{
	memset(pk, 0, sizeof *pk);
	pk->next_due = INT64_MAX;
}

void
coord_pending_free(struct coord_pending *p)
{
	if (p->req != NULL)
		berth__request__free_unpacked(p->req, NULL);
	free(p->last);
	free(p);
}

static void
park_append(struct coord_park *pk, struct coord_pending *p)
{
	struct coord_pending **pp;

	p->next = NULL;
	for (pp = &pk->head; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = p;
}

void
coord_park_hold(struct coord_park *pk, struct coord_pending *p, const uint8_t *packed, size_t len)
{
	uint8_t *copy;

	if ((copy = malloc(len > 0 ? len : 1)) != NULL) {
		memcpy(copy, packed, len);
		free(p->last);
		p->last = copy;
		p->last_len = len;
	}
	park_append(pk, p);
}

struct coord_pending *
coord_park_take(struct coord_park *pk, int expired, int64_t now_us)
{
	struct coord_pending *list = pk->head, *p, *taken = NULL, **tail = &taken;

	pk->head = NULL;
	while ((p = list) != NULL) {
		list = p->next;
		if (expired && p->deadline_us > now_us) {
			park_append(pk, p);
			continue;
		}
		p->next = NULL;
		*tail = p;
		tail = &p->next;
	}
	return taken;
}

/* Drops (without an answer) every held claim drop() says to. */
static void
park_drop_if(struct coord_park *pk, struct rpc_server *rpc,
	     int (*drop)(struct rpc_server *, const struct coord_pending *, const void *),
	     const void *arg)
{
	struct coord_pending **pp, *p;

	for (pp = &pk->head; (p = *pp) != NULL;) {
		if (!drop(rpc, p, arg)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		rpc_server_drop(rpc, p->in);
		coord_pending_free(p);
	}
}

/* The same request from the same process: a copy of another sender's
 * (one naming its instance and request id) replaces nothing. */
static int
park_same(struct rpc_server *rpc, const struct coord_pending *p, const void *arg)
{
	const struct coord_pending *np = arg;

	(void)rpc;
	return p->req->req_id == np->req->req_id &&
	       strcmp(p->req->instance, np->req->instance) == 0 &&
	       rpc_incoming_peer(p->in)->pid == rpc_incoming_peer(np->in)->pid;
}

void
coord_park_drop_same(struct coord_park *pk, struct rpc_server *rpc, const struct coord_pending *np)
{
	park_drop_if(pk, rpc, park_same, np);
}

/* A held claim whose connection closed is forgotten, not decided: were it
 * granted, the run would belong to a sender that can never hear of it. A
 * sender that is still alive resends it on its new connection. */
static int
park_orphaned(struct rpc_server *rpc, const struct coord_pending *p, const void *arg)
{
	(void)arg;
	if (!rpc_incoming_orphaned(rpc, p->in))
		return 0;
	log_info("forgetting a held claim from %s %s (request %llu): its connection closed",
		 p->req->actor, p->req->instance, (unsigned long long)p->req->req_id);
	return 1;
}

void
coord_park_drop_orphans(struct coord_park *pk, struct rpc_server *rpc)
{
	park_drop_if(pk, rpc, park_orphaned, NULL);
}

static int
park_any(struct rpc_server *rpc, const struct coord_pending *p, const void *arg)
{
	(void)rpc;
	(void)p;
	(void)arg;
	return 1;
}

void
coord_park_drop_all(struct coord_park *pk, struct rpc_server *rpc)
{
	park_drop_if(pk, rpc, park_any, NULL);
}

int
coord_park_sleep_ms(struct coord_park *pk, int64_t now_us, int64_t wall_ms, int64_t next_due,
		    int max_ms)
{
	struct coord_pending *p;
	int64_t wait_ms = max_ms, t;

	for (p = pk->head; p != NULL; p = p->next) {
		t = (p->deadline_us - now_us + 999) / 1000;
		if (t < wait_ms)
			wait_ms = t;
	}
	/* Only future activations: one that is already due and still not
	 * claimable is waiting for a decision, which wakes the claims. */
	pk->next_due = next_due;
	if (next_due != INT64_MAX && next_due - wall_ms < wait_ms)
		wait_ms = next_due - wall_ms;
	t = COORD_PARK_RETRY_MS - (now_us - pk->retried_us) / 1000;
	if (t < wait_ms)
		wait_ms = t;
	return wait_ms < 0 ? 0 : (int)wait_ms;
}

int
coord_park_retry_now(struct coord_park *pk, int wake, int64_t now_us, int64_t wall_ms)
{
	if (!wake && (pk->next_due == INT64_MAX || wall_ms < pk->next_due) &&
	    now_us - pk->retried_us < COORD_PARK_RETRY_MS * 1000)
		return 0;
	pk->retried_us = now_us;
	pk->next_due = INT64_MAX;
	return 1;
}

int
coord_park_expired(const struct coord_park *pk, int64_t now_us)
{
	const struct coord_pending *p;

	for (p = pk->head; p != NULL; p = p->next)
		if (p->deadline_us <= now_us)
			return 1;
	return 0;
}
