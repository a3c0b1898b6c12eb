/*
 * Trace conformance: see conform.h and docs/VERIFICATION.md.
 *
 * The replay keeps, for every run the trace created, the state the table
 * says it is in, who owns it and its aftercare, and whether it was started,
 * checkpointed or asked to stop; for every ticket, its claims and its
 * unsettled run. A line is judged against that state before it changes it:
 *
 *	granted move   the run's state is one of the move's from states, and
 *	               the caller is one the move's who column names
 *	denied move    the reason is the verb's denial when the state is none
 *	               of its from states, else its who_denial, and then the
 *	               caller is not one the who column names; not_permitted
 *	               (refused before the table is asked) changes nothing
 *	replayed       changes nothing; it repeats a committed decision
 *	error          changes nothing
 *
 * Where the trace lacks a fact the coordinator judged by (the new owner a
 * recovery readopt names, whether a checkpointer's process is gone, the
 * outcome a settle gave), the rule is checked as far as the trace goes and
 * the unknown is carried: an owner is unknown until an owner-only move
 * names it, a settled outcome is "some terminal state" (with what a later
 * abandon says about it) until the database names it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "conform.h"
#include "coord_caller.h"
#include "coord_moves.h"
#include "coord_rows.h"
#include "coord_verbs.h"
#include "states.h"
#include "trace.h"
#include "vec.h"

/* A run settled by a settle: terminal, with an outcome the trace does not
 * name. coord_moves_allows() is false for it, as for every terminal state
 * (cf_table_ok() checks that no move leaves one). */
#define CF_SETTLED ((enum run_state)RUN_NSTATES)

struct cf_run {
	char id[48];
	int64_t ticket;
	unsigned attempt; /* the k-th claim of its ticket */
	enum run_state state;
	int aborted_if;       /* CF_SETTLED: 1 must be aborted, -1 must not, 0 either */
	char owner[40];       /* "": handed over to an owner the trace does not name */
	char checkpointer[40];
	int started, exited, stop, cancel;
	int64_t claimed_ms, started_ms, settled_ms; /* the decisions' times, -1 unknown */
};

struct cf_ticket {
	int64_t n;
	int added;  /* a granted add named it */
	int in_db;  /* the database has it */
	unsigned claims;
	size_t live; /* 1 + the index of its unsettled run, 0 none */
};

/* A committed decision, for the replays that repeat it. */
struct cf_req {
	char ticket[32];
	char run[48];
	char reason[128];
	size_t prev; /* 1 + the index of an earlier one with the same key, 0 none */
};

/* Strings to indexes, open addressing. */
struct cf_map {
	char **keys;
	size_t *vals;
	size_t cap, n;
};

struct cf {
	const struct conform_opts *o;
	struct conform_stats *st;
	FILE *out;
	size_t max_report;
	sqlite3 *db;
	sqlite3_stmt *events;
	int events_ok; /* the trace and the events table agree so far */
	uint64_t prev_seq;
	uint64_t tail_seq; /* trace_tail's first line's seq (it keeps a group's lines) */
	struct trace_ev prev; /* the line before (a fused line's request) */
	int has_prev;
	int batches;   /* add_batch granted: tickets the trace does not name */
	struct cf_run *runs;
	size_t nruns, caprun;
	struct cf_ticket *tickets;
	size_t ntickets, capticket;
	struct cf_req *reqs;
	size_t nreqs, capreq;
	struct cf_map run_ix, ticket_ix, req_ix;
	int oom;
};

/* ------------------------------------------------------------ reports */

static void
cf_vreport(struct cf *cf, const char *fmt, va_list ap)
{
	cf->st->violations++;
	if (cf->st->violations > cf->max_report)
		return;
	fputs("CONFORM: ", cf->out);
	vfprintf(cf->out, fmt, ap);
	fputc('\n', cf->out);
}

static void __attribute__((format(printf, 2, 3)))
cf_report(struct cf *cf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cf_vreport(cf, fmt, ap);
	va_end(ap);
}

/* A violation at a line: the line in a few words, then what is wrong. */
static void __attribute__((format(printf, 3, 4)))
cf_bad(struct cf *cf, const struct trace_ev *ev, const char *fmt, ...)
{
	char head[640], msg[512];
	va_list ap;

	snprintf(head, sizeof head, "seq %" PRIu64 " %s %s %s %s%s%s from %s %s", ev->seq,
		 ev->verb, ev->ticket[0] ? ev->ticket : "-", ev->run[0] ? ev->run : "-",
		 ev->decision, ev->reason[0] ? " " : "", ev->reason,
		 ev->caller[0] ? ev->caller : ev->from, ev->instance);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cf_report(cf, "%s: %s", head, msg);
}

