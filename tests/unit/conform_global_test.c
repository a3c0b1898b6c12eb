/*
 * The global trace's check (tests/conform/cf_global.c): hand-written
 * groups of two hosts' lines in trace_log, with their events and the
 * rows they left, in a home on PostgreSQL (a sqlite home keeps none).
 * Lives that conform, then damage the check must find: a group's row
 * gone, a decision altered, a fenced run's other move granted, a lose of
 * a run not fenced granted, a host's seq going back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conform_fixture.h"

#define HA "host-a"
#define HB "host-b"
#define SA "5a5a5a5a5a5a5a5a" /* host A's supervisor */
#define SB "5b5b5b5b5b5b5b5b" /* host B's */
#define RA "eaeaeaea00000000" /* host A's recovery */

/* The hosts' seqs (each its own) and the group being written. */
static uint64_t seq_a, seq_b;
static int join; /* the next line joins the row before (one group) */

/* What a line is for the global trace. */
enum { READ, ALONE, KEPT };

/* One line of host h's (HA or HB): a read takes a seq of the host's and
 * is not in trace_log; a line that decided nothing (ALONE) is in a row
 * but has no event; a committed one (KEPT) has both. detail may be NULL.
 * Returns the decision's time. */
static int64_t
line(struct cfx *f, const char *h, int kind, const char *caller, const char *inst, const char *verb,
     const char *ticket, const char *run, const char *decision, const char *reason,
     const char *detail)
{
	const char *from = strcmp(caller, "operator") == 0 ? "cli" : caller;
	uint64_t *seq = strcmp(h, HA) == 0 ? &seq_a : &seq_b;
	char l[1024], d[160] = "";

	++*seq;
	f->ts += 10;
	f->req_id++;
	if (detail != NULL)
		snprintf(d, sizeof d, ",\"detail\":\"%s\"", detail);
	snprintf(l, sizeof l,
		 "{\"seq\":%llu,\"ts_ms\":%lld,\"from\":\"%s\",\"instance\":\"%s\",\"req_id\":%llu,"
		 "\"verb\":\"%s\",\"ticket\":\"%s\",\"run\":\"%s\",\"decision\":\"%s\","
		 "\"reason\":\"%s\"%s,\"latency_us\":100,\"caller\":\"%s\"}\n",
		 (unsigned long long)*seq, (long long)f->ts, from, inst,
		 (unsigned long long)f->req_id, verb, ticket, run, decision, reason, d, caller);
	if (kind == READ)
		return f->ts;
	if (kind == KEPT)
		sql(f,
		    "INSERT INTO events (ts_ms, verb, ticket, run, decision, reason, actor, instance)"
		    " VALUES (%lld, '%s', nullif('%s', ''), nullif('%s', ''), '%s', nullif('%s', ''),"
		    " '%s', '%s')",
		    (long long)f->ts, verb, ticket, run, decision, reason, from, inst);
	if (join)
		sql(f,
		    "UPDATE trace_log SET lines = lines || '%s' WHERE id = (SELECT max(id) FROM"
		    " trace_log)",
		    l);
	else
		sql(f,
		    "INSERT INTO trace_log (ts_ms, host, seq, lines) VALUES (%lld, '%s', %llu, '%s')",
		    (long long)f->ts, h, (unsigned long long)*seq, l);
	join = 0;
	return f->ts;
}

static int64_t
ok(struct cfx *f, const char *h, const char *caller, const char *inst, const char *verb,
   const char *ticket, const char *run)
{
	return line(f, h, KEPT, caller, inst, verb, ticket, run, "granted", "", NULL);
}

static int64_t
no(struct cfx *f, const char *h, const char *caller, const char *inst, const char *verb,
   const char *ticket, const char *run, const char *reason)
{
	return line(f, h, KEPT, caller, inst, verb, ticket, run, "denied", reason, NULL);
}

static int
gsetup(void **state)
{
	seq_a = seq_b = 0;
	join = 0;
	if (setup(state) != 0)
		return -1;
	if (!test_store_pg())
		return 0;
	sql(*state, "DELETE FROM trace_log");
	return 0;
}

/* Runs the global check. */
static long
gcheck(struct cfx *f)
{
	struct conform_opts o = { .final = 1 };
	size_t len = 0;
	FILE *out;
	long n;

	free(f->out);
	f->out = NULL;
	assert_non_null(out = open_memstream(&f->out, &len));
	o.out = out;
	n = conform_global(f->dir, &o, &f->st);
	fclose(out);
	return n;
}

