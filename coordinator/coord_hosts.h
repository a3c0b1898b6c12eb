#ifndef BERTH_COORD_HOSTS_H
#define BERTH_COORD_HOSTS_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_ctx.h"

/*
 * Hosts on one store (DESIGN §13, docs/MANY-HOSTS.md). Every coordinator
 * holds a lease for its host in the store, renewed on the store's clock
 * (berth_now_ms()), with an epoch. A host whose lease lapsed is declared
 * lost by another host's recovery (host_lost): its epoch moves on, and
 * every run it claimed before is fenced: denied every decision but lose,
 * which ends it lost (retried like orphaned). A host that comes back finds
 * its epoch moved on at its next renewal and takes the new one; its old
 * runs stay fenced. One host alone (sqlite, or one group on PostgreSQL)
 * holds its lease the same way and never loses it.
 */

/* The default TTL of a host's lease. */
#define COORD_HOST_TTL_MS 30000

/* Registers (at start) or renews this coordinator's host lease, in a
 * transaction of its own, when a third of its TTL has passed since the
 * last renewal (or always with force). 0, or -1 when the store could not
 * be reached (the lease is then not renewed; coord_hosts_claiming says
 * when that stops claims). */
int coord_hosts_tend(struct coord_db *db, int64_t mono_now, int force);
/* ms until the next renewal is due (for the loop's sleep). */
int64_t coord_hosts_due_in(struct coord_db *db, int64_t mono_now);
/* 1 when this host may claim: its lease was renewed within half its TTL.
 * 0 with the reason in why. */
int coord_hosts_claiming(struct coord_db *db, int64_t mono_now, char *why, size_t n);
/* Inside a claim's transaction: 1 this host's lease is live and its epoch
 * is the one it holds; 0 denied with the reason set; -1 on error. */
int coord_hosts_claim_guard(struct coord_ctx *c);
/* Every host's lease, as the verb hosts answers it, into *v and *n: 0, or
 * -1 on error. */
int coord_hosts_rows(struct coord_db *db, Berth__Host ***v, size_t *n);

/* The verbs: hosts (every host's lease and fenced runs), host_lost. */
int coord_hosts_list(struct coord_ctx *c);
int coord_hosts_lost(struct coord_ctx *c);

/* The SQL of "run r (an alias) is fenced": its host's epoch moved on
 * since it was claimed. */
#define COORD_HOSTS_FENCED_SQL(r) \
	"EXISTS (SELECT 1 FROM hosts h WHERE h.host = " r ".host AND h.epoch > " r ".epoch)"

#endif
