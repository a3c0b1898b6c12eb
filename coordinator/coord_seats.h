#ifndef BERTH_COORD_SEATS_H
#define BERTH_COORD_SEATS_H
#include <stddef.h>
#include <stdint.h>
#include "coord_ctx.h"

/* Seats (DESIGN §8): the seat verbs, and the seats runs take inside their
 * claim. */

coord_handler_fn coord_seats_acquire;
coord_handler_fn coord_seats_release;
coord_handler_fn coord_seats_force_release;
coord_handler_fn coord_seats_heartbeat;
coord_handler_fn coord_seats_stop;
coord_handler_fn coord_seats_activity;
coord_handler_fn coord_seats_list;
coord_handler_fn coord_seats_show;
coord_handler_fn coord_seats_reap;
coord_handler_fn coord_seats_confirm;
coord_handler_fn coord_seats_clear;

/* Inside a claim: takes the seat(s) ticket n needs for run_id. 0 taken (or
 * none needed; with dry, only checked), 1 denied (reply set), -1 error. */
int coord_seats_take(struct coord_ctx *c, int64_t n, const char *run_id, int dry);
/* Releases the seat a run holds (settle, abandon). */
int coord_seats_release_run(struct coord_db *db, const char *run_id);
/* The live holder that keeps ticket n from taking its seat, as text for
 * Ticket.waiting; 0 none, 1 text written, -1 error. */
int coord_seats_waiting(struct coord_db *db, int64_t n, int64_t now, char *buf, size_t len);
/* The first moment after now at which an explicit seat's TTL lapses, or
 * INT64_MAX: a ticket waiting for that seat may run then. */
int64_t coord_seats_next_lapse(struct coord_db *db, int64_t now);

#endif