static void
gconforms(struct cfx *f)
{
	long n = gcheck(f);

	if (n != 0)
		fail_msg("want no violation, got %ld:\n%s", n, f->out);
}

static void
gviolates(struct cfx *f, const char *words)
{
	long n = gcheck(f);

	if (n <= 0)
		fail_msg("want a violation '%s', got %ld", words, n);
	if (strstr(f->out, words) == NULL)
		fail_msg("want a violation '%s', got:\n%s", words, f->out);
}

/* The run row of a life, with its host. */
static void
host_run(struct cfx *f, const char *h, const struct row *r)
{
	run_row(f, r);
	sql(f, "UPDATE runs SET host = '%s' WHERE id = '%s'", h, r->id);
}

/* T1 and T2 added on host A; T1 run on host B as R1, T2 on host A as R2,
 * their groups interleaved, with reads between (gaps in the seqs). */
static void
two_hosts(struct cfx *f)
{
	int64_t c1, s1, e1, x1, c2, s2, e2, x2;

	ok(f, HA, "operator", CLI, "add", "T1", "");
	join = 1;
	ok(f, HA, "operator", CLI, "add", "T2", "");
	line(f, HB, ALONE, "supervisor", SB, "claim", "", "", "denied", "nothing_due", NULL);
	/* Held, not stored: a claim the host lease's guard refused. */
	line(f, HA, ALONE, "supervisor", SA, "claim", "", "", "denied", "store_unreachable", NULL);
	c1 = ok(f, HB, "supervisor", SB, "claim", "T1", R1);
	line(f, HA, READ, "operator", CLI, "status", "", "", "granted", "", NULL);
	c2 = ok(f, HA, "supervisor", SA, "claim", "T2", R2);
	s1 = ok(f, HB, "supervisor", SB, "start", "T1", R1);
	s2 = ok(f, HA, "supervisor", SA, "start", "T2", R2);
	line(f, HB, READ, "supervisor", SB, "scan", "", "", "granted", "", NULL);
	ok(f, HB, "supervisor", SB, "renew", "T1", R1);
	e1 = ok(f, HB, "supervisor", SB, "record_exit", "T1", R1);
	join = 1;
	x1 = ok(f, HB, "supervisor", SB, "settle", "T1", R1);
	e2 = ok(f, HA, "supervisor", SA, "record_exit", "T2", R2);
	x2 = ok(f, HA, "supervisor", SA, "settle", "T2", R2);
	ticket_row(f, 1, "succeeded", 1);
	ticket_row(f, 2, "succeeded", 1);
	host_run(f, HB,
		 &(struct row){ .id = R1,
				.ticket = 1,
				.state = "succeeded",
				.owner = SB,
				.aftercare = SB,
				.claimed = c1,
				.started = s1,
				.ended = e1,
				.settled = x1,
				.has_record = 1,
				.has_code = 1 });
	host_run(f, HA,
		 &(struct row){ .id = R2,
				.ticket = 2,
				.state = "succeeded",
				.owner = SA,
				.aftercare = SA,
				.claimed = c2,
				.started = s2,
				.ended = e2,
				.settled = x2,
				.has_record = 1,
				.has_code = 1 });
}

static void
test_sqlite_has_none(void **state)
{
	struct cfx *f = *state;

	if (test_store_pg())
		skip();
	granted(f, "operator", CLI, "add", "T1", "");
	ticket_row(f, 1, "ready", 0);
	assert_int_equal(gcheck(f), -1);
}

static void
test_two_hosts_conform(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	two_hosts(f);
	gconforms(f);
	assert_int_equal(f->st.groups, 11);
	assert_int_equal(f->st.hosts, 2);
	assert_int_equal(f->st.lines, 13);
	assert_int_equal(f->st.events, 11);
	assert_int_equal(f->st.runs, 2);
}

/* An event without its line: a row of the log gone. */
static void
test_row_deleted(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	two_hosts(f);
	sql(f,
	    "DELETE FROM trace_log WHERE lines LIKE '%%\"verb\":\"start\"%%' AND host = '" HB "'");
	gviolates(f, "is another decision: start T1 " R1 " granted from " SB);
}

/* The last row gone: its events are committed, the log ends before. */
static void
test_last_row_deleted(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	two_hosts(f);
	sql(f, "DELETE FROM trace_log WHERE id = (SELECT max(id) FROM trace_log)");
	gviolates(f, "is committed in the database, but the trace does not have it");
}

