/* The coordinator's schema and its forward migrations (DESIGN §3). */
#include <inttypes.h>
#include <stdio.h>

#include "coord_schema.h"

/* Version 1. Every table's invariants are enforced by the engine where it
 * can: one lease per ticket and per run, one run per (ticket, attempt), and
 * "nonterminal <=> settled_ms IS NULL" as a CHECK. */
static const char schema_v1[] =
	"CREATE TABLE tickets ("
	" n INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL DEFAULT '',"
	" argv TEXT NOT NULL,"
	" workdir TEXT NOT NULL DEFAULT '',"
	" env TEXT NOT NULL DEFAULT '[]',"
	" seat_key TEXT NOT NULL DEFAULT '',"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" max_attempts INTEGER NOT NULL DEFAULT 1,"
	" priority INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL CHECK (state IN"
	"  (" SQL_TICKET_READY "," SQL_TICKET_HELD "," SQL_TICKET_CLAIMED "," SQL_TICKET_SUCCEEDED
	"," SQL_TICKET_FAILED "," SQL_TICKET_CANCELLED ")),"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" bad_runs INTEGER NOT NULL DEFAULT 0,"
	" every_ms INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" updated_ms INTEGER NOT NULL);"
	"CREATE INDEX tickets_ready ON tickets(priority DESC, n) WHERE state = " SQL_TICKET_READY
	";"
	"CREATE INDEX tickets_state ON tickets(state, n);"
	"CREATE TABLE ticket_deps ("
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" dep INTEGER NOT NULL REFERENCES tickets(n),"
	" PRIMARY KEY (ticket, dep)) WITHOUT ROWID;"
	"CREATE TABLE activations ("
	" id INTEGER PRIMARY KEY,"
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" kind TEXT NOT NULL CHECK (kind IN ('now','at','every')),"
	" due_ms INTEGER NOT NULL,"
	" every_ms INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL CHECK (state IN (" SQL_ACT_QUEUED "," SQL_ACT_COMPLETED
	"," SQL_ACT_CANCELLED ")),"
	" run_id TEXT,"
	" created_ms INTEGER NOT NULL,"
	" done_ms INTEGER);"
	"CREATE INDEX activations_queued ON activations(ticket, due_ms) WHERE state = " SQL_ACT_QUEUED
	";"
	"CREATE INDEX activations_due ON activations(due_ms) WHERE state = " SQL_ACT_QUEUED ";"
	"CREATE INDEX activations_run ON activations(run_id) WHERE run_id IS NOT NULL;"
	"CREATE TABLE runs ("
	" id TEXT PRIMARY KEY,"
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" attempt INTEGER NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN (" SQL_RUN_CLAIMED "," SQL_RUN_RUNNING
	"," SQL_RUN_AFTERCARE "," SQL_RUN_SUCCEEDED ","
	"  " SQL_RUN_FAILED "," SQL_RUN_TIMED_OUT "," SQL_RUN_CANCELLED "," SQL_RUN_ORPHANED
	"," SQL_RUN_ABORTED ")),"
	" owner TEXT NOT NULL DEFAULT '',"
	" token_hash TEXT NOT NULL,"
	" boot_id TEXT, pid INTEGER, start_time INTEGER, pgid INTEGER,"
	" has_record INTEGER NOT NULL DEFAULT 0,"
	" exit_code INTEGER, signal INTEGER,"
	" reason TEXT,"
	" claimed_ms INTEGER NOT NULL, started_ms INTEGER, ended_ms INTEGER, settled_ms INTEGER,"
	" progress_label TEXT, progress_index INTEGER, progress_total INTEGER, progress_ms INTEGER,"
	" stop_reason TEXT, stop_ms INTEGER,"
	" output_bytes INTEGER, capture_complete INTEGER,"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" heartbeat_ms INTEGER,"
	" UNIQUE (ticket, attempt),"
	" CHECK ((settled_ms IS NULL) = (state IN (" SQL_RUN_LIVE "))));"
	"CREATE INDEX runs_unsettled ON runs(owner) WHERE settled_ms IS NULL;"
	"CREATE INDEX runs_settled ON runs(settled_ms) WHERE settled_ms IS NOT NULL;"
	"CREATE TABLE run_notes ("
	" id INTEGER PRIMARY KEY,"
	" run_id TEXT NOT NULL REFERENCES runs(id),"
	" ts_ms INTEGER NOT NULL,"
	" text TEXT NOT NULL);"
	"CREATE INDEX run_notes_run ON run_notes(run_id, id);"
	"CREATE TABLE leases ("
	" ticket_id INTEGER PRIMARY KEY REFERENCES tickets(n),"
	" run_id TEXT NOT NULL UNIQUE REFERENCES runs(id),"
	" owner TEXT NOT NULL,"
	" acquired_ms INTEGER NOT NULL,"
	" renewed_ms INTEGER NOT NULL,"
	" expires_ms INTEGER NOT NULL);"
	"CREATE TABLE seats ("
	" item TEXT PRIMARY KEY,"
	" seat_key TEXT NOT NULL,"
	" workdir TEXT NOT NULL DEFAULT '',"
	" owner TEXT NOT NULL,"
	" acquired_ms INTEGER NOT NULL,"
	" heartbeat_ms INTEGER NOT NULL,"
	" ttl_ms INTEGER NOT NULL DEFAULT 0,"
	" boot_id TEXT, pid INTEGER NOT NULL DEFAULT 0, start_time INTEGER, pgid INTEGER,"
	" stop_reason TEXT, stop_ms INTEGER,"
	" activity_index INTEGER, activity_total INTEGER, activity_label TEXT, activity_ms INTEGER,"
	" run_id TEXT UNIQUE REFERENCES runs(id));"
	"CREATE INDEX seats_key ON seats(seat_key);"
	"CREATE INDEX seats_workdir ON seats(workdir) WHERE workdir != '';"
	"CREATE TABLE requests ("
	" instance TEXT NOT NULL,"
	" req_id INTEGER NOT NULL,"
	" ts_ms INTEGER NOT NULL,"
	" verb TEXT NOT NULL,"
	" decision TEXT NOT NULL,"
	" reason TEXT, ticket TEXT, run TEXT,"
	" reply BLOB NOT NULL,"
	" PRIMARY KEY (instance, req_id)) WITHOUT ROWID;"
	"CREATE INDEX requests_ts ON requests(ts_ms);"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY,"
	" ts_ms INTEGER NOT NULL,"
	" verb TEXT NOT NULL,"
	" ticket TEXT, run TEXT,"
	" decision TEXT NOT NULL,"
	" reason TEXT, actor TEXT, instance TEXT);"
	"CREATE TABLE actors ("
	" instance TEXT PRIMARY KEY,"
	" actor TEXT NOT NULL DEFAULT '',"
	" boot_id TEXT, pid INTEGER, start_time INTEGER, pgid INTEGER,"
	" slots INTEGER NOT NULL DEFAULT 0,"
	" seen_ms INTEGER NOT NULL);";