/* ------------------------------------------------------------ the map */

static size_t
cf_hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static size_t *
cf_map_get(const struct cf_map *m, const char *key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = cf_hash(key) & (m->cap - 1); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1))
		if (strcmp(m->keys[i], key) == 0)
			return &m->vals[i];
	return NULL;
}

/* Puts key (a copy) -> val, replacing an earlier val. 0, or -1 out of
 * memory. */
static int
cf_map_put(struct cf_map *m, const char *key, size_t val)
{
	size_t *v = cf_map_get(m, key), i, j;

	if (v != NULL) {
		*v = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap) {
		struct cf_map g = { NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };

		if ((g.keys = calloc(g.cap, sizeof *g.keys)) == NULL ||
		    (g.vals = calloc(g.cap, sizeof *g.vals)) == NULL) {
			free(g.keys);
			return -1;
		}
		for (j = 0; j < m->cap; j++) {
			if (m->keys[j] == NULL)
				continue;
			for (i = cf_hash(m->keys[j]) & (g.cap - 1); g.keys[i] != NULL;
			     i = (i + 1) & (g.cap - 1))
				;
			g.keys[i] = m->keys[j];
			g.vals[i] = m->vals[j];
			g.n++;
		}
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (i = cf_hash(key) & (m->cap - 1); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1))
		;
	if ((m->keys[i] = strdup(key)) == NULL)
		return -1;
	m->vals[i] = val;
	m->n++;
	return 0;
}

static void
cf_map_free(struct cf_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
}

/* ------------------------------------------------------------ runs, tickets */

static struct cf_run *
cf_run(struct cf *cf, const char *id)
{
	size_t *i = id[0] != '\0' ? cf_map_get(&cf->run_ix, id) : NULL;

	return i != NULL ? &cf->runs[*i] : NULL;
}

static struct cf_ticket *
cf_ticket(struct cf *cf, int64_t n, int make)
{
	char key[32];
	size_t *i;

	snprintf(key, sizeof key, "%" PRId64, n);
	if ((i = cf_map_get(&cf->ticket_ix, key)) != NULL)
		return &cf->tickets[*i];
	if (!make)
		return NULL;
	if (vec_grow(&cf->tickets, &cf->capticket, cf->ntickets + 1, sizeof *cf->tickets) != 0 ||
	    cf_map_put(&cf->ticket_ix, key, cf->ntickets) != 0) {
		cf->oom = 1;
		return NULL;
	}
	memset(&cf->tickets[cf->ntickets], 0, sizeof *cf->tickets);
	cf->tickets[cf->ntickets].n = n;
	return &cf->tickets[cf->ntickets++];
}

/* The ticket a line names ("T<n>"), NULL for none. */
static struct cf_ticket *
cf_ticket_of(struct cf *cf, const char *name, int make)
{
	int64_t n;

	if (name[0] == '\0' || coord_rows_ticket_parse(name, &n) != 0)
		return NULL;
	return cf_ticket(cf, n, make);
}

static int
cf_live(enum run_state s)
{
	return run_state_live(s);
}

/* The run leaves the live states: its ticket has no unsettled run. */
static void
cf_end(struct cf *cf, struct cf_run *r, enum run_state to, int64_t now)
{
	struct cf_ticket *t = cf_ticket(cf, r->ticket, 0);

	r->state = to;
	r->settled_ms = now;
	if (t != NULL && t->live == (size_t)(r - cf->runs) + 1)
		t->live = 0;
}

/* ------------------------------------------------------------ who asks */

/*
 * Who a line's sender was, as coord_exec.c decides it: the caller the line
 * names (coordinator/coord_caller.c: "operator", "worker", an actor's
 * role, or "coordinator" and "harness", trusted with every role) acting in
 * its verified role; the trusted two act in the role their actor name
 * gives, or in every role for another name. A line without a caller (a
 * trace from before the key) is taken at its name, and its class is not
 * checked.
 */
struct cf_who {
	int known;     /* the line names a caller this checker knows */
	unsigned cls;  /* enum coord_class */
	unsigned roles; /* enum coord_role, for an actor */
	int verified;  /* an actor by its executable (not the trusted two) */
};

static void
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
static int
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
static int
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

static const struct coord_verb *
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

static const char *
cf_state_name(enum run_state s)
{
	return s == CF_SETTLED ? "settled" : run_state_name(s);
}

/* ------------------------------------------------------------ moves */

/* The two answers coord_runs.c gives instead of the table (run_moves.def's
 * header): a settle of a settled run is granted, nothing applied (of a run
 * that does not exist, the error not_found), and an abandon of an aborted
 * run is granted, nothing done. 1 when the handler answers for state s. */
