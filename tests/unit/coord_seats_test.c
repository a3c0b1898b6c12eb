/* Seats (coordinator/coord_seats.c, coord_holders.c, DESIGN §8):
 * arbitration by key then tree, staleness, stealing, and the seats runs
 * take. satelle's seat lease: coord_seats_lease_test.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coord_fixture.h"
#include "clock.h"

static void
test_seat_single_keys_conflict(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	r = seat_acquire(f, "b", "bob@h", NULL);
	assert_string_equal(denied(r), "conflict");
	assert_string_equal(fact(r, "holder"), "a");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_non_null(fact(r, "age_ms"));
	assert_non_null(fact(r, "heartbeat_age_ms"));
	/* the same item by another owner conflicts too */
	assert_string_equal(fact(seat_acquire(f, "a", "bob@h", NULL), "holder"), "a");
	assert_int_equal(seat_count(f), 1);
}

static void
test_seat_same_owner_already_held(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	clock_fake_set(T0 + 5000);
	r = seat_acquire(f, "a", "alice@h", NULL);
	assert_string_equal(outcome(r), "already_held");
	assert_int_equal(r->granted->seat->seat->heartbeat_ms, T0 + 5000);
	assert_int_equal(r->granted->seat->seat->acquired_ms, T0);
}

static void
test_seat_release_owner_only(void **state)
{
	struct fx *f = *state;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "bob@h");
	assert_string_equal(denied(r), "not_owner");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_int_equal(seat_count(f), 1);
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "alice@h")),
		"released");
	assert_int_equal(seat_count(f), 0);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", NULL)), "acquired");
	/* a seat that is not there is free already: success (satelle) */
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "a", "alice@h")),
		"already_free");
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE, "a", NULL)),
		"already_free");
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE, "b", NULL)),
		"force_released");
	assert_int_equal(seat_count(f), 0);
}

static void
test_seat_stale_heartbeat_stolen(void **state)
{
	struct fx *f = *state;
	struct seatopt o = { .ttl_ms = 10000 };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	clock_fake_set(T0 + 10000); /* exactly the TTL: still live */
	assert_string_equal(denied(seat_acquire(f, "a", "bob@h", &o)), "conflict");
	clock_fake_set(T0 + 10001);
	r = seat_acquire(f, "a", "bob@h", &o);
	assert_string_equal(outcome(r), "stolen");
	assert_string_equal(r->granted->seat->previous->owner, "alice@h");
	assert_string_equal(r->granted->seat->seat->owner, "bob@h");
	assert_string_equal(seat_show(f, "a")->owner, "bob@h");
}

static void
test_seat_dead_owner_stale(void **state)
{
	struct fx *f = *state;
	struct ident dead, self;
	struct seatopt o = { .ttl_ms = 3600000, .ident = &dead };
	struct seatopt live = { .ttl_ms = 3600000, .ident = &self };

	dead_ident(&dead);
	assert_int_equal(ident_self(&self), 0);
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	assert_true(seat_show(f, "a")->stale);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &live)), "acquired");
	assert_false(seat_show(f, "b")->stale);
	/* a live owner's seat is not stolen */
	assert_string_equal(denied(seat_acquire(f, "b", "carol@h", NULL)), "conflict");
}

static void
test_seat_stop_annotates(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatStop m = BERTH__SEAT_STOP__INIT;
	const Berth__Seat *st;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", NULL)), "acquired");
	clock_fake_set(T0 + 4000);
	m.item = "a";
	m.reason = "please wrap up";
	m.requester = "bob@h";
	req.verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
	req.seat_stop = &m;
	assert_string_equal(outcome(ex(f, &req)), "stop_requested");
	st = seat_show(f, "a");
	assert_string_equal(st->owner, "alice@h");
	assert_string_equal(st->stop_reason, "please wrap up");
	/* who asked, and when */
	assert_string_equal(st->stop_by, "bob@h");
	assert_true(st->has_stop_ms);
	assert_int_equal(st->stop_ms, T0 + 4000);
	assert_false(st->stale);
	assert_string_equal(denied(seat_acquire(f, "a", "bob@h", NULL)), "conflict");
}