/* Version 2: a ticket whose workdir is only the caller's cwd (the CLI
 * says so with Add.workdir_default) runs there without taking the working
 * tree as a seat; only a named --workdir does. */
static const char schema_v2[] =
	"ALTER TABLE tickets ADD COLUMN tree_seat INTEGER NOT NULL DEFAULT 1;";

/* Version 3: the trace line of the last committed decision, written in the
 * decision's own transaction, so the line survives a crash between COMMIT
 * and its write to trace/trace.jsonl (coord_exec.c). */
static const char schema_v3[] = "CREATE TABLE trace_tail ("
				" id INTEGER PRIMARY KEY CHECK (id = 1),"
				" seq INTEGER NOT NULL,"
				" line TEXT NOT NULL);";

/* Version 4: berth add --isolate (Add.isolate), kept with the ticket and
 * handed to the supervisor with every claim (ClaimGranted.isolate). */
static const char schema_v4[] = "ALTER TABLE tickets ADD COLUMN isolate INTEGER NOT NULL DEFAULT 0"
				" CHECK (isolate IN (0, 1));";

/* Version 5: who may ask what (DESIGN §1, §5). A stored reply belongs to
 * the sender that made the request, as the coordinator verified it
 * (class, pid and start time: coord_caller_sender), not to whatever
 * instance a request names: `sender` joins the key. Replies stored by an
 * older binary keep sender '' and answer nobody (a group is restarted with
 * its new binaries, and a new process never resends an old one's
 * requests). runs.aftercare_owner is the instance granted the run's exit
 * checkpoint: only it settles the run, or recovery once its identity is
 * gone (DESIGN §4). */
