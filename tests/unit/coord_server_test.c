/*
 * coord_server: the whole loop in-process (coord_live.h: real store, real
 * socket, real trace in a temp home) driven by rpc clients and a raw nng
 * REQ socket: garbage and version mismatches answered, repeats replayed,
 * resent reads executed once, one coordinator per home, a private home,
 * bad failpoints refused. Parked claims: coord_server_park_test.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "board.h"
#include "coord_envelope.h"
#include "coord_server.h"
#include "coord_verbs.h"
#include "rpc.h"
#include "ring.h"
#include "shm.h"
#include "coord_live.h"

static void
test_garbage_gets_an_error_and_serving_goes_on(void **state)
{
	struct live *l = *state;
	static const uint8_t garbage[] = { 0xde, 0xad, 0xbe, 0xef, 0xff, 0xff };
	struct rpc_client *c;
	Berth__Reply *r;
	uint8_t *big;
	char *id;

	r = send_raw(l->url, garbage, sizeof(garbage));
	assert_int_equal(r->result_case, BERTH__REPLY__RESULT_ERROR);
	assert_int_equal(r->error->code, BERTH__ERROR_CODE__ERR_MALFORMED);
	assert_int_equal(r->req_id, 0);
	berth__reply__free_unpacked(r, NULL);

	r = send_raw(l->url, garbage, 0);
	assert_int_equal(r->error->code, BERTH__ERROR_CODE__ERR_MALFORMED);
	berth__reply__free_unpacked(r, NULL);

	big = calloc(1, RPC_MAX_MSG + 100);
	r = send_raw(l->url, big, RPC_MAX_MSG + 100);
	assert_int_equal(r->result_case, BERTH__REPLY__RESULT_ERROR);
	assert_int_equal(r->error->code, BERTH__ERROR_CODE__ERR_TOO_LARGE);
	berth__reply__free_unpacked(r, NULL);
	free(big);

	c = rpc_client_open(l->url, "cli");
	id = add_ticket(c, 0);
	assert_string_equal(id, "T1");
	free(id);
	rpc_client_close(c);
}

static void
test_version_mismatch_over_the_wire(void **state)
{
	struct live *l = *state;
	struct env e;
	Berth__Reply *r;
	uint8_t *buf;
	size_t len;

	env_init(&e);
	e.req.version = 99;
	e.req.req_id = 4242;
	buf = pack(&e.req, &len);
	r = send_raw(l->url, buf, len);
	free(buf);
	assert_int_equal(r->result_case, BERTH__REPLY__RESULT_ERROR);
	assert_int_equal(r->error->code, BERTH__ERROR_CODE__ERR_VERSION);
	assert_int_equal(r->req_id, 4242);
	assert_non_null(strstr(r->error->message, "version 99"));
	berth__reply__free_unpacked(r, NULL);
}

static void
test_repeat_is_replayed_and_traced_in_order(void **state)
{
	struct live *l = *state;
	struct rpc_client *c = rpc_client_open(l->url, "cli");
	struct add_req a;
	Berth__Reply *r1 = NULL, *r2 = NULL;
	char lines[16][512];
	int n, i;
	unsigned long long prev = 0, seq;

	add_init(&a, 0);
	assert_int_equal(rpc_call(c, &a.req, &r1, 10000), 0);
	/* The same struct keeps its req_id: a retry. */
	assert_int_equal(rpc_call(c, &a.req, &r2, 10000), 0);
	assert_true(msg_is_granted(r2));
	assert_true(r2->has_replayed && r2->replayed);
	assert_string_equal(r2->granted->add->ticket, r1->granted->add->ticket);
	berth__reply__free_unpacked(r1, NULL);
	berth__reply__free_unpacked(r2, NULL);
	rpc_client_close(c);

	n = trace_lines(l->home, lines, 16);
	assert_int_equal(n, 2);
	assert_non_null(strstr(lines[0], "\"verb\":\"add\""));
	assert_non_null(strstr(lines[0], "\"decision\":\"granted\""));
	assert_non_null(strstr(lines[0], "\"from\":\"cli\""));
	assert_non_null(strstr(lines[0], "\"ticket\":\"T1\""));
	assert_non_null(strstr(lines[1], "\"decision\":\"replayed\""));
	for (i = 0; i < n; i++) {
		assert_int_equal(sscanf(lines[i], "{\"seq\":%llu", &seq), 1);
		assert_true(seq > prev);
		prev = seq;
	}
}

