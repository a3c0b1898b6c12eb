/* The hand-written homes of the checker's unit tests (conform_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "coord_db.h"
#include "conform_fixture.h"

void
sql(struct cfx *f, const char *fmt, ...)
{
	char q[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof q, fmt, ap);
	va_end(ap);
	if (coord_db_script(f->db, q) != 0)
		fail_msg("%s: %s", q, coord_db_errmsg(f->db));
}

int
setup(void **state)
{
	struct cfx *f = calloc(1, sizeof *f);
	struct coord_db_opts o = { .sync_full = 1 };
	char err[256];
	FILE *sf;

	snprintf(f->dir, sizeof f->dir, "/tmp/conform_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(test_store_make(&f->store, f->dir), 0);
	/* The coordinator's schema, as it makes it. */
	o.key_dir = f->dir;
	if (coord_db_open(&f->db, f->store.store, &o, err, sizeof err) != 0)
		fail_msg("%s", err);
	if (test_store_pg()) {
		/* A home on PostgreSQL names its store in HOME/store. */
		snprintf(f->path, sizeof f->path, "%s/store", f->dir);
		assert_non_null(sf = fopen(f->path, "w"));
		fprintf(sf, "%s\n", f->store.store);
		assert_int_equal(fclose(sf), 0);
	}
	snprintf(f->path, sizeof f->path, "%s/trace", f->dir);
	assert_int_equal(mkdir(f->path, 0700), 0);
	snprintf(f->path, sizeof f->path, "%s/trace/trace.jsonl", f->dir);
	assert_non_null(f->trace = fopen(f->path, "w"));
	f->ts = 1000;
	*state = f;
	return 0;
}

int
teardown(void **state)
{
	struct cfx *f = *state;
	char cmd[128];

	if (f->trace != NULL)
		fclose(f->trace);
	coord_db_close(f->db);
	test_store_drop(&f->store);
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->out);
	free(f);
	return 0;
}

/* One decision: its trace line (unless TAIL_ONLY: committed, then the
 * coordinator died before writing it), and when it commits its events row
 * and trace_tail. caller is who the coordinator took the sender for; the
 * sender's name follows from it. Returns the decision's time. */
int64_t
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
			sql(f,
			    "INSERT INTO trace_tail (id, seq, line) VALUES (1, %llu, '%s')"
			    " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, line = excluded.line",
			    (unsigned long long)f->seq, line);
	}
	f->same_group = 0;
	return f->ts;
}

int64_t
granted(struct cfx *f, const char *caller, const char *inst, const char *verb, const char *ticket,
	const char *run)
{
	return decide(f, COMMIT, caller, inst, verb, ticket, run, "granted", "");
}

int64_t
deny(struct cfx *f, const char *caller, const char *inst, const char *verb, const char *ticket,
     const char *run, const char *reason)
{
	return decide(f, COMMIT, caller, inst, verb, ticket, run, "denied", reason);
}

void
ticket_row(struct cfx *f, int n, const char *state, int attempts)
{
	sql(f,
	    "INSERT INTO tickets (n, argv, state, attempts, created_ms, updated_ms)"
	    " VALUES (%d, '[\"true\"]', '%s', %d, 1, 1)",
	    n, state, attempts);
}

void
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
int64_t
add_and_claim(struct cfx *f)
{
	granted(f, "operator", CLI, "add", "T1", "");
	return granted(f, "supervisor", S1, "claim", "T1", R1);
}

/* Runs the checker; the violations, with their report in f->out. */
long
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

void
conforms(struct cfx *f)
{
	long n = check(f, 1);

	if (n != 0)
		fail_msg("want no violation, got %ld:\n%s", n, f->out);
}

/* The home does not conform, and the report says so in these words. */
void
violates(struct cfx *f, const char *words)
{
	long n = check(f, 1);

	if (n <= 0)
		fail_msg("want a violation '%s', got %ld", words, n);
	if (strstr(f->out, words) == NULL)
		fail_msg("want a violation '%s', got:\n%s", words, f->out);
}

void
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
