#ifndef BERTH_COORD_EDIT_H
#define BERTH_COORD_EDIT_H
#include "coord_ctx.h"

/* Changing and removing tickets (docs/CLI.md): berth edit changes a queued
 * ticket in place; berth remove and berth clean delete finished tickets
 * with every row of theirs. Operator verbs for the verb table. */

coord_handler_fn coord_edit_ticket;
coord_handler_fn coord_edit_remove;
coord_handler_fn coord_edit_clean;

#endif
