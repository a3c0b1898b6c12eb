/* The rpc tests' socket, fake coordinator and observer (rpc_fixture.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>

#include "rpc.h"
#include "rpc_fixture.h"

char dir[] = "/tmp/rpc_test.XXXXXX";
char url[256];

int
rpc_fx_open(void)
{
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(url, sizeof(url), "ipc://%s/c.sock", dir);
	return 0;
}

void
rpc_fx_close(void)
{
	unlink(url + 6);
	rmdir(dir);
}

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
				snprintf(f->actor, sizeof(f->actor), "%s",
					 req->actor ? req->actor : "");
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
			case ANSWER: break;
			}
			fake_answer(f, in, id);
		}
	}
	if (f->held != NULL)
		rpc_server_drop(f->srv, f->held);
	return NULL;
}

struct fake *
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

void
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

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
show_init(struct show_req *s)
{
	berth__request__init(&s->req);
	berth__show__init(&s->show);
	s->show.id = "T1";
	s->req.verb_case = BERTH__REQUEST__VERB_SHOW;
	s->req.show = &s->show;
}

/* ------------------------------------------------------------- observer */

char events[64][12];
int nevents;
int slow_on, slow_off;

static void
observe(const char *event, const Berth__Request *req, const Berth__Reply *rep, int64_t lat)
{
	(void)req;
	(void)rep;
	(void)lat;
	if (nevents < 64)
		snprintf(events[nevents++], sizeof(events[0]), "%s", event);
}

int
count_events(const char *name)
{
	int i, n = 0;

	for (i = 0; i < nevents; i++)
		n += strcmp(events[i], name) == 0;
	return n;
}

void
on_slow(void *arg, int slow, const char *what)
{
	(void)arg;
	assert_non_null(what);
	if (slow)
		slow_on++;
	else
		slow_off++;
}

int
setup(void **state)
{
	(void)state;
	nevents = 0;
	slow_on = slow_off = 0;
	rpc_set_observer(observe);
	return 0;
}
