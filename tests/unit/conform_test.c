/* The trace conformance checker (tests/conform/conform.c) on small
 * hand-written homes: a trace written line by line, the events rows and
 * trace_tail of the lines that commit, and the rows the decisions left, in
 * a database with the coordinator's own schema. Each case that must fail
 * names the violation it must be reported as. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "conform.h"
#include "coord_db.h"

#define S1 "5151515151515151" /* a supervisor */
#define S2 "5252525252525252" /* another one (a restart) */
#define RC "ecececececececec" /* recovery */
#define RP "eaeaeaeaeaeaeaea" /* the reaper */
#define CLI "c1c1c1c1c1c1c1c1"
#define R1 "11111111111111111111111111111111"
#define R2 "22222222222222222222222222222222"

struct cfx {
	char dir[64];
	char path[160];
	sqlite3 *db;
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

static void
sql(struct cfx *f, const char *fmt, ...)
{
	char q[1024], *err = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof q, fmt, ap);
	va_end(ap);
	if (sqlite3_exec(f->db, q, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", q, err);
}

static int
setup(void **state)
{
	struct cfx *f = calloc(1, sizeof *f);
	struct coord_db *cdb;
	char err[256];

	snprintf(f->dir, sizeof f->dir, "/tmp/conform_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/berth.db", f->dir);
	/* The coordinator's schema, as it makes it. */
	assert_int_equal(coord_db_open(&cdb, f->path, NULL, err, sizeof err), 0);
	coord_db_close(cdb);
	assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
	snprintf(f->path, sizeof f->path, "%s/trace", f->dir);
	assert_int_equal(mkdir(f->path, 0700), 0);
	snprintf(f->path, sizeof f->path, "%s/trace/trace.jsonl", f->dir);
	assert_non_null(f->trace = fopen(f->path, "w"));
	f->ts = 1000;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct cfx *f = *state;
	char cmd[128];

	if (f->trace != NULL)
		fclose(f->trace);
	sqlite3_close(f->db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->out);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ writing a home */

enum { NOCOMMIT, COMMIT, TAIL_ONLY };

/* One decision: its trace line (unless TAIL_ONLY: committed, then the
 * coordinator died before writing it), and when it commits its events row
 * and trace_tail. caller is who the coordinator took the sender for; the
 * sender's name follows from it. Returns the decision's time. */
static int64_t
decide(struct cfx *f, int commits, const char *caller, const char *inst, const char *verb,
       const char *ticket, const char *run, const char *decision, const char *reason)
{
	const char *from = strcmp(caller, "operator") == 0 ? "cli" : caller;
	char line[1024], fused[64] = "";

	f->seq++;
	f->ts += 10;
	if (f->fused != NULL)
		snprintf(fused, sizeof fused, ",\"fused\":\"%s\"", f->fused);
	else
		f->req_id++;
	snprintf(line, sizeof line,
		 "{\"seq\":%llu,\"ts_ms\":%lld,\"from\":\"%s\",\"instance\":\"%s\",\"req_id\":%llu,"
		 "\"verb\":\"%s\",\"ticket\":\"%s\",\"run\":\"%s\",\"decision\":\"%s\","
		 "\"reason\":\"%s\",\"latency_us\":100,\"caller\":\"%s\"%s}\n",
		 (unsigned long long)f->seq, (long long)f->ts, from, inst,
		 (unsigned long long)f->req_id, verb, ticket, run, decision, reason, caller, fused);
	f->fused = NULL;
	if (commits != TAIL_ONLY)
		fputs(line, f->trace);
	if (commits != NOCOMMIT) {
		sql(f,
		    "INSERT INTO events (ts_ms, verb, ticket, run, decision, reason, actor, instance)"
		    " VALUES (%lld, '%s', nullif('%s', ''), nullif('%s', ''), '%s', nullif('%s', ''),"
		    " '%s', '%s')",
		    (long long)f->ts, verb, ticket, run, decision, reason, from, inst);
		if (f->same_group)
			sql(f, "UPDATE trace_tail SET line = line || '%s' WHERE id = 1", line);
		else
			sql(f, "INSERT OR REPLACE INTO trace_tail (id, seq, line) VALUES (1, %llu, '%s')",
			    (unsigned long long)f->seq, line);
	}
	f->same_group = 0;
	return f->ts;
}

static int64_t
granted(struct cfx *f, const char *caller, const char *inst, const char *verb,
	const char *ticket, const char *run)
{
	return decide(f, COMMIT, caller, inst, verb, ticket, run, "granted", "");
}

static int64_t
deny(struct cfx *f, const char *caller, const char *inst, const char *verb, const char *ticket,
     const char *run, const char *reason)
{
	return decide(f, COMMIT, caller, inst, verb, ticket, run, "denied", reason);
}

static void
ticket_row(struct cfx *f, int n, const char *state, int attempts)
{
	sql(f,
	    "INSERT INTO tickets (n, argv, state, attempts, created_ms, updated_ms)"
	    " VALUES (%d, '[\"true\"]', '%s', %d, 1, 1)",
	    n, state, attempts);
}

/* A run's row; a time of 0 is NULL, as are the code and signal unless
 * has_code/has_sig. */
struct row {
	const char *id;
	int ticket, attempt;
	const char *state, *owner, *aftercare, *stop;
	int64_t claimed, started, ended, settled;
	int has_record, has_code, code, has_sig, sig;
};

static void
run_row(struct cfx *f, const struct row *r)
{
	char t[5][24];
	int64_t v[5] = { r->started, r->ended, r->settled, r->code, r->sig ? r->sig : 9 };
	int has[5] = { r->started != 0, r->ended != 0, r->settled != 0, r->has_code, r->has_sig };
	int i;

	for (i = 0; i < 5; i++)
		snprintf(t[i], sizeof t[i], has[i] ? "%lld" : "NULL", (long long)v[i]);
	sql(f,
	    "INSERT INTO runs (id, ticket, attempt, state, owner, aftercare_owner, token_hash,"
	    " claimed_ms, started_ms, ended_ms, settled_ms, has_record, exit_code, signal,"
	    " stop_reason) VALUES ('%s', %d, %d, '%s', '%s', nullif('%s', ''), 'h', %lld, %s, %s,"
	    " %s, %d, %s, %s, nullif('%s', ''))",
	    r->id, r->ticket ? r->ticket : 1, r->attempt ? r->attempt : 1, r->state,
	    r->owner ? r->owner : S1, r->aftercare ? r->aftercare : "", (long long)r->claimed, t[0],
	    t[1], t[2], r->has_record, t[3], t[4], r->stop ? r->stop : "");
}

/* T1 added, then claimed by S1 as run R1: the decision's time. */
static int64_t
add_and_claim(struct cfx *f)
{
	granted(f, "operator", CLI, "add", "T1", "");
	return granted(f, "supervisor", S1, "claim", "T1", R1);
}

/* Runs the checker; the violations, with their report in f->out. */
static long
check(struct cfx *f, int final)
{
	struct conform_opts o = { .final = final };
	size_t len = 0;
	FILE *out;
	long n;

	fflush(f->trace);
	free(f->out);
	f->out = NULL;
	assert_non_null(out = open_memstream(&f->out, &len));
	o.out = out;
	n = conform_home(f->dir, &o, &f->st);
	fclose(out);
	return n;
}

static void
conforms(struct cfx *f)
{
	long n = check(f, 1);

	if (n != 0)
		fail_msg("want no violation, got %ld:\n%s", n, f->out);
}

/* The home does not conform, and the report says so in these words. */
static void
violates(struct cfx *f, const char *words)
{
	long n = check(f, 1);

	if (n <= 0)
		fail_msg("want a violation '%s', got %ld", words, n);
	if (strstr(f->out, words) == NULL)
		fail_msg("want a violation '%s', got:\n%s", words, f->out);
}

/* ------------------------------------------------------------ lives that conform */

/* T1 added, claimed and started by S1, its exit checkpointed and settled
 * by S1: the happy path, with the traffic around it. */
struct life {
	int64_t claimed, started, ended, settled;
};

static void
life(struct cfx *f, struct life *l)
{
	granted(f, "operator", CLI, "add", "T1", "");
	decide(f, NOCOMMIT, "supervisor", S1, "claim", "", "", "denied", "nothing_due");
	l->claimed = granted(f, "supervisor", S1, "claim", "T1", R1);
	l->started = granted(f, "supervisor", S1, "start", "T1", R1);
	granted(f, "supervisor", S1, "renew", "T1", R1);
	decide(f, NOCOMMIT, "operator", CLI, "show", "T1", "", "granted", "");
	l->ended = granted(f, "supervisor", S1, "record_exit", "T1", R1);
	l->settled = granted(f, "supervisor", S1, "settle", "T1", R1);
}

static void
test_life_conforms(void **state)
{
	struct cfx *f = *state;
	struct life l;
	uint64_t settle_req;

	life(f, &l);
	settle_req = f->req_id;
	/* Around it: a job's forged settle (refused before the table), a
	 * request that never decoded, a retry answered from its reply. */
	decide(f, NOCOMMIT, "worker", "f0f0f0f0f0f0f0f0", "settle", "", "", "denied",
	       "not_permitted");
	decide(f, NOCOMMIT, "operator", "", "none", "", "", "error", "bad_request");
	f->req_id = settle_req - 1; /* S1's settle again: the reply it had */
	decide(f, NOCOMMIT, "supervisor", S1, "settle", "T1", R1, "replayed", "");
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .aftercare = S1,
				  .claimed = l.claimed, .started = l.started, .ended = l.ended + 1,
				  .settled = l.settled, .has_record = 1, .has_code = 1 });
	conforms(f);
	assert_int_equal(f->st.moves, 4);
	assert_int_equal(f->st.events, 6);
	assert_int_equal(f->st.runs, 1);
}

/* The exit-checkpoint race: recovery checkpoints and settles first, the
 * supervisor's record_exit is denied with the state the winner left. */
static void
test_race_conforms(void **state)
{
	struct cfx *f = *state;
	int64_t c, s, e, z;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	e = granted(f, "recovery", RC, "record_exit", "T1", R1);
	deny(f, "supervisor", S1, "settle", "T1", R1, "not_aftercare_owner");
	z = granted(f, "recovery", RC, "settle", "T1", R1);
	deny(f, "supervisor", S1, "record_exit", "T1", R1, "already_claimed");
	ticket_row(f, 1, "failed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "failed", .aftercare = RC, .claimed = c,
				  .started = s, .ended = e, .settled = z, .has_record = 1,
				  .has_code = 1, .code = 7 });
	conforms(f);
	assert_int_equal(f->st.denials, 2);
}

