/* The coordinator in-process for the loop tests (coord_live.h). */
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
#include "coord_server.h"
#include "rpc.h"
#include "ring.h"
#include "shm.h"
#include "coord_live.h"

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint8_t *
pack(const Berth__Request *r, size_t *len)
{
	uint8_t *buf;

	*len = berth__request__get_packed_size(r);
	buf = malloc(*len + 16);
	assert_non_null(buf);
	berth__request__pack(r, buf);
	return buf;
}

void
env_init(struct env *e)
{
	berth__request__init(&e->req);
	berth__ticket_ref__init(&e->ref);
	e->req.has_version = 1;
	e->req.version = BERTH_PROTOCOL_VERSION;
	e->req.actor = "cli";
	e->req.instance = "0123456789abcdef";
	e->req.has_req_id = 1;
	e->req.req_id = 9;
	e->ref.id = "T1";
	e->req.verb_case = BERTH__REQUEST__VERB_HOLD;
	e->req.hold = &e->ref;
}

static void *
live_loop(void *arg)
{
	struct live *l = arg;

	coord_server_run(l->cs, l->stopfd);
	return NULL;
}

void
live_start(struct live *l)
{
	struct coord_server_opts o;
	char err[256];

	/* The first start makes the store; a restart keeps it. */
	if (l->ts.store[0] == '\0')
		assert_int_equal(test_store_make(&l->ts, l->home), 0);
	memset(&o, 0, sizeof(o));
	o.home = l->home;
	o.store = test_store_pg() ? l->ts.store : NULL;
	o.sync_full = 0;
	o.nctx = 8;
	assert_int_equal(coord_server_open(&l->cs, &o, err, sizeof(err)), 0);
	snprintf(l->url, sizeof(l->url), "%s", coord_server_url(l->cs));
	l->stopfd = eventfd(0, EFD_CLOEXEC);
	assert_true(l->stopfd >= 0);
	assert_int_equal(pthread_create(&l->thr, NULL, live_loop, l), 0);
}

void
live_stop(struct live *l)
{
	uint64_t one = 1;

	assert_int_equal(write(l->stopfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	pthread_join(l->thr, NULL);
	coord_server_close(l->cs);
	close(l->stopfd);
	l->cs = NULL;
}

int
live_setup(void **state)
{
	struct live *l = calloc(1, sizeof(*l));

	snprintf(l->home, sizeof(l->home), "/tmp/coord_server_test.XXXXXX");
	if (mkdtemp(l->home) == NULL)
		return -1;
	unsetenv("BERTH_FAILPOINTS");
	live_start(l);
	*state = l;
	return 0;
}

int
live_teardown(void **state)
{
	struct live *l = *state;
	char cmd[128];

	if (l->cs != NULL)
		live_stop(l);
	test_store_drop(&l->ts);
	/* The status board and trace ring of this home live in /dev/shm. */
	shm_unlink_home(l->home);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", l->home);
	if (system(cmd) != 0)
		return -1;
	free(l);
	return 0;
}

void
add_init(struct add_req *a, int hold)
{
	berth__request__init(&a->req);
	berth__add__init(&a->add);
	a->argv[0] = "true";
	a->add.n_argv = 1;
	a->add.argv = a->argv;
	a->add.has_hold = hold;
	a->add.hold = hold;
	a->req.verb_case = BERTH__REQUEST__VERB_ADD;
	a->req.add = &a->add;
}

char *
add_ticket(struct rpc_client *c, int hold)
{
	struct add_req a;
	Berth__Reply *rep = NULL;
	char *id;

	add_init(&a, hold);
	assert_int_equal(rpc_call(c, &a.req, &rep, 10000), 0);
	assert_true(msg_is_granted(rep));
	assert_int_equal(rep->granted->payload_case, BERTH__GRANTED__PAYLOAD_ADD);
	id = strdup(rep->granted->add->ticket);
	berth__reply__free_unpacked(rep, NULL);
	return id;
}

/* Raw bytes on a real REQ socket; the decoded reply. */
Berth__Reply *
send_raw(const char *url, const void *buf, size_t len)
{
	nng_socket s;
	void *in = NULL;
	size_t inlen = 0;
	Berth__Reply *r;

	assert_int_equal(nng_req0_open(&s), 0);
	assert_int_equal(nng_dial(s, url, NULL, 0), 0);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 10000);
	assert_int_equal(nng_send(s, (void *)buf, len, 0), 0);
	assert_int_equal(nng_recv(s, &in, &inlen, NNG_FLAG_ALLOC), 0);
	r = berth__reply__unpack(NULL, inlen, in);
	nng_free(in, inlen);
	nng_close(s);
	assert_non_null(r);
	return r;
}

int
trace_lines(const char *home, char out[][512], int max)
{
	char path[128];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/trace/trace.jsonl", home);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (n < max && fgets(out[n], 512, f) != NULL)
		n++;
	fclose(f);
	return n;
}
