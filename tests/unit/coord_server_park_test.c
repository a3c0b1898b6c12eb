/*
 * coord_server and coord_park over the wire: a claim with a wait parked
 * in the live loop (coord_live.h) times out nothing_due, is woken by an
 * add or by work falling due, is replaced by its resend, is forgotten when
 * its sender goes, and is answered when the coordinator stops.
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

struct claim_req {
	Berth__Request req;
	Berth__Claim claim;
};

static void
claim_init(struct claim_req *c, uint32_t wait_ms)
{
	berth__request__init(&c->req);
	berth__claim__init(&c->claim);
	c->claim.has_wait_ms = 1;
	c->claim.wait_ms = wait_ms;
	c->req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	c->req.claim = &c->claim;
}

static void
test_parked_claim_times_out_nothing_due(void **state)
{
	struct live *l = *state;
	struct rpc_client *c = rpc_client_open(l->url, "supervisor");
	struct claim_req cl;
	Berth__Reply *r = NULL;
	int64_t t0 = now_ms(), dt;
	char lines[4][512];

	claim_init(&cl, 700);
	assert_int_equal(rpc_call(c, &cl.req, &r, 10000), 0);
	dt = now_ms() - t0;
	assert_string_equal(msg_denied_reason(r), "nothing_due");
	assert_true(dt >= 650);
	assert_true(dt < 5000);
	berth__reply__free_unpacked(r, NULL);
	rpc_client_close(c);
	/* Traced once, when answered. */
	assert_int_equal(trace_lines(l->home, lines, 4), 1);
	assert_non_null(strstr(lines[0], "\"reason\":\"nothing_due\""));
}

static void
test_parked_claim_is_woken_by_an_add(void **state)
{
	struct live *l = *state;
	struct rpc_client *sup = rpc_client_open(l->url, "supervisor");
	struct rpc_client *cli = rpc_client_open(l->url, "cli");
	struct claim_req cl;
	Berth__Reply *r = NULL;
	struct pollfd p;
	int64_t t0;
	char *id;

	claim_init(&cl, 20000);
	assert_int_equal(rpc_send(sup, &cl.req), 0);
	usleep(200000);
	assert_int_equal(rpc_try_recv(sup, &r), -EAGAIN); /* parked */
	t0 = now_ms();
	id = add_ticket(cli, 0);
	p.fd = rpc_fd(sup);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(sup, &r), 0);
	assert_true(now_ms() - t0 < 5000);
	assert_true(msg_is_granted(r));
	assert_int_equal(r->granted->payload_case, BERTH__GRANTED__PAYLOAD_CLAIM);
	assert_string_equal(r->granted->claim->ticket, id);
	assert_int_equal(r->req_id, cl.req.req_id);
	berth__reply__free_unpacked(r, NULL);
	free(id);
	rpc_client_close(sup);
	rpc_client_close(cli);
}

/* A resend of a parked claim (same instance and req_id) replaces it: one
 * decision, traced once, never answered twice. */
static void
test_parked_claim_resent_replaces_the_first(void **state)
{
	struct live *l = *state;
	struct rpc_client *sup = rpc_client_open(l->url, "supervisor");
	struct rpc_client *cli = rpc_client_open(l->url, "cli");
	struct claim_req cl;
	Berth__Reply *r = NULL;
	struct pollfd p;
	char lines[16][512], *id;
	int n, i, claims = 0;

	claim_init(&cl, 20000);
	assert_int_equal(rpc_send(sup, &cl.req), 0);
	usleep(200000);
	assert_int_equal(rpc_send(sup, &cl.req), 0); /* same req_id */
	usleep(200000);
	id = add_ticket(cli, 0);
	p.fd = rpc_fd(sup);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(rpc_try_recv(sup, &r), 0);
	assert_true(msg_is_granted(r));
	assert_false(r->has_replayed && r->replayed);
	berth__reply__free_unpacked(r, NULL);
	free(id);
	rpc_client_close(sup);
	rpc_client_close(cli);
	n = trace_lines(l->home, lines, 16);
	for (i = 0; i < n; i++)
		claims += strstr(lines[i], "\"verb\":\"claim\"") != NULL;
	assert_int_equal(claims, 1);
}

