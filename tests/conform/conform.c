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
	char head[640], msg[512];
	va_list ap;

	snprintf(head, sizeof head, "seq %" PRIu64 " %s %s %s %s%s%s from %s %s", ev->seq, ev->verb,
		 ev->ticket[0] ? ev->ticket : "-", ev->run[0] ? ev->run : "-", ev->decision,
		 ev->reason[0] ? " " : "", ev->reason, ev->caller[0] ? ev->caller : ev->from,
		 ev->instance);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cf_report(cf, "%s: %s", head, msg);
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
		cf_report(&cf,
			  "event #%lld (%s %s %s %s%s%s from %s) is committed in the database, "
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
