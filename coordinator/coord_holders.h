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

/* One seat row, as arbitration and staleness read it. The names fit: the
 * seat verbs and tickets bound them. */
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
	int task; /* a task seat: takes part in no arbitration */
	/* The in-flight mark: when it was set (0: none), its TTL (0: the
	 * seat's) and the process making the transition (pid 0: none). */
	int64_t in_flight_ms;
	int64_t in_flight_ttl_ms;
	struct ident in_flight_ident;
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
/* 1 when h's in-flight mark is effective at now (satelle's
 * EffectiveInFlight): it is set, its process (when one was recorded) is
 * not gone, and it is no older than its TTL (the seat's TTL when it has
 * none). A mark that is not effective has healed: it blocks nothing and
 * its activity is not shown. Whether the holder itself is live is
 * coord_holders_stale's question. */
int coord_holders_in_flight(const struct coord_holder *h, int64_t now);
/*
 * The arbitration of a new holder of seat item against every other live
 * holder that is not a task: key first, then tree (DESIGN §8).
 *
 * Key: between a new holder and an explicit seat, or an explicit claimant
 * and any holder, DESIGN's rule as written: they coexist only when their
 * keys are equal and non-empty. A run (forrun) is a holder whose key is
 * its ticket's --key; two runs never meet here by key, since runs of one
 * key want one seat (the seat named by the key, which the caller judges
 * first) and runs of different keys coexist: between runs a key is the
 * name of a one-at-a-time lock, not an area. An empty key (a tree-only
 * run seat) takes no part in the key rule in either direction.
 *
 * Tree: two live holders never share a non-empty workdir.
 *
 * The verdict into *v, the holder into *holder; 0 or -1.
 */
int coord_holders_arbitrate(struct coord_db *db, int64_t now, const char *item, const char *key,
			    const char *workdir, int forrun, struct coord_holder *holder,
			    enum coord_verdict *v);
/* Seat item as a message, its staleness judged at now; NULL on error. */
Berth__Seat *coord_holders_msg(struct coord_db *db, const char *item, int64_t now);

/* A new holder. owner_ident, run_id, kind, state and in_flight_ident may
 * be NULL; run_id is set only for the seat a run takes. */
struct coord_holder_spec {
	const char *item;
	const char *key;
	const char *workdir;
	const char *owner;
	int64_t ttl_ms;
	const Berth__Ident *owner_ident;
	const char *run_id;
	const char *kind;
	const char *state;
	int task;
	int in_flight; /* set the in-flight mark at acquire */
	int64_t in_flight_ttl_ms;
	const Berth__Ident *in_flight_ident;
};
int coord_holders_insert(struct coord_db *db, int64_t now, const struct coord_holder_spec *s);
/* Sets item's in-flight mark at now (ttl 0: the seat's; id may be NULL):
 * 0 or -1. */
int coord_holders_mark(struct coord_db *db, const char *item, int64_t now, int64_t ttl,
		       const Berth__Ident *id);
/* Ends item's transition: drops its in-flight mark and the activity that
 * described it, and records state when it is not NULL. 0 or -1. */
int coord_holders_unmark(struct coord_db *db, const char *item, const char *state);
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
