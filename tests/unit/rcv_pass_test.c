/* A recovery pass against a fake coordinator (recovery/rcv_pass.c): the
 * scan it answers is crafted per test, the requests the pass sends are
 * recorded and asserted. Identities are real: this process is the "live"
 * one, and the same pid with a forged start time is a reused pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exitrec.h"
#include "ident.h"
#include "rcv_pass.h"
#include "rpc.h"
#include "util.h"

#define RUN_A    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SUP      "5555555555555555"
#define DEAD_SUP "dddddddddddddddd"

/* ------------------------------------------------------------ fake coordinator */

struct seen {
	char verb[24];
	char run[48];
	char new_owner[24];
	int has_record;
	int exit_code;
	int has_exit_code;
	int64_t output_bytes;
	int capture_complete;
	char outcome[24];
	uint32_t lease_ms;
};

static struct {
	char home[256];
	char url[512];
	struct rpc_server *srv;
	pthread_t thr;
	atomic_int stop;
	pthread_mutex_t mtx;
	Berth__ScanReply *scan; /* what scan answers, under mtx */
	int deny_record_exit;
	const char *deny_state;
	int error_record_exit; /* answer record_exit with this error code */
	struct seen seen[32];
	int nseen;
} fk;

static void
reply_to(struct rpc_incoming *in, const Berth__Request *req)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Granted g = BERTH__GRANTED__INIT;
	Berth__Denied d = BERTH__DENIED__INIT;
	Berth__SettleGranted sg = BERTH__SETTLE_GRANTED__INIT;
	Berth__LeaseGranted lg = BERTH__LEASE_GRANTED__INIT;
	Berth__Fact fact = BERTH__FACT__INIT;
	Berth__Fact *facts[1] = { &fact };
	struct seen *s = NULL;

	rep.has_req_id = 1;
	rep.req_id = req->req_id;
	rep.result_case = BERTH__REPLY__RESULT_GRANTED;
	rep.granted = &g;

	pthread_mutex_lock(&fk.mtx);
	if (req->verb_case != BERTH__REQUEST__VERB_SCAN &&
	    req->verb_case != BERTH__REQUEST__VERB_HELLO && fk.nseen < 32) {
		s = &fk.seen[fk.nseen++];
		memset(s, 0, sizeof(*s));
		snprintf(s->verb, sizeof(s->verb), "%s", msg_verb_name(req));
	}
	switch (req->verb_case) {
	case BERTH__REQUEST__VERB_SCAN:
		g.payload_case = BERTH__GRANTED__PAYLOAD_SCAN;
		g.scan = fk.scan;
		break;
	case BERTH__REQUEST__VERB_RECORD_EXIT:
		snprintf(s->run, sizeof(s->run), "%s", req->record_exit->run_id);
		s->has_record = req->record_exit->has_record;
		s->has_exit_code = req->record_exit->has_exit_code;
		s->exit_code = req->record_exit->exit_code;
		if (fk.error_record_exit) {
			static Berth__Error err = BERTH__ERROR__INIT;

			err.has_code = 1;
			err.code = fk.error_record_exit;
			err.message = "as the test says";
			rep.result_case = BERTH__REPLY__RESULT_ERROR;
			rep.error = &err;
		} else if (fk.deny_record_exit) {
			rep.result_case = BERTH__REPLY__RESULT_DENIED;
			rep.denied = &d;
			d.reason = "already_claimed";
			fact.key = "state";
			fact.value = (char *)fk.deny_state;
			d.n_facts = 1;
			d.facts = facts;
		}
		break;
	case BERTH__REQUEST__VERB_SETTLE:
		snprintf(s->run, sizeof(s->run), "%s", req->settle->run_id);
		snprintf(s->outcome, sizeof(s->outcome), "%s",
			 req->settle->outcome ? req->settle->outcome : "");
		s->output_bytes = req->settle->output_bytes;
		s->capture_complete = req->settle->capture_complete;
		g.payload_case = BERTH__GRANTED__PAYLOAD_SETTLE;
		g.settle = &sg;
		sg.has_applied = 1;
		sg.applied = 1;
		sg.outcome = "succeeded";
		break;
	case BERTH__REQUEST__VERB_READOPT:
		snprintf(s->run, sizeof(s->run), "%s", req->readopt->run_id);
		snprintf(s->new_owner, sizeof(s->new_owner), "%s",
			 req->readopt->new_owner ? req->readopt->new_owner : "");
		s->lease_ms = req->readopt->lease_ms;
		g.payload_case = BERTH__GRANTED__PAYLOAD_LEASE;
		g.lease = &lg;
		break;
	case BERTH__REQUEST__VERB_ABANDON:
		snprintf(s->run, sizeof(s->run), "%s", req->abandon->run_id);
		break;
	default: break;
	}
	rpc_server_reply(fk.srv, in, &rep);
	pthread_mutex_unlock(&fk.mtx);
}

