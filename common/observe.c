/*
 * One place where an actor joins the observation side: the board slot it
 * beats from its loop, the trace ring its client-side events go to, and the
 * failpoint observer. Nothing here may change what an actor decides, so
 * every failure is logged once (by shm.c, where it happens) and then
 * ignored: the actor runs on without what it could not open.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "failpoint.h"
#include "log.h"
#include "observe.h"
#include "ring.h"

static struct board *observe_board;
static struct board_slot *observe_me;

/* A fired failpoint goes into the ring; for crash and exit(N) this is the
 * last thing the process writes, which is what a reader of a race needs. */
static void
observe_failpoint(const char *name, const char *action)
{
	char text[80];

	snprintf(text, sizeof(text), "%s %s", name, action != NULL ? action : "");
	ring_global_emit(RING_FAILPOINT, NULL, NULL, NULL, NULL, NULL, 0, 0, text);
}

/* The ring, made when missing (actors) or joined (clients). */
static int
observe_ring(const char *home, const char *actor, const char *instance, int create)
{
	/* Why not was logged by shm_attach (once, for a refused segment). */
	if (ring_global_open(home, actor, instance, create) == -1)
		return -1;
	fp_set_observer(observe_failpoint);
	return 0;
}

int
observe_attach_ring(const char *home, const char *actor, const char *instance)
{
	return observe_ring(home, actor, instance, 0);
}

/*
 * The board slot first, then the ring: once our slot is on the board, the
 * group's last actor leaving sees us and leaves both segments in place
 * (board_leave), so the ring we open next is the group's. A board removed
 * between our open and our slot is opened again (ESTALE).
 */
int
observe_attach(const char *home, const char *actor, const char *instance)
{
	int tries;

	for (tries = 0; tries < 3 && observe_me == NULL; tries++) {
		if (observe_board == NULL && (observe_board = board_open(home, 1)) == NULL)
			break;
		if ((observe_me = board_attach(observe_board, actor, instance)) == NULL &&
		    errno == ESTALE) {
			board_close(observe_board);
			observe_board = NULL;
			continue;
		}
		break;
	}
	if (observe_ring(home, actor, instance, 1) < 0 && observe_me == NULL)
		return -1;
	if (observe_me != NULL)
		ring_global_emit(RING_NOTE, NULL, NULL, NULL, NULL, NULL, 0, 0, "attached");
	return 0;
}

void
observe_beat(const char *state)
{
	board_beat(observe_me, state);
}

void
observe_count(enum board_counter which)
{
	board_count(observe_me, which);
}

void
observe_set_slots(uint32_t total, uint32_t used)
{
	board_set_slots(observe_me, total, used);
}

struct board_slot *
observe_slot(void)
{
	return observe_me;
}

void
observe_detach(const char *state)
{
	if (observe_me != NULL && state != NULL && strcmp(state, BOARD_STOPPED) == 0)
		board_leave(observe_board, observe_me, state);
	else if (observe_me != NULL && state != NULL)
		board_beat(observe_me, state);
	observe_me = NULL;
	board_close(observe_board);
	observe_board = NULL;
	fp_set_observer(NULL);
	ring_global_close();
}
