#ifndef BERTH_REAP_DECIDE_H
#define BERTH_REAP_DECIDE_H
#include <stdint.h>
#include "ident.h"

/* The reaper's judgement of one run (DESIGN §7), a pure function of the
 * run's row, the identity of its shim (the leader of the session the job's
 * groups live in), what the reaper itself already did to it, and the
 * clock. */

enum reap_action {
	REAP_NONE,
	REAP_SETTLE_STOPPED, /* claimed, never started, a stop requested: settle it */
	REAP_MARK_TIMEOUT,   /* past its timeout: record the stop, then TERM */
	REAP_TERM,           /* SIGTERM to the job's processes, start the grace period */
	REAP_KILL,           /* grace over, the job's processes live: SIGKILL */
	REAP_STRAGGLER,      /* settled, its shim still lives: SIGKILL to it and its session */
	REAP_REMOVE_DATA,    /* settled before the retention cutoff: remove runs/<run>/ */
};

struct reap_facts {
	int settled;
	int claimed;        /* state claimed (not started) */
	int running;        /* state running */
	int stop_requested; /* a stop reason is recorded (cancel or timeout) */
	int has_shim;
	enum ident_status shim; /* the shim judged by identity */
	int job_alive;          /* a process other than the shim is in its session,
				   * or that cannot be told */
	int64_t claimed_ms;
	int64_t started_ms; /* 0: unknown */
	int64_t timeout_ms; /* 0: none */
	int64_t settled_ms;
	int64_t term_sent_ms; /* when this reaper sent SIGTERM; 0: not yet */
	int data_present;     /* runs/<run>/ exists */
};

struct reap_params {
	int64_t now_ms;
	int64_t grace_ms;     /* SIGTERM -> SIGKILL */
	int64_t retention_ms; /* run data of runs settled longer ago is removed */
};

enum reap_action reap_decide(const struct reap_facts *f, const struct reap_params *p);
const char *reap_action_name(enum reap_action a);

#endif