/* A claimed run abandoned by recovery (twice: the repeat is granted,
 * nothing done), the ticket claimed again: attempt 2. */
static void
test_abandon_and_retry_conform(void **state)
{
	struct cfx *f = *state;
	int64_t c1, a, c2;

	c1 = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "recovery", RC, "abandon", "T1", R1);
	deny(f, "supervisor", S1, "start", "T1", R1, "not_claimed");
	c2 = granted(f, "supervisor", S2, "claim", "T1", R2);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c1, .settled = a });
	run_row(f, &(struct row){ .id = R2, .attempt = 2, .state = "claimed", .owner = S2,
				  .claimed = c2 });
	conforms(f);
}

/* settle is idempotent: a second one is granted, applies nothing, and
 * the run keeps the time of the first. */
static void
test_settle_repeated_conforms(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	granted(f, "supervisor", S1, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .aftercare = S1,
				  .claimed = l.claimed, .started = l.started, .ended = l.ended,
				  .settled = l.settled, .has_record = 1, .has_code = 1 });
	conforms(f);
}

/* The coordinator died between the COMMIT of the last decision and its
 * line (a torn half of it in the file): trace_tail holds it, and the
 * checker replays it as the next coordinator would restore it. */
static void
test_crash_before_line_conforms(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = decide(f, TAIL_ONLY, "supervisor", S1, "start", "T1", R1, "granted", "");
	fputs("{\"seq\":4,\"ts_ms\":10", f->trace);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	conforms(f);
	assert_int_equal(f->st.restored, 1);
	assert_int_equal(f->st.moves, 2);
}

