/*
 * The final database against the replay (cf.h): every run's state,
 * owner, times and exit facts, every ticket's attempts and claimed state,
 * and what the trace named that the database lacks. The SQL is the kind
 * both stores speak (coord_db.h).
 */
#include <inttypes.h>
#include <string.h>

#include "cf.h"

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
		" coalesce(stop_reason, ''), coalesce(host, '') FROM runs ORDER BY ticket, attempt";
	struct coord_st *st;
	struct cf_run *r;
	const char *id;
	enum run_state s;
	size_t seen = 0;
	int has_record, code, sig, rc;

	if ((st = coord_db_q(cf->db, sql, "")) == NULL) {
		cf_report(cf, "reading runs: %s", coord_db_errmsg(cf->db));
		return;
	}
	while ((rc = coord_db_step(cf->db, st)) == 1) {
		id = coord_db_coltext(st, 0);
		cf->st->runs++;
		if ((r = cf_run(cf, id)) == NULL) {
			cf_report(cf,
				  "run %s (%s) is in the database, but no traced claim created it",
				  id, coord_db_coltext(st, 3));
			continue;
		}
		seen++;
		s = run_state_parse(coord_db_coltext(st, 3));
		if (coord_db_i64(st, 1) != r->ticket || coord_db_i64(st, 2) != (int64_t)r->attempt)
			cf_report(cf,
				  "run %s is attempt %" PRId64 " of T%" PRId64 " in the database; "
				  "the trace claimed it as attempt %u of T%" PRId64,
				  id, coord_db_i64(st, 2), coord_db_i64(st, 1), r->attempt,
				  r->ticket);
		if (r->state == CF_SETTLED ? !run_state_terminal(s) : s != r->state)
			cf_report(cf, "run %s is %s in the database, %s by the trace", id,
				  run_state_name(s), cf_state_name(r->state));
		else if (r->state == CF_SETTLED && r->aborted_if != 0 &&
			 (s == RUN_ABORTED) != (r->aborted_if > 0))
			cf_report(cf, "run %s is %s in the database; an abandon of it was %s", id,
				  run_state_name(s), r->aborted_if > 0 ? "granted" : "denied");
		/* settled_ms: set exactly by the decision that ended it. */
		if (coord_db_isnull(st, 9) != cf_live(r->state))
			cf_report(cf, "run %s has settled_ms %s, but the trace has it %s", id,
				  coord_db_isnull(st, 9) ? "NULL" : coord_db_coltext(st, 9),
				  cf_state_name(r->state));
		else if (!cf_live(r->state) && r->settled_ms >= 0 &&
			 coord_db_i64(st, 9) != r->settled_ms)
			cf_report(cf,
				  "run %s has settled_ms %s; the decision that settled it was "
				  "at %" PRId64,
				  id, coord_db_coltext(st, 9), r->settled_ms);
		if (r->claimed_ms >= 0 && coord_db_i64(st, 6) != r->claimed_ms)
			cf_report(cf, "run %s has claimed_ms %s; its claim was at %" PRId64, id,
				  coord_db_coltext(st, 6), r->claimed_ms);
		if ((!coord_db_isnull(st, 7)) != r->started)
			cf_report(cf, "run %s has started_ms %s, but the trace %s a start", id,
				  coord_db_isnull(st, 7) ? "NULL" : coord_db_coltext(st, 7),
				  r->started ? "granted" : "never granted");
		else if (r->started && r->started_ms >= 0 && coord_db_i64(st, 7) != r->started_ms)
			cf_report(cf, "run %s has started_ms %s; its start was at %" PRId64, id,
				  coord_db_coltext(st, 7), r->started_ms);
		/* The exit checkpoint: ended_ms and the record's facts exist
		 * exactly when a record_exit was granted, a code or signal
		 * exactly when it carried a record. */
		has_record = coord_db_i64(st, 10) != 0;
		code = !coord_db_isnull(st, 11);
		sig = !coord_db_isnull(st, 12);
		if ((!coord_db_isnull(st, 8)) != r->exited)
			cf_report(cf, "run %s has ended_ms %s, but the trace %s its record_exit",
				  id, coord_db_isnull(st, 8) ? "NULL" : coord_db_coltext(st, 8),
				  r->exited ? "granted" : "never granted");
		if (has_record && !r->exited)
			cf_report(cf, "run %s has an exit record, but no record_exit was granted",
				  id);
		if (has_record ? !(code || sig) : (code || sig))
			cf_report(cf, "run %s: has_record %d with exit_code %s and signal %s", id,
				  has_record, code ? coord_db_coltext(st, 11) : "NULL",
				  sig ? coord_db_coltext(st, 12) : "NULL");
		/* A success is only ever the job's own exit 0 (run_outcome). */
		if (s == RUN_SUCCEEDED && !(has_record && code && coord_db_i64(st, 11) == 0 &&
					    !sig && coord_db_coltext(st, 13)[0] == '\0'))
			cf_report(cf, "run %s succeeded without a recorded exit 0", id);
		/* The global trace: the host whose group granted its claim. */
		if (r->host != 0 &&
		    strcmp(cf->hosts[r->host - 1].id, coord_db_coltext(st, 14)) != 0)
			cf_report(cf,
				  "run %s was claimed by host '%s' in the database, by %s in "
				  "the trace",
				  id, coord_db_coltext(st, 14), cf->hosts[r->host - 1].id);
		if (r->owner[0] != '\0' && strcmp(r->owner, coord_db_coltext(st, 4)) != 0)
			cf_report(cf, "run %s is owned by '%s' in the database, by %s in the trace",
				  id, coord_db_coltext(st, 4), r->owner);
		if (strcmp(r->checkpointer, coord_db_coltext(st, 5)) != 0)
			cf_report(cf,
				  "run %s: aftercare_owner '%s' in the database, '%s' granted its "
				  "record_exit",
				  id, coord_db_coltext(st, 5), r->checkpointer);
		if ((coord_db_coltext(st, 13)[0] != '\0') != r->stop ||
		    (r->cancel && strcmp(coord_db_coltext(st, 13), "cancel") != 0))
			cf_report(cf, "run %s has stop_reason '%s', but the trace %s", id,
				  coord_db_coltext(st, 13),
				  r->cancel ? "cancelled it"
				  : r->stop ? "marked a stop"
					    : "asked it to stop neither by cancel nor mark_stop");
	}
	if (rc < 0) {
		cf_report(cf, "reading runs: %s", coord_db_errmsg(cf->db));
		return;
	}
	if (seen != cf->nruns) {
		static const char q_run[] = "SELECT 1 FROM runs WHERE id = ?";
		int64_t one;
		size_t i;

		for (i = 0; i < cf->nruns; i++) {
			if ((rc = coord_db_int(cf->db, &one, q_run, "t", cf->runs[i].id)) < 0) {
				cf_report(cf, "reading runs: %s", coord_db_errmsg(cf->db));
				return;
			}
			if (rc == 0 && !cf_removed(cf, cf->runs[i].ticket))
				cf_report(cf,
					  "run %s (T%" PRId64
					  "): the trace claimed it, the database "
					  "does not have it",
					  cf->runs[i].id, cf->runs[i].ticket);
		}
	}
}

