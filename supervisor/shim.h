#ifndef BERTH_SHIM_H
#define BERTH_SHIM_H
#include <sys/types.h>

/* berth-shim: one job's keeper (DESIGN §6). Started by the supervisor as the
 * leader of a new process group, it waits for the go byte on its go pipe
 * (dying with its parent until then), then runs the job in its group with its
 * output captured, waits for it, records its exit durably, and kills what the
 * job left behind in the group.
 *
 *   berth-shim [--umask MODE] [--isolate] [--] HOME RUN_ID WORKDIR ARGV0 [ARG...]
 *                                                   (go pipe on fd 3)
 *   berth-shim --ahead [--umask MODE] [--] HOME     (go pipe on fd 3)
 *
 * --ahead: spawned before any run is claimed for it (DESIGN §4, §6). It
 * waits, dying with its parent, for the hand-off (handoff.h) on its go
 * pipe: the run, the job, its workdir, isolation and environment, sent
 * once the fused claim recorded the run running with this shim's identity.
 * From the hand-off on it is the shim of that run, exactly as one spawned
 * for it and told to go; a pipe that closes first means no run.
 *
 * --umask MODE (octal) is the umask the job gets: the shim itself runs
 * under 077, as every actor does, so that what it creates in the home is
 * the user's alone; without it the job gets the umask the shim started
 * with.
 *
 * --isolate runs the job in a new user and mount namespace (DESIGN §6,
 * docs/SUPERVISION.md): mount propagation private, the real home (its
 * realpath) covered by an empty read-only tmpfs holding only worker.sock,
 * bind-mounted from the real one when there is one, a private /dev/shm,
 * and no capabilities left in the namespace, so the job cannot open
 * berth.db, coordinator.sock or any run's output, nor undo the mounts. The
 * job's stdout and stderr are opened before, so capture is unchanged. When
 * any step fails (no unprivileged user namespaces here) the job is not run:
 * the reason is its spawn error and it exits 126. The failpoint
 * shim.unshare=error makes the unshare fail (EPERM), for tests.
 *
 * Files under HOME/runs/RUN_ID/: output.log (the job's stdout and stderr),
 * started (empty, created and synced with its directory just before the job
 * is forked), exit (exitrec.h), and spawn_error, one line saying why the job
 * could not be executed (bad workdir, missing executable, output not
 * openable). A job that fails to execute exits 127 (executable not found) or
 * 126 (anything else) in the exit record, like a shell. */

#define SHIM_EXIT_NOTFOUND 127
#define SHIM_EXIT_CANNOT   126

struct shim_args {
	const char *home;
	const char *run_id;
	const char *workdir; /* "" : stay in the current directory */
	char **argv;         /* NULL-terminated */
	int go_fd;
	int has_umask;
	mode_t job_umask; /* with has_umask: set in the job before exec */
	int isolate;      /* --isolate */
	int status_fd;    /* --status-fd N: the status socket; 0: none */
	int ahead;        /* --ahead: spawned before its run, which the hand-off names */
	/* The command line's memory (shim_title_area), rewritten once a
	 * shim spawned ahead has its run, so that ps shows the run as for a
	 * shim spawned for it: "berth-shim -- HOME RUN_ID". NULL: left alone. */
	char *title;
	size_t title_len;
};

/* Parses the command line; -1 with a message on stderr when it is wrong. */
int shim_parse(int argc, char **argv, struct shim_args *a);
struct handoff;
/* A shim spawned ahead: reads the hand-off from the go pipe and makes its
 * run a's (the run, the job, its environment as the shim's own, and the
 * command line). 1 with the run in a; 0 when the pipe closed without one
 * (nothing to run); -1 when what came is not a hand-off. */
int shim_take_handoff(struct shim_args *a, struct handoff *ho);
/* Notes argv's memory in a (when its strings lie end to end, as exec
 * leaves them) for the retitling of a shim spawned ahead. */
void shim_title_area(struct shim_args *a, int argc, char **argv);
/* Runs the whole life of the shim; returns the shim's exit status. */
int shim_run(const struct shim_args *a);
/* Ends (SIGKILL, each by its identity) every descendant of the caller, a
 * session leader and child subreaper as a shim is: the members of its
 * session and the orphans reparented to it (those that left the session),
 * reaping them, until none is left. Returns how many it ended. */
int shim_end_descendants(void);

#endif