/* A live server whose first commit pauses (failpoint) until released. */
static int
live_paused_setup(void **state)
{
	struct live *l = calloc(1, sizeof(*l));

	snprintf(l->home, sizeof(l->home), "/tmp/coord_server_test.XXXXXX");
	if (mkdtemp(l->home) == NULL)
		return -1;
	setenv("BERTH_FAILPOINTS", "coordinator.before_commit=1*pause", 1);
	live_start(l);
	unsetenv("BERTH_FAILPOINTS");
	*state = l;
	return 0;
}

static int
wait_file(const char *path, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	while (access(path, F_OK) != 0) {
		if (now_ms() > end)
			return -1;
		usleep(10000);
	}
	return 0;
}

/* Copies of a read resent while the loop is busy (the CLI resends every
 * second) are queued together: one is built and answered, not every one. */
static void
test_resent_read_queued_together_is_executed_once(void **state)
{
	struct live *l = *state;
	struct rpc_client *cli = rpc_client_open(l->url, "cli");
	struct rpc_client *reader = rpc_client_open(l->url, "cli");
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List list = BERTH__LIST__INIT;
	struct add_req a;
	Berth__Reply *r = NULL;
	struct pollfd p;
	char path[256], lines[32][512];
	int n, i, lists = 0, adds = 0, fd;

	/* The loop is busy: an add stops just before its commit. */
	add_init(&a, 0);
	assert_int_equal(rpc_send(cli, &a.req), 0);
	snprintf(path, sizeof(path), "%s/failpoints/coordinator.before_commit.reached", l->home);
	assert_int_equal(wait_file(path, 10000), 0);

	/* Four copies of one list (same instance and req_id), each send
	 * superseding the one before, as rpc_call's resends do. They are
	 * spaced out: a send that has not reached the wire yet is cancelled
	 * by the next one, not sent. */
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &list;
	for (i = 0; i < 4; i++) {
		assert_int_equal(rpc_send(reader, &req), 0);
		usleep(150000);
	}
	/* Let the local socket deliver the last before the loop goes on. */
	usleep(300000);
	snprintf(path, sizeof(path), "%s/failpoints/coordinator.before_commit.release", l->home);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);

	p.fd = rpc_fd(reader);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(reader, &r), 0);
	assert_true(msg_is_granted(r));
	assert_int_equal(r->req_id, req.req_id);
	berth__reply__free_unpacked(r, NULL);
	p.fd = rpc_fd(cli);
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(cli, &r), 0);
	assert_true(msg_is_granted(r));
	berth__reply__free_unpacked(r, NULL);
	rpc_client_close(reader);
	rpc_client_close(cli);

	n = trace_lines(l->home, lines, 32);
	for (i = 0; i < n; i++) {
		lists += strstr(lines[i], "\"verb\":\"list\"") != NULL;
		adds += strstr(lines[i], "\"verb\":\"add\"") != NULL;
	}
	assert_int_equal(adds, 1);
	/* Decided once when all four were queued together (the usual case);
	 * on a loaded machine a copy may reach the queue only after the add
	 * is released, or nng may resend the last one after its second, and
	 * such a copy is decided once more. Every copy decided (4), as before
	 * the change, never passes. */
	assert_true(lists >= 1 && lists < 4);
}

