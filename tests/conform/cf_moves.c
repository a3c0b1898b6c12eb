/*
 * A decision judged against the tables the coordinator applies (cf.h):
 * who sent it, as the verb table and a move's who column see it; a
 * granted or denied run move against run_moves.def; the other mutations
 * (a claim, a lease, a stop, an add, a remove) against the replay's runs
 * and tickets.
 */
#include <inttypes.h>
#include <string.h>

#include "cf.h"
#include "coord_caller.h"
#include "vec.h"

/* ------------------------------------------------------------ who asks */

void
cf_who_of(const struct trace_ev *ev, struct cf_who *w)
{
	unsigned named = coord_role_of(ev->from);

	memset(w, 0, sizeof *w);
	if (strcmp(ev->caller, "operator") == 0) {
		w->known = 1;
		w->cls = CALLER_OPERATOR;
	} else if (strcmp(ev->caller, "worker") == 0) {
		w->known = 1;
		w->cls = CALLER_WORKER;
	} else if (strcmp(ev->caller, "coordinator") == 0 || strcmp(ev->caller, "harness") == 0) {
		w->known = 1;
		w->cls = CALLER_ACTOR;
		w->roles = named != 0 ? named : ROLE_ANY;
	} else if (coord_role_of(ev->caller) != 0) {
		w->known = 1;
		w->cls = CALLER_ACTOR;
		w->roles = coord_role_of(ev->caller);
		w->verified = 1;
	} else {
		w->cls = named != 0 ? CALLER_ACTOR : 0;
		w->roles = named;
	}
}

/* A granted decision's sender is one the verb table lets send the verb
 * (coord_exec.c's exec_permitted): 1 yes, 0 no. */
int
cf_permitted(const struct cf_who *w, const struct trace_ev *ev, const struct coord_verb *v)
{
	unsigned named = coord_role_of(ev->from);

	if (!w->known)
		return 1;
	if ((v->callers & w->cls) == 0)
		return 0;
	if (w->cls != CALLER_ACTOR)
		return 1;
	if (w->verified)
		return (v->roles & w->roles) != 0 && named == w->roles;
	return named == 0 || (v->roles & named) != 0;
}

/* Whether w may make move m of run r, as coord_runs.c's runs_who judges
 * it: 1 yes, 0 no, -1 the trace cannot tell (an owner it does not name;
 * recovery and an aftercare whose owner may or may not be gone). */
static int
cf_may(const struct cf_who *w, const char *instance, const struct coord_move *m,
       const struct cf_run *r)
{
	int unsure = 0;

	if (w->roles == ROLE_ANY)
		return 1;
	if ((m->who & MOVE_WHO_OWNER) && (w->roles & ROLE_SUPERVISOR)) {
		if (r->owner[0] == '\0')
			unsure = 1;
		else if (strcmp(instance, r->owner) == 0)
			return 1;
	}
	if ((m->who & MOVE_WHO_RECOVERY) && (w->roles & ROLE_RECOVERY))
		return 1;
	if ((m->who & MOVE_WHO_STOP_REAPER) && (w->roles & ROLE_REAPER) && r->stop)
		return 1;
	if ((m->who & MOVE_WHO_CHECKPOINTER) && r->checkpointer[0] != '\0' &&
	    strcmp(instance, r->checkpointer) == 0)
		return 1;
	if ((m->who & MOVE_WHO_HEIR) && (w->roles & ROLE_RECOVERY))
		unsure = 1;
	return unsure ? -1 : 0;
}

/* The host that claimed r, for a report. */
static const char *
cf_run_host(const struct cf *cf, const struct cf_run *r)
{
	return r != NULL && r->host != 0 ? cf->hosts[r->host - 1].id : "unknown";
}

/* A supervisor acting on its own run (an owner-only grant, renew, its own
 * readopt) names the owner: checked when it is known, learnt when a
 * hand-over left it unknown. */
static void
cf_owner_is(struct cf *cf, const struct trace_ev *ev, struct cf_run *r, const char *why)
{
	if (r->owner[0] == '\0')
		snprintf(r->owner, sizeof r->owner, "%s", ev->instance);
	else if (strcmp(r->owner, ev->instance) != 0)
		cf_bad(cf, ev, "%s, but the run's owner is %s", why, r->owner);
}

/* ------------------------------------------------------------ the table */

/* The replay treats every terminal state alike (CF_SETTLED stands for any
 * of them): true while run_moves.def says "these are nonterminal states",
 * checked here rather than assumed. 0, or -1 with the line named. */