/* While the group runs, a line past the snapshot's last decision was
 * decided after the database was read: not judged. Once the group is
 * down, a committing line the database does not have is a lost decision. */
static void
test_snapshot_bounds_the_replay(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	decide(f, NOCOMMIT, "supervisor", S1, "start", "T1", R1, "granted", "");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	assert_int_equal(check(f, 0), 0);
	assert_int_equal(f->st.lines, 2);
	violates(f, "a committed decision past the database's last one (seq 2)");
}

/* ------------------------------------------------------------ fused verbs */

/* The fast path (DESIGN §4): a claim carrying its waiting shim starts the
 * run in the same decision, a record_exit carrying the aftercare settles
 * it; each fused verb has its own line, with its request's req_id and
 * "fused", right after that request's. The two lines of the exit's
 * request are one group in trace_tail, as the coordinator keeps them.
 * With crashed, the coordinator died between that group's COMMIT and its
 * write: both lines are restored from trace_tail, in order. */
static void
fused_life(struct cfx *f, int crashed)
{
	int commits = crashed ? TAIL_ONLY : COMMIT;
	int64_t c, s, e, z;

	granted(f, "operator", CLI, "add", "T1", "");
	c = granted(f, "supervisor", S1, "claim", "T1", R1);
	f->fused = "claim";
	f->same_group = 1;
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	e = decide(f, commits, "supervisor", S1, "record_exit", "T1", R1, "granted", "");
	f->fused = "record_exit";
	f->same_group = 1;
	z = decide(f, commits, "supervisor", S1, "settle", "T1", R1, "granted", "");
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .aftercare = S1, .claimed = c,
				  .started = s, .ended = e, .settled = z, .has_record = 1,
				  .has_code = 1 });
}

