#ifndef BERTH_REAP_DECIDE_H
#define BERTH_REAP_DECIDE_H
#include <stdint.h>
#include "ident.h"

/* The reaper's judgement of one run (DESIGN §7), a pure function of the
 * run's row, the identity of its group leader (the shim), what the reaper
 * itself already did to it, and the clock. */

enum reap_action {
	REAP_NONE,
	REAP_SETTLE_STOPPED, /* claimed, never started, a stop requested: settle it */
	REAP_MARK_TIMEOUT,   /* past its timeout: record the stop, then TERM */
	REAP_TERM,           /* SIGTERM to the group, start the grace period */
	REAP_KILL,           /* grace over, the group lives: SIGKILL */
	REAP_STRAGGLER,      /* settled, its group still has members: SIGKILL */
	REAP_REMOVE_DATA,    /* settled before the retention cutoff: remove runs/<run>/ */
};

struct reap_facts {
	int settled;
	int claimed;              /* state claimed (not started) */
	int running;              /* state running */
	int stop_requested;       /* a stop reason is recorded (cancel or timeout) */
	int has_shim;
	enum ident_status shim;   /* the group leader judged by identity */
	int group_alive;          /* some process is still in the group */
	int64_t claimed_ms;
	int64_t started_ms;       /* 0: unknown */
	int64_t timeout_ms;       /* 0: none */
	int64_t settled_ms;
	int64_t term_sent_ms;     /* when this reaper sent SIGTERM; 0: not yet */
	int data_present;         /* runs/<run>/ exists */
};

struct reap_params {
	int64_t now_ms;
	int64_t grace_ms;     /* SIGTERM -> SIGKILL */
	int64_t retention_ms; /* run data of runs settled longer ago is removed */
};

enum reap_action reap_decide(const struct reap_facts *f, const struct reap_params *p);
const char *reap_action_name(enum reap_action a);

#endif