static int
cf_handler_answers(Berth__Request__VerbCase verb, enum run_state s)
{
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
	if (!coord_moves_allows(m, s)) {
		cf_states(m, from, sizeof from);
		cf_bad(cf, ev, "granted in state %s; run_moves.def makes %s only from %s",
		       cf_state_name(s), ev->verb, from);
		/* The replay goes on from what the coordinator did (the
		 * database has it), so one wrong grant is one report. */
	} else if ((may = cf_may(w, ev->instance, m, r)) == 0)
		cf_bad(cf, ev, "granted to a caller run_moves.def does not let make it (owner %s%s%s)",
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
	default:
		break;
	}
	if (cf_live(to))
		r->state = to;
	else
		cf_end(cf, r, to, now);
}

static void
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
	t->live = ++cf->nruns;
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
	else
		return 1;
	return 0;
}

static void
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
	case BERTH__REQUEST__VERB_CLAIM:
		cf_claim(cf, ev, now);
		break;
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
	case BERTH__REQUEST__VERB_NOTE:
		cf_must_live(cf, ev, r);
		break;
	case BERTH__REQUEST__VERB_ADD:
		if ((t = cf_ticket_of(cf, ev->ticket, 1)) == NULL)
			cf_bad(cf, ev, "a granted add names no ticket");
		else if (t->added || t->claims)
			cf_bad(cf, ev, "the ticket was added before");
		else
			t->added = 1;
		break;
	case BERTH__REQUEST__VERB_ADD_BATCH:
		cf->batches = 1;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ committed decisions */

/* Whether the line's decision was committed (coord_exec.c): a granted or
 * denied mutation, but for not_permitted (refused before its transaction)
 * and a claim for the next ticket that found nothing (rolled back so it
 * may be held: nothing_due naming no ticket). Reads, errors and replays
 * write nothing. */
static int
cf_committed(const struct trace_ev *ev, const struct coord_verb *v)
{
	if (v == NULL || !(v->flags & COORD_VERB_MUTATES))
		return 0;
	if (strcmp(ev->decision, "granted") == 0)
		return 1;
	if (strcmp(ev->decision, "denied") != 0 || strcmp(ev->reason, "not_permitted") == 0)
		return 0;
	return !(v->verb == BERTH__REQUEST__VERB_CLAIM && strcmp(ev->reason, "nothing_due") == 0 &&
		 ev->ticket[0] == '\0');
}

static const char *
cf_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t != NULL ? (const char *)t : "";
}

/* A trace string against the database's: equal, or (the trace reader's
 * field was full) the database's starts with it. */
static int
cf_same(const char *trace, size_t cap, const char *db)
{
	size_t n = strlen(trace);

	return n + 8 < cap ? strcmp(trace, db) == 0 : strncmp(trace, db, n) == 0;
}

/* The committed line's event row, next in the events table: its time into
 * *now. Once they disagree, the rest is not compared (one report, not one
 * per line after it). */
static void
cf_event(struct cf *cf, const struct trace_ev *ev, int64_t *now)
{
	int rc;

	*now = -1;
	if (!cf->events_ok)
		return;
	if ((rc = sqlite3_step(cf->events)) != SQLITE_ROW) {
		cf->events_ok = 0;
		if (rc == SQLITE_DONE)
			cf_bad(cf, ev, "a committed decision the database's events table does not "
				       "have (it ends before)");
		else
			cf_bad(cf, ev, "reading the events table: %s", sqlite3_errmsg(cf->db));
		return;
	}
	if (strcmp(ev->verb, cf_col(cf->events, 2)) != 0 ||
	    !cf_same(ev->ticket, sizeof ev->ticket, cf_col(cf->events, 3)) ||
	    !cf_same(ev->run, sizeof ev->run, cf_col(cf->events, 4)) ||
	    strcmp(ev->decision, cf_col(cf->events, 5)) != 0 ||
	    !cf_same(ev->reason, sizeof ev->reason, cf_col(cf->events, 6)) ||
	    !cf_same(ev->instance, sizeof ev->instance, cf_col(cf->events, 7))) {
		cf->events_ok = 0;
		cf_bad(cf, ev,
		       "the database's event #%lld is another decision: %s %s %s %s%s%s from %s",
		       sqlite3_column_int64(cf->events, 0), cf_col(cf->events, 2),
		       cf_col(cf->events, 3), cf_col(cf->events, 4), cf_col(cf->events, 5),
		       cf_col(cf->events, 6)[0] ? " " : "", cf_col(cf->events, 6),
		       cf_col(cf->events, 7));
		return;
	}
	cf->st->events++;
	*now = sqlite3_column_int64(cf->events, 1);
}