/* A live server whose first two commits pause (failpoint) until released. */
static int
live_paused2_setup(void **state)
{
	struct live *l = calloc(1, sizeof(*l));

	snprintf(l->home, sizeof(l->home), "/tmp/coord_server_test.XXXXXX");
	if (mkdtemp(l->home) == NULL)
		return -1;
	setenv("BERTH_FAILPOINTS", "coordinator.before_commit=2*pause", 1);
	live_start(l);
	unsetenv("BERTH_FAILPOINTS");
	*state = l;
	return 0;
}

static void
release_pause(const struct live *l)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/failpoints/coordinator.before_commit.release", l->home);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);
}

/* Group commit (DESIGN §4): requests queued together are decided in one
 * transaction and committed once; none of them is answered before that
 * COMMIT, and the lines of all of them are kept with it. */
static struct rpc_client *kept_clients[3];

static void
test_queued_requests_commit_once_and_answer_after(void **state)
{
	struct live *l = *state;
	struct rpc_client *c[3];
	struct add_req a[3];
	Berth__Reply *r = NULL;
	struct pollfd p;
	static char tail[65536];
	char path[256], lines[8][512];
	int64_t v;
	const char *kept;
	int i, n, nl = 0;

	for (i = 0; i < 3; i++) {
		c[i] = rpc_client_open(l->url, "cli");
		add_init(&a[i], 0);
	}
	/* The loop is held inside the first group, c[0]'s add. */
	assert_int_equal(rpc_send(c[0], &a[0].req), 0);
	snprintf(path, sizeof(path), "%s/failpoints/coordinator.before_commit.reached", l->home);
	assert_int_equal(wait_file(path, 10000), 0);
	/* Two more adds queue meanwhile. */
	assert_int_equal(rpc_send(c[1], &a[1].req), 0);
	assert_int_equal(rpc_send(c[2], &a[2].req), 0);
	usleep(500000); /* let the local sockets deliver both */
	release_pause(l);
	p.fd = rpc_fd(c[0]);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(c[0], &r), 0);
	assert_true(msg_is_granted(r));
	berth__reply__free_unpacked(r, NULL);

	/* Both queued adds are in the second group, held before its COMMIT:
	 * neither is answered. */
	assert_int_equal(wait_file(path, 10000), 0);
	for (i = 1; i < 3; i++) {
		p.fd = rpc_fd(c[i]);
		assert_int_equal(poll(&p, 1, 300), 0);
	}
	assert_int_equal(test_store_peek(l->ts.store, "SELECT count(*) FROM tickets", &v, NULL, 0),
			 1);
	assert_int_equal(v, 1); /* nothing of it is committed */
	release_pause(l);
	for (i = 1; i < 3; i++) {
		p.fd = rpc_fd(c[i]);
		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_int_equal(rpc_try_recv(c[i], &r), 0);
		assert_true(msg_is_granted(r));
		berth__reply__free_unpacked(r, NULL);
	}
	/* Not closed: nng 1.5.2's close of a REQ socket that sent with an
	 * aio hangs now and then (1 in 15 runs of three copies at once under
	 * ASan, in nng_close here, the server's loop idle; nng issue #648
	 * is the same shape). The clients stay reachable for the process's
	 * life, and the server's teardown closes their pipes. */
	for (i = 0; i < 3; i++)
		kept_clients[i] = c[i];

	/* One COMMIT kept both lines. */
	assert_int_equal(test_store_peek(l->ts.store, "SELECT seq, line FROM trace_tail", &v, tail,
					 sizeof tail),
			 1);
	assert_int_equal(v, 2);
	for (kept = tail; (kept = strchr(kept, '\n')) != NULL; kept++)
		nl++;
	assert_int_equal(nl, 2);
	/* Three adds granted, in order (the clients' REQ sockets resend while
	 * they wait: those copies are replayed, after). */
	n = trace_lines(l->home, lines, 8);
	for (i = 0, nl = 0; i < n; i++) {
		unsigned long long seq;

		assert_int_equal(sscanf(lines[i], "{\"seq\":%llu", &seq), 1);
		assert_int_equal(seq, (unsigned long long)i + 1);
		if (strstr(lines[i], "\"decision\":\"granted\"") != NULL) {
			assert_int_equal(i, nl);
			nl++;
		} else {
			assert_non_null(strstr(lines[i], "\"decision\":\"replayed\""));
		}
	}
	assert_int_equal(nl, 3);
}

