/* A reaper pass against a fake coordinator (reaper/reap_pass.c). The fake
 * keeps a list of settled runs and answers each scan with the runs its
 * bounds select, the way coordinator/coord_runs.c does (settled_ms >= since
 * when since is not 0, settled_ms < before when before is not 0); every
 * scan's bounds are recorded and asserted. The clock is faked, the run
 * directories are real files in a temporary home. */
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

#define T0 1700000000000LL
#define DAY 86400000LL

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
	Berth__Run *runs[8]; /* every settled run the coordinator knows */
	size_t nruns;
	struct scan_seen scans[32]; /* retention scans: before != 0 */
	int nscans;
	int64_t hello_pid; /* the pid the last hello carried */
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
	if (before != 0 && fk.nscans < 32) {
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
	Berth__Run *sel[8];

	rep.has_req_id = 1;
	rep.req_id = req->req_id;
	rep.result_case = BERTH__REPLY__RESULT_GRANTED;
	rep.granted = &g;
	pthread_mutex_lock(&fk.mtx);
	if (req->verb_case == BERTH__REQUEST__VERB_SCAN && req->scan != NULL) {
		reply_scan(req->scan, &sr, sel);
		g.payload_case = BERTH__GRANTED__PAYLOAD_SCAN;
		g.scan = &sr;
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
	pthread_mutex_lock(&fk.mtx);
	fk.runs[fk.nruns++] = r;
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

/* ------------------------------------------------------------ fixtures */

static struct rpc_client *client;
static struct reap *reap;

static int
setup(void **state)
{
	struct reap_opts o = {0};

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

	(void)state;
	add_settled("a1", T0 - DAY - 1000, 1);  /* past retention already */
	add_settled("b2", T0 - DAY + 30000, 1); /* passes it within a minute */
	add_settled("c3", T0 - 1000, 1);        /* far from it */

	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), 1);
	s = retention_scan(0);
	assert_int_equal(s.since, 0);
	assert_int_equal(s.before, T0 - DAY);
	assert_int_equal(st.removed, 1);
	assert_false(data_present("a1"));
	assert_true(data_present("b2"));

	/* Retention passes are at most a minute apart. */
	clock_fake_advance(60000);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), 2);
	s = retention_scan(1);
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

	(void)state;
	add_settled("a1", T0 - DAY - 9000, 1);
	/* Not a plain run id: reap_data_remove refuses it. */
	add_settled("odd", T0 - DAY - 5000, 1);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(st.removed, 1);
	assert_true(data_present("odd"));

	clock_fake_advance(60000);
	assert_int_equal(reap_pass(reap, &st), 0);
	assert_int_equal(nscans(), 2);
	s = retention_scan(1);
	assert_int_equal(s.since, T0 - DAY - 5000);
	assert_int_equal(s.before, T0 + 60000 - DAY);
}

/* A retention longer than the clock has run asks for nothing: a before of
 * 0 or less would mean no bound at all. */
static void
test_retention_beyond_the_epoch_asks_for_nothing(void **state)
{
	struct reap_opts o = {0};
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_retention_pass_asks_only_for_the_new_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_settled_at_the_cutoff_is_handled_by_the_next_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_whose_data_was_not_removed_is_asked_for_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_beyond_the_epoch_asks_for_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello_carries_this_process, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
