#ifndef BERTH_RPC_FIXTURE_H
#define BERTH_RPC_FIXTURE_H
/* The rpc tests (rpc_client_test.c, rpc_server_test.c) share this: an ipc
 * socket in a temporary directory, a fake coordinator on a thread that
 * plays its loop (poll the server fd, take requests with rpc_server_next,
 * answer or drop them as the test's policy says), a small request, and
 * an observer that counts the client's events. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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
	int seen;         /* requests received */
	uint64_t ids[16]; /* their req_ids */
	size_t lens[16];
	uint8_t first[256]; /* bytes of the first one */
	size_t first_len;
	int same_bytes; /* every copy equal to the first */
	char actor[32], instance[32];
	uint32_t version;
	struct rpc_incoming *held;
	int listener;         /* of the latest request */
	struct rpc_peer peer; /* of the latest request */
};

/* The temporary directory and the server's url in it. */
extern char dir[];
extern char url[256];

/* Makes dir and url: 0, or -1. */
int rpc_fx_open(void);
/* Removes the socket and dir. */
void rpc_fx_close(void);

/* A fake coordinator serving url with policy p (n: DROP_FIRST_N's n). */
struct fake *fake_start(enum policy, int);
void fake_stop(struct fake *);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t now_ms(void);

/* A small request: show T1. */
struct show_req {
	Berth__Request req;
	Berth__Show show;
};

void show_init(struct show_req *);

/* The observer's events since setup, and on_slow's calls. */
extern char events[64][12];
extern int nevents;
extern int slow_on, slow_off;

int count_events(const char *);
void on_slow(void *, int, const char *);
/* cmocka setup: the observer installed, its counts zeroed. */
int setup(void **);

#endif
