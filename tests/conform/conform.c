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

#include "cf.h"

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

void
cf_report(struct cf *cf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cf_vreport(cf, fmt, ap);
	va_end(ap);
}

/* A violation at a line: the line in a few words, then what is wrong. */
void
cf_bad(struct cf *cf, const struct trace_ev *ev, const char *fmt, ...)
{
	char head[720], msg[512];
	va_list ap;

	/* The global trace's lines are each their host's. */
	snprintf(head, sizeof head, "%s%s%sseq %" PRIu64 " %s %s %s %s%s%s from %s %s",
		 cf->host ? "host " : "", cf->host ? cf->hosts[cf->host - 1].id : "",
		 cf->host ? " " : "", ev->seq, ev->verb, ev->ticket[0] ? ev->ticket : "-",
		 ev->run[0] ? ev->run : "-", ev->decision, ev->reason[0] ? " " : "", ev->reason,
		 ev->caller[0] ? ev->caller : ev->from, ev->instance);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cf_report(cf, "%s: %s", head, msg);
}

/* ------------------------------------------------------------ the check */

/* The store, opened as the coordinator opens it (which brings its schema
 * up to date, a no-op for a home its coordinator has opened), with
 * coordinator.key in key_dir (NULL: beside a sqlite file). Nothing here
 * writes. */
static struct coord_db *
cf_open(const char *store, const char *key_dir)
{
	struct coord_db_opts dbo = { .sync_full = 1, .key_dir = key_dir, .reader = 1 };
	struct coord_db *db;
	char err[512];

	if (coord_db_open(&db, store, &dbo, err, sizeof err) != 0) {
		fprintf(stderr, "berth-conform: %s\n", err);
		return NULL;
	}
	return db;
}

/* One snapshot for all that follows. sqlite's read transaction is one
 * already; PostgreSQL's BEGIN is READ COMMITTED, a snapshot per
 * statement, so there the transaction is made REPEATABLE READ (a statement
 * only PostgreSQL speaks, before the transaction's first query). */
