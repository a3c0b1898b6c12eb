/* A reaper pass against a fake coordinator (reaper/reap_pass.c). The fake
 * keeps a list of settled runs and answers each scan with the runs its
 * bounds select, the way coordinator/coord_runs.c does (settled_ms >= since
 * when since is not 0, settled_ms < before when before is not 0); every
 * scan's bounds are recorded and asserted. It answers list (limit 1) with
 * its oldest ticket, created an hour before its first run settled. The
 * clock is faked; the run directories and the persisted watermark are real
 * files in a temporary home. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "reap_pass.h"
#include "rpc.h"
#include "util.h"

#define T0       1700000000000LL
#define DAY      86400000LL
#define HOUR     3600000LL
#define MAXSCANS 512

/* ------------------------------------------------------------ fake coordinator */

struct scan_seen {
	int64_t since;
	int64_t before;
};

static struct {
	char home[256];
	char url[512];
	struct rpc_server *srv;
	pthread_t thr;
	atomic_int stop;
	pthread_mutex_t mtx;
	Berth__Run *runs[64]; /* every settled run the coordinator knows */
	size_t nruns;
	struct scan_seen scans[MAXSCANS]; /* retention scans: before != 0 */
	int nscans;
	int nlists;         /* list requests seen */
	int64_t created_ms; /* the oldest ticket's creation; 0: no ticket */
	size_t pad;         /* bytes of notes each run carries */
	size_t max_reply;   /* the largest retention scan reply, packed */
	int64_t hello_pid;  /* the pid the last hello carried */
	int error_code;     /* answer every request with this error (0: none) */
} fk;

static void
reply_scan(const Berth__Scan *sc, Berth__ScanReply *sr, Berth__Run **sel)
{
	int64_t since = sc->has_settled_since_ms ? sc->settled_since_ms : 0;
	int64_t before = sc->has_settled_before_ms ? sc->settled_before_ms : 0;
	size_t i;

	sr->has_now_ms = 1;
	sr->now_ms = clock_wall_ms();
	sr->runs = sel;
	for (i = 0; i < fk.nruns; i++) {
		int64_t at = fk.runs[i]->settled_ms;

		if (sc->settled && (since == 0 || at >= since) && (before == 0 || at < before))
			sel[sr->n_runs++] = fk.runs[i];
	}
	if (before != 0 && fk.nscans < MAXSCANS) {
		fk.scans[fk.nscans].since = since;
		fk.scans[fk.nscans].before = before;
		fk.nscans++;
	}
}

static void
reply_to(struct rpc_incoming *in, const Berth__Request *req)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Granted g = BERTH__GRANTED__INIT;
	Berth__ScanReply sr = BERTH__SCAN_REPLY__INIT;
	Berth__TicketList tl = BERTH__TICKET_LIST__INIT;
	Berth__Ticket t = BERTH__TICKET__INIT, *tp = &t;
	Berth__Run *sel[64];

	rep.has_req_id = 1;
	rep.req_id = req->req_id;
	rep.result_case = BERTH__REPLY__RESULT_GRANTED;
	rep.granted = &g;
	pthread_mutex_lock(&fk.mtx);
	if (fk.error_code != 0) {
		static Berth__Error err = BERTH__ERROR__INIT;

		err.has_code = 1;
		err.code = fk.error_code;
		err.message = "as the test says";
		rep.result_case = BERTH__REPLY__RESULT_ERROR;
		rep.error = &err;
	} else if (req->verb_case == BERTH__REQUEST__VERB_SCAN && req->scan != NULL) {
		reply_scan(req->scan, &sr, sel);
		g.payload_case = BERTH__GRANTED__PAYLOAD_SCAN;
		g.scan = &sr;
		if (req->scan->settled_before_ms != 0 &&
		    berth__reply__get_packed_size(&rep) > fk.max_reply)
			fk.max_reply = berth__reply__get_packed_size(&rep);
	} else if (req->verb_case == BERTH__REQUEST__VERB_LIST) {
		fk.nlists++;
		g.payload_case = BERTH__GRANTED__PAYLOAD_LIST;
		g.list = &tl;
		if (fk.created_ms != 0) {
			t.id = "T1";
			t.has_created_ms = 1;
			t.created_ms = fk.created_ms;
			tl.tickets = &tp;
			tl.n_tickets = 1;
		}
	} else if (req->verb_case == BERTH__REQUEST__VERB_HELLO && req->hello != NULL &&
		   req->hello->ident != NULL)
		fk.hello_pid = req->hello->ident->pid;
	rpc_server_reply(fk.srv, in, &rep);
	pthread_mutex_unlock(&fk.mtx);
}

