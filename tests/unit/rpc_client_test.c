/*
 * rpc's client half (proto/rpc_client.c) against a fake coordinator over a
 * real ipc socket (rpc_fixture.h): the envelope filled, req_ids, retries
 * that resend the same bytes, a reply for another request discarded,
 * timeouts, a server missing or restarted mid-call, a stop signal, the
 * CLI's direct path, the async calls, an oversized request; and the
 * message helpers a client reads replies with (proto/msg.c).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "rpc.h"
#include "rpc_fixture.h"

static void
test_round_trip_fills_envelope(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct show_req s;
	Berth__Reply *rep = NULL;

	(void)state;
	assert_non_null(c);
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 5000), 0);
	assert_true(msg_is_granted(rep));
	assert_true(s.req.has_req_id);
	assert_int_equal(rep->req_id, s.req.req_id);
	assert_int_equal(f->version, BERTH_PROTOCOL_VERSION);
	assert_string_equal(f->actor, "cli");
	assert_string_equal(f->instance, rpc_client_instance(c));
	/* The caller's struct does not keep pointers into the client. */
	assert_null(s.req.actor);
	assert_null(s.req.instance);
	assert_int_equal(count_events("sent"), 1);
	assert_int_equal(count_events("reply"), 1);
	assert_int_equal(count_events("retry"), 0);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_req_ids_increase(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct show_req a, b;
	Berth__Reply *rep = NULL;

	(void)state;
	show_init(&a);
	show_init(&b);
	assert_int_equal(rpc_call(c, &a.req, &rep, 5000), 0);
	berth__reply__free_unpacked(rep, NULL);
	assert_int_equal(rpc_call(c, &b.req, &rep, 5000), 0);
	berth__reply__free_unpacked(rep, NULL);
	assert_true(b.req.req_id > a.req.req_id);
	/* The same struct again is a retry: same id. */
	assert_int_equal(rpc_call(c, &a.req, &rep, 5000), 0);
	assert_int_equal(rep->req_id, a.req.req_id);
	berth__reply__free_unpacked(rep, NULL);
	assert_int_equal(f->seen, 3);
	assert_int_equal(f->ids[2], f->ids[0]);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_retry_resends_same_bytes(void **state)
{
	struct fake *f = fake_start(DROP_FIRST_N, 2);
	struct rpc_client *c = rpc_client_open(url, "supervisor");
	struct show_req s;
	Berth__Reply *rep = NULL;
	int64_t t0 = now_ms();

	(void)state;
	rpc_client_on_slow(c, on_slow, NULL);
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 20000), 0);
	assert_true(msg_is_granted(rep));
	/* Two copies dropped, one answered: three identical sends, about a
	 * second apart. */
	assert_int_equal(f->seen, 3);
	assert_true(f->same_bytes);
	assert_int_equal(f->ids[0], s.req.req_id);
	assert_int_equal(f->ids[2], s.req.req_id);
	assert_true(now_ms() - t0 >= 1800);
	assert_int_equal(count_events("sent"), 1);
	assert_int_equal(count_events("retry"), 2);
	assert_int_equal(count_events("reply"), 1);
	/* Slow once when it dragged on, and once when it ended. */
	assert_int_equal(slow_on, 1);
	assert_int_equal(slow_off, 1);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_reply_with_other_req_id_is_discarded(void **state)
{
	struct fake *f = fake_start(WRONG_ID_ONCE, 0);
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct show_req s;
	Berth__Reply *rep = NULL;

	(void)state;
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 10000), 0);
	assert_int_equal(rep->req_id, s.req.req_id);
	assert_int_equal(f->seen, 2);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_timeout_without_server(void **state)
{
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct show_req s;
	Berth__Reply *rep = (Berth__Reply *)1;
	int64_t t0 = now_ms(), dt;

	(void)state;
	assert_non_null(c); /* dialling a missing socket is not an error */
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 1500), -ETIMEDOUT);
	dt = now_ms() - t0;
	assert_null(rep);
	assert_true(dt >= 1400 && dt < 6000);
	assert_int_equal(count_events("timeout"), 1);
	rpc_client_close(c);
}

