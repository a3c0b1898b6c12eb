#ifndef BERTH_TRACE_STORE_H
#define BERTH_TRACE_STORE_H
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/*
 * berth trace on a shared store (DESIGN §13, docs/MANY-HOSTS.md "One
 * trace"): the store's global trace, every host's groups of decisions in
 * the order the store decided them (the verb trace), read a page at a time
 * from this home's coordinator. This host's own lines come from its trace
 * file, which has its reads and its clients' side besides; the store's
 * groups of this host say where its lines fall among the other hosts'.
 */

struct rpc_client;

struct trace_group {
	int64_t id;
	char host[65];
	uint64_t seq;  /* its first line's, in its host's trace */
	size_t nlines; /* lines in it */
	int64_t ts_ms;
	int self; /* this home's host */
	char *lines;
};

struct trace_store {
	struct rpc_client *c;
	int shared;    /* the store keeps a global trace */
	char self[65]; /* this home's host */
	int64_t after; /* the last group read */
	struct trace_group *g;
	size_t n, next; /* the page read, and the next group of it to give */
	int more;       /* the coordinator has more after the page */
};

/* A home whose store is shared names it in HOME/store (DESIGN §13). */
int trace_store_home_shared(const char *home);
/* Asks this home's coordinator for the newest last groups (0: from the
 * oldest kept). 0 with S->shared said; -1 when the coordinator did not
 * answer (quiet: nothing printed) or refused (printed). */
int trace_store_open(struct trace_store *S, uint32_t last, int quiet);
/* The next group in the store's order, reading the next page when the
 * last is used up: 1 with *g (valid until the next call), 0 none after
 * it (yet), -1 on error (printed). */
int trace_store_next(struct trace_store *S, const struct trace_group **g);
/* Line i of g (0-based) parsed into ev, with its host and place set. 0,
 * or -1 for a line that is not a trace record. */
int trace_store_line(const struct trace_group *g, size_t i, struct trace_ev *ev);
void trace_store_close(struct trace_store *S);

#endif
