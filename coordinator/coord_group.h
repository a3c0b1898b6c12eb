#ifndef BERTH_COORD_GROUP_H
#define BERTH_COORD_GROUP_H
#include "berth.pb-c.h"
#include "coord_ctx.h"

/* Runtime control of the group (docs/CLI.md): berth slots, berth pause,
 * berth resume. Operator verbs; what they set is coord_settings.h's, and
 * the claim guard and the supervisors follow it. */

coord_handler_fn coord_group_slots;
coord_handler_fn coord_group_pause;
coord_handler_fn coord_group_resume;

#endif