static void *
serve(void *arg)
{
	struct pollfd pfd;

	(void)arg;
	pfd.fd = rpc_server_fd(fk.srv);
	pfd.events = POLLIN;
	while (!atomic_load(&fk.stop)) {
		struct rpc_incoming *in;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while ((in = rpc_server_next(fk.srv)) != NULL) {
			const uint8_t *data;
			size_t len;
			Berth__Request *req;

			data = rpc_incoming_data(in, &len);
			req = berth__request__unpack(NULL, len, data);
			if (req == NULL) {
				rpc_server_drop(fk.srv, in);
				continue;
			}
			reply_to(in, req);
			berth__request__free_unpacked(req, NULL);
		}
	}
	return NULL;
}

/* A settled run, with its data directory when data is set. */
static void
add_settled(const char *id, int64_t settled_ms, int data)
{
	Berth__Run *r = calloc(1, sizeof(*r));
	char dir[600];

	berth__run__init(r);
	r->id = strdup(id);
	r->alias = strdup(id);
	r->ticket = strdup("T1");
	r->state = strdup("succeeded");
	r->has_settled_ms = 1;
	r->settled_ms = settled_ms;
	if (fk.pad > 0) {
		r->n_notes = 1;
		r->notes = calloc(1, sizeof(char *));
		r->notes[0] = malloc(fk.pad + 1);
		memset(r->notes[0], 'n', fk.pad);
		r->notes[0][fk.pad] = '\0';
	}
	pthread_mutex_lock(&fk.mtx);
	assert_true(fk.nruns < 64);
	fk.runs[fk.nruns++] = r;
	if (fk.created_ms == 0 || settled_ms - HOUR < fk.created_ms)
		fk.created_ms = settled_ms - HOUR;
	pthread_mutex_unlock(&fk.mtx);
	if (data) {
		snprintf(dir, sizeof(dir), "%s/runs", fk.home);
		mkdir(dir, 0700);
		snprintf(dir, sizeof(dir), "%s/runs/%s", fk.home, id);
		assert_int_equal(mkdir(dir, 0700), 0);
	}
}

static int
data_present(const char *id)
{
	char dir[600];
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s/runs/%s", fk.home, id);
	return stat(dir, &sb) == 0;
}

static struct scan_seen
retention_scan(int i)
{
	struct scan_seen s;

	pthread_mutex_lock(&fk.mtx);
	assert_true(i < fk.nscans);
	s = fk.scans[i];
	pthread_mutex_unlock(&fk.mtx);
	return s;
}

static int
nscans(void)
{
	int n;

	pthread_mutex_lock(&fk.mtx);
	n = fk.nscans;
	pthread_mutex_unlock(&fk.mtx);
	return n;
}

static int
nlists(void)
{
	int n;

	pthread_mutex_lock(&fk.mtx);
	n = fk.nlists;
	pthread_mutex_unlock(&fk.mtx);
	return n;
}

/* Retention scans [from, to) asked for [since, before) exactly: each
 * window starts where the one before it ended, none is empty. */
