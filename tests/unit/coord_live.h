#ifndef BERTH_COORD_LIVE_H
#define BERTH_COORD_LIVE_H
/* The coordinator's loop tests (coord_envelope_test.c, coord_server_test.c,
 * coord_server_park_test.c) share this: a request envelope to pack, and
 * the whole loop in-process (real store, real socket, real trace in a
 * temporary home) on a thread of its own, with the requests they send. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "berth.pb-c.h"
#include "coord_server.h"
#include "rpc.h"
#include "store_fixture.h"

/* CLOCK_MONOTONIC in milliseconds. */
int64_t now_ms(void);

/* r packed into a buffer with 16 bytes to spare (free it). */
uint8_t *pack(const Berth__Request *, size_t *);

/* A full, valid envelope: the operator's hold of T1. */
struct env {
	Berth__Request req;
	Berth__TicketRef ref;
};

void env_init(struct env *);

struct live {
	char home[64];
	char url[128];
	/* The store: $home/berth.db, or a PostgreSQL schema of the test's
	 * own (store_fixture.h). */
	struct test_store ts;
	struct coord_server *cs;
	pthread_t thr;
	int stopfd;
};

void live_start(struct live *);
void live_stop(struct live *);
/* cmocka setup and teardown: a live loop in a fresh home, removed after. */
int live_setup(void **);
int live_teardown(void **);

struct add_req {
	Berth__Request req;
	Berth__Add add;
	char *argv[2];
};

void add_init(struct add_req *, int);
/* Adds a ticket (held if hold) through c: its id (free it). */
char *add_ticket(struct rpc_client *, int);
/* Raw bytes on a real REQ socket; the decoded reply. */
Berth__Reply *send_raw(const char *, const void *, size_t);
/* The first max lines of home's trace: how many. */
int trace_lines(const char *, char[][512], int);

#endif
