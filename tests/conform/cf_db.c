/*
 * The final database against the replay (cf.h): every run's state,
 * owner, times and exit facts, every ticket's attempts and claimed state,
 * and what the trace named that the database lacks.
 */
#include <inttypes.h>
#include <string.h>

#include "cf.h"

const char *
cf_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t != NULL ? (const char *)t : "";
}

/* ------------------------------------------------------------ the database */

/* Whether ticket n may be missing from the database: removed or
 * cleaned after its last run settled. */
static int
cf_removed(struct cf *cf, int64_t n)
{
	const struct cf_ticket *t = cf_ticket(cf, n, 0);

	return t != NULL && t->removable;
}

void
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
			cf_report(cf,
				  "run %s (%s) is in the database, but no traced claim created it",
				  id, cf_col(st, 3));
			continue;
		}
		seen++;
		s = run_state_parse(cf_col(st, 3));
		if (sqlite3_column_int64(st, 1) != r->ticket ||
		    sqlite3_column_int64(st, 2) != (int64_t)r->attempt)
			cf_report(cf,
				  "run %s is attempt %lld of T%lld in the database; the trace "
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
				  sqlite3_column_type(st, 9) == SQLITE_NULL ? "NULL"
									    : cf_col(st, 9),
				  cf_state_name(r->state));
		else if (!cf_live(r->state) && r->settled_ms >= 0 &&
			 sqlite3_column_int64(st, 9) != r->settled_ms)
			cf_report(cf,
				  "run %s has settled_ms %s; the decision that settled it was "
				  "at %" PRId64,
				  id, cf_col(st, 9), r->settled_ms);
		if (r->claimed_ms >= 0 && sqlite3_column_int64(st, 6) != r->claimed_ms)
			cf_report(cf, "run %s has claimed_ms %s; its claim was at %" PRId64, id,
				  cf_col(st, 6), r->claimed_ms);
		if ((sqlite3_column_type(st, 7) != SQLITE_NULL) != r->started)
			cf_report(cf, "run %s has started_ms %s, but the trace %s a start", id,
				  sqlite3_column_type(st, 7) == SQLITE_NULL ? "NULL"
									    : cf_col(st, 7),
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
			cf_report(
				cf, "run %s has ended_ms %s, but the trace %s its record_exit", id,
				sqlite3_column_type(st, 8) == SQLITE_NULL ? "NULL" : cf_col(st, 8),
				r->exited ? "granted" : "never granted");
		if (has_record && !r->exited)
			cf_report(cf, "run %s has an exit record, but no record_exit was granted",
				  id);
		if (has_record ? !(code || sig) : (code || sig))
			cf_report(cf, "run %s: has_record %d with exit_code %s and signal %s", id,
				  has_record, code ? cf_col(st, 11) : "NULL",
				  sig ? cf_col(st, 12) : "NULL");
		/* A success is only ever the job's own exit 0 (run_outcome). */
		if (s == RUN_SUCCEEDED && !(has_record && code && sqlite3_column_int(st, 11) == 0 &&
					    !sig && cf_col(st, 13)[0] == '\0'))
			cf_report(cf, "run %s succeeded without a recorded exit 0", id);
		if (r->owner[0] != '\0' && strcmp(r->owner, cf_col(st, 4)) != 0)
			cf_report(cf, "run %s is owned by '%s' in the database, by %s in the trace",
				  id, cf_col(st, 4), r->owner);
		if (strcmp(r->checkpointer, cf_col(st, 5)) != 0)
			cf_report(cf,
				  "run %s: aftercare_owner '%s' in the database, '%s' granted its "
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
			if (sqlite3_step(q) != SQLITE_ROW && !cf_removed(cf, cf->runs[i].ticket))
				cf_report(cf,
					  "run %s (T%" PRId64
					  "): the trace claimed it, the database "
					  "does not have it",
					  cf->runs[i].id, cf->runs[i].ticket);
			sqlite3_reset(q);
		}
		sqlite3_finalize(q);
	}
}

void
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
			cf_report(cf,
				  "ticket T%" PRId64 " is in the database, but no traced add "
				  "created it",
				  n);
		if (sqlite3_column_int64(st, 2) != (int64_t)t->claims)
			cf_report(cf,
				  "ticket T%" PRId64 " has %lld attempts in the database, %u "
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
		if (!cf->tickets[i].in_db && !cf->tickets[i].removable)
			cf_report(cf,
				  "ticket T%" PRId64 ": the trace names it, the database does "
				  "not have it",
				  cf->tickets[i].n);
}