static void
assert_tiles(int from, int to, int64_t since, int64_t before)
{
	int64_t at = since;
	int i;

	assert_true(from < to);
	for (i = from; i < to; i++) {
		struct scan_seen s = retention_scan(i);

		assert_int_equal(s.since, at);
		assert_true(s.before > s.since);
		at = s.before;
	}
	assert_int_equal(at, before);
}

/* ------------------------------------------------------------ fixtures */

static struct rpc_client *client;
static struct reap *reap;

static int
setup(void **state)
{
	struct reap_opts o = { 0 };

	(void)state;
	memset(&fk, 0, sizeof(fk));
	pthread_mutex_init(&fk.mtx, NULL);
	snprintf(fk.home, sizeof(fk.home), "/tmp/reap_pass_test.XXXXXX");
	if (mkdtemp(fk.home) == NULL)
		return -1;
	home_socket_url(fk.home, fk.url, sizeof(fk.url));
	if ((fk.srv = rpc_server_open(fk.url, 4)) == NULL)
		return -1;
	pthread_create(&fk.thr, NULL, serve, NULL);
	clock_fake_set(T0);
	client = rpc_client_open(fk.url, "reaper");
	o.home = fk.home;
	o.grace_ms = 5000;
	o.retention_ms = DAY;
	o.rpc_timeout_ms = 5000;
	reap = reap_new(&o, client);
	return client != NULL && reap != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[400];
	size_t i;

	(void)state;
	reap_free(reap);
	rpc_client_close(client);
	atomic_store(&fk.stop, 1);
	pthread_join(fk.thr, NULL);
	rpc_server_close(fk.srv);
	clock_fake_clear();
	for (i = 0; i < fk.nruns; i++)
		berth__run__free_unpacked(fk.runs[i], NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fk.home);
	return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ tests */

/* The first pass after a start covers all history once; the next asks only
 * for runs settled since the last cutoff, and the two windows meet. */
static void
test_second_retention_pass_asks_only_for_the_new_window(void **state)
{
	struct reap_stats st;
	struct scan_seen s;
	int n;

	(void)state;
	add_settled("a1", T0 - DAY - 1000, 1);  /* past retention already */
	add_settled("b2", T0 - DAY + 30000, 1); /* passes it within a minute */
	add_settled("c3", T0 - 1000, 1);        /* far from it */

	assert_int_equal(reap_pass(reap, &st), 0);
	n = nscans();
	assert_tiles(0, n, 0, T0 - DAY);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("a1"));
	assert_true(data_present("b2"));
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY);

	/* Retention passes are at most a minute apart. */
	clock_fake_advance(60000);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), n + 1);
	s = retention_scan(n);
	assert_int_equal(s.since, T0 - DAY);
	assert_int_equal(s.before, T0 + 60000 - DAY);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("b2"));
	assert_true(data_present("c3"));
}

/* A run settled exactly at the cutoff is not in the window that ends there
 * (before is exclusive) but is in the next one (since is inclusive). */
static void
test_run_settled_at_the_cutoff_is_handled_by_the_next_pass(void **state)
{
	struct reap_stats st;

	(void)state;
	add_settled("e5", T0 - DAY, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(st.removed, 0);
	assert_true(data_present("e5"));

	clock_fake_advance(60000);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("e5"));
}

/* Data that could not be removed holds the watermark at that run's
 * settlement, so the next pass asks for it again instead of skipping it. */
static void
test_run_whose_data_was_not_removed_is_asked_for_again(void **state)
{
	struct reap_stats st;
	struct scan_seen s;
	int n;

	(void)state;
	add_settled("a1", T0 - DAY - 9000, 1);
	/* Not a plain run id: reap_data_remove refuses it. */
	add_settled("odd", T0 - DAY - 5000, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(st.removed, 1);
	assert_true(data_present("odd"));
	/* Persisted only as far as the data is gone. */
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY - 5000);

	clock_fake_advance(60000);
	n = nscans();
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), n + 1);
	s = retention_scan(n);
	assert_int_equal(s.since, T0 - DAY - 5000);
	assert_int_equal(s.before, T0 + 60000 - DAY);
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY - 5000);
}

