/*
 * One place where an actor joins the observation side: the board slot it
 * beats from its loop, the trace ring its client-side events go to, and the
 * failpoint observer. Nothing here may change what an actor decides, so
 * every failure is logged once and then ignored.
 */
#include <stdio.h>

#include "board.h"
#include "failpoint.h"
#include "log.h"
#include "obs.h"
#include "tring.h"

static struct board *obs_board;
static struct board_slot *obs_me;

/* A fired failpoint goes into the ring; for crash and exit(N) this is the
 * last thing the process writes, which is what a reader of a race needs. */
static void obs_failpoint(const char *name, const char *action)
{
	char text[80];

	snprintf(text, sizeof(text), "%s %s", name, action != NULL ? action : "");
	tring_global_emit(TRING_FAILPOINT, NULL, NULL, NULL, NULL, NULL, 0, 0, text);
}

int obs_attach_ring(const char *home, const char *actor, const char *instance)
{
	if (tring_global_open(home, actor, instance) == -1) {
		log_warn("obs: no trace ring for %s; running without it", home);
		return -1;
	}
	fp_set_observer(obs_failpoint);
	return 0;
}

int obs_attach(const char *home, const char *actor, const char *instance)
{
	static int gc_done;
	int ring;

	/* Segments of removed homes are collected here, once per actor start,
	 * and not by the short-lived shim and CLI (see board_gc). */
	if (!gc_done) {
		gc_done = 1;
		board_gc();
	}
	ring = obs_attach_ring(home, actor, instance);
	if (obs_board == NULL)
		obs_board = board_open(home, 1);
	if (obs_board == NULL) {
		log_warn("obs: no status board for %s; running without it", home);
		return ring;
	}
	obs_me = board_attach(obs_board, actor, instance);
	if (obs_me == NULL)
		return ring;
	tring_global_emit(TRING_NOTE, NULL, NULL, NULL, NULL, NULL, 0, 0, "attached");
	return 0;
}

void obs_beat(const char *state)
{
	board_beat(obs_me, state);
}

void obs_count(enum board_counter which)
{
	board_count(obs_me, which);
}

void obs_set_slots(uint32_t total, uint32_t used)
{
	board_set_slots(obs_me, total, used);
}

struct board_slot *obs_slot(void)
{
	return obs_me;
}

void obs_detach(const char *state)
{
	if (obs_me != NULL && state != NULL)
		board_beat(obs_me, state);
	obs_me = NULL;
	board_close(obs_board);
	obs_board = NULL;
	fp_set_observer(NULL);
	tring_global_close();
}