static void *
serve(void *arg)
{
	struct pollfd pfd;

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

/* ------------------------------------------------------------ scan building */

static struct ident self_id;

static Berth__Ident *
mk_ident(int forged)
{
	Berth__Ident *m = calloc(1, sizeof(*m));

	berth__ident__init(m);
	m->boot_id = strdup(self_id.boot_id);
	m->has_pid = m->has_start_time = m->has_pgid = 1;
	m->pid = self_id.pid;
	m->pgid = self_id.pgid;
	/* A forged start time: the same pid is now "someone else". */
	m->start_time = self_id.start_time + (forged ? 7 : 0);
	return m;
}

static void
add_actor(Berth__ScanReply *sr, const char *actor, const char *inst, int alive, int64_t seen)
{
	Berth__Actor *a = calloc(1, sizeof(*a));

	berth__actor__init(a);
	a->actor = strdup(actor);
	a->instance = strdup(inst);
	a->ident = mk_ident(!alive);
	a->has_seen_ms = 1;
	a->seen_ms = seen;
	sr->actors = realloc(sr->actors, (sr->n_actors + 1) * sizeof(*sr->actors));
	sr->actors[sr->n_actors++] = a;
}

static Berth__Run *
add_run(Berth__ScanReply *sr, const char *id, const char *state, const char *owner, int shim,
	int shim_alive)
{
	Berth__Run *r = calloc(1, sizeof(*r));

	berth__run__init(r);
	r->id = strdup(id);
	r->alias = strdup("T1-r1");
	r->ticket = strdup("T1");
	r->state = strdup(state);
	r->owner = strdup(owner);
	if (shim)
		r->shim = mk_ident(!shim_alive);
	r->has_has_lease = 1;
	r->has_lease = 1;
	r->has_lease_expires_ms = 1;
	r->lease_expires_ms = sr->now_ms + 60000;
	sr->runs = realloc(sr->runs, (sr->n_runs + 1) * sizeof(*sr->runs));
	sr->runs[sr->n_runs++] = r;
	return r;
}

static Berth__ScanReply *
new_scan(void)
{
	Berth__ScanReply *sr = calloc(1, sizeof(*sr));

	berth__scan_reply__init(sr);
	sr->has_now_ms = 1;
	sr->now_ms = 1700000000000LL;
	return sr;
}

static void
set_scan(Berth__ScanReply *sr)
{
	pthread_mutex_lock(&fk.mtx);
	if (fk.scan != NULL)
		berth__scan_reply__free_unpacked(fk.scan, NULL);
	fk.scan = sr;
	pthread_mutex_unlock(&fk.mtx);
}

static void
put_marker(const char *run)
{
	char path[600];
	struct timespec ts[2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/runs/%s/started", fk.home, run);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	/* Far older than the scan's now. */
	ts[0].tv_sec = ts[1].tv_sec = 1600000000;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void
put_run_files(const char *run, int code, const char *output)
{
	char dir[512], path[600];
	struct exit_record er = { 0 };
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/runs", fk.home);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/runs/%s", fk.home, run);
	mkdir(dir, 0700);
	if (output != NULL) {
		snprintf(path, sizeof(path), "%s/output.log", dir);
		assert_non_null(f = fopen(path, "w"));
		fputs(output, f);
		fclose(f);
	}
	if (code >= 0) {
		er.has_code = 1;
		er.code = code;
		er.ended_ms = 1;
		assert_int_equal(exitrec_write(dir, &er), 0);
	}
	put_marker(run);
}

/* ------------------------------------------------------------ fixtures */

static struct rpc_client *client;
static struct rcv *rcv;

static int
setup(void **state)
{
	struct rcv_opts o = { 0 };

	memset(&fk, 0, sizeof(fk));
	pthread_mutex_init(&fk.mtx, NULL);
	snprintf(fk.home, sizeof(fk.home), "/tmp/rcv_pass_test.XXXXXX");
	if (mkdtemp(fk.home) == NULL)
		return -1;
	home_socket_url(fk.home, fk.url, sizeof(fk.url));
	if ((fk.srv = rpc_server_open(fk.url, 4)) == NULL)
		return -1;
	set_scan(new_scan());
	pthread_create(&fk.thr, NULL, serve, NULL);
	if (ident_self(&self_id) < 0)
		return -1;
	client = rpc_client_open(fk.url, "recovery");
	o.home = fk.home;
	o.lease_ms = 1500;
	o.rpc_timeout_ms = 5000;
	o.confirm_ms = 100;
	rcv = rcv_new(&o, client);
	return client != NULL && rcv != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[400];

	rcv_free(rcv);
	rpc_client_close(client);
	atomic_store(&fk.stop, 1);
	pthread_join(fk.thr, NULL);
	rpc_server_close(fk.srv);
	set_scan(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fk.home);
	return system(cmd) == 0 ? 0 : -1;
}

static int
nseen(void)
{
	int n;

	pthread_mutex_lock(&fk.mtx);
	n = fk.nseen;
	pthread_mutex_unlock(&fk.mtx);
	return n;
}

/* ------------------------------------------------------------ tests */

static void
test_dead_running_run_recorded_and_settled_from_exit_record(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", DEAD_SUP, 0, 1);
	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 0);
	set_scan(sr);
	put_run_files(RUN_A, 3, "hello");
	assert_int_equal(rcv_hello(rcv), 0);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 2);
	assert_string_equal(fk.seen[0].verb, "record_exit");
	assert_string_equal(fk.seen[0].run, RUN_A);
	assert_true(fk.seen[0].has_record);
	assert_true(fk.seen[0].has_exit_code);
	assert_int_equal(fk.seen[0].exit_code, 3);
	assert_string_equal(fk.seen[1].verb, "settle");
	assert_string_equal(fk.seen[1].outcome, ""); /* derived by the coordinator */
	assert_int_equal(fk.seen[1].output_bytes, 5);
	assert_true(fk.seen[1].capture_complete);
	assert_int_equal(st.acted, 1);
}