/* A retention longer than the clock has run asks for nothing: a before of
 * 0 or less would mean no bound at all. */
static void
test_retention_beyond_the_epoch_asks_for_nothing(void **state)
{
	struct reap_opts o = { 0 };
	struct reap_stats st;
	struct reap *r;

	(void)state;
	o.home = fk.home;
	o.grace_ms = 5000;
	o.retention_ms = T0 + DAY;
	o.rpc_timeout_ms = 5000;
	assert_non_null(r = reap_new(&o, client));
	add_settled("a1", T0 - 2 * DAY, 1);
	assert_int_equal(reap_pass(r, &st), 0);
	assert_int_equal(nscans(), 0);
	assert_int_equal(st.removed, 0);
	assert_true(data_present("a1"));
	reap_free(r);
}

/* A fresh reaper on the same home, as after a restart of the process. */
static void
restart(void)
{
	struct reap_opts o = { 0 };

	reap_free(reap);
	o.home = fk.home;
	o.grace_ms = 5000;
	o.retention_ms = DAY;
	o.rpc_timeout_ms = 5000;
	assert_non_null(reap = reap_new(&o, client));
}

static void
put_mark(const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/reaper", fk.home);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/reaper/retention", fk.home);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* After a restart the first retention pass asks only for what settled
 * since the persisted watermark: no look at history (no list, no window
 * from 0), and the watermark moves on from there. */
static void
test_restart_resumes_from_the_persisted_watermark(void **state)
{
	struct reap_stats st;
	struct scan_seen s;
	int n, l;

	(void)state;
	add_settled("a1", T0 - DAY - 1000, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_false(data_present("a1"));
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY);

	restart();
	clock_fake_advance(60000);
	add_settled("b2", T0 - DAY + 30000, 1);
	/* Already looked at before the restart: were history scanned again,
	 * its data would go. */
	add_settled("c3", T0 - DAY - 2000, 1);
	n = nscans();
	l = nlists();
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), n + 1);
	assert_int_equal(nlists(), l);
	s = retention_scan(n);
	assert_int_equal(s.since, T0 - DAY);
	assert_int_equal(s.before, T0 + 60000 - DAY);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("b2"));
	assert_true(data_present("c3"));
	assert_int_equal(reap_mark_load(fk.home), T0 + 60000 - DAY);
}

/* A run whose data could not be removed before the restart is asked for
 * again after it. */
static void
test_restart_asks_again_for_data_not_removed(void **state)
{
	struct reap_stats st;
	int n;

	(void)state;
	add_settled("a1", T0 - DAY - 9000, 1);
	add_settled("odd", T0 - DAY - 5000, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_true(data_present("odd"));

	restart();
	clock_fake_advance(60000);
	n = nscans();
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nlists(), 1); /* before the restart only */
	assert_tiles(n, n + 1, T0 - DAY - 5000, retention_scan(n).before);
	assert_true(data_present("odd"));
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY - 5000);
}

/* A garbled watermark file is ignored: the pass starts from the
 * beginning, and the file is replaced by a good one. */
static void
test_garbage_watermark_starts_from_the_beginning(void **state)
{
	struct reap_stats st;

	(void)state;
	put_mark("yesterday\n");
	restart();
	add_settled("a1", T0 - DAY - 1000, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_tiles(0, nscans(), 0, T0 - DAY);
	assert_false(data_present("a1"));
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY);
}

/* A watermark beyond the cutoff (written under a clock that ran ahead, or
 * a longer retention now) comes back to the cutoff, so runs settling
 * from now on are not passed over until the clock catches up with it. */
