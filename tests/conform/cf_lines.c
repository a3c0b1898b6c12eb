/*
 * The trace's lines (cf.h): read in seq order up to the snapshot, with
 * trace_tail's lines (the last group's) where the file stops short of
 * them; a fused verb's line against the FUSE lines; each judged
 * by its decision, a committed one matched with the next row of the
 * events table and kept for the replays that repeat it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "vec.h"

/* ------------------------------------------------------------ committed decisions */

/* Whether the line's decision was committed (coord_exec.c): a granted or
 * denied mutation, but for not_permitted (refused before its transaction)
 * and a claim for the next ticket that decided nothing (rolled back so it
 * may be held, naming no ticket: coord_claim.c's nothing_due and paused,
 * and the host lease's guard, coord_hosts.c's store_unreachable, host_lost
 * and host_lease_lapsed). Reads, errors and replays write nothing. */
static int
cf_committed(const struct trace_ev *ev, const struct coord_verb *v)
{
	static const char *const held[] = { "nothing_due", "paused", "store_unreachable",
					    "host_lost", "host_lease_lapsed" };
	size_t i;

	if (v == NULL || !(v->flags & COORD_VERB_MUTATES))
		return 0;
	if (strcmp(ev->decision, "granted") == 0)
		return 1;
	if (strcmp(ev->decision, "denied") != 0 || strcmp(ev->reason, "not_permitted") == 0)
		return 0;
	if (v->verb != BERTH__REQUEST__VERB_CLAIM || ev->ticket[0] != '\0')
		return 1;
	for (i = 0; i < sizeof held / sizeof held[0]; i++)
		if (strcmp(ev->reason, held[i]) == 0)
			return 0;
	return 1;
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
	struct coord_st *e = cf->events;
	int rc;

	*now = -1;
	if (!cf->events_ok)
		return;
	if ((rc = coord_db_step(cf->db, e)) != 1) {
		cf->events_ok = 0;
		if (rc == 0)
			cf_bad(cf, ev,
			       "a committed decision the database's events table does not "
			       "have (it ends before)");
		else
			cf_bad(cf, ev, "reading the events table: %s", coord_db_errmsg(cf->db));
		return;
	}
	if (strcmp(ev->verb, coord_db_coltext(e, 2)) != 0 ||
	    !cf_same(ev->ticket, sizeof ev->ticket, coord_db_coltext(e, 3)) ||
	    !cf_same(ev->run, sizeof ev->run, coord_db_coltext(e, 4)) ||
	    strcmp(ev->decision, coord_db_coltext(e, 5)) != 0 ||
	    !cf_same(ev->reason, sizeof ev->reason, coord_db_coltext(e, 6)) ||
	    !cf_same(ev->instance, sizeof ev->instance, coord_db_coltext(e, 7))) {
		cf->events_ok = 0;
		char what[512];

		cf_event_text(e, what, sizeof what);
		cf_bad(cf, ev, "the database's event #%" PRId64 " is another decision: %s",
		       coord_db_i64(e, 0), what);
		return;
	}
	cf->st->events++;
	*now = coord_db_i64(e, 1);
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

/* One line, judged against the replay, then applied to it. */
void
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
		cf_bad(cf, ev,
		       "a committed decision past the database's last one (seq %" PRIu64 ")",
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

void
cf_event_text(struct coord_st *e, char *buf, size_t n)
{
	snprintf(buf, n, "%s %s %s %s%s%s from %s", coord_db_coltext(e, 2), coord_db_coltext(e, 3),
		 coord_db_coltext(e, 4), coord_db_coltext(e, 5),
		 coord_db_coltext(e, 6)[0] ? " " : "", coord_db_coltext(e, 6),
		 coord_db_coltext(e, 7));
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
	if (seq != want ||
	    trace_parse_line(p, nl != NULL ? (size_t)(nl - p) : strlen(p), ev) != 0 ||
	    ev->seq != want) {
		cf_report(cf,
			  "the database's trace_tail (seq %" PRIu64 "..%" PRIu64 ") does not "
			  "hold decision %" PRIu64 "'s trace line: %.200s",
			  cf->tail_seq, cf->st->snapshot_seq, want, p);
		return -1;
	}
	return 0;
}

/* Feeds the file's lines in order, then trace_tail's when the file stops
 * short of its last: those of its lines the file lacks. */
int
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
			cf_bad(cf, &ev, "seq %" PRIu64 "..%" PRIu64 " are missing",
			       cf->prev_seq + 1, ev.seq - 1);
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
			while (cf->prev_seq < s &&
			       cf_tail_line(cf, tail, cf->prev_seq + 1, &ev) == 0) {
				cf->st->restored = 1;
				cf->prev_seq = ev.seq;
				cf_line(cf, &ev, 0);
			}
		} else {
			cf_report(cf,
				  "%s ends at seq %" PRIu64 ", the database's last decision is seq "
				  "%" PRIu64,
				  path, cf->prev_seq, s);
		}
	}
	return 0;
}
