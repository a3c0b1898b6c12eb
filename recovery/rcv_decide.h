#ifndef BERTH_RCV_DECIDE_H
#define BERTH_RCV_DECIDE_H
#include <stdint.h>
#include "ident.h"

/* Recovery's judgement of one run (DESIGN §7), as a pure function of facts
 * gathered elsewhere: the run's row from `scan`, the identity checks of its
 * owner and its shim, the started marker, and whether a live supervisor
 * exists to take the run over. Nothing here touches the world, so every row
 * of the rule table is a unit test. */

enum rcv_state {
	RCV_ST_CLAIMED,
	RCV_ST_RUNNING,
	RCV_ST_AFTERCARE,
	RCV_ST_OTHER, /* terminal or unknown: never ours */
};

enum rcv_action {
	RCV_NONE,        /* not ours: its owner lives and holds the lease */
	RCV_WAIT,        /* ours, but not yet: look again on the next pass */
	RCV_CONFIRM,     /* ours if the same verdict holds on a later pass */
	RCV_ABANDON,     /* never executed: back to ready, no attempt spent */
	RCV_READOPT,     /* the job lives: hand its lease to the live supervisor */
	RCV_RECORD_EXIT, /* the job is gone: checkpoint its exit, aftercare, settle */
	RCV_SETTLE,      /* exit already checkpointed, its owner gone: aftercare, settle */
};

struct rcv_facts {
	enum rcv_state state;
	int has_lease;
	int64_t lease_expires_ms;
	int owner_alive;        /* the owner's actor row identity matches or is unverifiable */
	int owner_is_self;      /* the owner is this recovery instance (a lost aftercare) */
	int has_shim;           /* a shim identity was recorded at start */
	enum ident_status shim; /* the shim judged by identity (has_shim only) */
	int started;            /* runs/<run>/started exists: the job executed */
	int64_t started_age_ms; /* how long before the scan the marker was written */
	int has_exit_record;    /* runs/<run>/exit holds a record (a reservation is none) */
	int unreadable;         /* what the run left cannot be read now (aftercare.h) */
	int confirmed;          /* the same verdict was reached on an earlier pass */
	int have_supervisor;    /* a live supervisor exists to readopt for */
};

/* A started marker must be older than this before a scan that still shows
 * the run `claimed` is believed: the marker is written after `start` is
 * granted, so a fresh marker may belong to a start the scan missed. */
#define RCV_MARKER_SETTLE_MS 1000

enum rcv_state rcv_state_parse(const char *s);
enum rcv_action rcv_decide(const struct rcv_facts *f, int64_t now_ms);
const char *rcv_action_name(enum rcv_action a);

#endif