/* A request with parts over the wire: each part's answer in Reply.then,
 * with its own request id, traced in order after the request's own. */
static void
test_parts_over_the_wire(void **state)
{
	struct live *l = *state;
	struct rpc_client *c = rpc_client_open(l->url, "cli");
	struct add_req a, b;
	Berth__Request *parts[1];
	Berth__Reply *r = NULL;
	char lines[4][512];

	add_init(&a, 0);
	add_init(&b, 1);
	b.req.has_req_id = 1;
	b.req.req_id = 1u << 30;
	parts[0] = &b.req;
	a.req.n_then = 1;
	a.req.then = parts;
	assert_int_equal(rpc_call(c, &a.req, &r, 10000), 0);
	assert_true(msg_is_granted(r));
	assert_int_equal(r->n_then, 1);
	assert_true(msg_is_granted(r->then[0]));
	assert_int_equal(r->then[0]->req_id, 1u << 30);
	assert_string_equal(r->then[0]->granted->add->ticket, "T2");
	berth__reply__free_unpacked(r, NULL);
	rpc_client_close(c);
	assert_int_equal(trace_lines(l->home, lines, 4), 2);
	assert_non_null(strstr(lines[1], "\"req_id\":1073741824"));
	assert_non_null(strstr(lines[1], "\"ticket\":\"T2\""));
}

static void
test_second_coordinator_is_refused_naming_the_pid(void **state)
{
	struct live *l = *state;
	struct coord_server_opts o;
	struct coord_server *cs2 = NULL;
	char err[512], want[32];

	memset(&o, 0, sizeof(o));
	o.home = l->home;
	o.store = test_store_pg() ? l->ts.store : NULL;
	assert_int_equal(coord_server_open(&cs2, &o, err, sizeof(err)), 1);
	assert_null(cs2);
	snprintf(want, sizeof(want), "pid %d", (int)getpid());
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "coordinator.lock"));
}

static void
test_socket_and_home_are_private(void **state)
{
	struct live *l = *state;
	struct stat st;

	assert_int_equal(stat(l->url + 6, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(l->home, &st), 0);
	assert_int_equal(st.st_mode & 0077, 0);
}

static void
test_bad_failpoints_refuse_to_start(void **state)
{
	struct coord_server_opts o;
	struct coord_server *cs = NULL;
	char home[64], err[512], cmd[128];

	(void)state;
	snprintf(home, sizeof(home), "/tmp/coord_server_test.XXXXXX");
	assert_non_null(mkdtemp(home));
	memset(&o, 0, sizeof(o));
	o.home = home;
	setenv("BERTH_FAILPOINTS", "coordinator.no_such_point=crash", 1);
	assert_int_equal(coord_server_open(&cs, &o, err, sizeof(err)), 2);
	unsetenv("BERTH_FAILPOINTS");
	assert_non_null(strstr(err, "coordinator.no_such_point"));
	/* The lock was released: a good start works now. */
	assert_int_equal(coord_server_open(&cs, &o, err, sizeof(err)), 0);
	coord_server_close(cs);
	shm_unlink_home(home);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_failpoints_refuse_to_start),
		cmocka_unit_test_setup_teardown(test_garbage_gets_an_error_and_serving_goes_on,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_version_mismatch_over_the_wire, live_setup,
						live_teardown),
		cmocka_unit_test_setup_teardown(test_repeat_is_replayed_and_traced_in_order,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_resent_read_queued_together_is_executed_once,
						live_paused_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_queued_requests_commit_once_and_answer_after,
						live_paused2_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_parts_over_the_wire, live_setup,
						live_teardown),
		cmocka_unit_test_setup_teardown(test_second_coordinator_is_refused_naming_the_pid,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_socket_and_home_are_private, live_setup,
						live_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
