/*
 * rpc: client and server halves over a real ipc socket in a temp dir. The
 * server side is driven by a thread that plays the coordinator's loop: poll
 * the server fd, take requests with rpc_server_next, answer or drop them as
 * the test's policy says.
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

enum policy {
	ANSWER,        /* granted, with the request's req_id */
	DROP_FIRST_N,  /* drop the first n copies, then answer */
	WRONG_ID_ONCE, /* first answer carries another req_id */
	HOLD_FIRST,    /* keep the first request unanswered until the end */
};

struct fake {
	struct rpc_server *srv;
	pthread_t thr;
	int stopfd;
	enum policy policy;
	int n;
	pthread_mutex_t mtx;
	int seen;                    /* requests received */
	uint64_t ids[16];            /* their req_ids */
	size_t lens[16];
	uint8_t first[256];          /* bytes of the first one */
	size_t first_len;
	int same_bytes;              /* every copy equal to the first */
	char actor[32], instance[32];
	uint32_t version;
	struct rpc_incoming *held;
	int listener;               /* of the latest request */
	struct rpc_peer peer;       /* of the latest request */
};

static char dir[] = "/tmp/rpc_test.XXXXXX";
static char url[256];

static void
fake_answer(struct fake *f, struct rpc_incoming *in, uint64_t id)
{
	Berth__Reply rep = BERTH__REPLY__INIT;
	Berth__Granted g = BERTH__GRANTED__INIT;

	rep.has_req_id = 1;
	rep.req_id = id;
	rep.result_case = BERTH__REPLY__RESULT_GRANTED;
	rep.granted = &g;
	assert_int_equal(rpc_server_reply(f->srv, in, &rep), 0);
}

static void *
fake_loop(void *arg)
{
	struct fake *f = arg;
	struct pollfd pfd[2];
	struct rpc_incoming *in;

	pfd[0].fd = rpc_server_fd(f->srv);
	pfd[0].events = POLLIN;
	pfd[1].fd = f->stopfd;
	pfd[1].events = POLLIN;
	for (;;) {
		/* Wakes at least every 100 ms, as the coordinator's loop does,
		 * to look after its listener. */
		if (poll(pfd, 2, 100) < 0)
			continue;
		if (pfd[1].revents)
			break;
		assert_true(rpc_server_mend(f->srv) >= 0);
		while ((in = rpc_server_next(f->srv)) != NULL) {
			size_t len;
			const uint8_t *data = rpc_incoming_data(in, &len);
			Berth__Request *req = berth__request__unpack(NULL, len, data);
			uint64_t id = req != NULL ? req->req_id : 0;
			int k;

			pthread_mutex_lock(&f->mtx);
			f->listener = rpc_incoming_listener(in);
			f->peer = *rpc_incoming_peer(in);
			k = f->seen++;
			if (k < 16) {
				f->ids[k] = id;
				f->lens[k] = len;
			}
			if (k == 0 && len <= sizeof(f->first)) {
				memcpy(f->first, data, len);
				f->first_len = len;
				f->same_bytes = 1;
			} else if (len != f->first_len || memcmp(f->first, data, len) != 0) {
				f->same_bytes = 0;
			}
			if (req != NULL) {
				snprintf(f->actor, sizeof(f->actor), "%s", req->actor ? req->actor : "");
				snprintf(f->instance, sizeof(f->instance), "%s",
					 req->instance ? req->instance : "");
				f->version = req->version;
			}
			pthread_mutex_unlock(&f->mtx);
			if (req != NULL)
				berth__request__free_unpacked(req, NULL);

			switch (f->policy) {
			case DROP_FIRST_N:
				if (k < f->n) {
					rpc_server_drop(f->srv, in);
					continue;
				}
				break;
			case WRONG_ID_ONCE:
				if (k == 0) {
					fake_answer(f, in, id + 1000);
					continue;
				}
				break;
			case HOLD_FIRST:
				if (k == 0) {
					f->held = in;
					continue;
				}
				break;
			case ANSWER:
				break;
			}
			fake_answer(f, in, id);
		}
	}
	if (f->held != NULL)
		rpc_server_drop(f->srv, f->held);
	return NULL;
}

