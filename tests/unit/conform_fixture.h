#ifndef BERTH_CONFORM_FIXTURE_H
#define BERTH_CONFORM_FIXTURE_H
/* The conformance checker's unit tests (conform_test.c, the lives that
 * conform; conform_violation_test.c, those that do not) share this: a
 * hand-written home in a temporary directory, with a trace written line by
 * line, the events rows and trace_tail of the lines that commit, and the
 * rows the decisions left, in a store with the coordinator's own schema
 * (store_fixture.h: a sqlite file in the home, or with BERTH_TEST_STORE a
 * PostgreSQL schema the home's store file names); the checker run on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "conform.h"
#include "coord_db.h"
#include "store_fixture.h"

#define S1  "5151515151515151" /* a supervisor */
#define S2  "5252525252525252" /* another one (a restart) */
#define RC  "ecececececececec" /* recovery */
#define RP  "eaeaeaeaeaeaeaea" /* the reaper */
#define CLI "c1c1c1c1c1c1c1c1"
#define R1  "11111111111111111111111111111111"
#define R2  "22222222222222222222222222222222"

struct cfx {
	char dir[64];
	char path[160];
	struct test_store store;
	struct coord_db *db; /* the home's store, as the coordinator opens it */
	FILE *trace;
	uint64_t seq;
	int64_t ts;
	uint64_t req_id;
	/* The next line is a fused verb's, carried by the request of the
	 * line before (its req_id), fused to this verb. */
	const char *fused;
	/* The next committing line joins the group of the one before in
	 * trace_tail (the coordinator keeps a group's lines together). */
	int same_group;
	char *out;
	struct conform_stats st;
};

/* cmocka setup and teardown: an empty home with the schema, removed after. */
int setup(void **);
int teardown(void **);
/* A statement on the home's store; a failure fails the test. */
void sql(struct cfx *, const char *, ...) __attribute__((format(printf, 2, 3)));

enum { NOCOMMIT, COMMIT, TAIL_ONLY };

/* One decision: its trace line (unless TAIL_ONLY: committed, then the
 * coordinator died before writing it), and when it commits its events row
 * and trace_tail. caller is who the coordinator took the sender for; the
 * sender's name follows from it. Returns the decision's time. */
int64_t decide(struct cfx *, int, const char *, const char *, const char *, const char *,
	       const char *, const char *, const char *);
int64_t granted(struct cfx *, const char *, const char *, const char *, const char *, const char *);
int64_t deny(struct cfx *, const char *, const char *, const char *, const char *, const char *,
	     const char *);
void ticket_row(struct cfx *, int, const char *, int);

/* A run's row; a time of 0 is NULL, as are the code and signal unless
 * has_code/has_sig. */
struct row {
	const char *id;
	int ticket, attempt;
	const char *state, *owner, *aftercare, *stop;
	int64_t claimed, started, ended, settled;
	int has_record, has_code, code, has_sig, sig;
};

void run_row(struct cfx *, const struct row *);
/* T1 added, then claimed by S1 as run R1: the decision's time. */
int64_t add_and_claim(struct cfx *);
/* Runs the checker; the violations, with their report in f->out. */
long check(struct cfx *, int);
/* The home conforms. */
void conforms(struct cfx *);
/* The home does not conform, and the report says so in these words. */
void violates(struct cfx *, const char *);

/* T1 added, claimed and started by S1, its exit checkpointed and settled
 * by S1: the happy path, with the traffic around it. */
struct life {
	int64_t claimed, started, ended, settled;
};

void life(struct cfx *, struct life *);

#endif
