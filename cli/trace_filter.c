/*
 * The filters of `berth trace`. They apply to every mode (timeline, JSON,
 * SVG, Mermaid, follow) and to both sources.
 *
 * An alias T3-r2 is resolved from the trace itself, not by asking the
 * coordinator, so it works while the coordinator is down: the runs of
 * ticket T3 in the order the trace first names them are attempts 1, 2, ...
 * Every claim creates one run and attempts are never reused (DECISIONS.md),
 * so this order is the attempt order as long as the trace reaches back to
 * the ticket's first claim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "ring.h"

static int
trace_alias_parse(const char *s, char *ticket, size_t n, unsigned *k)
{
	const char *r;
	char *end;
	unsigned long v;

	if (s == NULL || s[0] != 'T' || (r = strstr(s, "-r")) == NULL || r == s + 1)
		return -1;
	for (const char *p = s + 1; p < r; p++)
		if (*p < '0' || *p > '9')
			return -1;
	v = strtoul(r + 2, &end, 10);
	if (*end != '\0' || r[2] == '\0' || v == 0 || v > 64)
		return -1;
	if ((size_t)(r - s) >= n)
		return -1;
	memcpy(ticket, s, (size_t)(r - s));
	ticket[r - s] = '\0';
	*k = (unsigned)v;
	return 0;
}

void
trace_filter_init(struct trace_filter *f, const char *run, const char *ticket, const char *actor,
		  const char *verb)
{
	memset(f, 0, sizeof(*f));
	f->run = run != NULL && run[0] != '\0' ? run : NULL;
	f->ticket = ticket != NULL && ticket[0] != '\0' ? ticket : NULL;
	f->actor = actor != NULL && actor[0] != '\0' ? actor : NULL;
	f->verb = verb != NULL && verb[0] != '\0' ? verb : NULL;
	if (f->run != NULL &&
	    trace_alias_parse(f->run, f->alias_ticket, sizeof(f->alias_ticket), &f->alias_k) == -1)
		f->alias_k = 0;
}

void
trace_filter_see(struct trace_filter *f, const struct trace_ev *ev)
{
	unsigned i;

	if (f->alias_k == 0 || f->alias_run[0] != '\0' || ev->run[0] == '\0' ||
	    strcmp(ev->ticket, f->alias_ticket) != 0)
		return;
	/* Only full run ids count: a client may have sent the alias itself. */
	if (strchr(ev->run, '-') != NULL)
		return;
	for (i = 0; i < f->alias_seen; i++)
		if (strcmp(f->alias_runs[i], ev->run) == 0)
			return;
	if (f->alias_seen >= sizeof(f->alias_runs) / sizeof(f->alias_runs[0]))
		return;
	snprintf(f->alias_runs[f->alias_seen++], sizeof(f->alias_runs[0]), "%s", ev->run);
	if (f->alias_seen == f->alias_k)
		snprintf(f->alias_run, sizeof(f->alias_run), "%s", ev->run);
}

/* The verbs that change nothing (DECISIONS.md traces them as granted). */
static int
trace_read_only(const char *verb)
{
	static const char *ro[] = { "list", "show", "status", "scan", "seat_list", "seat_show" };
	size_t i;

	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		if (strcmp(verb, ro[i]) == 0)
			return 1;
	return 0;
}