struct late_start {
	struct fake *f;
	int delay_ms;
};

static void *
start_late(void *arg)
{
	struct late_start *ls = arg;

	usleep((useconds_t)ls->delay_ms * 1000);
	ls->f = fake_start(ANSWER, 0);
	return NULL;
}

static void
test_call_rides_out_a_missing_server(void **state)
{
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct late_start ls = { NULL, 1500 };
	struct show_req s;
	Berth__Reply *rep = NULL;
	pthread_t t;

	(void)state;
	rpc_client_on_slow(c, on_slow, NULL);
	show_init(&s);
	assert_int_equal(pthread_create(&t, NULL, start_late, &ls), 0);
	assert_int_equal(rpc_call(c, &s.req, &rep, 20000), 0);
	pthread_join(t, NULL);
	assert_true(msg_is_granted(rep));
	assert_true(count_events("retry") >= 1);
	assert_int_equal(slow_on, 1);
	assert_int_equal(slow_off, 1);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(ls.f);
}

/* The CLI's client: one plain connection per call speaking the SP framing,
 * no nng socket at all while the server answers. */
static void
test_direct_call_needs_no_nng(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct rpc_client *c = rpc_client_open_direct(url, "cli");
	struct show_req a, b;
	Berth__Reply *rep = NULL;

	(void)state;
	assert_non_null(c);
	show_init(&a);
	show_init(&b);
	assert_int_equal(rpc_call(c, &a.req, &rep, 5000), 0);
	assert_true(msg_is_granted(rep));
	assert_int_equal(rep->req_id, a.req.req_id);
	berth__reply__free_unpacked(rep, NULL);
	assert_int_equal(rpc_call(c, &b.req, &rep, 5000), 0);
	assert_int_equal(rep->req_id, b.req.req_id);
	berth__reply__free_unpacked(rep, NULL);
	assert_false(rpc_client_uses_nng(c));
	assert_int_equal(f->seen, 2);
	assert_string_equal(f->actor, "cli");
	assert_string_equal(f->instance, rpc_client_instance(c));
	assert_int_equal(count_events("sent"), 2);
	assert_int_equal(count_events("reply"), 2);
	assert_int_equal(count_events("retry"), 0);
	rpc_client_close(c);
	fake_stop(f);
}

/* No answer within the retry interval: the same bytes go again through nng,
 * and that copy is answered. */
static void
test_direct_call_falls_back_to_nng(void **state)
{
	struct fake *f = fake_start(DROP_FIRST_N, 1);
	struct rpc_client *c = rpc_client_open_direct(url, "cli");
	struct show_req s;
	Berth__Reply *rep = NULL;

	(void)state;
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 20000), 0);
	assert_true(msg_is_granted(rep));
	assert_true(rpc_client_uses_nng(c));
	assert_int_equal(f->seen, 2);
	assert_true(f->same_bytes);
	assert_int_equal(f->ids[0], s.req.req_id);
	assert_int_equal(f->ids[1], s.req.req_id);
	assert_int_equal(count_events("sent"), 1);
	assert_int_equal(count_events("retry"), 1);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

/* No server yet: the direct attempt fails at once and nng rides it out. */
static void
test_direct_call_rides_out_a_missing_server(void **state)
{
	struct rpc_client *c = rpc_client_open_direct(url, "cli");
	struct late_start ls = { NULL, 1500 };
	struct show_req s;
	Berth__Reply *rep = NULL;
	pthread_t t;

	(void)state;
	rpc_client_on_slow(c, on_slow, NULL);
	show_init(&s);
	assert_int_equal(pthread_create(&t, NULL, start_late, &ls), 0);
	assert_int_equal(rpc_call(c, &s.req, &rep, 20000), 0);
	pthread_join(t, NULL);
	assert_true(msg_is_granted(rep));
	assert_true(rpc_client_uses_nng(c));
	assert_int_equal(slow_on, 1);
	assert_int_equal(slow_off, 1);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(ls.f);
}

