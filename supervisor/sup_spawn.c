#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sup_spawn.h"
#include "vec.h"

#define SUP_SPAWN_STR(x)         #x
#define SUP_SPAWN_XSTR(x)        SUP_SPAWN_STR(x)
#define SUP_SPAWN_STATUS_FD_TEXT SUP_SPAWN_XSTR(SUP_SPAWN_STATUS_FD)

struct vec {
	char **v;
	size_t n;
	size_t cap;
};

static int
vec_push(struct vec *a, const char *s)
{
	return vec_push_str(&a->v, &a->n, &a->cap, s);
}

/* Length of the NAME part of "NAME=value" (the whole string without '='). */
static size_t
env_namelen(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

/* Sets "NAME=value", replacing an earlier entry of the same name, so that a
 * later layer (ticket env, then berth's own variables) wins. */
static int
vec_setenv(struct vec *a, const char *kv)
{
	size_t len = env_namelen(kv), i;
	char *dup;

	if (len == 0 || kv[len] != '=')
		return 0; /* not an assignment: nothing to pass on */
	for (i = 0; i < a->n; i++) {
		if (env_namelen(a->v[i]) == len && strncmp(a->v[i], kv, len) == 0) {
			if ((dup = strdup(kv)) == NULL)
				return -1;
			free(a->v[i]);
			a->v[i] = dup;
			return 0;
		}
	}
	return vec_push(a, kv);
}

static int
vec_setenv2(struct vec *a, const char *name, const char *value)
{
	char *kv;
	int rc;

	if (asprintf(&kv, "%s=%s", name, value ? value : "") < 0)
		return -1;
	rc = vec_setenv(a, kv);
	free(kv);
	return rc;
}

/* Failpoint settings belong to berth's actors, never to a job: a job that
 * runs `berth` itself must not inherit the supervisor's armed points. */
static int
env_private(const char *kv)
{
	return strncmp(kv, "BERTH_FAILPOINTS", 16) == 0;
}

char **
sup_spawn_argv(const struct sup_spawn_req *r)
{
	struct vec a = { 0 };
	char mask[8];
	size_t i;

	if (!r->ahead && (r->argc == 0 || r->argv == NULL || r->argv[0] == NULL))
		return NULL;
	snprintf(mask, sizeof(mask), "%03o", (unsigned)(r->job_umask & 0777));
	if (vec_push(&a, r->shim_path) == -1 || (r->ahead && vec_push(&a, "--ahead") == -1) ||
	    vec_push(&a, "--umask") == -1 || vec_push(&a, mask) == -1 ||
	    (r->isolate && vec_push(&a, "--isolate") == -1) ||
	    (r->status_fd >= 0 &&
	     (vec_push(&a, "--status-fd") == -1 || vec_push(&a, SUP_SPAWN_STATUS_FD_TEXT) == -1)) ||
	    vec_push(&a, "--") == -1 || vec_push(&a, r->home) == -1)
		goto fail;
	if (r->ahead)
		return a.v;
	if (vec_push(&a, r->run_id) == -1 || vec_push(&a, r->workdir ? r->workdir : "") == -1)
		goto fail;
	for (i = 0; i < r->argc; i++)
		if (vec_push(&a, r->argv[i]) == -1)
			goto fail;
	return a.v;
fail:
	vec_free_str(a.v);
	return NULL;
}

/*
 * The job's environment is its ticket's, which the CLI took from whoever
 * ran `berth add` (DESIGN §12), and nothing of the supervisor's own: what
 * the group was started with (a secret in the shell that ran `berth up`)
 * must never reach a job.
 */
char **
sup_spawn_env(const struct sup_spawn_req *r)
{
	struct vec a = { 0 };
	size_t i;

	/* Spawned ahead, the shim has no job yet: its environment is its
	 * own failpoints, and the job's comes with the hand-off. */
	if (r->ahead) {
		if (r->shim_failpoints != NULL && *r->shim_failpoints != '\0' &&
		    vec_setenv2(&a, "BERTH_FAILPOINTS", r->shim_failpoints) == -1)
			goto fail;
		if (a.v == NULL && (a.v = calloc(1, sizeof(*a.v))) == NULL)
			goto fail;
		return a.v;
	}
	for (i = 0; i < r->nenv; i++)
		if (!env_private(r->ticket_env[i]) && vec_setenv(&a, r->ticket_env[i]) == -1)
			goto fail;
	if (vec_setenv2(&a, "BERTH_RUN_ID", r->run_id) == -1 ||
	    vec_setenv2(&a, "BERTH_TOKEN", r->token) == -1 ||
	    vec_setenv2(&a, "BERTH_SOCKET", r->socket_url) == -1 ||
	    vec_setenv2(&a, "BERTH_HOME", r->home) == -1)
		goto fail;
	if (r->shim_failpoints != NULL && *r->shim_failpoints != '\0' &&
	    vec_setenv2(&a, "BERTH_FAILPOINTS", r->shim_failpoints) == -1)
		goto fail;
	return a.v;
fail:
	vec_free_str(a.v);
	return NULL;
}

const char *
sup_spawn_getenv(char *const *env, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

int
sup_spawn_shim_path(char *buf, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len;
	char *slash;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		log_error("readlink /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	exe[len] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(buf, n, "%s/berth-shim", exe) >= n)
		return -1;
	return 0;
}

int
sup_spawn_shim(const struct sup_spawn_req *r, pid_t *pid, int *go_fd, char *err, size_t errlen)
{
	static const int defsigs[] = { SIGCHLD, SIGTERM, SIGINT,  SIGHUP, SIGQUIT,
				       SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char **argv = NULL, **envp = NULL;
	int p[2] = { -1, -1 }, rc, fa_ok = 0, at_ok = 0;
	sigset_t none, def;
	size_t i;

	*pid = -1;
	*go_fd = -1;
	argv = sup_spawn_argv(r);
	envp = sup_spawn_env(r);
	if (argv == NULL || envp == NULL) {
		rc = r->argc == 0 && !r->ahead ? -EINVAL : -ENOMEM;
		snprintf(err, errlen, "%s", rc == -EINVAL ? "empty command" : "out of memory");
		goto out;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		rc = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	/* dup2(fd, fd) would keep close-on-exec set: move the read end out of
	 * the way first if it happens to be the go fd itself. */
	if (p[0] == SUP_SPAWN_GO_FD) {
		int fd = fcntl(p[0], F_DUPFD_CLOEXEC, 10);

		if (fd == -1) {
			rc = -errno;
			snprintf(err, errlen, "fcntl: %s", strerror(errno));
			goto out;
		}
		close(p[0]);
		p[0] = fd;
	}

	if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
		rc = -rc;
		snprintf(err, errlen, "posix_spawn_file_actions_init: %s", strerror(-rc));
		goto out;
	}
	fa_ok = 1;
	/* The status socket's end was placed at >= 10 by its maker, so the
	 * go pipe's dup onto 3 cannot clobber it, nor it the go pipe. */
	if ((rc = posix_spawn_file_actions_adddup2(&fa, p[0], SUP_SPAWN_GO_FD)) != 0 ||
	    (r->status_fd >= 0 && (rc = posix_spawn_file_actions_adddup2(
					   &fa, r->status_fd, SUP_SPAWN_STATUS_FD)) != 0) ||
	    (rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) != 0) {
		rc = -rc;
		snprintf(err, errlen, "posix_spawn_file_actions: %s", strerror(-rc));
		goto out;
	}

	if ((rc = posix_spawnattr_init(&at)) != 0) {
		rc = -rc;
		snprintf(err, errlen, "posix_spawnattr_init: %s", strerror(-rc));
		goto out;
	}
	at_ok = 1;
	/* The supervisor blocks the signals its signalfd reads and ignores
	 * SIGPIPE; the shim must start with neither. */
	sigemptyset(&none);
	sigemptyset(&def);
	for (i = 0; i < sizeof(defsigs) / sizeof(defsigs[0]); i++)
		sigaddset(&def, defsigs[i]);
	if ((rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
							POSIX_SPAWN_SETSIGDEF)) != 0 ||
	    (rc = posix_spawnattr_setsigmask(&at, &none)) != 0 ||
	    (rc = posix_spawnattr_setsigdefault(&at, &def)) != 0) {
		rc = -rc;
		snprintf(err, errlen, "posix_spawnattr: %s", strerror(-rc));
		goto out;
	}

	if ((rc = posix_spawn(pid, r->shim_path, &fa, &at, argv, envp)) != 0) {
		snprintf(err, errlen, "spawn %s: %s", r->shim_path, strerror(rc));
		rc = -rc;
		*pid = -1;
		goto out;
	}
	*go_fd = p[1];
	p[1] = -1;
	rc = 0;
out:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (at_ok)
		posix_spawnattr_destroy(&at);
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	vec_free_str(argv);
	vec_free_str(envp);
	return rc;
}
