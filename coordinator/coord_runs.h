#ifndef BERTH_COORD_RUNS_H
#define BERTH_COORD_RUNS_H
#include "coord_ctx.h"

/* The coordination verbs (DESIGN §4) and the actors' bookkeeping: the verbs
 * the supervisor, recovery and the reaper send about runs. Handlers for the
 * verb table (coord_verbs.c). */

coord_handler_fn coord_runs_start;
coord_handler_fn coord_runs_renew;
coord_handler_fn coord_runs_readopt;
coord_handler_fn coord_runs_record_exit;
coord_handler_fn coord_runs_abandon;
coord_handler_fn coord_runs_settle;
coord_handler_fn coord_runs_lose;
coord_handler_fn coord_runs_hello;
coord_handler_fn coord_runs_scan;
coord_handler_fn coord_runs_mark_stop;

#endif