/* A process told to stop (SIGTERM pending, blocked for its signalfd) gives
 * up a call that waits on a missing server within about a second, instead
 * of waiting out the call's timeout. */
static void
test_stop_signal_ends_a_waiting_call(void **state)
{
	struct rpc_client *c = rpc_client_open(url, "recovery");
	struct show_req s;
	Berth__Reply *rep = NULL;
	sigset_t mask, old;
	siginfo_t si;
	struct timespec zero = { 0, 0 };
	int64_t t0;

	(void)state;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &mask, &old), 0);
	rpc_client_on_abort(c, rpc_stop_signal_pending, NULL);
	assert_false(rpc_stop_signal_pending(NULL));
	assert_int_equal(raise(SIGTERM), 0);
	assert_true(rpc_stop_signal_pending(NULL));
	show_init(&s);
	t0 = now_ms();
	assert_int_equal(rpc_call(c, &s.req, &rep, 20000), -ECANCELED);
	assert_null(rep);
	assert_true(now_ms() - t0 < 5000);
	assert_int_equal(sigtimedwait(&mask, &si, &zero), SIGTERM);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	rpc_client_close(c);
}

static void
test_server_restart_mid_call(void **state)
{
	struct fake *f = fake_start(HOLD_FIRST, 0);
	struct rpc_client *c = rpc_client_open(url, "cli");
	struct late_start ls = { NULL, 300 };
	struct show_req s;
	Berth__Reply *rep = NULL;
	pthread_t t;
	int64_t deadline = now_ms() + 10000;
	uint64_t first_id;

	(void)state;
	show_init(&s);
	assert_int_equal(rpc_send(c, &s.req), 0);
	while (f->seen == 0 && now_ms() < deadline)
		usleep(10000);
	assert_int_equal(f->seen, 1);
	first_id = f->ids[0];
	/* The server goes away holding the request and comes back: the
	 * same request id must arrive at the new one and be answered. */
	fake_stop(f);
	assert_int_equal(pthread_create(&t, NULL, start_late, &ls), 0);
	pthread_join(t, NULL);
	for (;;) {
		struct pollfd p = { .fd = rpc_fd(c), .events = POLLIN };
		int rv;

		assert_true(now_ms() < deadline);
		poll(&p, 1, 200);
		rv = rpc_try_recv(c, &rep);
		if (rv == 0)
			break;
		assert_int_equal(rv, -EAGAIN);
	}
	assert_true(msg_is_granted(rep));
	assert_int_equal(rep->req_id, first_id);
	assert_int_equal(ls.f->ids[0], first_id);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(ls.f);
}

static void
test_async_send_poll_recv(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct rpc_client *c = rpc_client_open(url, "supervisor");
	struct show_req s;
	Berth__Reply *rep = NULL;
	struct pollfd p;
	int fd;

	(void)state;
	show_init(&s);
	fd = rpc_fd(c);
	assert_true(fd >= 0);
	assert_int_equal(rpc_try_recv(c, &rep), -EAGAIN); /* nothing in flight */
	assert_int_equal(rpc_send(c, &s.req), 0);
	p.fd = fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(c, &rep), 0);
	assert_int_equal(rep->req_id, s.req.req_id);
	assert_int_equal(count_events("sent"), 1);
	assert_int_equal(count_events("reply"), 1);
	berth__reply__free_unpacked(rep, NULL);
	/* A synchronous call on the same client works afterwards. */
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 5000), 0);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_oversized_request_refused_by_client(void **state)
{
	struct rpc_client *c = rpc_client_open(url, "cli");
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Note note = BERTH__NOTE__INIT;
	Berth__Reply *rep = NULL;
	char *big = malloc(RPC_MAX_MSG + 1);

	(void)state;
	memset(big, 'x', RPC_MAX_MSG);
	big[RPC_MAX_MSG] = '\0';
	note.text = big;
	req.verb_case = BERTH__REQUEST__VERB_NOTE;
	req.note = &note;
	assert_int_equal(rpc_call(c, &req, &rep, 1000), -EMSGSIZE);
	assert_int_equal(rpc_send(c, &req), -EMSGSIZE);
	free(big);
	rpc_client_close(c);
}

