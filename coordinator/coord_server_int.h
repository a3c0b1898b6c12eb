#ifndef BERTH_COORD_SERVER_INT_H
#define BERTH_COORD_SERVER_INT_H
/* Private to coord_server.c (the loop) and coord_startup.c (opening and
 * closing): the server's state. */
#include <limits.h>
#include <stddef.h>

#include "coord_exec.h"
#include "coord_park.h"

/* A request of the group being decided, answered once the group ends. */
struct cs_slot {
	struct coord_pending *p;
	struct coord_result res;
	int may_park; /* held again, not answered, when it decided nothing */
	int built;    /* coord_exec built a reply */
};

struct coord_server {
	char *home;
	char url[PATH_MAX + 8];
	char worker_url[PATH_MAX + 8]; /* worker.sock: worker verbs only */
	int worker_listener;           /* its rpc listener index */
	char lock_path[PATH_MAX];
	char instance[17];
	int lockfd;
	struct coord_db *db;
	struct coord_trace *trace;
	struct rpc_server *rpc;
	struct coord_callers *callers; /* who asks (DESIGN §1) */
	struct coord_park park;        /* held claims */
	struct coord_group group;      /* the requests being decided in one transaction */
	struct cs_slot *slots;         /* ... and what each will be answered */
	size_t nslots, capslots;
	int wake;        /* a decision may have made held claims eligible */
	int wake_others; /* ... and so other hosts' held claims (coord_db_wake_others) */
	int trim;        /* loop turns that still give free heap back (cs_trim) */
};

#endif
