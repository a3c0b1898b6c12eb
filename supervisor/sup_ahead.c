/*
 * Shims spawned ahead of their claims (DESIGN §4 "One decision, fewer
 * trips", §6). While a slot is free the supervisor keeps a shim already
 * spawned, in its own session, its death signal armed, waiting on its go
 * pipe for a run. The claim carries that shim's identity; granted, the
 * coordinator has created the run running with it in the same transaction,
 * and the supervisor hands the run over the pipe (handoff.h). Spawning is
 * then off the job's path, and claim and start are one decision.
 *
 * A waiting shim knows no run, so one that dies, or is dropped, costs
 * nothing. A crash of the supervisor after a granted claim and before the
 * hand-off leaves a running run whose shim dies with us without a started
 * marker: recovery abandons it, no attempt spent, as after a crash between
 * start and the go of the unfused path.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "failpoint.h"
#include "handoff.h"
#include "log.h"
#include "sup_int.h"
#include "sup_spawn.h"
#include "vec.h"

/* The failpoints of the unfused path's windows (DESIGN §10): armed, the
 * claim goes unfused, so that the window each names is there to be hit. */
static const char *const sup_unfused_points[] = {
	"supervisor.after_claim",
	"supervisor.after_spawn",
	"supervisor.before_start",
	"supervisor.after_start",
};

int
sup_ahead_fused(struct sup *s)
{
	size_t i;

	if (s->o->no_ahead)
		return 0;
	for (i = 0; i < sizeof(sup_unfused_points) / sizeof(sup_unfused_points[0]); i++)
		if (fp_armed(sup_unfused_points[i]))
			return 0;
	return 1;
}

static int
sup_ahead_spawn(struct sup *s)
{
	struct sup_spawn_req sr;
	struct sup_ahead *e = &s->ahead[s->n_ahead];
	char err[512];
	int rc;

	memset(&sr, 0, sizeof(sr));
	sr.ahead = 1;
	sr.shim_path = s->shim_path;
	sr.home = s->o->home;
	sr.shim_failpoints = s->shim_failpoints;
	sr.job_umask = s->o->job_umask;
	sr.status_fd = s->status_wr;
	if ((rc = sup_spawn_shim(&sr, &e->pid, &e->go_fd, err, sizeof(err))) < 0) {
		log_warn("cannot spawn a shim ahead (%s): claiming without one for a second", err);
		return -1;
	}
	/* Its start time is fixed from the fork on, and posix_spawn returns
	 * after the exec: the identity read now is the one the run keeps. */
	if ((rc = ident_read(e->pid, &e->id)) < 0) {
		log_warn("shim %d spawned ahead: cannot read its identity: %s", (int)e->pid,
			 strerror(-rc));
		close(e->go_fd); /* it ends on its own: no run comes */
		return -1;
	}
	e->id.pgid = e->pid; /* a session leader, so its own group's */
	s->n_ahead++;
	log_debug("shim %d spawned ahead (%d waiting)", (int)e->pid, s->n_ahead);
	return 0;
}

/* Runs whose shim is gone and whose slot frees once their exit is
 * checkpointed and settled. */
static int
sup_ahead_ending(struct sup *s)
{
	struct sup_run *r;
	int n = 0;

	TAILQ_FOREACH(r, &s->runs, entry)
		n += r->state == SUP_GONE || r->state == SUP_EXITED || r->state == SUP_CHECKPOINTED;
	return n;
}

void
sup_ahead_fill(struct sup *s, int extra)
{
	int want;

	if (s->stopping || s->broken || !s->hello_done || !sup_ahead_fused(s) ||
	    clock_mono_ms() < s->ahead_not_before)
		return;
	want = s->slots - sup_runs_busy(s) + sup_ahead_ending(s) + extra;
	if (want > SUP_AHEAD_MAX)
		want = SUP_AHEAD_MAX;
	while (s->n_ahead < want) {
		if (sup_ahead_spawn(s) == -1) {
			s->ahead_not_before = clock_mono_ms() + 1000;
			return;
		}
	}
}