static int
cf_snapshot(struct coord_db *db)
{
	if (coord_db_begin(db, 0) != 0)
		return -1;
	if (coord_db_kind(db) == COORD_STORE_POSTGRESQL &&
	    coord_db_script(db, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY") != 0)
		return -1;
	return 0;
}

/* Reads trace_tail: the last committed decision's seq and its group's
 * lines. 0, or -1. */
static int
cf_tail(struct cf *cf, char **tail)
{
	/* A home's coordinator with a host keeps it in trace_tails (schema
	 * v9), one of its own; the newest is this home's (a store of one
	 * host: the checker checks no other). */
	static const char q_tail[] =
		"SELECT seq, line FROM (SELECT seq, line FROM trace_tails"
		" UNION ALL SELECT seq, line FROM trace_tail) AS t ORDER BY seq DESC LIMIT 1";
	struct coord_st *q;
	const char *p;
	int rc;

	if ((q = coord_db_q(cf->db, q_tail, "")) == NULL || (rc = coord_db_step(cf->db, q)) < 0)
		return -1;
	if (rc == 0)
		return 0;
	cf->tail_seq = cf->st->snapshot_seq = (uint64_t)coord_db_i64(q, 0);
	if ((*tail = strdup(coord_db_coltext(q, 1))) == NULL) {
		cf->oom = 1;
		return -1;
	}
	/* A group's lines: S is its last one's seq. */
	for (p = *tail; (p = strchr(p, '\n')) != NULL && p[1] != '\0'; p++)
		cf->st->snapshot_seq++;
	coord_db_done(q);
	return 0;
}

/* The frame of a check: cf made ready for the events of store (with
 * coordinator.key in key_dir), opened and read in one snapshot. 0, or -1
 * (said on stderr; cf_done frees what was made). */
int
cf_begin(struct cf *cf, const struct conform_opts *o, struct conform_stats *st, const char *store,
	 const char *key_dir)
{
	static const struct conform_opts defaults;
	static const char q_events[] =
		"SELECT id, ts_ms, verb, ticket, run, decision, reason, instance FROM events"
		" ORDER BY id";

	memset(cf, 0, sizeof *cf);
	cf->o = o != NULL ? o : &defaults;
	cf->st = st;
	memset(cf->st, 0, sizeof *cf->st);
	cf->out = cf->o->out != NULL ? cf->o->out : stdout;
	cf->max_report = cf->o->max_report ? cf->o->max_report : 50;
	cf->events_ok = 1;
	if (cf_table_ok() != 0 || (cf->db = cf_open(store, key_dir)) == NULL)
		return -1;
	if (cf_snapshot(cf->db) != 0 || (cf->events = coord_db_q(cf->db, q_events, "")) == NULL) {
		fprintf(stderr, "berth-conform: %s\n", coord_db_errmsg(cf->db));
		return -1;
	}
	return 0;
}

/* After the trace: the events it did not have, the final runs and
 * tickets, the count. */
void
cf_end_check(struct cf *cf)
{
	struct coord_st *e = cf->events;

	if (cf->oom)
		return;
	if (cf->events_ok && coord_db_step(cf->db, e) == 1) {
		char what[512];

		cf_event_text(e, what, sizeof what);
		cf_report(cf,
			  "event #%" PRId64 " (%s) is committed in the database, but the trace "
			  "does not have it",
			  coord_db_i64(e, 0), what);
	}
	cf_db_runs(cf);
	cf_db_tickets(cf);
	if (!cf->oom && cf->st->violations > cf->max_report)
		fprintf(cf->out, "CONFORM: ... %" PRIu64 " violations in all\n",
			cf->st->violations);
}

/* Frees cf: the violations (-1 when the check could not be made, or ran
 * out of memory). */
long
cf_done(struct cf *cf, int ok)
{
	long rv = ok && !cf->oom ? (long)cf->st->violations : -1;

	if (ok && cf->oom)
		fprintf(stderr, "berth-conform: out of memory\n");
	if (cf->db != NULL) {
		coord_db_rollback(cf->db);
		coord_db_close(cf->db);
	}
	free(cf->runs);
	free(cf->tickets);
	free(cf->reqs);
	free(cf->hosts);
	cf_map_free(&cf->run_ix);
	cf_map_free(&cf->ticket_ix);
	cf_map_free(&cf->req_ix);
	cf_map_free(&cf->host_ix);
	return rv;
}

static long
cf_check(const char *trace, const char *store, const char *key_dir, const struct conform_opts *o,
	 struct conform_stats *stp)
{
	struct conform_stats st0;
	struct cf cf;
	char *tail = NULL;
	FILE *f = NULL;
	int ok = 0;

	if ((f = fopen(trace, "r")) == NULL && errno != ENOENT) {
		fprintf(stderr, "berth-conform: cannot open %s: %s\n", trace, strerror(errno));
		return -1;
	}
	if (cf_begin(&cf, o, stp != NULL ? stp : &st0, store, key_dir) != 0)
		goto out;
	if (cf_tail(&cf, &tail) != 0) {
		if (!cf.oom)
			fprintf(stderr, "berth-conform: %s\n", coord_db_errmsg(cf.db));
		ok = cf.oom;
		goto out;
	}
	if (cf_trace(&cf, f, trace, tail) != 0)
		goto out;
	cf_end_check(&cf);
	ok = 1;
out:
	if (f != NULL)
		fclose(f);
	free(tail);
	return cf_done(&cf, ok);
}

long
conform_files(const char *trace, const char *store, const struct conform_opts *o,
	      struct conform_stats *st)
{
	return cf_check(trace, store, o != NULL ? o->key_dir : NULL, o, st);
}

/* Where home keeps its store (DESIGN §13): the URL in home/store (one
 * line) when it runs on PostgreSQL, else home/berth.db. 1 with it in
 * out, 0 when the home has no store yet, -1 (said on stderr). */
int
cf_home_store(const char *home, char *out, size_t n)
{
	char path[4096];
	size_t len;
	FILE *f;

	if ((size_t)snprintf(path, sizeof path, "%s/store", home) >= sizeof path)
		goto long_path;
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(out, (int)n, f) == NULL)
			out[0] = '\0';
		len = strcspn(out, "\r\n");
		if (ferror(f) || (out[len] == '\0' && !feof(f))) {
			fprintf(stderr, "berth-conform: %s: %s\n", path,
				ferror(f) ? strerror(errno) : "its line is too long");
			fclose(f);
			return -1;
		}
		fclose(f);
		out[len] = '\0';
		if (len == 0) {
			fprintf(stderr, "berth-conform: %s names no store\n", path);
			return -1;
		}
		return 1;
	}
	if (errno != ENOENT) {
		fprintf(stderr, "berth-conform: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(out, n, "%s/berth.db", home) >= n)
		goto long_path;
	if ((f = fopen(out, "r")) != NULL) {
		fclose(f);
		return 1;
	}
	if (errno == ENOENT)
		return 0;
	fprintf(stderr, "berth-conform: cannot open %s: %s\n", out, strerror(errno));
	return -1;
long_path:
	fprintf(stderr, "berth-conform: the path %s is too long\n", home);
	return -1;
}

long
conform_home(const char *home, const struct conform_opts *o, struct conform_stats *st)
{
	char trace[4096], store[4096];
	FILE *f;
	int rc;

	if ((size_t)snprintf(trace, sizeof trace, "%s/trace/trace.jsonl", home) >= sizeof trace) {
		fprintf(stderr, "berth-conform: the path %s is too long\n", home);
		return -1;
	}
	if ((rc = cf_home_store(home, store, sizeof store)) < 0)
		return -1;
	if (rc == 0) {
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
	return cf_check(trace, store, home, o, st);
}