static void
test_dead_run_without_record_is_recorded_without_one(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "running", "0000000000000000", 1, 0); /* owner never said hello */
	set_scan(sr);
	put_run_files(RUN_A, -1, NULL);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 2);
	assert_string_equal(fk.seen[0].verb, "record_exit");
	assert_false(fk.seen[0].has_record);
	assert_string_equal(fk.seen[1].verb, "settle");
	assert_false(fk.seen[1].capture_complete);
	assert_int_equal(fk.seen[1].output_bytes, 0);
}

/* Capture is complete only with the record and the output file both there
 * (common/aftercare.h): a record alone does not prove any output was kept. */
static void
test_record_without_output_is_not_complete(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 0);
	set_scan(sr);
	put_run_files(RUN_A, 0, NULL);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 2);
	assert_true(fk.seen[0].has_record);
	assert_string_equal(fk.seen[1].verb, "settle");
	assert_false(fk.seen[1].capture_complete);
}

/* Trust is asymmetric: the coordinator calling our own request malformed
 * (or of another version) is recovery's bug. The pass stops at once and
 * says so (-2: main exits non-zero for the launcher to restart it); any
 * other error is the coordinator's to have, and the pass lives on. */
static void
test_malformed_reply_ends_the_actor(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 0);
	set_scan(sr);
	put_run_files(RUN_A, 0, "x");
	fk.error_record_exit = BERTH__ERROR_CODE__ERR_STORAGE;
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	fk.error_record_exit = BERTH__ERROR_CODE__ERR_VERSION;
	assert_int_equal(rcv_pass(rcv, &st), -2);
	fk.error_record_exit = BERTH__ERROR_CODE__ERR_MALFORMED;
	assert_int_equal(rcv_pass(rcv, &st), -2);
	/* Nothing more was sent for the run, and nothing after the bug. */
	assert_int_equal(nseen(), 2);
	assert_string_equal(fk.seen[1].verb, "record_exit");
}

static void
test_denied_record_exit_does_nothing_more(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 0);
	set_scan(sr);
	fk.deny_record_exit = 1;
	fk.deny_state = "aftercare";
	put_run_files(RUN_A, 0, "x");
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	assert_string_equal(fk.seen[0].verb, "record_exit");
}

static void
test_live_run_readopted_for_newest_live_supervisor(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", DEAD_SUP, 0, 300); /* newest, but dead */
	add_actor(sr, "supervisor", "1111111111111111", 1, 100);
	add_actor(sr, "supervisor", SUP, 1, 200);
	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 1);
	set_scan(sr);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	assert_string_equal(fk.seen[0].verb, "readopt");
	assert_string_equal(fk.seen[0].new_owner, SUP);
	assert_int_equal(fk.seen[0].lease_ms, 1500);
}

static void
test_live_run_without_live_supervisor_left_alone(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", DEAD_SUP, 0, 300);
	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 1);
	set_scan(sr);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 0);
	assert_int_equal(st.waiting, 1);
}

static void
test_live_owner_with_held_lease_untouched(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", SUP, 1, 1);
	add_run(sr, RUN_A, "running", SUP, 1, 0); /* even with the job gone */
	set_scan(sr);
	put_run_files(RUN_A, 0, "x");
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 0);
}

