/*
 * berth slots, berth pause, berth resume: the group's runtime settings
 * (coord_settings.h). None of them touches a running job. The claim guard
 * reads them (coord_claim.c): a paused group claims nothing, and a
 * supervisor may fill the slots berth slots gave, which it learns from
 * every claim and renew reply. Both may make held claims eligible (more
 * slots, a resume), so they wake them.
 */
#include <stdio.h>

#include "coord_db.h"
#include "coord_group.h"
#include "coord_reply.h"
#include "coord_settings.h"

/* More would be a typo, not a machine (the launcher's --slots allows 1024). */
#define GROUP_MAX_SLOTS 1024

static int
group_reply(struct coord_ctx *c)
{
	Berth__GroupSettings *s = coord_settings_message(c->db);
	Berth__Granted *g;

	if (s == NULL)
		return -1;
	g = coord_reply_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_GROUP;
	g->group = s;
	c->wake = 1;
	return 0;
}

int
coord_group_slots(struct coord_ctx *c)
{
	const Berth__Slots *m = c->req->slots;

	if (m == NULL || !m->has_slots || m->slots > GROUP_MAX_SLOTS) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "slots must be from 1 to %d (0: the supervisors' own)",
				 GROUP_MAX_SLOTS);
		return 0;
	}
	if (coord_settings_set_slots(c->db, m->slots) < 0)
		return -1;
	return group_reply(c);
}

int
coord_group_pause(struct coord_ctx *c)
{
	if (coord_settings_set_paused(c->db, 1) < 0)
		return -1;
	return group_reply(c);
}

int
coord_group_resume(struct coord_ctx *c)
{
	if (coord_settings_set_paused(c->db, 0) < 0)
		return -1;
	return group_reply(c);
}