int
cf_table_ok(void)
{
	const struct coord_move *m;
	enum run_state s;
	size_t i;

	for (i = 0; (m = coord_moves_row(i)) != NULL; i++)
		for (s = RUN_CLAIMED; s < RUN_NSTATES; s++)
			if (run_state_terminal(s) && coord_moves_allows(m, s)) {
				fprintf(stderr,
					"berth-conform: run_moves.def line %zu leaves the terminal "
					"state %s; the checker assumes no move does\n",
					i + 1, run_state_name(s));
				return -1;
			}
	return 0;
}

const struct coord_verb *
cf_verb(const char *name)
{
	const struct coord_verb *v;
	size_t i;

	for (i = 0; (v = coord_verb_row(i)) != NULL; i++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

/* "claimed|running" for m's from states. */
static void
cf_states(const struct coord_move *m, char *buf, size_t n)
{
	enum run_state s;
	size_t len = 0;

	buf[0] = '\0';
	for (s = RUN_CLAIMED; s < RUN_NSTATES && len < n; s++)
		if (coord_moves_allows(m, s))
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "|" : "",
						run_state_name(s));
}

/* ------------------------------------------------------------ moves */

/* The two answers coord_runs.c gives instead of the table (run_moves.def's
 * header): a settle of a settled run is granted, nothing applied (of a run
 * that does not exist, the error not_found), and an abandon of an aborted
 * run is granted, nothing done. 1 when the handler answers for state s. */
static int
cf_handler_answers(Berth__Request__VerbCase verb, enum run_state s)
{
	const struct coord_move *m = coord_moves_find(verb, RUN_ABSENT);

	/* And a FENCE move of a run already in its to state (a lose of a
	 * lost run): granted, nothing done (coord_runs.c's coord_runs_lose). */
	if (m != NULL && m->fence)
		return s == m->to;
	if (verb == BERTH__REQUEST__VERB_SETTLE)
		return s == RUN_ABSENT || s == CF_SETTLED || run_state_terminal(s);
	if (verb == BERTH__REQUEST__VERB_ABANDON)
		return s == RUN_ABORTED;
	return 0;
}

static void
cf_move_granted(struct cf *cf, const struct trace_ev *ev, const struct cf_who *w,
		const struct coord_verb *v, struct cf_run *r, int64_t now)
{
	const struct coord_move *m;
	enum run_state s, to;
	char from[128];
	int may;

	if (r == NULL) {
		cf_bad(cf, ev, "granted for a run no traced claim created");
		return;
	}
	s = r->state;
	if (cf_handler_answers(v->verb, s)) {
		if (s == RUN_ABSENT)
			cf_bad(cf, ev, "a settle of a run that does not exist is an error");
		return; /* idempotent: nothing applied */
	}
	if (v->verb == BERTH__REQUEST__VERB_ABANDON && s == CF_SETTLED) {
		/* Granted only if the settle made it aborted. */
		if (r->aborted_if < 0)
			cf_bad(cf, ev, "granted on a settled run already found not aborted");
		r->aborted_if = 1;
		return;
	}
	m = coord_moves_find(v->verb, s);
	if (cf_live(s) && cf_fenced(cf, r) != m->fence) {
		/* run_moves.def's FENCE lines: the one move of a fenced run,
		 * and only of one. The replay goes on from the grant. */
		if (m->fence)
			cf_bad(cf, ev,
			       "a FENCE move granted of a run that is not fenced (no host_lost "
			       "named its host %s since its claim)",
			       cf_run_host(cf, r));
		else
			cf_bad(cf, ev,
			       "granted of a run fenced by the loss of its host %s: every move "
			       "of it but a FENCE move is denied host_lost",
			       cf_run_host(cf, r));
	} else if (!coord_moves_allows(m, s)) {
		cf_states(m, from, sizeof from);
		cf_bad(cf, ev, "granted in state %s; run_moves.def makes %s only from %s",
		       cf_state_name(s), ev->verb, from);
		/* The replay goes on from what the coordinator did (the
		 * database has it), so one wrong grant is one report. */
	} else if ((may = cf_may(w, ev->instance, m, r)) == 0)
		cf_bad(cf, ev,
		       "granted to a caller run_moves.def does not let make it (owner %s%s%s)",
		       r->owner[0] ? r->owner : "unknown", r->checkpointer[0] ? ", aftercare " : "",
		       r->checkpointer);
	else if (may < 0 && (m->who & MOVE_WHO_OWNER) && w->roles == ROLE_SUPERVISOR)
		cf_owner_is(cf, ev, r, "an owner's move");
	cf->st->moves++;
	to = m->to == COORD_MOVE_OUTCOME ? CF_SETTLED : m->to;
	switch (v->verb) {
	case BERTH__REQUEST__VERB_START:
		r->started = 1;
		r->started_ms = now;
		break;
	case BERTH__REQUEST__VERB_RECORD_EXIT:
		r->exited = 1;
		snprintf(r->checkpointer, sizeof r->checkpointer, "%s", ev->instance);
		break;
	default: break;
	}
	if (cf_live(to))
		r->state = to;
	else
		cf_end(cf, r, to, now);
}

void
cf_move_denied(struct cf *cf, const struct trace_ev *ev, const struct cf_who *w,
	       const struct coord_verb *v, struct cf_run *r)
{
	enum run_state s = r != NULL ? r->state : RUN_ABSENT;
	const struct coord_move *m;
	char from[128];

	if (strcmp(ev->reason, "not_permitted") == 0)
		return; /* refused before the table was asked */
	cf->st->denials++;
	if (cf_handler_answers(v->verb, s)) {
		cf_bad(cf, ev, "denied in state %s, where the handler grants it (or errs)",
		       cf_state_name(s));
		return;
	}
	if (v->verb == BERTH__REQUEST__VERB_ABANDON && s == CF_SETTLED) {
		if (r->aborted_if > 0)
			cf_bad(cf, ev, "denied on a run an earlier abandon found aborted");
		r->aborted_if = -1;
	}
	m = coord_moves_find(v->verb, s);
	/* The fence comes first (coord_runs.c's runs_move): a fenced or
	 * lost run's other moves are denied host_lost, a FENCE move of a
	 * live run that is not fenced host_not_lost. */
	if (!m->fence && (s == RUN_LOST || (r != NULL && cf_fenced(cf, r)))) {
		if (strcmp(ev->reason, "host_lost") != 0)
			cf_bad(cf, ev, "the run is %s by the loss of its host %s: denied host_lost",
			       s == RUN_LOST ? "lost" : "fenced", cf_run_host(cf, r));
		return;
	}
	if (m->fence && r != NULL && cf_live(s) && !cf_fenced(cf, r)) {
		if (strcmp(ev->reason, "host_not_lost") != 0)
			cf_bad(cf, ev,
			       "a FENCE move of a run that is not fenced (host %s): denied "
			       "host_not_lost",
			       cf_run_host(cf, r));
		return;
	}
	if (!coord_moves_allows(m, s)) {
		if (strcmp(ev->reason, m->denial) != 0)
			cf_bad(cf, ev, "in state %s run_moves.def denies %s with %s",
			       cf_state_name(s), ev->verb, m->denial);
		return;
	}
	if (strcmp(ev->reason, m->who_denial) != 0) {
		cf_states(m, from, sizeof from);
		cf_bad(cf, ev, "state %s is one %s moves from (%s): the only denial is %s",
		       cf_state_name(s), ev->verb, from, m->who_denial);
	} else if (cf_may(w, ev->instance, m, r) == 1) {
		cf_bad(cf, ev, "denied to a caller run_moves.def lets make the move (owner %s%s%s)",
		       r->owner[0] ? r->owner : "unknown", r->checkpointer[0] ? ", aftercare " : "",
		       r->checkpointer);
	}
}

/* ------------------------------------------------------------ other verbs */

static void
cf_claim(struct cf *cf, const struct trace_ev *ev, int64_t now)
{
	struct cf_ticket *t = cf_ticket_of(cf, ev->ticket, 1);
	struct cf_run *r;

	if (ev->run[0] == '\0' || t == NULL) {
		cf_bad(cf, ev, "a granted claim names no run or no ticket");
		return;
	}
	if (cf_run(cf, ev->run) != NULL) {
		cf_bad(cf, ev, "granted for a run id an earlier claim created");
		return;
	}
	if (!t->added && !cf->batches)
		cf_bad(cf, ev, "the trace never added this ticket");
	if (t->live != 0)
		cf_bad(cf, ev, "the ticket's run %s is not settled yet", cf->runs[t->live - 1].id);
	if (vec_grow(&cf->runs, &cf->caprun, cf->nruns + 1, sizeof *cf->runs) != 0 ||
	    cf_map_put(&cf->run_ix, ev->run, cf->nruns) != 0) {
		cf->oom = 1;
		return;
	}
	r = &cf->runs[cf->nruns];
	memset(r, 0, sizeof *r);
	snprintf(r->id, sizeof r->id, "%s", ev->run);
	r->ticket = t->n;
	r->attempt = ++t->claims;
	/* A claim creates the run claimed (coord_claim.c). */
	r->state = RUN_CLAIMED;
	snprintf(r->owner, sizeof r->owner, "%s", ev->instance);
	r->claimed_ms = now;
	r->started_ms = r->settled_ms = -1;
	/* The global trace: its host's, fenced by that host's next loss. */
	r->host = cf->host;
	r->gen = cf->host != 0 ? cf->hosts[cf->host - 1].lost : 0;
	t->live = ++cf->nruns;
	t->removable = 0;
	cf->st->moves++;
}

/* A granted decision about run r that only a live run gets: a lease
 * renewed or readopted, a stop marked, a worker's word (coord_worker.c
 * authenticates only an unsettled run). */
static int
cf_must_live(struct cf *cf, const struct trace_ev *ev, const struct cf_run *r)
{
	if (r == NULL)
		cf_bad(cf, ev, "granted for a run no traced claim created");
	else if (!cf_live(r->state))
		cf_bad(cf, ev, "granted for a run that is %s", cf_state_name(r->state));
	else if (cf_fenced(cf, r))
		cf_bad(cf, ev,
		       "granted for a run fenced by the loss of its host %s: every decision "
		       "about it but lose is denied",
		       cf_run_host(cf, r));
	else
		return 1;
	return 0;
}

void
cf_granted(struct cf *cf, const struct trace_ev *ev, const struct cf_who *w,
	   const struct coord_verb *v, int64_t now)
{
	struct cf_run *r = cf_run(cf, ev->run);
	struct cf_ticket *t;

	if (!cf_permitted(w, ev, v))
		cf_bad(cf, ev, "granted to a caller the verb table does not let send %s", v->name);
	if (coord_moves_find(v->verb, RUN_ABSENT) != NULL) {
		cf_move_granted(cf, ev, w, v, r, now);
		return;
	}
	switch (v->verb) {
	case BERTH__REQUEST__VERB_CLAIM: cf_claim(cf, ev, now); break;
	case BERTH__REQUEST__VERB_RENEW:
	case BERTH__REQUEST__VERB_READOPT:
		if (!cf_must_live(cf, ev, r))
			break;
		/* A supervisor renews and readopts only a run it owns, for
		 * itself; recovery's readopt may hand it to an owner the
		 * trace does not name. */
		if (w->roles == ROLE_SUPERVISOR)
			cf_owner_is(cf, ev, r, "a supervisor's own lease");
		else if (v->verb == BERTH__REQUEST__VERB_READOPT && w->roles != ROLE_ANY)
			r->owner[0] = '\0';
		break;
	case BERTH__REQUEST__VERB_MARK_STOP:
		if (cf_must_live(cf, ev, r))
			r->stop = 1;
		break;
	case BERTH__REQUEST__VERB_CANCEL:
		/* With a run named: a stop request on the ticket's unsettled
		 * run; without: the ticket had none. */
		t = cf_ticket_of(cf, ev->ticket, 0);
		if (ev->run[0] != '\0') {
			if (cf_must_live(cf, ev, r)) {
				r->stop = r->cancel = 1;
				if (t == NULL || t->live != (size_t)(r - cf->runs) + 1)
					cf_bad(cf, ev, "the run is not the ticket's unsettled run");
			}
		} else if (t != NULL && t->live != 0) {
			cf_bad(cf, ev, "granted without a stop on the ticket's unsettled run %s",
			       cf->runs[t->live - 1].id);
		}
		break;
	case BERTH__REQUEST__VERB_HEARTBEAT:
	case BERTH__REQUEST__VERB_PROGRESS:
	case BERTH__REQUEST__VERB_NOTE: cf_must_live(cf, ev, r); break;
	case BERTH__REQUEST__VERB_ADD:
		if ((t = cf_ticket_of(cf, ev->ticket, 1)) == NULL)
			cf_bad(cf, ev, "a granted add names no ticket");
		else if (t->added || t->claims)
			cf_bad(cf, ev, "the ticket was added before");
		else
			t->added = 1;
		break;
	case BERTH__REQUEST__VERB_ADD_BATCH: cf->batches = 1; break;
	case BERTH__REQUEST__VERB_HOST_LOST: cf_host_lost(cf, ev); break;
	case BERTH__REQUEST__VERB_REMOVE:
		/* Remove and clean delete only finished tickets, with their
		 * runs (coord_edit.c): never one with an unsettled run. A
		 * clean's line names none of those it deleted, so every
		 * ticket without an unsettled run may be gone after it. */
		if ((t = cf_ticket_of(cf, ev->ticket, 0)) != NULL) {
			if (t->live != 0)
				cf_bad(cf, ev, "removed a ticket with the unsettled run %s",
				       cf->runs[t->live - 1].id);
			t->removable = 1;
		}
		break;
	case BERTH__REQUEST__VERB_CLEAN: {
		size_t i;

		for (i = 0; i < cf->ntickets; i++)
			if (cf->tickets[i].live == 0)
				cf->tickets[i].removable = 1;
		break;
	}
	default: break;
	}
}
