#ifndef BERTH_COORD_SETTINGS_H
#define BERTH_COORD_SETTINGS_H
#include <stdint.h>
#include "berth.pb-c.h"

/*
 * The group's runtime settings (docs/CLI.md "Runtime control"): the slots
 * `berth slots N` gave every supervisor and whether `berth pause` stopped
 * claiming. They live in the database, so a restart of any actor keeps
 * them, and last for one launch of the group: a coordinator started under
 * another launch (BERTH_LAUNCH_ID, which the launcher's monitor draws once)
 * starts from none, so the next `berth up` runs with its own options.
 * Bottom floor: the settings table and nothing else.
 */

struct coord_db;

struct coord_settings {
	int64_t slots; /* 0: each supervisor's own (its hello) */
	int paused;
};

/* The settings now: 0, or -1 on error. */
int coord_settings_get(struct coord_db *db, struct coord_settings *s);
/* Sets one (in the caller's transaction): 0 or -1. */
int coord_settings_set_slots(struct coord_db *db, int64_t slots);
int coord_settings_set_paused(struct coord_db *db, int paused);
/* At startup, in a transaction of its own: forgets the settings of
 * another launch when launch_id is not empty and not the one they were
 * made under. 1 forgotten, 0 kept, -1 error. */
int coord_settings_launch(struct coord_db *db, const char *launch_id);
/* The slots a supervisor that said hello with own may fill. */
int64_t coord_settings_slots_for(const struct coord_settings *s, int64_t own);
/* The same for the supervisor instance (its hello's slots; 0 when it said
 * none): 0 or -1. */
int coord_settings_slots_of(struct coord_db *db, const char *instance, int64_t *slots);

/* The settings as a message (status, and the replies of slots, pause and
 * resume), with the slots the last supervisor said at hello; NULL on
 * error. */
Berth__GroupSettings *coord_settings_message(struct coord_db *db);

#endif
