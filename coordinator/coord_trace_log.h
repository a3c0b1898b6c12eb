#ifndef BERTH_COORD_TRACE_LOG_H
#define BERTH_COORD_TRACE_LOG_H
#include "coord_ctx.h"

/*
 * A shared store's global trace (DESIGN §13, docs/MANY-HOSTS.md "One
 * trace"). On PostgreSQL every host's coordinator appends each group's
 * trace lines to trace_log (coord_exec.c), in the group's transaction and
 * under the decision lock, so the rows' ids are one order of every host's
 * decisions: the order the store decided them in. The verb trace reads it
 * a page at a time for berth trace on any host. A sqlite store keeps no
 * such log: it has one host, whose trace file is the whole trace.
 */

/* The largest page a trace read answers, in bytes of lines. */
#define COORD_TRACE_PAGE_MAX (1024 * 1024)
/* The most groups one read answers. */
#define COORD_TRACE_PAGE_GROUPS 512

/* The verb trace: the groups after TraceRead.after (or the newest
 * TraceRead.last), oldest first, within the page's budget. */
int coord_trace_read(struct coord_ctx *c);

#endif
