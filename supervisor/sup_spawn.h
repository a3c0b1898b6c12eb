#ifndef BERTH_SUP_SPAWN_H
#define BERTH_SUP_SPAWN_H
#include <stddef.h>
#include <sys/types.h>

/* Spawning berth-shim for a granted claim (DESIGN §6). The shim is started
 * with posix_spawn (fork from a big parent is slow) as the leader of a new
 * session and process group, with its go pipe on fd SUP_SPAWN_GO_FD and,
 * when the supervisor has one, the write end of its status socket on fd
 * SUP_SPAWN_STATUS_FD:
 *
 *   berth-shim --umask MODE [--isolate] [--status-fd 4] -- HOME RUN_ID WORKDIR ARGV0 [ARG...]
 *
 * Its environment is the job's: the ticket's env (never the supervisor's
 * own), overlaid with BERTH_RUN_ID, BERTH_TOKEN, BERTH_SOCKET and
 * BERTH_HOME; plus BERTH_FAILPOINTS for the shim itself when
 * BERTH_FAILPOINTS_SHIM is set (the shim removes it again before it
 * executes the job).
 *
 * Spawned ahead (sup_spawn_req.ahead), before any run is claimed for it:
 *
 *   berth-shim --ahead --umask MODE [--status-fd 4] -- HOME
 *
 * with nothing in its environment but its own BERTH_FAILPOINTS; the job's
 * environment (sup_spawn_env of the same request without ahead) goes in
 * the hand-off. */

#define SUP_SPAWN_GO_FD     3
#define SUP_SPAWN_STATUS_FD 4

struct sup_spawn_req {
	const char *shim_path;
	const char *home;
	const char *run_id;
	const char *workdir; /* "" : the shim's own working directory */
	char *const *argv;   /* the job */
	size_t argc;
	char *const *ticket_env; /* "NAME=value" */
	size_t nenv;
	const char *token;
	const char *socket_url;
	const char *shim_failpoints; /* NULL: none */
	mode_t job_umask;            /* the job's umask (the supervisor runs under 077) */
	int isolate;                 /* the job runs isolated (shim --isolate) */
	int status_fd;               /* the status socket's write end (>= 10), or -1 */
	/* A shim spawned ahead of its run (berth-shim --ahead): only
	 * shim_path, home, shim_failpoints, job_umask and status_fd count;
	 * the run and the job come later, in the hand-off (handoff.h). */
	int ahead;
};

/* NULL-terminated, heap-allocated vectors; free with vec_free_str(). */
char **sup_spawn_argv(const struct sup_spawn_req *r);
char **sup_spawn_env(const struct sup_spawn_req *r);
/* The value of NAME in a vector built above, or NULL. */
const char *sup_spawn_getenv(char *const *env, const char *name);

/* Spawns the shim. On success returns 0 with its pid and the write end of
 * its go pipe (close-on-exec, so no other shim inherits it). On failure
 * returns -errno with a human reason in err (the run's failure reason). */
int sup_spawn_shim(const struct sup_spawn_req *r, pid_t *pid, int *go_fd, char *err, size_t errlen);

/* "<dir of /proc/self/exe>/berth-shim" into buf. */
int sup_spawn_shim_path(char *buf, size_t n);

#endif
