#ifndef BERTH_SUP_LOOP_H
#define BERTH_SUP_LOOP_H
#include <sys/types.h>

/* The supervisor's one loop (DESIGN §6): claims while slots are free, spawns
 * a shim per run, reaps, checkpoints and settles, renews leases and adopts
 * the runs recovery hands it, all from one poll(). */

struct sup_opts {
	const char *home;
	int slots;         /* runs supervised at once */
	int lease_ms;      /* claim/renew lease; 0: the coordinator's default */
	int tick_ms;       /* reconcile pass interval */
	int claim_wait_ms; /* how long the coordinator may hold a claim */
	mode_t job_umask;  /* jobs' umask: the one the supervisor started with */
	int isolate;       /* --isolate: every job runs isolated, whatever its ticket says */
	int no_ahead;      /* --no-ahead: spawn each shim after its claim, unfused */
};

/* Runs until SIGTERM or SIGINT; returns the process exit status. Running
 * jobs are left running: their shims no longer depend on us. */
int sup_loop_run(const struct sup_opts *o);

#endif