/* A parked claim is tried again when the next activation falls due, long
 * before its wait is over. */
static void
test_parked_claim_wakes_when_work_falls_due(void **state)
{
	struct live *l = *state;
	struct rpc_client *sup = rpc_client_open(l->url, "supervisor");
	struct rpc_client *cli = rpc_client_open(l->url, "cli");
	struct add_req a;
	struct claim_req cl;
	Berth__Reply *r = NULL;
	struct timespec ts;
	int64_t t0;

	clock_gettime(CLOCK_REALTIME, &ts);
	add_init(&a, 0);
	a.add.has_at_ms = 1;
	a.add.at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1500;
	assert_int_equal(rpc_call(cli, &a.req, &r, 10000), 0);
	assert_true(msg_is_granted(r));
	berth__reply__free_unpacked(r, NULL);

	t0 = now_ms();
	claim_init(&cl, 30000);
	assert_int_equal(rpc_call(sup, &cl.req, &r, 60000), 0);
	assert_true(msg_is_granted(r));
	assert_true(now_ms() - t0 >= 1000);
	assert_true(now_ms() - t0 < 15000);
	berth__reply__free_unpacked(r, NULL);
	rpc_client_close(sup);
	rpc_client_close(cli);
}

/* A parked claim whose sender went away is forgotten: the work that
 * arrives next goes to a live claimant, not to nobody. */
static void
test_parked_claim_of_a_departed_sender_is_forgotten(void **state)
{
	struct live *l = *state;
	struct rpc_client *gone = rpc_client_open(l->url, "supervisor");
	struct rpc_client *sup = rpc_client_open(l->url, "supervisor");
	struct rpc_client *cli = rpc_client_open(l->url, "cli");
	struct claim_req cl, cl2;
	Berth__Reply *r = NULL;
	char lines[16][512], *id;
	int n, i;

	claim_init(&cl, 30000);
	assert_int_equal(rpc_send(gone, &cl.req), 0);
	usleep(300000);
	rpc_client_close(gone);
	usleep(300000);
	id = add_ticket(cli, 0);
	claim_init(&cl2, 0);
	assert_int_equal(rpc_call(sup, &cl2.req, &r, 10000), 0);
	assert_true(msg_is_granted(r));
	assert_string_equal(r->granted->claim->ticket, id);
	berth__reply__free_unpacked(r, NULL);
	free(id);
	rpc_client_close(sup);
	rpc_client_close(cli);
	/* The forgotten claim decided nothing and left no trace line. */
	n = trace_lines(l->home, lines, 16);
	for (i = 0; i < n; i++)
		assert_null(strstr(lines[i], "nothing_due"));
}

static void
test_parked_claim_answered_at_stop(void **state)
{
	struct live *l = *state;
	struct rpc_client *sup = rpc_client_open(l->url, "supervisor");
	struct claim_req cl;
	Berth__Reply *r = NULL;
	struct pollfd p;

	claim_init(&cl, 60000);
	assert_int_equal(rpc_send(sup, &cl.req), 0);
	usleep(300000);
	live_stop(l);
	p.fd = rpc_fd(sup);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(rpc_try_recv(sup, &r), 0);
	assert_string_equal(msg_denied_reason(r), "nothing_due");
	berth__reply__free_unpacked(r, NULL);
	rpc_client_close(sup);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parked_claim_times_out_nothing_due, live_setup,
						live_teardown),
		cmocka_unit_test_setup_teardown(test_parked_claim_is_woken_by_an_add, live_setup,
						live_teardown),
		cmocka_unit_test_setup_teardown(test_parked_claim_resent_replaces_the_first,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_parked_claim_wakes_when_work_falls_due,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_parked_claim_of_a_departed_sender_is_forgotten,
						live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_parked_claim_answered_at_stop, live_setup,
						live_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