/* Keeps a committed decision for the replays of it. */
static void
cf_keep(struct cf *cf, const struct trace_ev *ev)
{
	char key[80];
	size_t *prev;
	struct cf_req *q;

	if (ev->instance[0] == '\0')
		return;
	snprintf(key, sizeof key, "%s/%" PRIu64, ev->instance, ev->req_id);
	if (vec_grow(&cf->reqs, &cf->capreq, cf->nreqs + 1, sizeof *cf->reqs) != 0) {
		cf->oom = 1;
		return;
	}
	q = &cf->reqs[cf->nreqs];
	snprintf(q->ticket, sizeof q->ticket, "%s", ev->ticket);
	snprintf(q->run, sizeof q->run, "%s", ev->run);
	snprintf(q->reason, sizeof q->reason, "%s", ev->reason);
	prev = cf_map_get(&cf->req_ix, key);
	q->prev = prev != NULL ? *prev + 1 : 0;
	if (cf_map_put(&cf->req_ix, key, cf->nreqs) != 0) {
		cf->oom = 1;
		return;
	}
	cf->nreqs++;
}

/* A replay answers with a stored reply: a decision the trace committed
 * before, to the same instance and request id, with its ticket, run and
 * reason. */
static void
cf_replayed(struct cf *cf, const struct trace_ev *ev)
{
	char key[80];
	size_t *i;
	const struct cf_req *q;

	snprintf(key, sizeof key, "%s/%" PRIu64, ev->instance, ev->req_id);
	for (i = cf_map_get(&cf->req_ix, key), q = i ? &cf->reqs[*i] : NULL; q != NULL;
	     q = q->prev ? &cf->reqs[q->prev - 1] : NULL)
		if (strcmp(q->ticket, ev->ticket) == 0 && strcmp(q->run, ev->run) == 0 &&
		    strcmp(q->reason, ev->reason) == 0)
			return;
	cf_bad(cf, ev, "replays a decision the trace never committed");
}

/* ------------------------------------------------------------ one line */

/* A fused verb's line (proto/run_moves.def, FUSE lines): a FUSE line lets
 * its request's verb carry it, and it follows that request's own line,
 * granted, on the same run (a denied verb makes no fused move). Its move
 * is then judged as any line's. */
static void
cf_fused(struct cf *cf, const struct trace_ev *ev)
{
	const struct coord_verb *head = cf_verb(ev->fused), *then = cf_verb(ev->verb);
	const struct coord_fuse *fz = head != NULL ? coord_moves_fuse(head->verb) : NULL;
	const struct trace_ev *p = &cf->prev;

	if (fz == NULL || then == NULL || fz->then != then->verb)
		cf_bad(cf, ev, "fused to %s, which no FUSE line lets carry %s", ev->fused,
		       ev->verb);
	else if (!cf->has_prev || p->seq + 1 != ev->seq || strcmp(p->verb, ev->fused) != 0 ||
		 strcmp(p->instance, ev->instance) != 0 || p->req_id != ev->req_id ||
		 p->fused[0] != '\0')
		cf_bad(cf, ev, "fused to %s, but the line before is not that request's %s",
		       ev->fused, ev->fused);
	else if (strcmp(p->decision, "granted") != 0)
		cf_bad(cf, ev, "a fused %s after its %s was %s: a denied verb makes no fused move",
		       ev->verb, ev->fused, p->decision);
	else if (strcmp(p->run, ev->run) != 0)
		cf_bad(cf, ev, "fused to %s of run %s, but moves run %s", ev->fused, p->run,
		       ev->run);
}

