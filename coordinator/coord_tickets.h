#ifndef BERTH_COORD_TICKETS_H
#define BERTH_COORD_TICKETS_H
#include "coord_ctx.h"

/* The operator verbs on tickets (DESIGN §4). Handlers for the verb table
 * (coord_verbs.c). */

/* Schedules and timeouts are added to times, so they are bounded and no
 * sum overflows: 100 years, and the last millisecond of year 9999. */
#define COORD_TICKETS_MAX_DURATION_MS (100LL * 366 * 24 * 3600 * 1000)
#define COORD_TICKETS_MAX_TIME_MS     253402300799999LL

coord_handler_fn coord_tickets_add;
coord_handler_fn coord_tickets_add_batch;
coord_handler_fn coord_tickets_list;
coord_handler_fn coord_tickets_show;
coord_handler_fn coord_tickets_hold;
coord_handler_fn coord_tickets_release;
coord_handler_fn coord_tickets_retry;
coord_handler_fn coord_tickets_cancel;
coord_handler_fn coord_tickets_status;

/* For the verbs that change tickets (coord_edit.c). An id as the CLI sends
 * it (T3, an alias, a run id or a prefix of one, "last") to its ticket:
 * 1, 0 unknown or ambiguous (the error reply is set), -1 storage. */
int coord_tickets_resolve(struct coord_ctx *c, const char *id, int64_t *n);
/* Grants with ticket n as the payload (its runs too when asked): 0 or -1. */
int coord_tickets_reply(struct coord_ctx *c, int64_t n, int with_runs);

#endif