static const char schema_v5[] =
	"CREATE TABLE requests_v5 ("
	" sender TEXT NOT NULL,"
	" instance TEXT NOT NULL,"
	" req_id INTEGER NOT NULL,"
	" ts_ms INTEGER NOT NULL,"
	" verb TEXT NOT NULL,"
	" decision TEXT NOT NULL,"
	" reason TEXT, ticket TEXT, run TEXT,"
	" reply BLOB NOT NULL,"
	" PRIMARY KEY (sender, instance, req_id)) WITHOUT ROWID;"
	"INSERT INTO requests_v5 (sender, instance, req_id, ts_ms, verb, decision, reason, ticket,"
	" run, reply) SELECT '', instance, req_id, ts_ms, verb, decision, reason, ticket, run,"
	" reply FROM requests;"
	"DROP TABLE requests;"
	"ALTER TABLE requests_v5 RENAME TO requests;"
	"CREATE INDEX requests_ts ON requests(ts_ms);"
	"ALTER TABLE runs ADD COLUMN aftercare_owner TEXT;";

/* Version 6: the rest of satelle's lease (docs/SEATS.md). A seat says what
 * its holder does and where it is (kind, state); a task seat takes part in
 * no arbitration; an in-flight mark (in_flight_ms NULL when there is none)
 * with its own TTL and the identity of the process making the transition;
 * and who asked for a stop. */
static const char schema_v6[] =
	"ALTER TABLE seats ADD COLUMN kind TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE seats ADD COLUMN state TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE seats ADD COLUMN task INTEGER NOT NULL DEFAULT 0 CHECK (task IN (0, 1));"
	"ALTER TABLE seats ADD COLUMN in_flight_ms INTEGER;"
	"ALTER TABLE seats ADD COLUMN in_flight_ttl_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE seats ADD COLUMN in_flight_boot_id TEXT;"
	"ALTER TABLE seats ADD COLUMN in_flight_pid INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE seats ADD COLUMN in_flight_start_time INTEGER;"
	"ALTER TABLE seats ADD COLUMN stop_by TEXT;";

/*
 * Version 7 (docs/CLI.md, DESIGN §4): the ticket state dependency_failed
 * (a ticket whose --after dependency failed or was cancelled for good),
 * with the dependency that did it (failed_dep), and berth add --after-any
 * (after_any: the ticket waits for its dependencies to finish, not to
 * succeed). A CHECK cannot be altered, so tickets is rebuilt under a new
 * name and renamed back (foreign keys are off for the migration:
 * coord_schema_migrate); AUTOINCREMENT's high mark is carried over, so a
 * removed ticket's number is never given again. Tickets an earlier version
 * left blocked forever behind a failed or cancelled dependency end
 * dependency_failed, as they would have from now on. Also the group's
 * runtime settings (berth slots, berth pause), for the life of one
 * launch (launch_id: coord_group.c).
 */
