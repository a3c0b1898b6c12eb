#ifndef BERTH_SUP_RUN_H
#define BERTH_SUP_RUN_H

/* The life of one run inside the supervisor, as an explicit table of
 * state x event -> next state, action (in the manner of s6-supervise). The
 * loop turns what happened in the world (a claim reply, a reaped shim, a
 * coordinator answer, a tick) into an event, asks the table what that means,
 * and performs the action. Nothing else moves a run between states, so every
 * path a run can take is readable in one place (sup_run.c). */

enum sup_state {
	SUP_CLAIMED,      /* claim granted, nothing spawned yet */
	SUP_SPAWNED,      /* shim running and waiting for its go byte */
	SUP_STARTED,      /* start granted, go sent: the job runs (or is watched) */
	SUP_GONE,         /* the shim is gone; what it left cannot be read yet */
	SUP_EXITED,       /* the shim is gone; its exit must be checkpointed */
	SUP_CHECKPOINTED, /* the exit checkpoint is ours: aftercare, then settle */
	SUP_SETTLED,      /* settled: terminal, the run is forgotten */
	SUP_ABANDONING,   /* never executed: the shim is killed and the run abandoned */
	SUP_DROPPED,      /* another actor decides this run now: terminal, forgotten */
	SUP_NSTATES
};

enum sup_event {
	SUP_EV_SPAWN_OK,       /* posix_spawn of the shim succeeded */
	SUP_EV_SPAWN_FAILED,   /* the shim could not be spawned at all */
	SUP_EV_SPAWN_DEFERRED, /* ... for want of a resource (descriptors, memory, space) */
	SUP_EV_START_GRANTED,  /* start granted: the run is recorded running */
	SUP_EV_START_DENIED,   /* start denied, or no answer: the job must not run */
	SUP_EV_GONE,           /* the shim is gone after the job was started */
	SUP_EV_GONE_UNSTARTED, /* the shim is gone and the job never executed */
	SUP_EV_GONE_UNREAD,    /* the shim is gone; what it left cannot be read now */
	SUP_EV_EXIT_GRANTED,   /* record_exit granted: aftercare is ours */
	SUP_EV_EXIT_SETTLED,   /* record_exit granted and the settle fused into it too */
	SUP_EV_EXIT_DENIED,    /* record_exit denied: someone else settles it */
	SUP_EV_SETTLED,        /* settle answered (applied or already settled) */
	SUP_EV_ABANDONED,      /* abandon answered */
	SUP_EV_TICK,           /* the reconcile pass */
	SUP_NEVENTS
};

enum sup_action {
	SUP_ACT_NONE,
	SUP_ACT_START,        /* send start with the shim's identity */
	SUP_ACT_GO,           /* write the go byte to the shim */
	SUP_ACT_KILL_ABANDON, /* kill the shim's group (identity-checked), abandon */
	SUP_ACT_ABANDON,      /* (re)send abandon */
	SUP_ACT_READ,         /* read what the gone shim left, again */
	SUP_ACT_RECORD_EXIT,  /* read the exit record, (re)send record_exit */
	SUP_ACT_SETTLE,       /* aftercare, (re)send settle */
	SUP_ACT_FORGET,       /* drop the run from the table */
	SUP_ACT_INVALID,      /* the event makes no sense in this state: a bug */
};

/* The table's verdict for one event. */
struct sup_step {
	enum sup_state next;
	enum sup_action action;
};

/* What the table says for (state, event). An event the state does not
 * expect yields SUP_ACT_INVALID and the unchanged state. */
struct sup_step sup_run_step(enum sup_state state, enum sup_event event);
/* 1 when a run in this state still counts against the supervisor's slots
 * (the coordinator counts it until it is settled or aborted). */
int sup_run_busy(enum sup_state state);
int sup_run_terminal(enum sup_state state);

const char *sup_run_state_name(enum sup_state s);
const char *sup_run_event_name(enum sup_event e);
const char *sup_run_action_name(enum sup_action a);

#endif
