/*
 * The end of a job's leftovers: every process the job left behind in the
 * shim's session, or reparented to the shim, killed by its identity and
 * reaped (shim_end_descendants, shim.h). Apart from shim.c (arguments,
 * spawning, waiting, the exit record) because it is one self-contained
 * walk of /proc that shim.c only calls.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ident.h"
#include "log.h"
#include "shim.h"

/* Whether pid is one we killed already (ended[0..n)), else remembers it. */
static int
shim_ended_before(pid_t *ended, int *n, int cap, pid_t pid)
{
	int i;

	for (i = 0; i < *n; i++)
		if (ended[i] == pid)
			return 1;
	if (*n < cap)
		ended[(*n)++] = pid;
	return 0;
}

int
shim_end_descendants(void)
{
	pid_t self = getpid(), ended[1024], r;
	int round, nended = 0, total = 0, sub = 0;
	struct ident_proc *v;
	size_t n, i;

	/*
	 * The common case, without reading /proc: the shim leads its session
	 * and is a child subreaper, so every descendant of the job either
	 * still has its parent on a chain of descendants or was reparented to
	 * the shim (or to a living subreaper below it, itself a descendant).
	 * Once the shim has no child left, not even one to reap, the job left
	 * nothing behind.
	 */
	if (prctl(PR_GET_CHILD_SUBREAPER, &sub) == 0 && sub) {
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r == -1 && errno == ECHILD)
			return 0;
	}

	/*
	 * Otherwise every round kills each process of our session (the job's
	 * group, and any group it made without leaving the session) and each
	 * child of ours (an orphan reparented to us: one that left the session
	 * with setsid, or the parent of one), each by its identity, and reaps
	 * what died. Killing a parent hands its children to us, so the next
	 * round finds them; one forking while we look is found the same way.
	 */
	for (round = 0; round < 200; round++) {
		int found = 0;

		if (ident_procs(&v, &n) < 0) {
			/* No view of /proc now (no descriptor left?): try again. */
			nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (v[i].pid == self || (v[i].sid != self && v[i].ppid != self) ||
			    v[i].state == 'Z' || v[i].state == 'X')
				continue;
			found++;
			if (ident_kill_proc(&v[i], SIGKILL) == 0 &&
			    !shim_ended_before(ended, &nended, 1024, v[i].pid))
				total++;
		}
		free(v);
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (found == 0 && r == -1 && errno == ECHILD)
			break;
		/* Give the killed a moment to die before looking again. */
		nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	if (total > 0)
		log_info("ended %d process%s the job left behind", total, total == 1 ? "" : "es");
	return total;
}