static void
test_verb_names(void **state)
{
	Berth__Request req = BERTH__REQUEST__INIT;

	(void)state;
	assert_string_equal(msg_verb_name(&req), "none");
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	assert_string_equal(msg_verb_name(&req), "record_exit");
	req.verb_case = BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE;
	assert_string_equal(msg_verb_name(&req), "seat_force_release");
	req.verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
	assert_string_equal(msg_verb_name(&req), "add_batch");
}

static void
test_reply_helpers(void **state)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Denied d = BERTH__DENIED__INIT;
	Berth__Error e = BERTH__ERROR__INIT;
	Berth__Fact f1 = BERTH__FACT__INIT, f2 = BERTH__FACT__INIT;
	Berth__Fact *facts[2] = { &f1, &f2 };
	char buf[128];

	(void)state;
	f1.key = "state";
	f1.value = "claimed";
	f2.key = "holder";
	f2.value = "T2";
	d.reason = "not_ready";
	d.n_facts = 2;
	d.facts = facts;
	rep.result_case = BERTH__REPLY__RESULT_DENIED;
	rep.denied = &d;
	assert_false(msg_is_granted(&rep));
	assert_string_equal(msg_denied_reason(&rep), "not_ready");
	assert_string_equal(msg_fact(&rep, "holder"), "T2");
	assert_null(msg_fact(&rep, "absent"));
	msg_describe(&rep, buf, sizeof(buf));
	assert_string_equal(buf, "denied: not_ready (state=claimed, holder=T2)");
	e.has_code = 1;
	e.code = BERTH__ERROR_CODE__ERR_STORAGE;
	e.message = "disk I/O error";
	rep.result_case = BERTH__REPLY__RESULT_ERROR;
	rep.error = &e;
	assert_null(msg_denied_reason(&rep));
	msg_describe(&rep, buf, sizeof(buf));
	assert_string_equal(buf, "error 3: disk I/O error");
	/* Truncation never overruns. */
	rep.result_case = BERTH__REPLY__RESULT_DENIED;
	rep.denied = &d; /* a oneof: shares its storage with error */
	msg_describe(&rep, buf, 12);
	assert_int_equal(strlen(buf), 11);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_round_trip_fills_envelope, setup),
		cmocka_unit_test_setup(test_req_ids_increase, setup),
		cmocka_unit_test_setup(test_retry_resends_same_bytes, setup),
		cmocka_unit_test_setup(test_reply_with_other_req_id_is_discarded, setup),
		cmocka_unit_test_setup(test_timeout_without_server, setup),
		cmocka_unit_test_setup(test_call_rides_out_a_missing_server, setup),
		cmocka_unit_test_setup(test_server_restart_mid_call, setup),
		cmocka_unit_test_setup(test_stop_signal_ends_a_waiting_call, setup),
		cmocka_unit_test_setup(test_direct_call_needs_no_nng, setup),
		cmocka_unit_test_setup(test_direct_call_falls_back_to_nng, setup),
		cmocka_unit_test_setup(test_direct_call_rides_out_a_missing_server, setup),
		cmocka_unit_test_setup(test_async_send_poll_recv, setup),
		cmocka_unit_test_setup(test_oversized_request_refused_by_client, setup),
		cmocka_unit_test(test_verb_names),
		cmocka_unit_test(test_reply_helpers),
	};
	int rv;

	if (rpc_fx_open() != 0)
		return 1;
	rv = cmocka_run_group_tests(tests, NULL, NULL);
	rpc_fx_close();
	return rv;
}
