#ifndef BERTH_COORD_HOLDERS_H
#define BERTH_COORD_HOLDERS_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_ctx.h"
#include "ident.h"

/* The holders of seats (DESIGN §8): the seats table's rows as arbitration
 * sees them, when a holder is stale, and the arbitration between holders,
 * for the seat verbs and the seats runs take (coord_seats.c). */

/* One seat row. The names fit: the seat verbs and tickets bound them. */
struct coord_holder {
	char item[COORD_SEAT_NAME_MAX + 1];
	char key[COORD_SEAT_NAME_MAX + 1];
	char workdir[COORD_SEAT_PATH_MAX + 1];
	char owner[COORD_SEAT_NAME_MAX + 1];
	int64_t acquired_ms;
	int64_t heartbeat_ms;
	int64_t ttl_ms;
	struct ident ident;
	char run_id[40];
};

/* Who keeps a seat from being taken: nobody, a live holder of its key, a
 * live holder of its working tree. */
enum coord_verdict { COORD_SEAT_FREE, COORD_SEAT_KEY, COORD_SEAT_TREE };

/* The seat item: 1 into h, 0 none, -1 error. */
int coord_holders_get(struct coord_db *db, const char *item, struct coord_holder *h);
/* Every seat, by item (malloc'd array): 0 or -1. */
int coord_holders_all(struct coord_db *db, struct coord_holder **out, size_t *n);
/* 1 stale, 0 live, -1 error. A run's seat lives exactly as long as the run
 * is unsettled; an explicit seat dies by its TTL or its owner process (an
 * owner that cannot be verified counts as alive). */
int coord_holders_stale(struct coord_db *db, const struct coord_holder *h, int64_t now);
/* The arbitration against every other live holder of seat item: key
 * first, then tree. For an explicit seat the key rule is the literal one,
 * except that a run's seat conflicts only with holders of its own key; for
 * a run (forrun) the key is exclusive: any other live holder of it refuses
 * it. The verdict into *v, the holder into *holder; 0 or -1. */
int coord_holders_arbitrate(struct coord_db *db, int64_t now, const char *item, const char *key,
			    const char *workdir, int forrun, struct coord_holder *holder,
			    enum coord_verdict *v);
/* Seat item as a message, its staleness judged at now; NULL on error. */
Berth__Seat *coord_holders_msg(struct coord_db *db, const char *item, int64_t now);
/* A new holder (owner_ident may be NULL; run_id NULL for an explicit
 * seat): 0 or -1. */
int coord_holders_insert(struct coord_db *db, int64_t now, const char *item, const char *key,
			 const char *workdir, const char *owner, int64_t ttl,
			 const Berth__Ident *owner_ident, const char *run_id);
int coord_holders_delete(struct coord_db *db, const char *item);

/* The seat a ticket's runs take: its --key K takes seat K; with only a
 * named --workdir, a tree-only seat "run:<run id>" with an empty key. */
struct coord_seat_need {
	char item[COORD_SEAT_PATH_MAX + 8];
	char key[COORD_SEAT_NAME_MAX + 1];
	char workdir[COORD_SEAT_PATH_MAX + 1];
};
/* Ticket n's seat for run_id (NULL: not yet known): 1 into need, 0 it
 * takes none, -1 error. */
int coord_holders_need(struct coord_db *db, int64_t n, const char *run_id,
		       struct coord_seat_need *need);
/* Whether need can be met at now: 0 free (*steal: its own seat is held by
 * a stale holder, to be replaced), 1 taken by *holder (verdict *v), -1
 * error. The ticket's own named seat is judged first: a live holder of it
 * is a key conflict. */
int coord_holders_check(struct coord_db *db, const struct coord_seat_need *need, int64_t now,
			struct coord_holder *holder, enum coord_verdict *v, int *steal);

#endif