static void
test_fused_life_conforms(void **state)
{
	struct cfx *f = *state;

	fused_life(f, 0);
	conforms(f);
	assert_int_equal(f->st.moves, 4);
	assert_int_equal(f->st.events, 5);
	assert_int_equal(f->st.snapshot_seq, 5);
	assert_int_equal(f->st.restored, 0);
}

static void
test_fused_group_restored_conforms(void **state)
{
	struct cfx *f = *state;

	fused_life(f, 1);
	conforms(f);
	assert_int_equal(f->st.restored, 1);
	assert_int_equal(f->st.lines, 5);
	assert_int_equal(f->st.moves, 4);
}

/* A denied verb makes no fused move: a settle fused to a record_exit that
 * lost the race is a violation, though the settle alone would be judged
 * by its own move. */
static void
test_fused_after_a_denial(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	granted(f, "supervisor", S1, "start", "T1", R1);
	granted(f, "recovery", RC, "record_exit", "T1", R1);
	deny(f, "supervisor", S1, "record_exit", "T1", R1, "already_claimed");
	f->fused = "record_exit";
	deny(f, "supervisor", S1, "settle", "T1", R1, "not_aftercare_owner");
	violates(f, "a fused settle after its record_exit was denied");
}

/* Only a FUSE line's pair is fused, only right after its request's line,
 * and on that request's run. */
static void
test_fused_only_as_the_table_says(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	f->fused = "claim";
	granted(f, "supervisor", S1, "renew", "T1", R1);
	violates(f, "fused to claim, which no FUSE line lets carry renew");
}

static void
test_fused_line_follows_its_request(void **state)
{
	struct cfx *f = *state;

	add_and_claim(f);
	decide(f, NOCOMMIT, "operator", CLI, "show", "T1", "", "granted", "");
	f->fused = "claim";
	f->req_id--; /* the claim's req_id, but the line before is the show */
	granted(f, "supervisor", S1, "start", "T1", R1);
	violates(f, "fused to claim, but the line before is not that request's claim");
}

static void
test_fused_on_another_run(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	granted(f, "operator", CLI, "add", "T2", "");
	granted(f, "supervisor", S1, "claim", "T1", R1);
	f->fused = "claim";
	granted(f, "supervisor", S1, "start", "T2", R2);
	violates(f, "fused to claim of run " R1 ", but moves run " R2);
}

/* Recovery hands a live run to a restarted supervisor (readopt names the
 * new owner, the trace does not): the owner is learnt from its first
 * owner's move, and must be the database's. */
static void
handover(struct cfx *f, const char *db_owner)
{
	int64_t c, s, e, z;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	granted(f, "recovery", RC, "readopt", "T1", R1);
	granted(f, "supervisor", S2, "renew", "T1", R1);
	e = granted(f, "supervisor", S2, "record_exit", "T1", R1);
	z = granted(f, "supervisor", S2, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .owner = db_owner,
				  .aftercare = S2, .claimed = c, .started = s, .ended = e,
				  .settled = z, .has_record = 1, .has_code = 1 });
}

static void
test_handover_conforms(void **state)
{
	handover(*state, S2);
	conforms(*state);
}

static void
test_handover_owner_must_match(void **state)
{
	handover(*state, S1);
	violates(*state, "is owned by '" S1 "' in the database, by " S2 " in the trace");
}

/* ------------------------------------------------------------ lives that do not */

