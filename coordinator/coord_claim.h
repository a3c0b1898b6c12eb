#ifndef BERTH_COORD_CLAIM_H
#define BERTH_COORD_CLAIM_H
#include "coord_ctx.h"

/* claim (DESIGN §4): the handler for the verb table (coord_verbs.c). A
 * claim for the next ticket that finds nothing due decides nothing
 * (c->decided_nothing), so it may be held and executed again. */
coord_handler_fn coord_claim;

#endif