static void
test_expired_lease_of_live_owner_with_dead_job_is_checkpointed(void **state)
{
	Berth__ScanReply *sr = new_scan();
	Berth__Run *r;
	struct rcv_stats st;

	add_actor(sr, "supervisor", SUP, 1, 1);
	r = add_run(sr, RUN_A, "running", SUP, 1, 0);
	r->lease_expires_ms = sr->now_ms - 1;
	set_scan(sr);
	put_run_files(RUN_A, 0, "x");
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 2);
	assert_string_equal(fk.seen[0].verb, "record_exit");
	assert_string_equal(fk.seen[1].verb, "settle");
}

static void
test_claimed_run_of_dead_owner_abandoned_on_second_look(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", DEAD_SUP, 0, 1);
	add_run(sr, RUN_A, "claimed", DEAD_SUP, 0, 0);
	set_scan(sr);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 0);
	assert_int_equal(st.pending, 1);
	usleep(150 * 1000);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	assert_string_equal(fk.seen[0].verb, "abandon");
	assert_string_equal(fk.seen[0].run, RUN_A);
}

static void
test_claimed_confirmation_forgotten_when_run_moves_on(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "claimed", DEAD_SUP, 0, 0);
	set_scan(sr);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	/* The start committed after all: the run is running, its job alive. */
	sr = new_scan();
	add_actor(sr, "supervisor", SUP, 1, 1);
	add_run(sr, RUN_A, "running", SUP, 1, 1);
	set_scan(sr);
	usleep(150 * 1000);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	/* Back to claimed (cannot happen, but the memory must be fresh). */
	sr = new_scan();
	add_run(sr, RUN_A, "claimed", DEAD_SUP, 0, 0);
	set_scan(sr);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 0);
}

static void
test_claimed_with_old_marker_settled_from_record_when_checkpoint_denied(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_run(sr, RUN_A, "claimed", DEAD_SUP, 0, 0);
	set_scan(sr);
	put_run_files(RUN_A, 0, "out"); /* with an old started marker */
	fk.deny_record_exit = 1;
	fk.deny_state = "claimed";
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 0); /* confirmation first */
	usleep(150 * 1000);
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 2);
	assert_string_equal(fk.seen[0].verb, "record_exit");
	assert_string_equal(fk.seen[1].verb, "settle");
	assert_string_equal(fk.seen[1].outcome, "succeeded");
}

static void
test_running_run_whose_shim_died_before_go_is_abandoned(void **state)
{
	Berth__ScanReply *sr = new_scan();
	char dir[600];
	struct rcv_stats st;

	add_run(sr, RUN_A, "running", DEAD_SUP, 1, 0);
	set_scan(sr);
	snprintf(dir, sizeof(dir), "%s/runs", fk.home);
	mkdir(dir, 0700); /* no run dir, no marker, no record */
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	assert_string_equal(fk.seen[0].verb, "abandon");
}

static void
test_aftercare_of_dead_owner_settled_without_checkpoint(void **state)
{
	Berth__ScanReply *sr = new_scan();
	struct rcv_stats st;

	add_actor(sr, "supervisor", DEAD_SUP, 0, 1);
	add_run(sr, RUN_A, "aftercare", DEAD_SUP, 1, 0);
	set_scan(sr);
	put_run_files(RUN_A, 1, "abc");
	assert_int_equal(rcv_pass(rcv, &st), 0);
	assert_int_equal(nseen(), 1);
	assert_string_equal(fk.seen[0].verb, "settle");
	assert_int_equal(fk.seen[0].output_bytes, 3);
	assert_true(fk.seen[0].capture_complete);
}

static void
test_live_supervisor_and_instance_judgement(void **state)
{
	Berth__ScanReply *sr = new_scan();

	add_actor(sr, "reaper", "7777777777777777", 1, 999);
	assert_null(rcv_live_supervisor(sr, ident_check)); /* not a supervisor */
	add_actor(sr, "supervisor", SUP, 1, 5);
	assert_string_equal(rcv_live_supervisor(sr, ident_check), SUP);
	assert_true(rcv_instance_alive(sr, "7777777777777777", ident_check));
	assert_false(rcv_instance_alive(sr, "nosuch", ident_check));
	assert_false(rcv_instance_alive(sr, NULL, ident_check));
	berth__scan_reply__free_unpacked(sr, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_dead_running_run_recorded_and_settled_from_exit_record, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_dead_run_without_record_is_recorded_without_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_record_exit_does_nothing_more, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_live_run_readopted_for_newest_live_supervisor,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_run_without_live_supervisor_left_alone,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_owner_with_held_lease_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_expired_lease_of_live_owner_with_dead_job_is_checkpointed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_claimed_run_of_dead_owner_abandoned_on_second_look, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_claimed_confirmation_forgotten_when_run_moves_on, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_claimed_with_old_marker_settled_from_record_when_checkpoint_denied,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_running_run_whose_shim_died_before_go_is_abandoned, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_aftercare_of_dead_owner_settled_without_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_supervisor_and_instance_judgement, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_record_without_output_is_not_complete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed_reply_ends_the_actor, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