void
cf_db_tickets(struct cf *cf)
{
	static const char sql[] = "SELECT n, state, attempts FROM tickets ORDER BY n";
	struct cf_ticket none = { 0 }, *t;
	struct coord_st *st;
	int64_t n;
	size_t i;
	int claimed, rc;

	if ((st = coord_db_q(cf->db, sql, "")) == NULL) {
		cf_report(cf, "reading tickets: %s", coord_db_errmsg(cf->db));
		return;
	}
	while ((rc = coord_db_step(cf->db, st)) == 1) {
		n = coord_db_i64(st, 0);
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
		if (coord_db_i64(st, 2) != (int64_t)t->claims)
			cf_report(cf,
				  "ticket T%" PRId64 " has %" PRId64 " attempts in the database, "
				  "%u granted claims in the trace",
				  n, coord_db_i64(st, 2), t->claims);
		/* A ticket is claimed exactly while it has an unsettled run. */
		claimed = strcmp(coord_db_coltext(st, 1), ticket_state_name(TICKET_CLAIMED)) == 0;
		if (claimed != (t->live != 0))
			cf_report(cf, "ticket T%" PRId64 " is %s in the database%s%s", n,
				  coord_db_coltext(st, 1),
				  t->live ? ", but the trace has its run unsettled: "
					  : ", but the trace settled every run of it",
				  t->live ? cf->runs[t->live - 1].id : "");
	}
	if (rc < 0) {
		cf_report(cf, "reading tickets: %s", coord_db_errmsg(cf->db));
		return;
	}
	for (i = 0; i < cf->ntickets; i++)
		if (!cf->tickets[i].in_db && !cf->tickets[i].removable)
			cf_report(cf,
				  "ticket T%" PRId64 ": the trace names it, the database does "
				  "not have it",
				  cf->tickets[i].n);
}