static void
cf_line(struct cf *cf, const struct trace_ev *ev, int past_snapshot)
{
	const struct coord_verb *v = cf_verb(ev->verb);
	int committed = cf_committed(ev, v);
	struct cf_who w;
	int64_t now = -1;

	if (ev->fused[0] != '\0')
		cf_fused(cf, ev);
	cf->prev = *ev;
	cf->has_prev = 1;
	cf->st->lines++;
	if (cf->st->first_seq == 0)
		cf->st->first_seq = ev->seq;
	cf->st->last_seq = ev->seq;
	if (past_snapshot && committed) {
		cf_bad(cf, ev, "a committed decision past the database's last one (seq %" PRIu64 ")",
		       cf->st->snapshot_seq);
		return;
	}
	if (committed) {
		cf_event(cf, ev, &now);
		cf_keep(cf, ev);
	}
	cf_who_of(ev, &w);
	if (strcmp(ev->decision, "granted") == 0) {
		if (v == NULL)
			cf_bad(cf, ev, "granted a verb the coordinator does not know");
		else if (v->flags & COORD_VERB_MUTATES)
			cf_granted(cf, ev, &w, v, now);
		else if (!cf_permitted(&w, ev, v))
			cf_bad(cf, ev, "granted to a caller the verb table does not let send %s",
			       v->name);
	} else if (strcmp(ev->decision, "denied") == 0) {
		if (v == NULL)
			cf_bad(cf, ev, "denied a verb the coordinator does not know");
		else if (coord_moves_find(v->verb, RUN_ABSENT) != NULL)
			cf_move_denied(cf, ev, &w, v, cf_run(cf, ev->run));
	} else if (strcmp(ev->decision, "replayed") == 0) {
		cf_replayed(cf, ev);
	} else if (strcmp(ev->decision, "error") != 0) {
		cf_bad(cf, ev, "no such decision");
	}
}

/* ------------------------------------------------------------ the trace file */

/* The line of seq want that trace_tail keeps (it keeps the lines of the
 * last group committed, from seq tail_seq on, each ending in a newline),
 * parsed. 0, or -1 (reported). */
static int
cf_tail_line(struct cf *cf, const char *tail, uint64_t want, struct trace_ev *ev)
{
	const char *p = tail, *nl;
	uint64_t seq;

	for (seq = cf->tail_seq; seq < want && (nl = strchr(p, '\n')) != NULL; seq++)
		p = nl + 1;
	nl = strchr(p, '\n');
	if (seq != want || trace_parse_line(p, nl != NULL ? (size_t)(nl - p) : strlen(p), ev) != 0 ||
	    ev->seq != want) {
		cf_report(cf, "the database's trace_tail (seq %" PRIu64 "..%" PRIu64 ") does not "
			      "hold decision %" PRIu64 "'s trace line: %.200s",
			  cf->tail_seq, cf->st->snapshot_seq, want, p);
		return -1;
	}
	return 0;
}

/* Feeds the file's lines in order, then trace_tail's when the file stops
 * short of its last: those of its lines the file lacks. */
