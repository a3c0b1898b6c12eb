#ifndef BERTH_COORD_ROWS_H
#define BERTH_COORD_ROWS_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_db.h"
#include "states.h"

/* Rows as messages, and the names rows go by: runs, actors and process
 * identities read into their Berth__ messages, ticket ids and run aliases,
 * and the JSON arrays argv and env are stored as. Bottom floor: this file
 * reads the database (coord_db.h) and knows no verb. */

struct coord_db;
struct ident;

/* Ticket ids are T<n> (t<n> is read too); aliases T<n>-r<attempt>; run ids
 * 32 lowercase hex digits. The parsers return 0 or -1. */
int coord_rows_ticket_parse(const char *id, int64_t *n);
int coord_rows_alias_parse(const char *id, int64_t *n, int64_t *attempt);
int coord_rows_is_hex(const char *str, size_t len);
void coord_rows_ticket_name(int64_t n, char *buf, size_t len);
void coord_rows_alias_name(int64_t n, int64_t attempt, char *buf, size_t len);

/* The columns coord_rows_run reads, of runs r and leases l. */
#define COORD_RUN_COLS                                                                          \
	"r.id, r.ticket, r.attempt, r.state, r.owner, r.boot_id, r.pid, r.start_time, r.pgid, " \
	"r.has_record, r.exit_code, r.signal, r.reason, r.claimed_ms, r.started_ms, "           \
	"r.ended_ms, r.settled_ms, l.expires_ms, r.progress_label, r.progress_index, "          \
	"r.progress_total, r.progress_ms, r.stop_reason, r.stop_ms, r.output_bytes, "           \
	"r.capture_complete, r.timeout_ms, r.heartbeat_ms, r.aftercare_owner, r.stragglers, "   \
	"r.disk_full, r.host, r.epoch"
Berth__Run *coord_rows_run(struct coord_st *st);
/* Appends every row of st (COORD_RUN_COLS) to *v: the step result (0, or
 * -1 on error). st is reset. */
int coord_rows_runs(struct coord_db *db, struct coord_st *st, Berth__Run ***v, size_t *n,
		    size_t *cap);
/* One run by id, with its notes when asked; NULL when absent or on error. */
Berth__Run *coord_rows_run_load(struct coord_db *db, const char *run_id, int with_notes);
/* Ticket n's state into *ts (TICKET_ABSENT without
 * a row): 0, or -1 on error. */
int coord_rows_ticket_state(struct coord_db *db, int64_t n, enum ticket_state *ts);
/* Every actor that said hello, most recently seen first. */
Berth__Actor **coord_rows_actors(struct coord_db *db, size_t *n);

/* The identity in columns boot_id, pid, start_time, pgid (col is boot_id's,
 * the others follow); NULL when pid is NULL. */
Berth__Ident *coord_rows_ident(struct coord_st *st, int col);
/* The same from a struct ident. */
Berth__Ident *coord_rows_ident_of(const struct ident *id);

/* A JSON array of strings (argv, env), malloc'd. */
char *coord_rows_json_array(char *const *v, size_t n);
/* Reads such an array back into *out (n strings): 0 or -1. */
int coord_rows_json_list(struct coord_db *db, const char *json, char ***out, size_t *n);

#endif
