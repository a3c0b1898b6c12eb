/*
 * The reaper's rule table (DESIGN §7, docs/RECOVERY.md).
 *
 * The reaper ends what should stop existing. It only ever signals the
 * processes of a run whose shim still matches by identity (the signal
 * itself is checked again, process by process, by ident_session_kill at the
 * moment it is sent): a reused pid belongs to a stranger. It never settles a run that may have executed;
 * whoever checkpoints the exit settles it, and the coordinator derives the
 * outcome (cancelled, timed_out) from the stop request recorded here.
 */
#include "reap_decide.h"

static enum reap_action
decide_settled(const struct reap_facts *f, const struct reap_params *p)
{
	/* A settled run's shim still alive after a grace period outlived the
	 * settlement: it normally ends the job's descendants itself and exits
	 * right after writing the exit record (one that could not write it
	 * stays, trying again, after its status reached the supervisor). */
	if (f->has_shim && f->shim == IDENT_MATCHES && p->now_ms - f->settled_ms >= p->grace_ms)
		return REAP_STRAGGLER;
	if (f->data_present && f->settled_ms > 0 && f->settled_ms < p->now_ms - p->retention_ms)
		return REAP_REMOVE_DATA;
	return REAP_NONE;
}

enum reap_action
reap_decide(const struct reap_facts *f, const struct reap_params *p)
{
	if (f->settled)
		return decide_settled(f, p);

	/* A claimed run has no job yet. A stop request on it is settled
	 * directly, once its owner had a grace period to start it (a start
	 * racing this settle is denied and the shim killed). */
	if (f->claimed) {
		if (f->stop_requested && p->now_ms - f->claimed_ms >= p->grace_ms)
			return REAP_SETTLE_STOPPED;
		return REAP_NONE;
	}
	if (!f->running)
		return REAP_NONE; /* aftercare: the job has ended already */

	/* A timeout is marked only while the job's group lives: a job that
	 * already ended keeps the outcome its exit record gives it, even if
	 * nobody has checkpointed that exit yet. */
	if (!f->stop_requested) {
		if (f->timeout_ms > 0 && f->started_ms > 0 &&
		    f->started_ms + f->timeout_ms < p->now_ms && f->has_shim &&
		    f->shim == IDENT_MATCHES)
			return REAP_MARK_TIMEOUT;
		return REAP_NONE;
	}
	/* A stop is requested. Only a leader that matches is signalled: a
	 * gone one leaves nothing we may signal (recovery settles the run),
	 * an unverifiable one might be a stranger. */
	if (!f->has_shim || f->shim != IDENT_MATCHES)
		return REAP_NONE;
	if (f->term_sent_ms == 0)
		return REAP_TERM;
	if (p->now_ms - f->term_sent_ms >= p->grace_ms && f->job_alive)
		return REAP_KILL;
	return REAP_NONE;
}

const char *
reap_action_name(enum reap_action a)
{
	switch (a) {
	case REAP_NONE: return "none";
	case REAP_SETTLE_STOPPED: return "settle_stopped";
	case REAP_MARK_TIMEOUT: return "mark_timeout";
	case REAP_TERM: return "term";
	case REAP_KILL: return "kill";
	case REAP_STRAGGLER: return "straggler";
	case REAP_REMOVE_DATA: return "remove_data";
	}
	return "?";
}
