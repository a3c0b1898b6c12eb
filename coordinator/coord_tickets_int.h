#ifndef BERTH_COORD_TICKETS_INT_H
#define BERTH_COORD_TICKETS_INT_H
#include <stdint.h>
#include "berth.pb-c.h"

/* What coord_tickets.c, coord_ticket_list.c and coord_ticket_hold.c
 * share. Not for any other file. */

struct coord_db;

/* Ticket n as a message, its runs too when asked; NULL on error. */
Berth__Ticket *tickets_load(struct coord_db *db, int64_t n, int64_t now, int with_runs);

#endif
