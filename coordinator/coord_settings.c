/* The group's runtime settings: see coord_settings.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_settings.h"
#include "log.h"

static const char q_get[] = "SELECT value FROM settings WHERE key = ?";
static const char q_set[] = "INSERT INTO settings (key, value) VALUES (?, ?)"
			    " ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/* A setting is its host's (DESIGN §13): berth slots, pause and the launch
 * they last for are one host's group's, so on a shared store one host's
 * pause or new launch leaves the others' alone. Keys "slots/<host>"; a
 * coordinator with no host (in-process tests) keeps the bare name. */
static const char *
settings_key(struct coord_db *db, const char *name, char *buf, size_t n)
{
	const char *host = coord_db_host(db)->id;

	if (host[0] == '\0')
		return name;
	snprintf(buf, n, "%s/%s", name, host);
	return buf;
}

static int
settings_int(struct coord_db *db, const char *name, int64_t *v)
{
	char key[96];
	struct coord_st *st;
	int rc;

	*v = 0;
	if ((st = coord_db_q(db, q_get, "t", settings_key(db, name, key, sizeof key))) == NULL)
		return -1;
	if ((rc = coord_db_step(db, st)) == 1)
		*v = strtoll(coord_db_coltext(st, 0), NULL, 10);
	coord_db_done(st);
	return rc < 0 ? -1 : 0;
}

static int
settings_put(struct coord_db *db, const char *name, int64_t v)
{
	char buf[24], key[96];

	snprintf(buf, sizeof buf, "%lld", (long long)v);
	return coord_db_exec(db, q_set, "tt", settings_key(db, name, key, sizeof key), buf) == 1
		       ? 0
		       : -1;
}

int
coord_settings_get(struct coord_db *db, struct coord_settings *s)
{
	int64_t paused;

	if (settings_int(db, "slots", &s->slots) < 0 || settings_int(db, "paused", &paused) < 0)
		return -1;
	s->paused = paused != 0;
	return 0;
}

int
coord_settings_set_slots(struct coord_db *db, int64_t slots)
{
	return settings_put(db, "slots", slots);
}

int
coord_settings_set_paused(struct coord_db *db, int paused)
{
	return settings_put(db, "paused", paused != 0);
}

int64_t
coord_settings_slots_for(const struct coord_settings *s, int64_t own)
{
	return s->slots > 0 ? s->slots : own;
}

int
coord_settings_launch(struct coord_db *db, const char *launch_id)
{
	static const char q_begin[] = "BEGIN IMMEDIATE";
	static const char q_commit[] = "COMMIT";
	static const char q_clear[] = "DELETE FROM settings WHERE key IN (?, ?)";
	struct coord_st *st;
	char was[64] = "", kbuf[96], k_slots[96], k_paused[96];
	const char *k_launch;
	int rc, forgot = 0;

	if (launch_id == NULL || launch_id[0] == '\0')
		return 0;
	if (coord_db_exec(db, q_begin, "") < 0)
		return -1;
	k_launch = settings_key(db, "launch_id", kbuf, sizeof kbuf);
	if ((st = coord_db_q(db, q_get, "t", k_launch)) == NULL)
		goto fail;
	if ((rc = coord_db_step(db, st)) == 1)
		snprintf(was, sizeof was, "%s", coord_db_coltext(st, 0));
	coord_db_done(st);
	if (rc < 0)
		goto fail;
	if (strcmp(was, launch_id) != 0) {
		if (coord_db_exec(db, q_clear, "tt",
				  settings_key(db, "slots", k_slots, sizeof k_slots),
				  settings_key(db, "paused", k_paused, sizeof k_paused)) < 0 ||
		    coord_db_exec(db, q_set, "tt", k_launch, launch_id) != 1)
			goto fail;
		forgot = 1;
	}
	if (coord_db_exec(db, q_commit, "") < 0)
		goto fail;
	if (forgot && was[0] != '\0')
		log_info("a new launch (%s): berth slots and berth pause of the last one forgotten",
			 launch_id);
	return forgot;
fail:
	coord_db_rollback(db);
	return -1;
}

int
coord_settings_slots_of(struct coord_db *db, const char *instance, int64_t *slots)
{
	static const char q_own[] = "SELECT slots FROM actors WHERE instance = ?";
	struct coord_settings s;
	int64_t own = 0;

	if (coord_settings_get(db, &s) < 0 ||
	    coord_db_int(db, &own, q_own, "t", instance ? instance : "") < 0)
		return -1;
	*slots = coord_settings_slots_for(&s, own);
	return 0;
}

Berth__GroupSettings *
coord_settings_message(struct coord_db *db)
{
	static const char q_own[] =
		"SELECT slots FROM actors WHERE actor = 'supervisor' ORDER BY seen_ms DESC LIMIT 1";
	Berth__GroupSettings *g;
	struct coord_settings s;
	int64_t own = 0;

	if (coord_settings_get(db, &s) < 0 || coord_db_int(db, &own, q_own, "") < 0)
		return NULL;
	g = coord_mem_alloc(sizeof *g);
	berth__group_settings__init(g);
	g->has_slots = g->has_paused = g->has_supervisor_slots = 1;
	g->slots = (uint32_t)s.slots;
	g->paused = s.paused;
	g->supervisor_slots = (uint32_t)own;
	return g;
}
