#ifndef BERTH_COORD_FIXTURE_H
#define BERTH_COORD_FIXTURE_H
/* The coordinator's unit tests share this fixture: a real store (a sqlite
 * database in a temporary directory, or a schema of its own on the
 * PostgreSQL server BERTH_TEST_STORE names: store_fixture.h), requests executed through coord_exec_request
 * as instance "test", the wall clock faked at T0, and one helper per verb.
 * Each tests/unit/coord_<module>_test.c uses it for its module's rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "berth.pb-c.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "ident.h"
#include "store_fixture.h"

#define T0 1000000

extern struct coord_db_opts fx_opts;

struct fx {
	char dir[64];
	struct test_store ts;
	/* The store (sqlite path or PostgreSQL URL) for a second
	 * connection to it: f->ts.store. */
	const char *store;
	struct coord_db *db;
	struct coord_result res;
	uint64_t req_id;
	/* Who the next requests come from, when set: their instance and
	 * actor name (default "test", which acts in every role) and the
	 * caller as a connection would have it (default NULL: the
	 * coordinator's own process). */
	const char *as_instance;
	const char *as_actor;
	const struct coord_caller *as_caller;
	/* With trace set, requests are decided as the server decides them,
	 * their trace lines formatted and kept from seq trace_seq on. */
	int trace;
	uint64_t trace_seq;
};

#define assert_granted(r)                                                       \
	do {                                                                    \
		const Berth__Reply *_r = (r);                                   \
		if (_r->result_case != BERTH__REPLY__RESULT_GRANTED)            \
			fail_msg("not granted: %s %s",                          \
				 _r->result_case == BERTH__REPLY__RESULT_DENIED \
					 ? _r->denied->reason                   \
					 : "error",                             \
				 _r->result_case == BERTH__REPLY__RESULT_ERROR  \
					 ? _r->error->message                   \
					 : "");                                 \
	} while (0)

struct addopt {
	const char *key;
	const char *workdir;
	const char *after;
	uint32_t retries;
	int64_t at_ms;
	int64_t every_ms;
	int hold;
	int32_t priority;
	int after_any;
};

struct seatopt {
	const char *key;
	const char *workdir;
	int64_t ttl_ms;
	const struct ident *ident;
	const char *kind;
	const char *state;
	int task;
	int in_flight;
	int64_t in_flight_ttl_ms;
	const struct ident *in_flight_ident;
};

/* cmocka setup and teardown: a fresh database per test. */
int setup(void **state);
int teardown(void **state);
/* Executes req as instance "test" with a fresh request id (unless set) and
 * keeps the result in f->res until the next call. */
const Berth__Reply *ex_on(struct fx *f, struct coord_db *s, Berth__Request *req);
const Berth__Reply *ex(struct fx *f, Berth__Request *req);
const char *denied(const Berth__Reply *r);
const char *fact(const Berth__Reply *r, const char *key);
int errcode(const Berth__Reply *r);
/* Adds a ticket running "true" and returns its id (static buffer). */
const char *add_opt(struct fx *f, const struct addopt *o);
const char *add(struct fx *f);
const Berth__Reply *claim_as(struct fx *f, struct coord_db *s, const char *ticket,
			     uint32_t lease_ms, const char *instance);
const Berth__Reply *claim(struct fx *f, const char *ticket);
/* Claims ticket (or the next) and returns the run id and token. */
void claim_ok(struct fx *f, const char *ticket, char run[40], char token[80]);
const Berth__Reply *start(struct fx *f, const char *run);
/* A claim of ticket (NULL: the next) carrying a waiting shim's identity
 * (the fused claim + start; pid 4242, start time 99, pgid 4242). */
const Berth__Reply *claim_shim(struct fx *f, const char *ticket);
/* record_exit of run with exit code code, carrying a fused settle
 * (outcome NULL: the coordinator derives it). */
const Berth__Reply *exit_settle(struct fx *f, const char *run, int code, const char *outcome);
/* The reply of the last request as it was sent (its parts' answers in
 * Reply.then): the packed bytes unpacked (valid until the next call). */
const Berth__Reply *sent(struct fx *f);
const Berth__Reply *record_exit(struct fx *f, const char *run, int has_record, int code, int sig);
const Berth__Reply *settle(struct fx *f, const char *run, const char *outcome);
const Berth__Reply *abandon(struct fx *f, const char *run);
const Berth__Reply *renew(struct fx *f, const char *ticket, const char *run);
const Berth__Reply *readopt(struct fx *f, const char *ticket, const char *run, const char *owner);
/* Says hello as instance (actor names its role) with identity id (NULL:
 * none). */
const Berth__Reply *hello_as(struct fx *f, const char *instance, const char *actor,
			     const struct ident *id);
/* readopt sent as actor and instance (NULL: the fixture's). */
const Berth__Reply *readopt_as(struct fx *f, const char *actor, const char *instance,
			       const char *ticket, const char *run, const char *owner);
const Berth__Reply *ticket_verb(struct fx *f, Berth__Request__VerbCase verb, const char *id);
const Berth__Ticket *show(struct fx *f, const char *id);
const Berth__Reply *mark_stop(struct fx *f, const char *run, const char *reason);
/* The first column of sql's first row (-1 for no row); sql may be a
 * formatted buffer. */
int64_t sql_int(struct fx *f, const char *sql);
/* Runs sql (one or more statements, no parameters): 0, or -1 when the
 * store refused it (a CHECK, a constraint), its message in
 * coord_db_errmsg. */
int sql_run(struct fx *f, const char *sql);
/* The stored reply (a blob) in the one row sql selects, unpacked (free it
 * with berth__reply__free_unpacked). */
Berth__Reply *stored_reply(struct fx *f, const char *sql);
/* Runs a ticket through claim/start/record_exit and returns its run. */
void run_to_exit(struct fx *f, const char *ticket, int code, char run[40]);
const Berth__Reply *worker(struct fx *f, Berth__Request__VerbCase v, const char *token,
			   const char *run);
const Berth__Reply *seat_acquire(struct fx *f, const char *item, const char *owner,
				 const struct seatopt *o);
const Berth__Reply *seat_verb(struct fx *f, Berth__Request__VerbCase v, const char *item,
			      const char *owner);
const Berth__Reply *seat_confirm(struct fx *f, const char *item, const char *owner,
				 const char *state);
const char *outcome(const Berth__Reply *r);
const Berth__Seat *seat_show(struct fx *f, const char *item);
int64_t seat_count(struct fx *f);
/* An identity of a process that existed and is gone now. */
void dead_ident(struct ident *id);
/* The fixture's coordinator becomes host id (boot id "boot-<id>"), offering
 * labels, with a lease of ttl_ms, registered afresh (DESIGN §13): how the
 * tests play another host on one store. */
void fx_host(struct fx *f, const char *id, const char *labels, int64_t ttl_ms);

#endif
