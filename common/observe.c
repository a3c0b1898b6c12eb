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
#include "observe.h"
#include "ring.h"

static struct board *observe_board;
static struct board_slot *observe_me;

/* A fired failpoint goes into the ring; for crash and exit(N) this is the
 * last thing the process writes, which is what a reader of a race needs. */
static void observe_failpoint(const char *name, const char *action)
{
	char text[80];

	snprintf(text, sizeof(text), "%s %s", name, action != NULL ? action : "");
	ring_global_emit(RING_FAILPOINT, NULL, NULL, NULL, NULL, NULL, 0, 0, text);
}

int observe_attach_ring(const char *home, const char *actor, const char *instance)
{
	if (ring_global_open(home, actor, instance) == -1) {
		log_warn("observe: no trace ring for %s; running without it", home);
		return -1;
	}
	fp_set_observer(observe_failpoint);
	return 0;
}

int observe_attach(const char *home, const char *actor, const char *instance)
{
	static int gc_done;
	int ring;

	/* Segments of removed homes are collected here, once per actor start,
	 * and not by the short-lived shim and CLI (see board_gc). */
	if (!gc_done) {
		gc_done = 1;
		board_gc();
	}
	ring = observe_attach_ring(home, actor, instance);
	if (observe_board == NULL)
		observe_board = board_open(home, 1);
	if (observe_board == NULL) {
		log_warn("observe: no status board for %s; running without it", home);
		return ring;
	}
	observe_me = board_attach(observe_board, actor, instance);
	if (observe_me == NULL)
		return ring;
	ring_global_emit(RING_NOTE, NULL, NULL, NULL, NULL, NULL, 0, 0, "attached");
	return 0;
}

void observe_beat(const char *state)
{
	board_beat(observe_me, state);
}

void observe_count(enum board_counter which)
{
	board_count(observe_me, which);
}

void observe_set_slots(uint32_t total, uint32_t used)
{
	board_set_slots(observe_me, total, used);
}

struct board_slot *observe_slot(void)
{
	return observe_me;
}

void observe_detach(const char *state)
{
	if (observe_me != NULL && state != NULL)
		board_beat(observe_me, state);
	observe_me = NULL;
	board_close(observe_board);
	observe_board = NULL;
	fp_set_observer(NULL);
	ring_global_close();
}