static const char schema_v7[] =
	"CREATE TEMP TABLE v7_seq AS SELECT seq FROM sqlite_sequence WHERE name = 'tickets';"
	"CREATE TABLE tickets_v7 ("
	" n INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL DEFAULT '',"
	" argv TEXT NOT NULL,"
	" workdir TEXT NOT NULL DEFAULT '',"
	" env TEXT NOT NULL DEFAULT '[]',"
	" seat_key TEXT NOT NULL DEFAULT '',"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" max_attempts INTEGER NOT NULL DEFAULT 1,"
	" priority INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL CHECK (state IN"
	"  (" SQL_TICKET_READY "," SQL_TICKET_HELD "," SQL_TICKET_CLAIMED "," SQL_TICKET_SUCCEEDED
	"," SQL_TICKET_FAILED "," SQL_TICKET_CANCELLED "," SQL_TICKET_DEPENDENCY_FAILED ")),"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" bad_runs INTEGER NOT NULL DEFAULT 0,"
	" every_ms INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" updated_ms INTEGER NOT NULL,"
	" tree_seat INTEGER NOT NULL DEFAULT 1,"
	" isolate INTEGER NOT NULL DEFAULT 0 CHECK (isolate IN (0, 1)),"
	" after_any INTEGER NOT NULL DEFAULT 0 CHECK (after_any IN (0, 1)),"
	" failed_dep INTEGER,"
	" CHECK ((failed_dep IS NOT NULL) = (state = " SQL_TICKET_DEPENDENCY_FAILED ")));"
	"INSERT INTO tickets_v7 (n, name, argv, workdir, env, seat_key, timeout_ms, max_attempts,"
	" priority, state, attempts, bad_runs, every_ms, created_ms, updated_ms, tree_seat, isolate)"
	" SELECT n, name, argv, workdir, env, seat_key, timeout_ms, max_attempts, priority, state,"
	" attempts, bad_runs, every_ms, created_ms, updated_ms, tree_seat, isolate FROM tickets;"
	"DROP TABLE tickets;"
	"ALTER TABLE tickets_v7 RENAME TO tickets;"
	"UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM v7_seq), 0))"
	" WHERE name = 'tickets';"
	"DROP TABLE v7_seq;"
	"CREATE INDEX tickets_ready ON tickets(priority DESC, n) WHERE state = " SQL_TICKET_READY
	";"
	"CREATE INDEX tickets_state ON tickets(state, n);"
	"CREATE INDEX ticket_deps_dep ON ticket_deps(dep);"
	"WITH RECURSIVE bad(n) AS ("
	"  SELECT n FROM tickets WHERE state IN (" SQL_TICKET_FAILED "," SQL_TICKET_CANCELLED ")"
	"  UNION SELECT d.ticket FROM ticket_deps d JOIN bad ON d.dep = bad.n"
	"  JOIN tickets t ON t.n = d.ticket WHERE t.state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD
	"))"
	" UPDATE tickets SET state = " SQL_TICKET_DEPENDENCY_FAILED ","
	"  failed_dep = (SELECT min(d.dep) FROM ticket_deps d WHERE d.ticket = tickets.n"
	"   AND d.dep IN bad)"
	" WHERE state IN (" SQL_TICKET_READY "," SQL_TICKET_HELD ") AND n IN bad;"
	"CREATE TABLE settings ("
	" key TEXT PRIMARY KEY,"
	" value TEXT NOT NULL) WITHOUT ROWID;";

/* Version 8: what the shim recorded of a run's end beyond its exit
 * (Settle.stragglers, Settle.disk_full): how many descendants of the job
 * it ended, and whether the output's file system was full (the output may
 * be cut; the exit status never is). NULL for runs settled before. */
static const char schema_v8[] =
	"ALTER TABLE runs ADD COLUMN stragglers INTEGER;"
	"ALTER TABLE runs ADD COLUMN disk_full INTEGER CHECK (disk_full IN (0, 1));";

/* Version 9 (DESIGN §13, docs/MANY-HOSTS.md): many hosts on one store. A
 * host's lease (renewed on the store's clock, berth_now_ms()) and epoch;
 * the host and epoch a run was claimed under, and a seat's host; the run
 * state lost (a run fenced when its host was declared lost). The CHECK on
 * runs.state cannot be altered, so runs is rebuilt as tickets was in v7;
 * the runs already there were claimed by this home's host (host '' until
 * its coordinator names it at start: coord_hosts_register). A host's
 * coordinator keeps its last group's trace lines in trace_tails, its own
 * row, since hosts sharing a store each write a trace of their own. */