static void
test_record_exit_on_claimed_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, e;

	c = add_and_claim(f);
	e = granted(f, "supervisor", S1, "record_exit", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aftercare", .aftercare = S1, .claimed = c,
				  .ended = e });
	violates(f, "seq 3 record_exit T1 " R1 " granted from supervisor " S1
		    ": granted in state claimed; run_moves.def makes record_exit only from "
		    "running");
	/* One wrong grant, one report: the replay follows what was done. */
	assert_int_equal(f->st.violations, 1);
}

/* Two settles that both applied: the run carries the second's time. */
static void
test_settle_applied_twice(void **state)
{
	struct cfx *f = *state;
	struct life l;
	int64_t again;

	life(f, &l);
	again = granted(f, "recovery", RC, "settle", "T1", R1);
	ticket_row(f, 1, "succeeded", 1);
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .aftercare = S1,
				  .claimed = l.claimed, .started = l.started, .ended = l.ended,
				  .settled = again, .has_record = 1, .has_code = 1 });
	violates(f, "the decision that settled it was at");
}

static void
test_start_after_abandon(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "supervisor", S1, "start", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "granted in state aborted; run_moves.def makes start only from claimed");
}

/* A denial the table would not give: record_exit of a running run may be
 * refused only to someone the who column leaves out. */
static void
test_wrong_denial(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S1, "start", "T1", R1);
	deny(f, "recovery", RC, "record_exit", "T1", R1, "already_claimed");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	violates(f, "state running is one record_exit moves from (running): the only denial is "
		    "not_owner");
}

/* The right reason given to the wrong caller: not_owner to the owner. */
static void
test_denied_to_the_owner(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	deny(f, "supervisor", S1, "start", "T1", R1, "not_owner");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "denied to a caller run_moves.def lets make the move (owner " S1 ")");
}

static void
test_start_by_another_supervisor(void **state)
{
	struct cfx *f = *state;
	int64_t c, s;

	c = add_and_claim(f);
	s = granted(f, "supervisor", S2, "start", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "running", .claimed = c, .started = s });
	violates(f, "granted to a caller run_moves.def does not let make it (owner " S1 ")");
}

/* The reaper settles a claimed run only with a stop request on it. */
static void
reaper_settles(struct cfx *f, int marked)
{
	int64_t c, z;

	c = add_and_claim(f);
	if (marked)
		granted(f, "reaper", RP, "mark_stop", "T1", R1);
	z = granted(f, "reaper", RP, "settle", "T1", R1);
	ticket_row(f, 1, "failed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "timed_out", .claimed = c, .settled = z,
				  .stop = marked ? "timeout" : NULL });
}

static void
test_reaper_settle_with_stop_conforms(void **state)
{
	reaper_settles(*state, 1);
	conforms(*state);
}

static void
test_reaper_settle_without_stop(void **state)
{
	reaper_settles(*state, 0);
	violates(*state, "settle T1 " R1 " granted from reaper " RP
			 ": granted to a caller run_moves.def does not let make it");
}

static void
test_second_claim_while_live(void **state)
{
	struct cfx *f = *state;
	int64_t c1, c2;

	c1 = add_and_claim(f);
	c2 = granted(f, "supervisor", S2, "claim", "T1", R2);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c1 });
	run_row(f, &(struct row){ .id = R2, .attempt = 2, .state = "claimed", .owner = S2,
				  .claimed = c2 });
	violates(f, "the ticket's run " R1 " is not settled yet");
}

/* The database committed a decision the trace does not have. */
static void
test_decision_missing_from_trace(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	sql(f, "INSERT INTO events (ts_ms, verb, ticket, run, decision, actor, instance)"
	       " VALUES (9999, 'hold', 'T1', NULL, 'granted', 'cli', '" CLI "')");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "event #3 (hold T1  granted from " CLI ") is committed in the database, but "
		    "the trace does not have it");
}

/* The database's run is not where the trace left it. */
static void
test_final_state_differs(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	granted(f, "supervisor", S1, "start", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "run " R1 " is claimed in the database, running by the trace");
	assert_non_null(strstr(f->out, "has started_ms NULL, but the trace granted a start"));
}

static void
test_ticket_claimed_without_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "supervisor", S1, "abandon", "T1", R1);
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "ticket T1 is claimed in the database, but the trace settled every run of it");
}

static void
test_attempts_differ(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	ticket_row(f, 1, "claimed", 2);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "ticket T1 has 2 attempts in the database, 1 granted claims in the trace");
}