/* Two processes acquire different single-key items at once: exactly one
 * holds a seat afterwards. */
static void
test_seat_concurrent_acquirers(void **state)
{
	struct fx *f = *state;
	int go[2], i, won = 0, lost = 0;
	pid_t pids[2];

	SKIP_ON_PG_TWO_COORDINATORS();
	assert_int_equal(pipe(go), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct coord_db *s;
			struct coord_result res;
			Berth__Request req = BERTH__REQUEST__INIT;
			Berth__SeatAcquire m = BERTH__SEAT_ACQUIRE__INIT;
			char err[256], b, item[8], owner[16];
			int rc = 3;

			close(go[1]);
			if (coord_db_open(&s, f->store, &fx_opts, err, sizeof err) != 0)
				_exit(3);
			if (read(go[0], &b, 1) != 0)
				_exit(3);
			snprintf(item, sizeof item, "item%d", i);
			snprintf(owner, sizeof owner, "owner%d", i);
			m.item = item;
			m.owner = owner;
			req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
			req.seat_acquire = &m;
			req.instance = owner;
			req.has_req_id = 1;
			req.req_id = 1;
			if (coord_exec_request(s, &req, NULL, NULL, &res) == 0) {
				if (res.reply->result_case == BERTH__REPLY__RESULT_GRANTED &&
				    strcmp(res.reply->granted->seat->outcome, "acquired") == 0)
					rc = 0;
				else if (res.reply->result_case == BERTH__REPLY__RESULT_DENIED &&
					 strcmp(res.reply->denied->reason, "conflict") == 0)
					rc = 1;
				coord_exec_free(&res);
			}
			coord_db_close(s);
			_exit(rc);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < 2; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		won += WEXITSTATUS(st) == 0;
		lost += WEXITSTATUS(st) == 1;
	}
	assert_int_equal(won, 1);
	assert_int_equal(lost, 1);
	assert_int_equal(seat_count(f), 1);
}

static void
test_seat_equal_keys_trees(void **state)
{
	struct fx *f = *state;
	struct seatopt a = { .key = "repo", .workdir = "/src/a" };
	struct seatopt b = { .key = "repo", .workdir = "/src/b" };
	struct seatopt same = { .key = "repo", .workdir = "/src/a" };
	struct seatopt other = { .key = "other", .workdir = "/src/a" };
	struct seatopt none = { .key = "repo" };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &a)), "acquired");
	/* equal keys, different trees: coexist */
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &b)), "acquired");
	/* equal keys, same tree: tree_conflict */
	r = seat_acquire(f, "s3", "carol@h", &same);
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "holder"), "s1");
	assert_string_equal(fact(r, "workdir"), "/src/a");
	/* a different key on the same tree: the key answers first */
	assert_string_equal(denied(seat_acquire(f, "s4", "dave@h", &other)), "conflict");
	/* unanchored: never tree-blocked */
	assert_string_equal(outcome(seat_acquire(f, "s5", "erin@h", &none)), "acquired");
	assert_int_equal(seat_count(f), 3);
}

static void
test_seat_reap_only_stale(void **state)
{
	struct fx *f = *state;
	struct seatopt shortttl = { .key = "repo", .workdir = "/a", .ttl_ms = 1000 };
	struct seatopt longttl = { .key = "repo", .workdir = "/b", .ttl_ms = 100000 };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatReap m = BERTH__SEAT_REAP__INIT;
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &shortttl)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &longttl)), "acquired");
	clock_fake_set(T0 + 5000);
	req.verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
	req.seat_reap = &m;
	r = ex(f, &req);
	assert_int_equal(r->granted->seat->reaped, 1);
	assert_int_equal(seat_count(f), 1);
	assert_string_equal(seat_show(f, "s2")->owner, "bob@h");
	/* a seat re-acquired before the reap is live and stays */
	assert_string_equal(outcome(seat_acquire(f, "s1", "carol@h", &shortttl)), "acquired");
	req.has_req_id = 0; /* a new request, not a retry of the first reap */
	r = ex(f, &req);
	assert_int_equal(r->granted->seat->reaped, 0);
	assert_int_equal(seat_count(f), 2);
}