static const char schema_v9[] =
	"CREATE TABLE hosts ("
	" host TEXT PRIMARY KEY,"
	" boot_id TEXT NOT NULL DEFAULT '',"
	" epoch INTEGER NOT NULL,"
	" ttl_ms INTEGER NOT NULL,"
	" renewed_ms INTEGER NOT NULL,"
	" expires_ms INTEGER NOT NULL,"
	" lost_ms INTEGER) WITHOUT ROWID;"
	"CREATE TABLE runs_v9 ("
	" id TEXT PRIMARY KEY,"
	" ticket INTEGER NOT NULL REFERENCES tickets(n),"
	" attempt INTEGER NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN (" SQL_RUN_CLAIMED "," SQL_RUN_RUNNING
	"," SQL_RUN_AFTERCARE "," SQL_RUN_SUCCEEDED ","
	"  " SQL_RUN_FAILED "," SQL_RUN_TIMED_OUT "," SQL_RUN_CANCELLED "," SQL_RUN_ORPHANED
	"," SQL_RUN_ABORTED "," SQL_RUN_LOST ")),"
	" owner TEXT NOT NULL DEFAULT '',"
	" token_hash TEXT NOT NULL,"
	" boot_id TEXT, pid INTEGER, start_time INTEGER, pgid INTEGER,"
	" has_record INTEGER NOT NULL DEFAULT 0,"
	" exit_code INTEGER, signal INTEGER,"
	" reason TEXT,"
	" claimed_ms INTEGER NOT NULL, started_ms INTEGER, ended_ms INTEGER, settled_ms INTEGER,"
	" progress_label TEXT, progress_index INTEGER, progress_total INTEGER, progress_ms INTEGER,"
	" stop_reason TEXT, stop_ms INTEGER,"
	" output_bytes INTEGER, capture_complete INTEGER,"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" heartbeat_ms INTEGER,"
	" aftercare_owner TEXT,"
	" stragglers INTEGER,"
	" disk_full INTEGER CHECK (disk_full IN (0, 1)),"
	" host TEXT NOT NULL DEFAULT '',"
	" epoch INTEGER NOT NULL DEFAULT 0,"
	" UNIQUE (ticket, attempt),"
	" CHECK ((settled_ms IS NULL) = (state IN (" SQL_RUN_LIVE "))));"
	"INSERT INTO runs_v9 (id, ticket, attempt, state, owner, token_hash, boot_id, pid,"
	" start_time, pgid, has_record, exit_code, signal, reason, claimed_ms, started_ms,"
	" ended_ms, settled_ms, progress_label, progress_index, progress_total, progress_ms,"
	" stop_reason, stop_ms, output_bytes, capture_complete, timeout_ms, heartbeat_ms,"
	" aftercare_owner, stragglers, disk_full)"
	" SELECT id, ticket, attempt, state, owner, token_hash, boot_id, pid,"
	" start_time, pgid, has_record, exit_code, signal, reason, claimed_ms, started_ms,"
	" ended_ms, settled_ms, progress_label, progress_index, progress_total, progress_ms,"
	" stop_reason, stop_ms, output_bytes, capture_complete, timeout_ms, heartbeat_ms,"
	" aftercare_owner, stragglers, disk_full FROM runs;"
	"DROP TABLE runs;"
	"ALTER TABLE runs_v9 RENAME TO runs;"
	"CREATE INDEX runs_unsettled ON runs(owner) WHERE settled_ms IS NULL;"
	"CREATE INDEX runs_settled ON runs(settled_ms) WHERE settled_ms IS NOT NULL;"
	"CREATE INDEX runs_host ON runs(host, claimed_ms) WHERE settled_ms IS NULL;"
	"ALTER TABLE seats ADD COLUMN host TEXT NOT NULL DEFAULT '';"
	"CREATE TABLE trace_tails ("
	" host TEXT PRIMARY KEY,"
	" seq INTEGER NOT NULL,"
	" line TEXT NOT NULL) WITHOUT ROWID;";

/* Version 10 (DESIGN §13 "the trace keeps a global order", docs/MANY-HOSTS.md
 * "One trace"): on a shared store every host's coordinator appends each
 * group's trace lines to trace_log in the group's transaction; its id,
 * assigned there while the decision lock is held, is the global order of
 * the groups. Written on PostgreSQL only: a sqlite store is one host's, and
 * its trace file is the whole trace. Pruned with the stored replies. */
static const char schema_v10[] = "CREATE TABLE trace_log ("
				 " id INTEGER PRIMARY KEY,"
				 " ts_ms INTEGER NOT NULL,"
				 " host TEXT NOT NULL,"
				 " seq INTEGER NOT NULL,"
				 " lines TEXT NOT NULL);"
				 "CREATE INDEX trace_log_ts ON trace_log(ts_ms);";

