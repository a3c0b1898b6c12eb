#ifndef BERTH_TRACE_H
#define BERTH_TRACE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* `berth trace`: the coordinator's durable trace (trace/trace.jsonl, the
 * authoritative order of decisions) merged with the client-side records of
 * the shared-memory ring (DESIGN §9). One event type serves both. */

struct ring_rec;

/* Records no ring holds, made by berth trace itself: a run's lease ran out
 * (from a decision that found it expired), and an actor's death and its
 * restart by the launcher (from launch/launcher.log). */
#define TRACE_KIND_LEASE 100
#define TRACE_KIND_DEATH 101
#define TRACE_KIND_START 102

struct trace_ev {
	int ring;      /* 0: a decision from trace.jsonl; 1: a ring record */
	uint32_t kind; /* ring: enum ring_kind */
	uint64_t seq;
	int64_t ts_ms;
	char from[24]; /* sender actor (decisions) or writing actor (ring) */
	char instance[40];
	uint64_t req_id;
	char verb[32];
	char ticket[32];
	char run[48];
	char decision[16];
	char reason[128];
	char caller[24];    /* who the coordinator took the sender for ("" if unsaid) */
	int64_t latency_us; /* -1: unknown */
	int32_t pid;
	char text[96];
	/* Decisions: what it was about ("exit 7", "failed; ticket ready") and
	 * the run's lease as the coordinator found it (0: none said). */
	char detail[96];
	int64_t lease_expires_ms, lease_renewed_ms;
	char lease_owner[24];
	char fused[32]; /* a fused verb's line: the verb whose request carried it */
	/* A shared store (DESIGN §13): the host whose coordinator decided it
	 * ("" on a sqlite store), its group's place in the store's global
	 * order (0: not in it, a read), and whether that host is another
	 * than the one berth trace asked. */
	char host[65];
	int64_t gseq;
	int remote;
};

/* ------------------------------------------------------------ trace_parse.c */

/* The name of a record's kind: ring_kind_name's, "lease", "died",
 * "restarted". */
const char *trace_kind_name(uint32_t kind);
/* One line of launch/launcher.log: 1 with ev a TRACE_KIND_DEATH ("<actor>
 * pid <pid> died after ...: <how>") or TRACE_KIND_START ("started <actor>
 * pid <pid>: ..."), 0 for any other line. The time is the line's own
 * (local with an offset, or Z). */
int trace_parse_launcher(const char *line, struct trace_ev *ev);

/* Parses one line of trace.jsonl (a flat JSON object; unknown keys are
 * skipped, null reads as empty). 0, or -1 when the line is not a trace
 * record (garbage, torn, or lacking "verb"). */
int trace_parse_line(const char *line, size_t len, struct trace_ev *ev);
void trace_from_ring(const struct ring_rec *r, struct trace_ev *ev);

/* ------------------------------------------------------------ trace_filter.c */

/* --run R: a run id or prefix, or an alias T<n>-r<k>; an alias resolves to
 * the k-th distinct run of ticket T<n> in trace order (attempt order), fed
 * by trace_filter_see() as events go by. */
struct trace_filter {
	const char *run;
	const char *ticket;
	const char *actor;
	const char *verb;
	int no_reads; /* --no-reads: hide read-only verbs */
	int quiet;    /* --quiet: hide routine traffic (trace_filter_routine) */
	char alias_ticket[32];
	unsigned alias_k; /* 0: --run is not an alias */
	unsigned alias_seen;
	char alias_runs[64][48];
	char alias_run[48]; /* resolved, or "" */
	int32_t pids[64];   /* processes with a matching record so far */
	unsigned npids;
	char actors[16][24]; /* actors with a matching record so far */
	unsigned nactors;
};

void trace_filter_init(struct trace_filter *f, const char *run, const char *ticket,
		       const char *actor, const char *verb);
/* Learns the runs of the alias's ticket; call for every event, in order,
 * before trace_filter_match(). */
void trace_filter_see(struct trace_filter *f, const struct trace_ev *ev);
/* 1 for the traffic an idle group makes all the time: read-only requests,
 * granted renew, heartbeat, seat_heartbeat and seat_reap, and a parked
 * claim (sent, or denied nothing_due); and a supervisor's run state change
 * on the happy path that only echoes a granted decision (spawned, started,
 * checkpointed, settled). Other denials, errors and requests nobody
 * decided are never routine. */
int trace_filter_routine(const struct trace_ev *ev);
/* 1 when ev passes. A failpoint record names no run or ticket: under
 * --run/--ticket it passes when its process already had a matching record
 * (the failpoint fired while that process was working on the run). */
int trace_filter_match(struct trace_filter *f, const struct trace_ev *ev);

/* ------------------------------------------------------------ trace_render.c */

/* "06:45:01.123" (local time) into buf. */
void trace_fmt_time(int64_t ts_ms, char *buf, size_t n);
/* A decision's reason in words into buf ("the exit was already recorded"
 * for record_exit's already_claimed; its first word is the code, the rest
 * is kept): what the timeline and the diagrams show; --json keeps the
 * code. An unknown reason is copied as it is. */
void trace_fmt_reason(const char *verb, const char *reason, char *buf, size_t n);
/* The lease a decision found, in words ("lease expired at 15:00:08.946,
 * 20ms before; its owner 7392204e last renewed it at ..."), "" when none. */
void trace_fmt_lease(const struct trace_ev *ev, char *buf, size_t n);
/* What recovery concluded of a run (its state record), in words: "recovery:
 * record_exit (job gone; its supervisor alive, lease ran out)". "" for any
 * other record. */
void trace_fmt_verdict(const struct trace_ev *ev, char *buf, size_t n);
/* "850us", "1.2ms", "3.40s"; "" when unknown. */
void trace_fmt_latency(int64_t us, char *buf, size_t n);
/* One timeline line (with newline); color: ANSI colours by decision. */
void trace_print_line(FILE *f, const struct trace_ev *ev, int color);
/* One JSON object per line, the keys of trace.jsonl plus "source" and, for
 * ring records, "event", "pid" and "text". */
void trace_print_json(FILE *f, const struct trace_ev *ev);
/* A sequence diagram: one lifeline per actor instance (the coordinator one
 * central lifeline; all cli and all worker clients one lifeline each), an
 * arrow per request and per reply, ring events as marks. 0 or -1 (write
 * error). */
int trace_svg(FILE *f, const struct trace_ev *ev, size_t n);
/* ev with a TRACE_KIND_LEASE record added in time order for every lease a
 * decision found run out (once per run and expiry), on the owner's lane:
 * *out is malloc'd. 0, or -1 out of memory. trace_svg draws these. */
int trace_add_leases(const struct trace_ev *ev, size_t n, struct trace_ev **out, size_t *nout);
int trace_mermaid(FILE *f, const struct trace_ev *ev, size_t n);

#endif
