#ifndef BERTH_COORD_WORKER_H
#define BERTH_COORD_WORKER_H
#include "coord_ctx.h"

/* The worker verbs (DESIGN §4): a job's word about its own run, with the
 * run's token. Handlers for the verb table (coord_verbs.c). */

coord_handler_fn coord_worker_heartbeat;
coord_handler_fn coord_worker_progress;
coord_handler_fn coord_worker_note;
coord_handler_fn coord_worker_should_stop;

#endif