static int
cf_trace(struct cf *cf, FILE *f, const char *path, const char *tail)
{
	struct trace_ev ev;
	char *line = NULL;
	size_t cap = 0, len;
	ssize_t n;
	uint64_t lineno = 0, s = cf->st->snapshot_seq;

	while (f != NULL && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		len = (size_t)n;
		/* One write(2) per line: a line without its newline is the
		 * one being written, or torn by a crash. */
		if (line[len - 1] != '\n')
			break;
		if (trace_parse_line(line, len - 1, &ev) != 0) {
			cf_report(cf, "%s:%" PRIu64 ": not a trace record: %.200s", path, lineno,
				  line);
			continue;
		}
		if (ev.seq <= cf->prev_seq) {
			cf_bad(cf, &ev, "after seq %" PRIu64 ": the order of decisions goes back",
			       cf->prev_seq);
			continue;
		}
		if (ev.seq > s && !cf->o->final)
			break; /* decided after the snapshot */
		if (ev.seq == cf->prev_seq + 2)
			cf_bad(cf, &ev, "seq %" PRIu64 " is missing", ev.seq - 1);
		else if (ev.seq != cf->prev_seq + 1)
			cf_bad(cf, &ev, "seq %" PRIu64 "..%" PRIu64 " are missing", cf->prev_seq + 1,
			       ev.seq - 1);
		cf->prev_seq = ev.seq;
		cf_line(cf, &ev, ev.seq > s);
	}
	free(line);
	if (f != NULL && ferror(f)) {
		fprintf(stderr, "berth-conform: reading %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (cf->prev_seq < s) {
		if (cf->prev_seq + 1 >= cf->tail_seq && tail != NULL) {
			/* Committed, then the coordinator stopped before its
			 * write: the next coordinator appends these lines. */
			while (cf->prev_seq < s && cf_tail_line(cf, tail, cf->prev_seq + 1, &ev) == 0) {
				cf->st->restored = 1;
				cf->prev_seq = ev.seq;
				cf_line(cf, &ev, 0);
			}
		} else {
			cf_report(cf, "%s ends at seq %" PRIu64 ", the database's last decision is seq "
				      "%" PRIu64,
				  path, cf->prev_seq, s);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the database */

static void
cf_db_runs(struct cf *cf)
{
	static const char sql[] =
		"SELECT id, ticket, attempt, state, owner, coalesce(aftercare_owner, ''),"
		" claimed_ms, started_ms, ended_ms, settled_ms, has_record, exit_code, signal,"
		" coalesce(stop_reason, '') FROM runs ORDER BY ticket, attempt";
	sqlite3_stmt *st;
	struct cf_run *r;
	const char *id;
	enum run_state s;
	size_t seen = 0;
	int has_record, code, sig;

	if (sqlite3_prepare_v2(cf->db, sql, -1, &st, NULL) != SQLITE_OK) {
		cf_report(cf, "reading runs: %s", sqlite3_errmsg(cf->db));
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		id = cf_col(st, 0);
		cf->st->runs++;
		if ((r = cf_run(cf, id)) == NULL) {
			cf_report(cf, "run %s (%s) is in the database, but no traced claim created it",
				  id, cf_col(st, 3));
			continue;
		}
		seen++;
		s = run_state_parse(cf_col(st, 3));
		if (sqlite3_column_int64(st, 1) != r->ticket ||
		    sqlite3_column_int64(st, 2) != (int64_t)r->attempt)
			cf_report(cf, "run %s is attempt %lld of T%lld in the database; the trace "
				      "claimed it as attempt %u of T%" PRId64,
				  id, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 1),
				  r->attempt, r->ticket);
		if (r->state == CF_SETTLED ? !run_state_terminal(s) : s != r->state)
			cf_report(cf, "run %s is %s in the database, %s by the trace", id,
				  run_state_name(s), cf_state_name(r->state));
		else if (r->state == CF_SETTLED && r->aborted_if != 0 &&
			 (s == RUN_ABORTED) != (r->aborted_if > 0))
			cf_report(cf, "run %s is %s in the database; an abandon of it was %s", id,
				  run_state_name(s), r->aborted_if > 0 ? "granted" : "denied");
		/* settled_ms: set exactly by the decision that ended it. */
		if ((sqlite3_column_type(st, 9) == SQLITE_NULL) != cf_live(r->state))
			cf_report(cf, "run %s has settled_ms %s, but the trace has it %s", id,
				  sqlite3_column_type(st, 9) == SQLITE_NULL ? "NULL" : cf_col(st, 9),
				  cf_state_name(r->state));
		else if (!cf_live(r->state) && r->settled_ms >= 0 &&
			 sqlite3_column_int64(st, 9) != r->settled_ms)
			cf_report(cf, "run %s has settled_ms %s; the decision that settled it was "
				      "at %" PRId64,
				  id, cf_col(st, 9), r->settled_ms);
		if (r->claimed_ms >= 0 && sqlite3_column_int64(st, 6) != r->claimed_ms)
			cf_report(cf, "run %s has claimed_ms %s; its claim was at %" PRId64, id,
				  cf_col(st, 6), r->claimed_ms);
		if ((sqlite3_column_type(st, 7) != SQLITE_NULL) != r->started)
			cf_report(cf, "run %s has started_ms %s, but the trace %s a start", id,
				  sqlite3_column_type(st, 7) == SQLITE_NULL ? "NULL" : cf_col(st, 7),
				  r->started ? "granted" : "never granted");
		else if (r->started && r->started_ms >= 0 &&
			 sqlite3_column_int64(st, 7) != r->started_ms)
			cf_report(cf, "run %s has started_ms %s; its start was at %" PRId64, id,
				  cf_col(st, 7), r->started_ms);
		/* The exit checkpoint: ended_ms and the record's facts exist
		 * exactly when a record_exit was granted, a code or signal
		 * exactly when it carried a record. */
		has_record = sqlite3_column_int(st, 10);
		code = sqlite3_column_type(st, 11) != SQLITE_NULL;
		sig = sqlite3_column_type(st, 12) != SQLITE_NULL;
		if ((sqlite3_column_type(st, 8) != SQLITE_NULL) != r->exited)
			cf_report(cf, "run %s has ended_ms %s, but the trace %s its record_exit", id,
				  sqlite3_column_type(st, 8) == SQLITE_NULL ? "NULL" : cf_col(st, 8),
				  r->exited ? "granted" : "never granted");
		if (has_record && !r->exited)
			cf_report(cf, "run %s has an exit record, but no record_exit was granted", id);
		if (has_record ? !(code || sig) : (code || sig))
			cf_report(cf, "run %s: has_record %d with exit_code %s and signal %s", id,
				  has_record, code ? cf_col(st, 11) : "NULL",
				  sig ? cf_col(st, 12) : "NULL");
		/* A success is only ever the job's own exit 0 (run_outcome). */
		if (s == RUN_SUCCEEDED && !(has_record && code && sqlite3_column_int(st, 11) == 0 &&
					    !sig && cf_col(st, 13)[0] == '\0'))
			cf_report(cf, "run %s succeeded without a recorded exit 0", id);
		if (r->owner[0] != '\0' && strcmp(r->owner, cf_col(st, 4)) != 0)
			cf_report(cf, "run %s is owned by '%s' in the database, by %s in the trace", id,
				  cf_col(st, 4), r->owner);
		if (strcmp(r->checkpointer, cf_col(st, 5)) != 0)
			cf_report(cf, "run %s: aftercare_owner '%s' in the database, '%s' granted its "
				      "record_exit",
				  id, cf_col(st, 5), r->checkpointer);
		if ((cf_col(st, 13)[0] != '\0') != r->stop ||
		    (r->cancel && strcmp(cf_col(st, 13), "cancel") != 0))
			cf_report(cf, "run %s has stop_reason '%s', but the trace %s", id,
				  cf_col(st, 13),
				  r->cancel ? "cancelled it"
				  : r->stop ? "marked a stop"
					    : "asked it to stop neither by cancel nor mark_stop");
	}
	sqlite3_finalize(st);
	if (seen != cf->nruns) {
		size_t i;
		sqlite3_stmt *q;

		if (sqlite3_prepare_v2(cf->db, "SELECT 1 FROM runs WHERE id = ?", -1, &q, NULL) !=
		    SQLITE_OK)
			return;
		for (i = 0; i < cf->nruns; i++) {
			sqlite3_bind_text(q, 1, cf->runs[i].id, -1, SQLITE_STATIC);
			if (sqlite3_step(q) != SQLITE_ROW)
				cf_report(cf, "run %s (T%" PRId64 "): the trace claimed it, the database "
					      "does not have it",
					  cf->runs[i].id, cf->runs[i].ticket);
			sqlite3_reset(q);
		}
		sqlite3_finalize(q);
	}
}

static void
cf_db_tickets(struct cf *cf)
{
	static const char sql[] = "SELECT n, state, attempts FROM tickets ORDER BY n";
	struct cf_ticket none = { 0 }, *t;
	sqlite3_stmt *st;
	int64_t n;
	size_t i;
	int claimed;

	if (sqlite3_prepare_v2(cf->db, sql, -1, &st, NULL) != SQLITE_OK) {
		cf_report(cf, "reading tickets: %s", sqlite3_errmsg(cf->db));
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		n = sqlite3_column_int64(st, 0);
		cf->st->tickets++;
		if ((t = cf_ticket(cf, n, 0)) == NULL)
			t = &none; /* never named by the trace: no claims, no run */
		else
			t->in_db = 1;
		if (!t->added && !cf->batches)
			cf_report(cf, "ticket T%" PRId64 " is in the database, but no traced add "
				      "created it",
				  n);
		if (sqlite3_column_int64(st, 2) != (int64_t)t->claims)
			cf_report(cf, "ticket T%" PRId64 " has %lld attempts in the database, %u "
				      "granted claims in the trace",
				  n, sqlite3_column_int64(st, 2), t->claims);
		/* A ticket is claimed exactly while it has an unsettled run. */
		claimed = strcmp(cf_col(st, 1), ticket_state_name(TICKET_CLAIMED)) == 0;
		if (claimed != (t->live != 0))
			cf_report(cf, "ticket T%" PRId64 " is %s in the database%s%s", n,
				  cf_col(st, 1),
				  t->live ? ", but the trace has its run unsettled: "
					  : ", but the trace settled every run of it",
				  t->live ? cf->runs[t->live - 1].id : "");
	}
	sqlite3_finalize(st);
	for (i = 0; i < cf->ntickets; i++)
		if (!cf->tickets[i].in_db)
			cf_report(cf, "ticket T%" PRId64 ": the trace names it, the database does "
				      "not have it",
				  cf->tickets[i].n);
}

/* ------------------------------------------------------------ the check */

static sqlite3 *
cf_open(const char *path)
{
	sqlite3 *db = NULL;

	/* Read-write without create, as the sqlite3 CLI reads a live WAL
	 * database; nothing here writes. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		fprintf(stderr, "berth-conform: cannot open %s: %s\n", path,
			db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	return db;
}

long
conform_files(const char *trace, const char *dbpath, const struct conform_opts *o,
	      struct conform_stats *stp)
{
	static const struct conform_opts defaults;
	static const char q_tail[] = "SELECT seq, line FROM trace_tail WHERE id = 1";
	static const char q_events[] =
		"SELECT id, ts_ms, verb, ticket, run, decision, reason, instance FROM events"
		" ORDER BY id";
	struct conform_stats st0;
	struct cf cf;
	sqlite3_stmt *q = NULL;
	char *tail = NULL;
	FILE *f = NULL;
	long rv = -1;

	memset(&cf, 0, sizeof cf);
	memset(&st0, 0, sizeof st0);
	cf.o = o != NULL ? o : &defaults;
	cf.st = stp != NULL ? stp : &st0;
	memset(cf.st, 0, sizeof *cf.st);
	cf.out = cf.o->out != NULL ? cf.o->out : stdout;
	cf.max_report = cf.o->max_report ? cf.o->max_report : 50;
	cf.events_ok = 1;
	if (cf_table_ok() != 0)
		return -1;
	if ((f = fopen(trace, "r")) == NULL && errno != ENOENT) {
		fprintf(stderr, "berth-conform: cannot open %s: %s\n", trace, strerror(errno));
		return -1;
	}
	if ((cf.db = cf_open(dbpath)) == NULL)
		goto out;
	/* One snapshot for all that follows. */
	if (sqlite3_exec(cf.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(cf.db, q_tail, -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "berth-conform: %s: %s\n", dbpath, sqlite3_errmsg(cf.db));
		goto out;
	}
	if (sqlite3_step(q) == SQLITE_ROW) {
		const char *p;

		cf.tail_seq = cf.st->snapshot_seq = (uint64_t)sqlite3_column_int64(q, 0);
		if ((tail = strdup(cf_col(q, 1))) == NULL)
			goto oom;
		/* A group's lines: S is its last one's seq. */
		for (p = tail; (p = strchr(p, '\n')) != NULL && p[1] != '\0'; p++)
			cf.st->snapshot_seq++;
	}
	sqlite3_finalize(q);
	q = NULL;
	if (sqlite3_prepare_v2(cf.db, q_events, -1, &cf.events, NULL) != SQLITE_OK) {
		fprintf(stderr, "berth-conform: %s: %s\n", dbpath, sqlite3_errmsg(cf.db));
		goto out;
	}
	if (cf_trace(&cf, f, trace, tail) != 0)
		goto out;
	if (cf.oom)
		goto oom;
	if (cf.events_ok && sqlite3_step(cf.events) == SQLITE_ROW)
		cf_report(&cf, "event #%lld (%s %s %s %s%s%s from %s) is committed in the database, "
			       "but the trace does not have it",
			  sqlite3_column_int64(cf.events, 0), cf_col(cf.events, 2),
			  cf_col(cf.events, 3), cf_col(cf.events, 4), cf_col(cf.events, 5),
			  cf_col(cf.events, 6)[0] ? " " : "", cf_col(cf.events, 6),
			  cf_col(cf.events, 7));
	cf_db_runs(&cf);
	cf_db_tickets(&cf);
	if (cf.oom)
		goto oom;
	if (cf.st->violations > cf.max_report)
		fprintf(cf.out, "CONFORM: ... %" PRIu64 " violations in all\n", cf.st->violations);
	rv = (long)cf.st->violations;
	goto out;
oom:
	fprintf(stderr, "berth-conform: out of memory\n");
out:
	sqlite3_finalize(q);
	sqlite3_finalize(cf.events);
	if (cf.db != NULL) {
		sqlite3_exec(cf.db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(cf.db);
	}
	if (f != NULL)
		fclose(f);
	free(tail);
	free(cf.runs);
	free(cf.tickets);
	free(cf.reqs);
	cf_map_free(&cf.run_ix);
	cf_map_free(&cf.ticket_ix);
	cf_map_free(&cf.req_ix);
	return rv;
}

long
conform_home(const char *home, const struct conform_opts *o, struct conform_stats *st)
{
	char trace[4096], db[4096];
	FILE *f;

	if ((size_t)snprintf(trace, sizeof trace, "%s/trace/trace.jsonl", home) >= sizeof trace ||
	    (size_t)snprintf(db, sizeof db, "%s/berth.db", home) >= sizeof db) {
		fprintf(stderr, "berth-conform: the path %s is too long\n", home);
		return -1;
	}
	if ((f = fopen(db, "r")) == NULL) {
		if (errno != ENOENT) {
			fprintf(stderr, "berth-conform: cannot open %s: %s\n", db, strerror(errno));
			return -1;
		}
		/* The coordinator opens its database before its trace. */
		if ((f = fopen(trace, "r")) == NULL && errno == ENOENT) {
			if (st != NULL)
				memset(st, 0, sizeof *st);
			return 0;
		}
		if (f != NULL)
			fclose(f);
		fprintf(stderr, "berth-conform: %s has a trace but no database\n", home);
		return -1;
	}
	fclose(f);
	return conform_files(trace, db, o, st);
}
