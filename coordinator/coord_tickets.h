#ifndef BERTH_COORD_TICKETS_H
#define BERTH_COORD_TICKETS_H
#include "coord_ctx.h"

/* The operator verbs on tickets (DESIGN §4). Handlers for the verb table
 * (coord_verbs.c). */

coord_handler_fn coord_tickets_add;
coord_handler_fn coord_tickets_add_batch;
coord_handler_fn coord_tickets_list;
coord_handler_fn coord_tickets_show;
coord_handler_fn coord_tickets_hold;
coord_handler_fn coord_tickets_release;
coord_handler_fn coord_tickets_retry;
coord_handler_fn coord_tickets_cancel;
coord_handler_fn coord_tickets_status;

#endif