/* Version 11 (docs/MANY-HOSTS.md "Placement"): a ticket may ask for one
 * host (berth add --host: host_wanted, '' for any) and for labels a host
 * must offer (--on), and a host records the labels it offers
 * (berth-coordinator --labels) with its lease. Labels are kept joined by
 * commas (common/labels.h); '' is none. The claim matches them with
 * berth_labels_ok(need, have), which each backend provides. tickets_ready
 * carries the two columns, so the claim's walk judges placement from the
 * index alone: a ticket without it costs no seek of its row. */
static const char schema_v11[] =
	"ALTER TABLE tickets ADD COLUMN host_wanted TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE tickets ADD COLUMN labels TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE hosts ADD COLUMN labels TEXT NOT NULL DEFAULT '';"
	"DROP INDEX tickets_ready;"
	"CREATE INDEX tickets_ready ON tickets(priority DESC, n, host_wanted, labels)"
	" WHERE state = " SQL_TICKET_READY ";";

/* Forward migrations: migrations[v] takes a database from version v to
 * v + 1. A new version appends here and bumps COORD_SCHEMA_VERSION. */
static const char *const migrations[COORD_SCHEMA_VERSION] = { schema_v1,  schema_v2, schema_v3,
							      schema_v4,  schema_v5, schema_v6,
							      schema_v7,  schema_v8, schema_v9,
							      schema_v10, schema_v11 };

static int
schema_version(sqlite3 *db, int64_t *v)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int
schema_step(sqlite3 *db, int64_t to, char *err, size_t errlen, const char *path)
{
	char sql[64];

	if (sqlite3_exec(db, migrations[to - 1], NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: migration to version %" PRId64 " failed: %s", path, to,
			 sqlite3_errmsg(db));
		return -1;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version=%" PRId64, to);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot set schema version", path);
		return -1;
	}
	return 0;
}

/* Foreign keys are kept with every migration: none may leave a dangling
 * reference. */
static int
schema_fk_check(sqlite3 *db, char *err, size_t errlen, const char *path)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: foreign_key_check: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(err, errlen, "%s: migration leaves a dangling reference in %s", path,
			 (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
schema_fk_on(sqlite3 *db, char *err, size_t errlen, const char *path)
{
	if (sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	if (err != NULL)
		snprintf(err, errlen, "%s: cannot turn foreign keys on: %s", path,
			 sqlite3_errmsg(db));
	return -1;
}

/* One IMMEDIATE transaction, so two coordinators racing on a fresh file
 * cannot both create it. */
int
coord_schema_migrate(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	return coord_schema_migrate_to(db, path, COORD_SCHEMA_VERSION, err, errlen);
}

int
coord_schema_migrate_to(sqlite3 *db, const char *path, int64_t to, char *err, size_t errlen)
{
	int64_t v = 0;

	/* A migration that rebuilds a table (v7) needs foreign keys off,
	 * which only takes effect outside a transaction; the result is
	 * checked before COMMIT instead. */
	if (sqlite3_exec(db, "PRAGMA foreign_keys=OFF", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot lock: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	if (schema_version(db, &v) != 0) {
		snprintf(err, errlen, "%s: cannot read schema version: %s", path,
			 sqlite3_errmsg(db));
		goto fail;
	}
	if (v > COORD_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: database schema version %" PRId64
			 " is newer than this coordinator's version %d; upgrade berth",
			 path, v, COORD_SCHEMA_VERSION);
		goto fail;
	}
	if (v < 0) {
		snprintf(err, errlen, "%s: bad schema version %" PRId64, path, v);
		goto fail;
	}
	for (; v < to && v < COORD_SCHEMA_VERSION; v++)
		if (schema_step(db, v + 1, err, errlen, path) != 0)
			goto fail;
	if (schema_fk_check(db, err, errlen, path) != 0)
		goto fail;
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot commit schema: %s", path, sqlite3_errmsg(db));
		goto fail;
	}
	return schema_fk_on(db, err, errlen, path);
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	schema_fk_on(db, err[0] ? NULL : err, errlen, path);
	return -1;
}