static void
test_watermark_past_the_cutoff_comes_back(void **state)
{
	char text[64];
	struct reap_stats st;
	struct scan_seen s;
	int n;

	(void)state;
	snprintf(text, sizeof(text), "%lld\n", (long long)(T0 + DAY));
	put_mark(text);
	restart();
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), 0);

	clock_fake_advance(60000);
	add_settled("b2", T0 - DAY + 30000, 1);
	n = nscans();
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), n + 1);
	s = retention_scan(n);
	assert_int_equal(s.since, T0 - DAY);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("b2"));
	assert_int_equal(reap_mark_load(fk.home), T0 + 60000 - DAY);
}

/* A history whose one scan would be over the message limit (44 runs of
 * 100 KiB each, 4.5 MB): the first retention passes page it in windows whose
 * replies all stay under RPC_MAX_MSG, tile [0, cutoff) and remove every
 * run's data. */
static void
test_large_history_is_paged_under_the_message_limit(void **state)
{
	struct reap_stats st;
	char id[16];
	int i, removed = 0;

	(void)state;
	fk.pad = 100 * 1024;
	for (i = 0; i < 44; i++) {
		snprintf(id, sizeof(id), "a%02d", i);
		add_settled(id, T0 - 2 * DAY + i * 60000LL, 1);
	}
	for (i = 0; i < 20 && reap_mark_load(fk.home) < T0 - DAY; i++) {
		assert_int_equal(reap_pass(reap, &st), 0);
		removed += st.removed;
	}
	assert_int_equal(reap_mark_load(fk.home), T0 - DAY);
	assert_tiles(0, nscans(), 0, T0 - DAY);
	assert_int_equal(removed, 44);
	for (i = 0; i < 44; i++) {
		snprintf(id, sizeof(id), "a%02d", i);
		assert_false(data_present(id));
	}
	i = nscans();
	pthread_mutex_lock(&fk.mtx);
	printf("paged: %d scans, the largest reply %zu bytes\n", i, fk.max_reply);
	assert_true(fk.max_reply > 0);
	assert_true(fk.max_reply <= RPC_MAX_MSG);
	pthread_mutex_unlock(&fk.mtx);
}

/* Hello carries this process's identity (rpc_pass_hello, shared with
 * recovery), so the coordinator can later judge the reaper alive. */
static void
test_hello_carries_this_process(void **state)
{
	int64_t pid;

	(void)state;
	assert_int_equal(reap_hello(reap), 0);
	pthread_mutex_lock(&fk.mtx);
	pid = fk.hello_pid;
	pthread_mutex_unlock(&fk.mtx);
	assert_int_equal(pid, getpid());
}

/* Trust is asymmetric: the coordinator calling the reaper's own request
 * malformed (or of another version) is the reaper's bug, and the pass says
 * so (-2: main exits non-zero for the launcher to restart it); a storage
 * error is the coordinator's trouble and only ends this tick (-1). */
static void
test_malformed_reply_ends_the_actor(void **state)
{
	struct reap_stats st;

	(void)state;
	fk.error_code = BERTH__ERROR_CODE__ERR_STORAGE;
	assert_int_equal(reap_pass(reap, &st), -1);
	fk.error_code = BERTH__ERROR_CODE__ERR_MALFORMED;
	assert_int_equal(reap_pass(reap, &st), -2);
	fk.error_code = 0;
	/* The reaper does not go on as if nothing happened. */
	assert_int_equal(reap_pass(reap, &st), -2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_second_retention_pass_asks_only_for_the_new_window, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_run_settled_at_the_cutoff_is_handled_by_the_next_pass, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_run_whose_data_was_not_removed_is_asked_for_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_beyond_the_epoch_asks_for_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_resumes_from_the_persisted_watermark,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_asks_again_for_data_not_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage_watermark_starts_from_the_beginning,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_watermark_past_the_cutoff_comes_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_large_history_is_paged_under_the_message_limit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello_carries_this_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_reply_ends_the_actor, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
