#ifndef BERTH_TRACE_FIXTURE_H
#define BERTH_TRACE_FIXTURE_H
/* berth trace's unit tests (trace_filter_test.c, trace_render_test.c)
 * share these: a record made in one call, and a synthetic trace of the
 * exit-checkpoint race, with the run and instance names it uses. */
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define RUN1  "5e2f01ab5e2f01ab5e2f01ab5e2f01ab"
#define RUN2  "77777777000000001111111122222222"
#define SUP_A "3f2a1b2c3d4e5f60"
#define SUP_B "9999aaaabbbbcccc"
#define REC   "77aa88bb99cc00dd"

/* A decision (ring 0) or a ring record (ring 1) at seq, 100 ms apart. */
struct trace_ev mk(int ring, uint32_t kind, uint64_t seq, const char *from, const char *inst,
		   const char *verb, const char *ticket, const char *run, const char *decision,
		   const char *reason, const char *text);

/* The exit-checkpoint race into v (room for 12): its length. */
size_t race(struct trace_ev *v);

#endif
