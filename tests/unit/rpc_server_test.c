/*
 * rpc's server half (proto/rpc_server.c, rpc_sp.c) driven by a thread that
 * plays the coordinator's loop (rpc_fixture.h): a held request does not
 * block others, raw bytes reach the loop and get a reply, a client gone
 * mid-handshake does not take the listener down, the socket is private,
 * and a request names its listener and its sender's credentials.
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
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
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
		cmocka_unit_test_setup(test_held_request_does_not_block_others, setup),
		cmocka_unit_test_setup(test_raw_bytes_reach_the_loop_and_get_a_reply, setup),
		cmocka_unit_test_setup(test_listener_survives_a_client_gone_mid_handshake, setup),
		cmocka_unit_test_setup(test_socket_is_private, setup),
		cmocka_unit_test_setup(test_listener_and_peer_credentials, setup),
	};
	int rv;

	if (rpc_fx_open() != 0)
		return 1;
	rv = cmocka_run_group_tests(tests, NULL, NULL);
	rpc_fx_close();
	return rv;
}