static void
test_decision_altered(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	two_hosts(f);
	sql(f,
	    "UPDATE trace_log SET lines = replace(lines, '\"decision\":\"granted\"',"
	    " '\"decision\":\"denied\"') WHERE lines LIKE '%%\"verb\":\"start\"%%' AND host = '" HA
	    "'");
	gviolates(f, "host " HA " seq ");
	assert_non_null(strstr(f->out, "start T2 " R2 " denied"));
}

static void
test_seq_goes_back(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	two_hosts(f);
	sql(f, "UPDATE trace_log SET lines = replace(lines, '\"seq\":6,', '\"seq\":2,'), seq = 2"
	       " WHERE host = '" HA "' AND seq = 6");
	gviolates(f, "its order of decisions goes back");
}

/* Host B claims R1, is declared lost by host A's recovery; B's late
 * decisions about R1 are denied host_lost, A's lose ends it lost (again:
 * granted, nothing done); B claims T1 again in its new epoch, a run that
 * is not fenced (its lose is denied host_not_lost). */
static void
fenced(struct cfx *f, int damage)
{
	int64_t c1, s1, l1, c2, s2;

	ok(f, HA, "operator", CLI, "add", "T1", "");
	c1 = ok(f, HB, "supervisor", SB, "claim", "T1", R1);
	s1 = ok(f, HB, "supervisor", SB, "start", "T1", R1);
	no(f, HA, "recovery", RA, "host_lost", "", "", "lease_live");
	line(f, HA, KEPT, "recovery", RA, "host_lost", "", "", "granted", "",
	     "host " HB " lost: epoch 1 -> 2");
	if (damage == 1)
		ok(f, HB, "supervisor", SB, "record_exit", "T1", R1);
	else
		no(f, HB, "supervisor", SB, "record_exit", "T1", R1, "host_lost");
	no(f, HB, "supervisor", SB, "renew", "T1", R1, "lease_not_held");
	l1 = ok(f, HA, "recovery", RA, "lose", "T1", R1);
	ok(f, HA, "recovery", RA, "lose", "T1", R1);
	no(f, HB, "supervisor", SB, "abandon", "T1", R1, "host_lost");
	c2 = ok(f, HB, "supervisor", SB, "claim", "T1", R2);
	s2 = ok(f, HB, "supervisor", SB, "start", "T1", R2);
	if (damage == 2)
		ok(f, HA, "recovery", RA, "lose", "T1", R2);
	else
		no(f, HA, "recovery", RA, "lose", "T1", R2, "host_not_lost");
	ticket_row(f, 1, damage == 2 ? "ready" : "claimed", 2);
	host_run(f, HB,
		 &(struct row){ .id = R1,
				.ticket = 1,
				.attempt = 1,
				.state = "lost",
				.owner = SB,
				.claimed = c1,
				.started = s1,
				.settled = l1 });
	host_run(f, HB,
		 &(struct row){ .id = R2,
				.ticket = 1,
				.attempt = 2,
				.state = damage == 2 ? "lost" : "running",
				.owner = SB,
				.claimed = c2,
				.started = s2,
				.settled = damage == 2 ? f->ts : 0 });
}

static void
test_fence_conforms(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	fenced(f, 0);
	gconforms(f);
	assert_int_equal(f->st.fenced, 1);
}

/* A host_lost granted without its detail says nothing of the host. */
static void
test_host_lost_unnamed(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	ok(f, HA, "recovery", RA, "host_lost", "", "");
	gviolates(f, "whose detail does not name the host");
}

static void
test_fenced_run_moved(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	fenced(f, 1);
	gviolates(f, "record_exit T1 " R1 " granted from supervisor " SB
		     ": granted of a run fenced by the loss of its host " HB);
}

static void
test_unfenced_run_lost(void **state)
{
	struct cfx *f = *state;

	if (!test_store_pg())
		skip();
	fenced(f, 2);
	gviolates(f, "lose T1 " R2 " granted from recovery " RA
		     ": a FENCE move granted of a run that is not fenced");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sqlite_has_none, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_two_hosts_conform, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_row_deleted, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_last_row_deleted, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_decision_altered, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_seq_goes_back, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_fence_conforms, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_host_lost_unnamed, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_fenced_run_moved, gsetup, teardown),
		cmocka_unit_test_setup_teardown(test_unfenced_run_lost, gsetup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
