#ifndef BERTH_COORD_SERVER_H
#define BERTH_COORD_SERVER_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"

/* The coordinator process: one loop that takes requests from the rpc
 * server, decides each (coord_exec.h), traces it and replies (DESIGN §5,
 * §9). main.c only parses the command line. */

struct coord_server_opts {
	const char *home; /* $BERTH_HOME, created 0700 */
	/* The store: NULL for $home/berth.db, else a postgresql:// URL
	 * (DESIGN §13). */
	const char *store;
	/* This host's id in the store (DESIGN §13; NULL: none, for tests that
	 * play a coordinator without a host) and its lease's TTL (0: 30 s). */
	const char *host_id;
	int64_t host_ttl_ms;
	/* The labels this host offers, joined by commas (NULL: none). */
	const char *labels;
	int sync_full;          /* synchronous=FULL (1, default) or NORMAL (0) */
	int64_t lease_ms;       /* default lease; 0: 30 s */
	int64_t backoff_ms;     /* retry backoff base; 0: 1 s */
	int64_t backoff_max_ms; /* cap; 0: 5 min */
	int nctx;               /* requests in flight at once; 0: 64 */
	/* Executables that also count as actors (of every role) when run by
	 * the coordinator's own parent: benchmarks that play the actors
	 * (--allow-actor-exe; coord_caller.h). */
	const char *const *actor_exes;
	int nactor_exes;
};

struct coord_server;

/* Startup: home, the lock ($home/coordinator.lock), the failpoints, the
 * store, the trace and the socket. Returns 0, or the process exit status
 * with a message in err: 1 another coordinator holds the home (the message
 * names its pid) or a system failure, 2 a configuration error (bad
 * BERTH_FAILPOINTS, a database with a newer schema, ...). */
int coord_server_open(struct coord_server **out, const struct coord_server_opts *o, char *err,
		      size_t errlen);
/* Runs the loop until stopfd is readable (a signalfd in the process, an
 * eventfd in tests; it is not read here). Then stops taking requests and
 * answers held claims nothing_due. 0, or -1 on a fatal loop error. */
int coord_server_run(struct coord_server *cs, int stopfd);
void coord_server_close(struct coord_server *cs);

/* The socket url the server listens on. */
const char *coord_server_url(const struct coord_server *cs);

#endif