int
trace_filter_routine(const struct trace_ev *ev)
{
	static const char *beats[] = { "renew", "heartbeat", "seat_heartbeat", "seat_reap" };
	static const char *echoes[] = {
		"claimed -spawn_ok-> spawned",
		"spawned -start_granted-> started",
		"exited -exit_granted-> checkpointed",
		"checkpointed -settled-> settled",
	};
	size_t i;

	/* An idle supervisor's claim waits (parked) for work: sent, then no
	 * decision for a while, then "nothing_due". */
	if (strcmp(ev->verb, "claim") == 0 &&
	    ((ev->ring && ev->kind == RING_SENT) ||
	     (strcmp(ev->decision, "denied") == 0 && strcmp(ev->reason, "nothing_due") == 0)))
		return 1;
	/* A supervisor's run moving along its happy path repeats what the
	 * decision beside it already said (start granted, then "started").
	 * The job ending ("-gone->") is news, and so is every other turn. */
	if (ev->ring && ev->kind == RING_STATE && strcmp(ev->from, "supervisor") == 0)
		for (i = 0; i < sizeof(echoes) / sizeof(echoes[0]); i++)
			if (strcmp(ev->text, echoes[i]) == 0)
				return 1;
	if (ev->ring && ev->kind != RING_REPLY)
		return 0;
	if (trace_read_only(ev->verb))
		return strcmp(ev->decision, "granted") == 0 ||
		       strcmp(ev->decision, "replayed") == 0;
	if (strcmp(ev->decision, "granted") != 0 && strcmp(ev->decision, "replayed") != 0)
		return 0;
	for (i = 0; i < sizeof(beats) / sizeof(beats[0]); i++)
		if (strcmp(ev->verb, beats[i]) == 0)
			return 1;
	return 0;
}

static int
trace_filter_actor_seen(const struct trace_filter *f, const char *actor)
{
	unsigned i;

	for (i = 0; i < f->nactors; i++)
		if (strcmp(f->actors[i], actor) == 0)
			return 1;
	return 0;
}

static int
trace_filter_pid_seen(const struct trace_filter *f, int32_t pid)
{
	unsigned i;

	for (i = 0; i < f->npids; i++)
		if (f->pids[i] == pid)
			return 1;
	return 0;
}

static int
trace_filter_match_ids(const struct trace_filter *f, const struct trace_ev *ev)
{
	if (f->run != NULL) {
		if (ev->run[0] == '\0')
			return 0;
		if (f->alias_k != 0) {
			/* A client naming the run by its alias matches too. */
			if (strcmp(ev->run, f->run) != 0 &&
			    (f->alias_run[0] == '\0' || strcmp(ev->run, f->alias_run) != 0))
				return 0;
		} else if (strncmp(ev->run, f->run, strlen(f->run)) != 0) {
			return 0;
		}
	}
	if (f->ticket != NULL && strcmp(ev->ticket, f->ticket) != 0)
		return 0;
	return 1;
}

int
trace_filter_match(struct trace_filter *f, const struct trace_ev *ev)
{
	if (f->no_reads && trace_read_only(ev->verb))
		return 0;
	if (f->quiet && trace_filter_routine(ev))
		return 0;
	if (f->actor != NULL && strcmp(ev->from, f->actor) != 0 &&
	    strncmp(ev->instance, f->actor, strlen(f->actor)) != 0)
		return 0;
	if (f->verb != NULL && strcmp(ev->verb, f->verb) != 0)
		return 0;
	if (!trace_filter_match_ids(f, ev)) {
		/* A record of a process, not of a run (a failpoint, a death)
		 * passes when that process worked on the run; a restart when
		 * the same actor did (the new process takes the work up). */
		int process =
			ev->ring && ev->run[0] == '\0' && ev->ticket[0] == '\0' && ev->pid > 0;

		if (!(process && (ev->kind == RING_FAILPOINT || ev->kind == TRACE_KIND_DEATH) &&
		      trace_filter_pid_seen(f, ev->pid)) &&
		    !(process && ev->kind == TRACE_KIND_START &&
		      trace_filter_actor_seen(f, ev->from)))
			return 0;
	}
	if (ev->pid > 0 && !trace_filter_pid_seen(f, ev->pid) &&
	    f->npids < sizeof(f->pids) / sizeof(f->pids[0]))
		f->pids[f->npids++] = ev->pid;
	if (ev->from[0] != '\0' && !trace_filter_actor_seen(f, ev->from) &&
	    f->nactors < sizeof(f->actors) / sizeof(f->actors[0]))
		snprintf(f->actors[f->nactors++], sizeof(f->actors[0]), "%s", ev->from);
	return 1;
}
