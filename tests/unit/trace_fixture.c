/* The records berth trace's unit tests share (trace_fixture.h). */
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "trace_fixture.h"

struct trace_ev
mk(int ring, uint32_t kind, uint64_t seq, const char *from, const char *inst, const char *verb,
   const char *ticket, const char *run, const char *decision, const char *reason, const char *text)
{
	struct trace_ev e;

	memset(&e, 0, sizeof(e));
	e.ring = ring;
	e.kind = kind;
	e.seq = seq;
	e.ts_ms = 1764485000000LL + (int64_t)seq * 100;
	e.req_id = seq;
	e.latency_us = ring ? -1 : 500 + (int64_t)seq;
	snprintf(e.from, sizeof(e.from), "%s", from);
	snprintf(e.instance, sizeof(e.instance), "%s", inst);
	snprintf(e.verb, sizeof(e.verb), "%s", verb);
	snprintf(e.ticket, sizeof(e.ticket), "%s", ticket);
	snprintf(e.run, sizeof(e.run), "%s", run);
	snprintf(e.decision, sizeof(e.decision), "%s", decision);
	snprintf(e.reason, sizeof(e.reason), "%s", reason);
	snprintf(e.text, sizeof(e.text), "%s", text);
	return e;
}

/* The exit-checkpoint race: supervisor A claims and starts T1, crashes at a
 * failpoint; the restarted supervisor B and recovery both try record_exit,
 * recovery wins, B is denied. 10 decisions, 2 ring marks. */
size_t
race(struct trace_ev *v)
{
	size_t n = 0;

	v[n++] = mk(0, 0, 1, "cli", "c1c1c1c1c1c1c1c1", "add", "T1", "", "granted", "", "");
	v[n++] = mk(0, 0, 2, "supervisor", SUP_A, "claim", "T1", RUN1, "granted", "", "");
	v[n++] = mk(0, 0, 3, "supervisor", SUP_A, "start", "T1", RUN1, "granted", "", "");
	v[n++] = mk(1, RING_FAILPOINT, 4, "supervisor", SUP_A, "", "", "", "", "",
		    "supervisor.before_record_exit crash");
	v[n++] = mk(0, 0, 5, "supervisor", SUP_B, "hello", "", "", "granted", "", "");
	v[n++] = mk(0, 0, 6, "recovery", REC, "record_exit", "T1", RUN1, "granted", "", "");
	v[n++] = mk(0, 0, 7, "supervisor", SUP_B, "record_exit", "T1", RUN1, "denied",
		    "already_claimed <state=aftercare> & \"q\" 'x'", "");
	v[n++] = mk(0, 0, 8, "recovery", REC, "settle", "T1", RUN1, "granted", "", "");
	v[n++] = mk(0, 0, 9, "recovery", REC, "settle", "T1", RUN1, "replayed", "", "");
	v[n++] = mk(1, RING_KILL, 10, "reaper", "5555666677778888", "", "T1", RUN1, "sent",
		    "SIGTERM", "cancel");
	v[n++] =
		mk(0, 0, 11, "cli", "c2c2c2c2c2c2c2c2", "show", "T9", "", "error", "not found", "");
	v[n++] = mk(0, 0, 12, "supervisor", SUP_B, "claim", "T1", RUN2, "granted", "", "");
	return n;
}