const struct sup_ahead *
sup_ahead_first(struct sup *s)
{
	int i;

	for (i = 0; i < s->n_ahead; i++)
		if (s->ahead[i].pid != s->then_shim && s->ahead[i].pid != s->claim_shim)
			return &s->ahead[i];
	return NULL;
}

static int
sup_ahead_index(struct sup *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->n_ahead; i++)
		if (s->ahead[i].pid == pid)
			return i;
	return -1;
}

static void
sup_ahead_drop(struct sup *s, int i)
{
	memmove(&s->ahead[i], &s->ahead[i + 1], (size_t)(s->n_ahead - i - 1) * sizeof(s->ahead[0]));
	s->n_ahead--;
}

int
sup_ahead_take(struct sup *s, pid_t pid, struct sup_ahead *e)
{
	int i = sup_ahead_index(s, pid);

	if (pid <= 0 || i < 0)
		return 0;
	*e = s->ahead[i];
	sup_ahead_drop(s, i);
	return 1;
}

int
sup_ahead_reaped(struct sup *s, pid_t pid)
{
	int i = sup_ahead_index(s, pid);

	if (i < 0)
		return 0;
	log_warn("shim %d, spawned ahead, ended before it had a run%s", (int)pid,
		 pid == s->claim_shim || pid == s->then_shim ? " (the claim in flight names it)"
							     : "");
	close(s->ahead[i].go_fd);
	sup_ahead_drop(s, i);
	return 1;
}

int
sup_ahead_has(struct sup *s, pid_t pid)
{
	return pid > 0 &&
	       (pid == s->claim_shim || pid == s->then_shim || sup_ahead_index(s, pid) >= 0);
}

/* Closing a go pipe without a hand-off ends its shim: it had no run. */
void
sup_ahead_free(struct sup *s)
{
	while (s->n_ahead > 0)
		close(s->ahead[--s->n_ahead].go_fd);
}

void
sup_ahead_job_req(struct sup *s, const struct sup_run *r, const Berth__ClaimGranted *g,
		  struct sup_spawn_req *sr)
{
	memset(sr, 0, sizeof(*sr));
	sr->home = s->o->home;
	sr->run_id = r->id;
	sr->workdir = g->workdir ? g->workdir : "";
	sr->argv = g->argv;
	sr->argc = g->n_argv;
	sr->ticket_env = g->env;
	sr->nenv = g->n_env;
	sr->token = g->token ? g->token : "";
	/* A job reaches the coordinator on its own socket, which takes
	 * worker verbs and nothing else (DESIGN §1, §2). */
	sr->socket_url = s->worker_url;
	sr->job_umask = s->o->job_umask;
	/* The group's default or the ticket's wish: either isolates. */
	sr->isolate = s->o->isolate || (g->has_isolate && g->isolate);
}

int
sup_ahead_handoff(struct sup *s, struct sup_run *r, const Berth__ClaimGranted *g)
{
	static char *none[] = { "", NULL };
	struct sup_spawn_req sr;
	char **env;
	size_t nenv = 0;
	int rc;

	sup_ahead_job_req(s, r, g, &sr);
	if ((env = sup_spawn_env(&sr)) == NULL) {
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		return -ENOMEM;
	}
	while (env[nenv] != NULL)
		nenv++;
	/* The coordinator refuses a ticket without a command; one that has
	 * none all the same is run as "", which fails to execute (127) and
	 * settles failed with that reason, instead of coming back forever. */
	if (sr.argc == 0)
		log_error("run %s: claimed without a command", sup_runs_name(r));
	rc = handoff_encode(r->id, sr.workdir, sr.isolate, sr.argc ? sr.argv : none,
			    sr.argc ? sr.argc : 1, env, nenv, &r->handoff, &r->handoff_len);
	if (rc == -1) {
		rc = -errno;
		snprintf(r->reason, sizeof(r->reason), "hand-off: %s", strerror(-rc));
	}
	vec_free_str(env);
	return rc;
}