static void
test_seat_heartbeat_never_revives(void **state)
{
	struct fx *f = *state;
	struct seatopt o = { .ttl_ms = 1000 };
	const Berth__Reply *r;

	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &o)), "acquired");
	clock_fake_set(T0 + 900);
	assert_string_equal(
		outcome(seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "alice@h")),
		"heartbeat");
	assert_string_equal(denied(seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "bob@h")),
			    "not_owner");
	clock_fake_set(T0 + 900 + 1001);
	r = seat_verb(f, BERTH__REQUEST__VERB_SEAT_HEARTBEAT, "a", "alice@h");
	assert_string_equal(denied(r), "stale");
	assert_true(seat_show(f, "a")->stale);
	assert_int_equal(seat_show(f, "a")->heartbeat_ms, T0 + 900);
}

static void
test_seat_activity_hidden_when_dead(void **state)
{
	struct fx *f = *state;
	struct ident dead, self;
	struct seatopt live = { .ident = &self };
	struct seatopt gone = { .key = "k", .ident = &dead };
	struct seatopt co = { .key = "k", .ident = &self };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatActivity m = BERTH__SEAT_ACTIVITY__INIT;
	const Berth__Seat *st;

	assert_int_equal(ident_self(&self), 0);
	assert_string_equal(outcome(seat_acquire(f, "a", "alice@h", &live)), "acquired");
	m.item = "a";
	m.has_index = m.has_total = 1;
	m.index = 2;
	m.total = 5;
	m.label = "tests";
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
	req.seat_activity = &m;
	assert_string_equal(outcome(ex(f, &req)), "activity");
	st = seat_show(f, "a");
	assert_int_equal(st->activity_index, 2);
	assert_string_equal(st->activity_label, "tests");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE, "a", NULL));

	dead_ident(&dead);
	assert_string_equal(outcome(seat_acquire(f, "b", "bob@h", &co)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "c", "carol@h", &gone)), "acquired");
	m.item = "c";
	assert_string_equal(outcome(ex(f, &req)), "activity");
	st = seat_show(f, "c");
	assert_true(st->stale);
	assert_false(st->has_activity_index);
	assert_null(st->activity_label);
}

static void
test_seat_steal_obeys_key_and_tree(void **state)
{
	struct fx *f = *state;
	struct ident dead;
	struct seatopt old = { .key = "repo", .workdir = "/a", .ttl_ms = 1000 };
	struct seatopt live = { .key = "repo", .workdir = "/b" };
	struct seatopt thief_key = { .key = "other", .workdir = "/c" };
	struct seatopt thief_tree = { .key = "repo", .workdir = "/b" };
	struct seatopt thief_ok = { .key = "repo", .workdir = "/a" };
	struct seatopt ghost = { .key = "repo", .workdir = "/g", .ident = &dead };

	dead_ident(&dead);
	assert_string_equal(outcome(seat_acquire(f, "s1", "alice@h", &old)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s2", "bob@h", &live)), "acquired");
	assert_string_equal(outcome(seat_acquire(f, "s3", "gone@h", &ghost)), "acquired");
	clock_fake_set(T0 + 2000); /* s1 is stale now, s3 always was */
	assert_string_equal(denied(seat_acquire(f, "s1", "carol@h", &thief_key)), "conflict");
	assert_string_equal(denied(seat_acquire(f, "s1", "carol@h", &thief_tree)), "tree_conflict");
	assert_string_equal(outcome(seat_acquire(f, "s1", "carol@h", &thief_ok)), "stolen");
	/* a stale holder of another item blocks nobody */
	assert_string_equal(
		outcome(seat_acquire(f, "s4", "dave@h",
				     &(struct seatopt){ .key = "repo", .workdir = "/g" })),
		"acquired");
}

/* Runs take seats: an outside holder of a working tree keeps a ticket
 * with that --workdir waiting, and show says why. */
static void
test_run_waits_for_tree_seat(void **state)
{
	struct fx *f = *state;
	struct seatopt outside = { .workdir = "/src/app" };
	struct addopt o = { .workdir = "/src/app" };
	const Berth__Reply *r;
	const Berth__Ticket *t;
	char run[40];

	assert_string_equal(outcome(seat_acquire(f, "S", "alice@host", &outside)), "acquired");
	add_opt(f, &o);
	clock_fake_set(T0 + 12000);
	r = claim(f, "T1");
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "holder"), "S");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	t = show(f, "T1");
	assert_string_equal(t->state, "ready");
	assert_string_equal(t->waiting,
			    "waiting: working tree /src/app held by seat S, owner alice@host,"
			    " heartbeat 12s ago");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "S", "alice@host"));
	assert_true(f->res.wake);
	claim_ok(f, NULL, run, NULL);
	/* the run holds the tree now: an outside acquire is refused */
	r = seat_acquire(f, "S", "alice@host", &outside);
	assert_string_equal(denied(r), "tree_conflict");
	assert_string_equal(fact(r, "owner"), run);
	assert_granted(start(f, run));
	assert_granted(record_exit(f, run, 1, 0, 0));
	assert_granted(settle(f, run, NULL));
	assert_int_equal(seat_count(f), 0);
	assert_string_equal(outcome(seat_acquire(f, "S", "alice@host", &outside)), "acquired");
}