static struct fake *
fake_start(enum policy p, int n)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->policy = p;
	f->n = n;
	pthread_mutex_init(&f->mtx, NULL);
	f->srv = rpc_server_open(url, 4);
	assert_non_null(f->srv);
	f->stopfd = eventfd(0, EFD_CLOEXEC);
	assert_true(f->stopfd >= 0);
	assert_int_equal(pthread_create(&f->thr, NULL, fake_loop, f), 0);
	return f;
}

static void
fake_stop(struct fake *f)
{
	uint64_t one = 1;

	assert_int_equal(write(f->stopfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	pthread_join(f->thr, NULL);
	rpc_server_close(f->srv);
	close(f->stopfd);
	pthread_mutex_destroy(&f->mtx);
	free(f);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A small request: show T1. */
struct show_req {
	Berth__Request req;
	Berth__Show show;
};

static void
show_init(struct show_req *s)
{
	berth__request__init(&s->req);
	berth__show__init(&s->show);
	s->show.id = "T1";
	s->req.verb_case = BERTH__REQUEST__VERB_SHOW;
	s->req.show = &s->show;
}

/* ------------------------------------------------------------- observer */

static char events[64][12];
static int nevents;
static int slow_on, slow_off;

static void
observe(const char *event, const Berth__Request *req, const Berth__Reply *rep, int64_t lat)
{
	(void)req;
	(void)rep;
	(void)lat;
	if (nevents < 64)
		snprintf(events[nevents++], sizeof(events[0]), "%s", event);
}

static int
count_events(const char *name)
{
	int i, n = 0;

	for (i = 0; i < nevents; i++)
		n += strcmp(events[i], name) == 0;
	return n;
}

static void
on_slow(void *arg, int slow, const char *what)
{
	(void)arg;
	assert_non_null(what);
	if (slow)
		slow_on++;
	else
		slow_off++;
}

static int
setup(void **state)
{
	(void)state;
	nevents = 0;
	slow_on = slow_off = 0;
	rpc_set_observer(observe);
	return 0;
}

/* ------------------------------------------------------------- tests */

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
	struct timespec zero = {0, 0};
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

/* Contexts: a held request does not stop the server from answering
 * another client. */
static void
test_held_request_does_not_block_others(void **state)
{
	struct fake *f = fake_start(HOLD_FIRST, 0);
	struct rpc_client *a = rpc_client_open(url, "supervisor");
	struct rpc_client *b = rpc_client_open(url, "cli");
	struct show_req sa, sb;
	Berth__Reply *rep = NULL;
	int64_t deadline = now_ms() + 10000;

	(void)state;
	show_init(&sa);
	show_init(&sb);
	assert_int_equal(rpc_send(a, &sa.req), 0);
	while (f->seen == 0 && now_ms() < deadline)
		usleep(10000);
	assert_int_equal(rpc_call(b, &sb.req, &rep, 5000), 0);
	assert_true(msg_is_granted(rep));
	berth__reply__free_unpacked(rep, NULL);
	/* The held one is still waiting. */
	assert_int_equal(rpc_try_recv(a, &rep), -EAGAIN);
	assert_null(rep);
	rpc_client_close(a);
	rpc_client_close(b);
	fake_stop(f);
}

static void
test_raw_bytes_reach_the_loop_and_get_a_reply(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	nng_socket s;
	uint8_t garbage[] = { 0xff, 0xfe, 0x00, 0x13, 0x37 };
	void *in = NULL;
	size_t inlen = 0;

	(void)state;
	assert_int_equal(nng_req0_open(&s), 0);
	assert_int_equal(nng_dial(s, url, NULL, 0), 0);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 10000);
	assert_int_equal(nng_send(s, garbage, sizeof(garbage), 0), 0);
	assert_int_equal(nng_recv(s, &in, &inlen, NNG_FLAG_ALLOC), 0);
	nng_free(in, inlen);
	assert_int_equal(f->lens[0], sizeof(garbage));
	assert_int_equal(memcmp(f->first, garbage, sizeof(garbage)), 0);
	nng_close(s);
	fake_stop(f);
}

/* A client that connects and goes away before the SP handshake makes nng
 * 1.5.2's listener fail its handshake write with EPIPE and stop accepting for
 * good (nanomsg/nng#1518). The server notices and listens again, so the next
 * client is answered. */
static void
test_listener_survives_a_client_gone_mid_handshake(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct rpc_client *c;
	struct show_req r;
	Berth__Reply *rep = NULL;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int i, fd;

	(void)state;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/c.sock", dir);
	for (i = 0; i < 3; i++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(fd >= 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(fd);
		usleep(20000);
	}
	c = rpc_client_open(url, "cli");
	assert_non_null(c);
	show_init(&r);
	assert_int_equal(rpc_call(c, &r.req, &rep, 20000), 0);
	assert_non_null(rep);
	berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	fake_stop(f);
}

static void
test_socket_is_private(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	struct stat st;
	char path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/c.sock", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
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

/* A request says which of the server's sockets it came through and who
 * sent it (SO_PEERCRED): the coordinator's caller classes stand on this,
 * on the nng path and on the CLI's direct path alike. */
static void
test_listener_and_peer_credentials(void **state)
{
	struct fake *f = fake_start(ANSWER, 0);
	char url2[300];
	struct rpc_client *c, *d;
	struct show_req s;
	Berth__Reply *rep = NULL;

	(void)state;
	snprintf(url2, sizeof(url2), "ipc://%s/w.sock", dir);
	unlink(url2 + 6);
	assert_int_equal(rpc_server_listen(f->srv, url2), 1);

	c = rpc_client_open(url, "cli");
	show_init(&s);
	assert_int_equal(rpc_call(c, &s.req, &rep, 5000), 0);
	berth__reply__free_unpacked(rep, NULL);
	pthread_mutex_lock(&f->mtx);
	assert_int_equal(f->listener, 0);
	assert_true(f->peer.known);
	assert_int_equal(f->peer.pid, getpid());
	assert_int_equal(f->peer.uid, getuid());
	assert_int_equal(f->peer.gid, getgid());
	pthread_mutex_unlock(&f->mtx);
	rpc_client_close(c);

	d = rpc_client_open_direct(url2, "worker");
	show_init(&s);
	assert_int_equal(rpc_call(d, &s.req, &rep, 5000), 0);
	assert_false(rpc_client_uses_nng(d));
	berth__reply__free_unpacked(rep, NULL);
	pthread_mutex_lock(&f->mtx);
	assert_int_equal(f->listener, 1);
	assert_true(f->peer.known);
	assert_int_equal(f->peer.pid, getpid());
	pthread_mutex_unlock(&f->mtx);
	rpc_client_close(d);
	fake_stop(f);
	unlink(url2 + 6);
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
		cmocka_unit_test_setup(test_held_request_does_not_block_others, setup),
		cmocka_unit_test_setup(test_raw_bytes_reach_the_loop_and_get_a_reply, setup),
		cmocka_unit_test_setup(test_listener_survives_a_client_gone_mid_handshake, setup),
		cmocka_unit_test_setup(test_socket_is_private, setup),
		cmocka_unit_test_setup(test_listener_and_peer_credentials, setup),
		cmocka_unit_test_setup(test_oversized_request_refused_by_client, setup),
		cmocka_unit_test(test_verb_names),
		cmocka_unit_test(test_reply_helpers),
	};
	int rv;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(url, sizeof(url), "ipc://%s/c.sock", dir);
	rv = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(url + 6);
	rmdir(dir);
	return rv;
}
