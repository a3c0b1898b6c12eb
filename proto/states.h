#ifndef BERTH_STATES_H
#define BERTH_STATES_H
#include <stddef.h>

/*
 * berth's vocabulary (DESIGN §3, §4): the states of a run and of a ticket,
 * the reasons a run was asked to stop, and the one rule that turns a run's
 * recorded exit into its outcome. Every process that names a state spells
 * it through this file; the strings below are the ones the schema's CHECKs,
 * the wire and the trace carry, and they never change.
 */

/* The protocol version every Request carries (DESIGN §5). */
#define BERTH_PROTOCOL_VERSION 1

enum run_state {
	RUN_ABSENT = -1, /* no such run: a guard's "state or absent" */
	RUN_CLAIMED = 0, /* nonterminal */
	RUN_RUNNING,
	RUN_AFTERCARE,
	RUN_SUCCEEDED, /* terminal: the state is the outcome */
	RUN_FAILED,
	RUN_TIMED_OUT,
	RUN_CANCELLED,
	RUN_ORPHANED,
	RUN_ABORTED,
	/* Its host was declared lost (DESIGN §13): the job may have gone on
	 * there and nobody can say how it ended; retried like orphaned. Only
	 * the verb lose makes it, never an exit or a settle. */
	RUN_LOST,
	RUN_NSTATES
};

enum ticket_state {
	TICKET_ABSENT = -1,
	TICKET_READY = 0,
	TICKET_HELD,
	TICKET_CLAIMED,
	TICKET_SUCCEEDED,
	TICKET_FAILED,
	TICKET_CANCELLED,
	/* An --after dependency ended failed or cancelled for good, so the
	 * ticket never runs (DESIGN §4); retrying the dependency re-arms it. */
	TICKET_DEPENDENCY_FAILED,
	TICKET_NSTATES
};

enum stop_reason { STOP_NONE = 0, STOP_CANCEL, STOP_TIMEOUT, STOP_NREASONS };

/* "claimed", "running", ...; "absent" for RUN_ABSENT and anything else. */
const char *run_state_name(enum run_state s);
/* The state a name spells; RUN_ABSENT for NULL, "" and unknown names. */
enum run_state run_state_parse(const char *name);
/* 1 for the terminal states (the outcomes), 0 otherwise (RUN_ABSENT too). */
int run_state_terminal(enum run_state s);
/* 1 for claimed, running and aftercare: a run not yet settled. */
int run_state_live(enum run_state s);

/* "ready", "held", ...; "absent" otherwise. "blocked" is derived, never a
 * state (DESIGN §3), so it is not here. */
const char *ticket_state_name(enum ticket_state s);
/* "blocked": how a ready ticket that waits for a dependency is shown and
 * selected (berth list --state blocked). */
extern const char ticket_blocked_name[];
enum ticket_state ticket_state_parse(const char *name);
/* 1 when the ticket has ended for good (succeeded, failed, cancelled,
 * dependency_failed). */
int ticket_state_final(enum ticket_state s);

/* "" for STOP_NONE, "cancel", "timeout". */
const char *stop_reason_name(enum stop_reason r);
/* STOP_NONE for NULL, "" and unknown names. */
enum stop_reason stop_reason_parse(const char *name);

/* What a run's end is known by: the exit record the shim left (or its
 * absence) and the stop request the run carries. */
struct run_end {
	enum run_state state; /* the run's state when it is settled */
	enum stop_reason stop;
	int has_record; /* an exit record exists (runs/<run>/exit or the shim's word) */
	int has_code;
	int code;
	int has_signal;
	int signal;
};

/*
 * The one rule from an exit to an outcome (docs/DECISIONS.md "Outcomes"): a
 * stop request wins (cancel, then timeout); a run that was only claimed
 * never executed (aborted); without an exit record the process vanished
 * (orphaned); exit code 0 and no signal succeeded; anything else failed.
 */
enum run_state run_outcome(const struct run_end *e);

#endif