static void
test_runs_same_key_never_overlap(void **state)
{
	struct fx *f = *state;
	struct addopt k = { .key = "db" };
	struct addopt k2 = { .key = "web" };
	struct addopt tree1 = { .workdir = "/w1" }, tree2 = { .workdir = "/w2" };
	const Berth__Reply *r;
	char r1[40], r2[40], r3[40], r4[40];

	add_opt(f, &k);     /* T1 */
	add_opt(f, &k);     /* T2 */
	add_opt(f, &k2);    /* T3 */
	add_opt(f, &tree1); /* T4 */
	add_opt(f, &tree2); /* T5 */
	claim_ok(f, "T1", r1, NULL);
	r = claim(f, "T2");
	assert_string_equal(denied(r), "seat_conflict");
	assert_string_equal(fact(r, "holder"), "db");
	/* claim-next passes over T2 for the others: other keys and trees run */
	claim_ok(f, NULL, r2, NULL);
	assert_string_equal(f->res.ticket, "T3");
	claim_ok(f, NULL, r3, NULL);
	assert_string_equal(f->res.ticket, "T4");
	claim_ok(f, NULL, r4, NULL);
	assert_string_equal(f->res.ticket, "T5");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	/* held by a run: named by its alias */
	assert_string_equal(show(f, "T2")->waiting,
			    "waiting: seat key db is held by T1-r1 (running)");
	/* an outside holder of the key is refused while the run holds it */
	assert_string_equal(denied(seat_acquire(f, "db", "alice@h", NULL)), "conflict");
	assert_granted(abandon(f, r1));
	claim_ok(f, NULL, r1, NULL);
	assert_string_equal(f->res.ticket, "T1"); /* older first, same priority */
	assert_int_equal(seat_count(f), 4);
}

/* The caller's cwd filled in by the CLI (workdir_default) is where the job
 * runs, not a seat: two such tickets in one directory run side by side. */
static void
test_default_workdir_takes_no_seat(void **state)
{
	struct fx *f = *state;
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };
	const Berth__Reply *r;

	a.n_argv = 1;
	a.argv = argv;
	a.workdir = "/home/u/proj";
	a.has_workdir_default = 1;
	a.workdir_default = 1;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	assert_granted(ex(f, &req));
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	assert_granted(claim(f, NULL));
	r = claim(f, NULL);
	assert_granted(r);
	assert_string_equal(r->granted->claim->workdir, "/home/u/proj");
	assert_int_equal(seat_count(f), 0);
	/* a named --workdir on the same tree does take it */
	a.workdir_default = 0;
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	req.has_req_id = 0;
	assert_granted(ex(f, &req));
	assert_granted(claim(f, NULL));
	assert_string_equal(denied(claim(f, "T4")), "tree_conflict");
}