/* An actor verb granted to an operator: the verb table refuses that. */
static void
test_actor_verb_granted_to_operator(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "operator", CLI, "abandon", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "granted to a caller the verb table does not let send abandon");
}

static void
test_replay_of_nothing(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	decide(f, NOCOMMIT, "operator", CLI, "hold", "T1", "", "replayed", "");
	ticket_row(f, 1, "ready", 0);
	violates(f, "replays a decision the trace never committed");
}

static void
test_seq_gap(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	f->seq++;
	decide(f, NOCOMMIT, "operator", CLI, "list", "", "", "granted", "");
	ticket_row(f, 1, "ready", 0);
	violates(f, "seq 2 is missing");
}

static void
test_settle_denied_on_settled_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	deny(f, "recovery", RC, "settle", "T1", R1, "not_aftercare_owner");
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "denied in state aborted, where the handler grants it (or errs)");
}

/* A run settled from claimed has an outcome the trace does not name; a
 * later abandon granted says it was aborted, and the database must agree. */
static void
test_abandon_says_aborted(void **state)
{
	struct cfx *f = *state;
	int64_t c, z;

	c = add_and_claim(f);
	z = granted(f, "recovery", RC, "settle", "T1", R1);
	granted(f, "recovery", RC, "abandon", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "orphaned", .claimed = c, .settled = z });
	violates(f, "run " R1 " is orphaned in the database; an abandon of it was granted");
}

static void
test_run_nobody_claimed(void **state)
{
	struct cfx *f = *state;

	granted(f, "operator", CLI, "add", "T1", "");
	ticket_row(f, 1, "claimed", 0);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = 5 });
	violates(f, "run " R1 " (claimed) is in the database, but no traced claim created it");
}

static void
test_exit_record_facts(void **state)
{
	struct cfx *f = *state;
	struct life l;

	life(f, &l);
	ticket_row(f, 1, "succeeded", 1);
	/* A record without a code or signal, and a success that is none. */
	run_row(f, &(struct row){ .id = R1, .state = "succeeded", .aftercare = S1,
				  .claimed = l.claimed, .started = l.started, .ended = l.ended,
				  .settled = l.settled, .has_record = 1 });
	violates(f, "run " R1 ": has_record 1 with exit_code NULL and signal NULL");
	assert_non_null(strstr(f->out, "run " R1 " succeeded without a recorded exit 0"));
}

static void
test_cancel_misses_live_run(void **state)
{
	struct cfx *f = *state;
	int64_t c;

	c = add_and_claim(f);
	granted(f, "operator", CLI, "cancel", "T1", "");
	ticket_row(f, 1, "claimed", 1);
	run_row(f, &(struct row){ .id = R1, .state = "claimed", .claimed = c });
	violates(f, "granted without a stop on the ticket's unsettled run " R1);
}

static void
test_worker_verb_on_settled_run(void **state)
{
	struct cfx *f = *state;
	int64_t c, a;

	c = add_and_claim(f);
	a = granted(f, "recovery", RC, "abandon", "T1", R1);
	granted(f, "worker", "0f0f0f0f0f0f0f0f", "heartbeat", "T1", R1);
	ticket_row(f, 1, "ready", 1);
	run_row(f, &(struct row){ .id = R1, .state = "aborted", .claimed = c, .settled = a });
	violates(f, "heartbeat T1 " R1 " granted from worker 0f0f0f0f0f0f0f0f: granted for a run "
		    "that is aborted");
}

/* A home where nothing was decided conforms. */
static void
test_empty_home(void **state)
{
	struct cfx *f = *state;

	conforms(f);
	assert_int_equal(f->st.lines, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_life_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_and_retry_conform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_repeated_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_before_line_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_bounds_the_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_life_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_group_restored_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_after_a_denial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_only_as_the_table_says, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_line_follows_its_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fused_on_another_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handover_conforms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handover_owner_must_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaper_settle_with_stop_conforms, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_empty_home, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_exit_on_claimed_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_applied_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_after_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_denial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_to_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_by_another_supervisor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaper_settle_without_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_claim_while_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decision_missing_from_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_final_state_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ticket_claimed_without_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attempts_differ, setup, teardown),
		cmocka_unit_test_setup_teardown(test_actor_verb_granted_to_operator, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_of_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seq_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_denied_on_settled_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon_says_aborted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_nobody_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_record_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_misses_live_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_verb_on_settled_run, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
