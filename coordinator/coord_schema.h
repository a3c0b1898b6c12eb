#ifndef BERTH_COORD_SCHEMA_H
#define BERTH_COORD_SCHEMA_H
#include <sqlite3.h>
#include <stddef.h>

/* The database's schema (DESIGN §3): its text, its forward migrations, and
 * the SQL spelling of the states. The bottom of the coordinator: this file
 * sits on the engines alone. */

#define COORD_SCHEMA_VERSION 11

/*
 * The states as SQL literals, for the schema's CHECKs and partial indexes
 * and for every statement that names a state (a partial index is used only
 * when the query names its state literally, so a bound parameter would not
 * do). They are the names of proto/states.c, quoted; coord_schema_test ties
 * the two together, so this is the one place in coordinator/ that spells a
 * state.
 */
#define SQL_TICKET_READY             "'ready'"
#define SQL_TICKET_HELD              "'held'"
#define SQL_TICKET_CLAIMED           "'claimed'"
#define SQL_TICKET_SUCCEEDED         "'succeeded'"
#define SQL_TICKET_FAILED            "'failed'"
#define SQL_TICKET_CANCELLED         "'cancelled'"
#define SQL_TICKET_DEPENDENCY_FAILED "'dependency_failed'"
/* Ended for good (ticket_state_final). */
#define SQL_TICKET_FINAL                                                    \
	SQL_TICKET_SUCCEEDED "," SQL_TICKET_FAILED "," SQL_TICKET_CANCELLED \
			     "," SQL_TICKET_DEPENDENCY_FAILED

#define SQL_RUN_CLAIMED   "'claimed'"
#define SQL_RUN_RUNNING   "'running'"
#define SQL_RUN_AFTERCARE "'aftercare'"
#define SQL_RUN_SUCCEEDED "'succeeded'"
#define SQL_RUN_FAILED    "'failed'"
#define SQL_RUN_TIMED_OUT "'timed_out'"
#define SQL_RUN_CANCELLED "'cancelled'"
#define SQL_RUN_ORPHANED  "'orphaned'"
#define SQL_RUN_ABORTED   "'aborted'"
#define SQL_RUN_LOST      "'lost'"
/* The nonterminal states: a run not yet settled (run_state_live). */
#define SQL_RUN_LIVE SQL_RUN_CLAIMED "," SQL_RUN_RUNNING "," SQL_RUN_AFTERCARE

#define SQL_STOP_CANCEL  "'cancel'"
#define SQL_STOP_TIMEOUT "'timeout'"

/* An activation's states: the coordinator's own, not part of states.h. */
#define SQL_ACT_QUEUED    "'queued'"
#define SQL_ACT_COMPLETED "'completed'"
#define SQL_ACT_CANCELLED "'cancelled'"

/* PostgreSQL (coord_schema_pg.c): its schema starts whole at
 * COORD_SCHEMA_PG_FIRST, the sqlite version it matches; every later
 * version appends a migration to both. */
#define COORD_SCHEMA_PG_FIRST 8
struct pg_conn;
/* Brings the PostgreSQL database on conn (a PGconn) to
 * COORD_SCHEMA_VERSION in one transaction, under an advisory lock so two
 * hosts' coordinators racing on an empty database cannot both create it.
 * 0, or -1 with a message in err. */
int coord_schema_pg_migrate(struct pg_conn *conn, const char *where, char *err, size_t errlen);

/* Brings the database at path to COORD_SCHEMA_VERSION inside one IMMEDIATE
 * transaction. 0, or -1 with a message in err; a schema newer than this
 * binary knows is refused (this binary does not know its invariants). */
int coord_schema_migrate(sqlite3 *db, const char *path, char *err, size_t errlen);
/* The same up to version to only: for tests that need an old database. */
int coord_schema_migrate_to(sqlite3 *db, const char *path, int64_t to, char *err, size_t errlen);

#endif