static void
test_seat_names_bounded(void **state)
{
	struct fx *f = *state;
	char big[400];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(errcode(seat_acquire(f, big, "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "a", big, NULL)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "run:x", "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(seat_acquire(f, "", "alice@h", NULL)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(seat_count(f), 0);
}

/* A run's key against explicit seats (docs/SEATS.md, "A run's key and
 * explicit seats"): DESIGN §8's key rule as written between a run and an
 * explicit seat, so an explicit single-occupancy seat keeps keyed jobs
 * out and a keyed job keeps it out; equal keys coexist; tree-only jobs
 * ignore keys; and between runs a key is one seat (one at a time), so
 * runs of different keys coexist. */
static void
test_run_key_vs_explicit_seat(void **state)
{
	struct fx *f = *state;
	struct addopt db = { .key = "db" }, app = { .key = "app" }, tree = { .workdir = "/w" };
	struct seatopt shared_app = { .key = "app" }, shared_db = { .key = "db" };
	const Berth__Reply *r;
	char rdb[40], rtree[40], rapp[40];

	clock_fake_set(T0);
	assert_string_equal(outcome(seat_acquire(f, "refactor", "alice@h", NULL)), "acquired");
	add_opt(f, &db);   /* T1 */
	add_opt(f, &tree); /* T2 */
	clock_fake_set(T0 + 5000);
	r = claim(f, "T1");
	assert_string_equal(denied(r), "seat_conflict");
	assert_string_equal(fact(r, "holder"), "refactor");
	assert_string_equal(fact(r, "owner"), "alice@h");
	assert_string_equal(show(f, "T1")->waiting,
			    "waiting: seat refactor, owner alice@h, admits only key refactor"
			    " (this ticket's is db), heartbeat 5s ago");
	/* a job without a key is not kept out by keys */
	claim_ok(f, NULL, rtree, NULL);
	assert_string_equal(f->res.ticket, "T2");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "refactor", "alice@h"));
	claim_ok(f, NULL, rdb, NULL);
	assert_string_equal(f->res.ticket, "T1");
	/* the keyed run keeps a single-occupancy seat out, and a seat of
	 * another shared key */
	r = seat_acquire(f, "refactor", "alice@h", NULL);
	assert_string_equal(denied(r), "conflict");
	assert_string_equal(fact(r, "holder"), "db");
	assert_string_equal(denied(seat_acquire(f, "bob", "bob@h", &shared_app)), "conflict");
	/* a holder of the run's key comes in beside it */
	assert_string_equal(outcome(seat_acquire(f, "carol", "carol@h", &shared_db)), "acquired");
	/* runs of different keys coexist; a shared-key seat keeps other keys
	 * out: T3 (key app) waits for carol (key db) */
	add_opt(f, &app); /* T3 */
	assert_string_equal(denied(claim(f, "T3")), "seat_conflict");
	assert_granted(seat_verb(f, BERTH__REQUEST__VERB_SEAT_RELEASE, "carol", "carol@h"));
	claim_ok(f, "T3", rapp, NULL);
	/* and a second db job waits for the first: one seat */
	add_opt(f, &db); /* T4 */
	r = claim(f, "T4");
	assert_string_equal(denied(r), "seat_conflict");
	assert_string_equal(fact(r, "holder"), "db");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seat_single_keys_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_same_owner_already_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_release_owner_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_stale_heartbeat_stolen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_dead_owner_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_stop_annotates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_concurrent_acquirers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_equal_keys_trees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_reap_only_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_heartbeat_never_revives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seat_activity_hidden_when_dead, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_seat_steal_obeys_key_and_tree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_waits_for_tree_seat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_same_key_never_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_workdir_takes_no_seat, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_seat_names_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_key_vs_explicit_seat, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
