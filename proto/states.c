/* berth's vocabulary: see states.h. The arrays are indexed by the enums, so
 * a name and its value cannot drift apart. */
#include <string.h>

#include "states.h"

static const char *const run_names[RUN_NSTATES] = {
	[RUN_CLAIMED] = "claimed",     [RUN_RUNNING] = "running",   [RUN_AFTERCARE] = "aftercare",
	[RUN_SUCCEEDED] = "succeeded", [RUN_FAILED] = "failed",     [RUN_TIMED_OUT] = "timed_out",
	[RUN_CANCELLED] = "cancelled", [RUN_ORPHANED] = "orphaned", [RUN_ABORTED] = "aborted",
	[RUN_LOST] = "lost",
};

static const char *const ticket_names[TICKET_NSTATES] = {
	[TICKET_READY] = "ready",
	[TICKET_HELD] = "held",
	[TICKET_CLAIMED] = "claimed",
	[TICKET_SUCCEEDED] = "succeeded",
	[TICKET_FAILED] = "failed",
	[TICKET_CANCELLED] = "cancelled",
	[TICKET_DEPENDENCY_FAILED] = "dependency_failed",
};

static const char *const stop_names[STOP_NREASONS] = {
	[STOP_NONE] = "",
	[STOP_CANCEL] = "cancel",
	[STOP_TIMEOUT] = "timeout",
};

static int
names_find(const char *const *names, int n, const char *name)
{
	int i;

	if (name == NULL || name[0] == '\0')
		return -1;
	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *
run_state_name(enum run_state s)
{
	return s >= 0 && s < RUN_NSTATES ? run_names[s] : "absent";
}

enum run_state
run_state_parse(const char *name)
{
	return (enum run_state)names_find(run_names, RUN_NSTATES, name);
}

int
run_state_terminal(enum run_state s)
{
	return s >= RUN_SUCCEEDED && s < RUN_NSTATES;
}

int
run_state_live(enum run_state s)
{
	return s >= RUN_CLAIMED && s <= RUN_AFTERCARE;
}

const char ticket_blocked_name[] = "blocked";

const char *
ticket_state_name(enum ticket_state s)
{
	return s >= 0 && s < TICKET_NSTATES ? ticket_names[s] : "absent";
}

enum ticket_state
ticket_state_parse(const char *name)
{
	return (enum ticket_state)names_find(ticket_names, TICKET_NSTATES, name);
}

int
ticket_state_final(enum ticket_state s)
{
	return s == TICKET_SUCCEEDED || s == TICKET_FAILED || s == TICKET_CANCELLED ||
	       s == TICKET_DEPENDENCY_FAILED;
}

const char *
stop_reason_name(enum stop_reason r)
{
	return r > STOP_NONE && r < STOP_NREASONS ? stop_names[r] : "";
}

enum stop_reason
stop_reason_parse(const char *name)
{
	int i = names_find(stop_names + 1, STOP_NREASONS - 1, name);

	return i < 0 ? STOP_NONE : (enum stop_reason)(i + 1);
}

enum run_state
run_outcome(const struct run_end *e)
{
	if (e->stop == STOP_CANCEL)
		return RUN_CANCELLED;
	if (e->stop == STOP_TIMEOUT)
		return RUN_TIMED_OUT;
	if (e->state == RUN_CLAIMED)
		return RUN_ABORTED;
	if (!e->has_record)
		return RUN_ORPHANED;
	if (e->has_code && e->code == 0 && !e->has_signal)
		return RUN_SUCCEEDED;
	return RUN_FAILED;
}
