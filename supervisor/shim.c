#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "exitrec.h"
#include "failpoint.h"
#include "log.h"
#include "observe.h"
#include "shim.h"
#include "shim_iso.h"
#include "util.h"

#define SHIM_USAGE "berth-shim [--umask MODE] [--isolate] [--] HOME RUN_ID WORKDIR ARGV0 [ARG...]"

int
shim_parse(int argc, char **argv, struct shim_args *a)
{
	char *end;
	long m;
	int i = 1;

	memset(a, 0, sizeof(*a));
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fprintf(stderr, "usage: " SHIM_USAGE "\n"
				"  started by berth-supervisor with its go pipe on fd 3\n");
		return -1;
	}
	/* Options come before HOME; the job's own arguments are never read. */
	while (i < argc && strncmp(argv[i], "--", 2) == 0) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--isolate") == 0) {
			a->isolate = 1;
			i++;
			continue;
		}
		if (strcmp(argv[i], "--umask") == 0 && i + 1 < argc) {
			errno = 0;
			m = strtol(argv[i + 1], &end, 8);
			if (errno != 0 || end == argv[i + 1] || *end != '\0' || m < 0 || m > 0777) {
				fprintf(stderr, "berth-shim: --umask wants an octal mode, not '%s'\n",
				    argv[i + 1]);
				return -1;
			}
			a->has_umask = 1;
			a->job_umask = (mode_t)m;
			i += 2;
			continue;
		}
		fprintf(stderr, "berth-shim: unknown option %s\nusage: " SHIM_USAGE "\n", argv[i]);
		return -1;
	}
	if (argc - i < 4) {
		fprintf(stderr, "berth-shim: usage: " SHIM_USAGE "\n");
		return -1;
	}
	a->home = argv[i];
	a->run_id = argv[i + 1];
	a->workdir = argv[i + 2];
	a->argv = argv + i + 3;
	a->go_fd = 3;
	return 0;
}

/* Writes why the job could not be executed where the supervisor (or
 * recovery) will read it, and into the job's output so `berth logs` shows it
 * too. */
static void
shim_spawn_error(const char *run_dir, int logfd, const char *reason)
{
	char path[PATH_MAX], line[PATH_MAX + 600];
	int n;

	log_error("%s", reason);
	n = snprintf(line, sizeof(line), "%s\n", reason);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	if (logfd != -1) {
		char hdr[sizeof(line) + 16];
		int m = snprintf(hdr, sizeof(hdr), "berth-shim: %s", line);

		if (m > 0 && write(logfd, hdr, (size_t)m) < 0)
			log_warn("write output.log: %s", strerror(errno));
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/spawn_error", run_dir) >= sizeof(path))
		return;
	if (file_write_atomic(path, line, (size_t)n) < 0)
		log_error("cannot record spawn error in %s", path);
}

/* Reads one /proc/<pid>/stat: state and process group. The comm field may
 * hold spaces and ')', so parsing starts after the last ')'. */
static int
shim_proc_stat(const char *pid, char *state, pid_t *pgrp)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, ppid, pg;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	if (sscanf(p + 1, " %c %d %d", state, &ppid, &pg) != 3)
		return -1;
	*pgrp = pg;
	return 0;
}

int
shim_kill_stragglers(pid_t pgid)
{
	pid_t self = getpid(), r;
	int total = 0, round, sub = 0;

	/*
	 * The common case, without reading /proc: a shim is its session's
	 * leader and a child subreaper. Every other process of its group is in
	 * its session, so it descends from the shim, and while the shim lives
	 * an orphan among them is reparented to the shim (or to a living
	 * subreaper below it, itself a descendant). So once the shim has no
	 * child left, not even one to reap, its group holds only the shim.
	 */
	if (pgid == self && getsid(0) == self && prctl(PR_GET_CHILD_SUBREAPER, &sub) == 0 &&
	    sub) {
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r == -1 && errno == ECHILD)
			return 0;
	}

	/*
	 * kill(-pgid, SIGKILL) would kill the shim too, which is itself in
	 * the group. Instead, each process of the group is killed by pid. As
	 * a child subreaper the shim inherits the job's orphans and reaps
	 * them here, so a killed straggler does not linger as a zombie that a
	 * later round would count again. A straggler forking while we look
	 * is found by the next round.
	 */
	for (round = 0; round < 200; round++) {
		struct dirent *de;
		DIR *d;
		int found = 0;

		if ((d = opendir("/proc")) == NULL) {
			log_error("opendir /proc: %s", strerror(errno));
			return total;
		}
		while ((de = readdir(d)) != NULL) {
			char state;
			pid_t pg, pid;

			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			pid = (pid_t)strtol(de->d_name, NULL, 10);
			if (pid == self || shim_proc_stat(de->d_name, &state, &pg) == -1)
				continue;
			if (pg != pgid || state == 'Z' || state == 'X')
				continue;
			found++;
			if (kill(pid, SIGKILL) == 0)
				total++;
		}
		closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (found == 0)
			break;
		/* Give the killed a moment to die before looking again. */
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	return total;
}

/* In the job's child, between fork and exec: report why it could not get
 * as far as executing the job over the close-on-exec pipe, and exit. */
static void __attribute__((noreturn))
shim_child_fail(int errfd, int code, const char *what, const char *arg, int err)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s %s: %s", what, arg, strerror(err));

	if (n > 0 && write(errfd, buf, (size_t)n) < 0)
		_exit(code);
	_exit(code);
}

static void __attribute__((noreturn))
shim_child(const struct shim_args *a, const struct shim_iso *iso, const char *exe, pid_t shim,
	   int logfd, int errfd)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD};
	char why[PATH_MAX * 2 + 256];
	sigset_t none;
	size_t i;
	int null;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The job dies with its shim. If the shim is already gone, the
	 * death signal was set too late to fire: leave at once. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != shim)
		_exit(SHIM_EXIT_CANNOT);
	if ((null = open("/dev/null", O_RDONLY)) == -1)
		shim_child_fail(errfd, SHIM_EXIT_CANNOT, "open", "/dev/null", errno);
	if (dup2(null, 0) == -1 || dup2(logfd, 1) == -1 || dup2(logfd, 2) == -1)
		shim_child_fail(errfd, SHIM_EXIT_CANNOT, "dup2", "output.log", errno);
	if (null > 2)
		close(null);
	/* Isolated or not run at all: a failure is the job's spawn error. */
	if (a->isolate && shim_iso_enter(iso, why, sizeof(why)) == -1) {
		if (write(errfd, why, strlen(why)) < 0)
			_exit(SHIM_EXIT_CANNOT);
		_exit(SHIM_EXIT_CANNOT);
	}
	if (a->has_umask)
		umask(a->job_umask);
	if (a->workdir[0] != '\0' && chdir(a->workdir) == -1)
		shim_child_fail(errfd, SHIM_EXIT_CANNOT, "chdir", a->workdir, errno);
	if (exe[0] != '\0')
		execv(exe, a->argv);
	execvp(a->argv[0], a->argv);
	shim_child_fail(errfd, errno == ENOENT ? SHIM_EXIT_NOTFOUND : SHIM_EXIT_CANNOT, "exec",
			a->argv[0], errno);
}

/*
 * The started marker, runs/<run>/started. Recovery and the supervisor only
 * ask whether it exists (and how old it is), never what it holds, so it is
 * created empty with O_CREAT|O_EXCL, no temp file and no rename: an empty
 * marker is a whole one. The file is fsync'ed, then its directory (POSIX
 * asks for both to make a new name durable). On a journaling file system the
 * file's fsync already commits the directory entry made with it, which
 * leaves the directory's fsync next to nothing to do: one journal commit
 * after the go instead of two (temp file's, then rename's). The directory
 * is opened before the go. After a crash the marker is absent (the job was
 * not forked: the syncs had not returned) or present, empty as always.
 */
struct shim_marker {
	int dir; /* the run directory, opened before the go */
	int err; /* why it could not be, for the spawn error */
	char path[PATH_MAX];
};

static void
shim_marker_prepare(struct shim_marker *m, const char *run_dir)
{
	m->dir = -1;
	m->err = ENAMETOOLONG;
	if ((size_t)snprintf(m->path, sizeof(m->path), "%s/started", run_dir) >= sizeof(m->path))
		return;
	if ((m->dir = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		m->err = errno;
}

/* After the go: from the moment this returns 0 the job counts as executed. */
static int
shim_marker_commit(struct shim_marker *m)
{
	int fd, err;

	if (m->dir == -1) {
		errno = m->err;
		return -1;
	}
	fd = open(m->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	/* Only a shim of this run can have made it: it already says what
	 * this one is about to say; make sure it is durable all the same. */
	if (fd == -1 && errno == EEXIST)
		fd = open(m->path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	if (fsync(fd) == -1) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	return fsync(m->dir);
}

static void
shim_marker_close(struct shim_marker *m)
{
	if (m->dir != -1)
		close(m->dir);
	m->dir = -1;
}

/*
 * Where execvp would find a bare command name, looked up before the go so
 * that the job's child execs it at once instead of trying every PATH entry
 * in turn (on a typical PATH, several failed execve between the go and the
 * job). Only absolute PATH entries are looked at: a relative or empty one
 * means the workdir, which the child has yet to enter, so the lookup gives
 * up there. -1 leaves the search to execvp in the child, which is also what
 * the child falls back to if this path fails to exec, so what runs is
 * always what execvp would run.
 */
static int
shim_which(const char *file, char *buf, size_t n)
{
	const char *path, *p, *e;
	struct stat st;

	if (file[0] == '\0' || strchr(file, '/') != NULL || (path = getenv("PATH")) == NULL)
		return -1;
	for (p = path;; p = e + 1) {
		e = strchrnul(p, ':');
		if (p[0] != '/' || e == p)
			return -1;
		if ((size_t)snprintf(buf, n, "%.*s/%s", (int)(e - p), p, file) < n &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		if (*e == '\0')
			return -1;
	}
}

/* Waits for the go byte. 1: go; 0: the pipe closed without one (the
 * supervisor died before `start` was answered, or `start` was denied). */
static int
shim_wait_go(int fd)
{
	char c;
	ssize_t n;

	for (;;) {
		n = read(fd, &c, 1);
		if (n == 1)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR) {
			log_error("read go pipe: %s", strerror(errno));
			return 0;
		}
	}
}

int
shim_run(const struct shim_args *a)
{
	char run_dir[PATH_MAX], path[PATH_MAX], reason[PATH_MAX + 512], fperr[256], exe[PATH_MAX];
	struct shim_marker mark = {.dir = -1};
	struct shim_iso iso;
	struct exit_record rec;
	struct rusage ru;
	pid_t self = getpid(), job;
	int logfd = -1, errp[2] = {-1, -1}, status, rc = SHIM_EXIT_CANNOT, fp_ok;
	ssize_t n;
	size_t got;

	/* Leader of a new group, so the job and all it starts can be
	 * signalled as one (the supervisor spawns us as a session leader
	 * already; started by hand we make ourselves one). */
	if (getpgrp() != self && setsid() == -1 && setpgid(0, 0) == -1) {
		log_error("setsid: %s", strerror(errno));
		return SHIM_EXIT_CANNOT;
	}
	/* Until the go byte arrives we die with the supervisor: a supervisor
	 * crash between spawn and `start` must leave nothing behind. The go
	 * pipe closing is the authoritative sign (the supervisor holds its
	 * only write end), which also covers a parent that died before this
	 * prctl could take effect. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		log_warn("prctl PDEATHSIG: %s", strerror(errno));
	/* A group-wide SIGTERM (cancel, timeout) is meant for the job: the
	 * shim stays to record how the job ended. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);

	if (home_run_dir(a->home, a->run_id, run_dir, sizeof(run_dir)) == -1) {
		log_error("run dir for %s: name too long", a->run_id);
		return SHIM_EXIT_CANNOT;
	}
	fp_ok = fp_init_env(a->home, fperr, sizeof(fperr)) == 0;
	/* A fired shim failpoint shows in the trace ring (observation only).
	 * Attached before the go: opening the ring is not on the path from
	 * the go to the job's exec. */
	observe_attach_ring(a->home, "shim", a->run_id);
	/* What does not depend on the go is done before it, while the
	 * supervisor's `start` is on its way to the coordinator: the run
	 * directory (and a handle on it for the marker's sync), the lookup of
	 * the executable. Nothing is synced before the go: a sync here would
	 * compete with the coordinator's commit of that very `start`. */
	if (mkdir(run_dir, 0700) == -1 && errno != EEXIST) {
		/* Without the run directory nothing can be recorded; the
		 * supervisor sees the shim gone with no trace of a start. */
		log_error("mkdir %s: %s", run_dir, strerror(errno));
		return SHIM_EXIT_CANNOT;
	}
	shim_marker_prepare(&mark, run_dir);
	if (shim_which(a->argv[0], exe, sizeof(exe)) == -1)
		exe[0] = '\0';

	if (!shim_wait_go(a->go_fd)) {
		log_info("run %s: no go from the supervisor, the job is not run", a->run_id);
		shim_marker_close(&mark);
		return 0;
	}
	if (prctl(PR_SET_PDEATHSIG, 0) == -1)
		log_warn("prctl PDEATHSIG 0: %s", strerror(errno));
	close(a->go_fd);
	/* Orphans of the job come to us, so they can be killed and reaped
	 * when the job is over. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl CHILD_SUBREAPER: %s", strerror(errno));
	unsetenv("BERTH_FAILPOINTS");

	if (!fp_ok) {
		snprintf(reason, sizeof(reason), "shim failpoints: %s", fperr);
		shim_spawn_error(run_dir, -1, reason);
		shim_marker_close(&mark);
		return SHIM_EXIT_CANNOT;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/output.log", run_dir) >= sizeof(path)) {
		log_error("run dir %s: name too long", run_dir);
		shim_marker_close(&mark);
		return SHIM_EXIT_CANNOT;
	}
	if ((logfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(reason, sizeof(reason), "open %s: %s", path, strerror(errno));
		shim_spawn_error(run_dir, -1, reason);
		goto out;
	}
	if (fp_hit("shim.before_exec") == FP_ERROR) {
		shim_spawn_error(run_dir, logfd, "exec: failpoint shim.before_exec");
		goto out;
	}
	if (a->isolate && shim_iso_prepare(&iso, a->home, reason, sizeof(reason)) == -1) {
		shim_spawn_error(run_dir, logfd, reason);
		goto out;
	}
	/* From here on the job counts as executed (recovery reads this). */
	if (shim_marker_commit(&mark) < 0) {
		snprintf(reason, sizeof(reason), "cannot mark %s started: %s", run_dir,
			 strerror(errno));
		shim_spawn_error(run_dir, logfd, reason);
		goto out;
	}
	shim_marker_close(&mark);
	if (pipe2(errp, O_CLOEXEC) == -1) {
		snprintf(reason, sizeof(reason), "pipe: %s", strerror(errno));
		shim_spawn_error(run_dir, logfd, reason);
		goto out;
	}

	memset(&rec, 0, sizeof(rec));
	rec.started_ms = clock_wall_ms();
	if ((job = fork()) == -1) {
		snprintf(reason, sizeof(reason), "fork: %s", strerror(errno));
		shim_spawn_error(run_dir, logfd, reason);
		goto out;
	}
	if (job == 0) {
		close(errp[0]);
		shim_child(a, &iso, exe, self, logfd, errp[1]);
	}
	close(errp[1]);
	errp[1] = -1;

	/* The pipe closes on a successful exec; anything read is why the
	 * job could not be executed. */
	got = 0;
	for (;;) {
		n = read(errp[0], reason + got, sizeof(reason) - 1 - got);
		if (n > 0 && (got += (size_t)n) < sizeof(reason) - 1)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	reason[got] = '\0';

	while (wait4(job, &status, 0, &ru) == -1) {
		if (errno != EINTR) {
			log_error("wait4 %d: %s", (int)job, strerror(errno));
			goto out;
		}
	}
	rec.ended_ms = clock_wall_ms();
	if (WIFEXITED(status)) {
		rec.has_code = 1;
		rec.code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		rec.has_signal = 1;
		rec.signal = WTERMSIG(status);
	}
	rec.utime_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
	rec.stime_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	rec.maxrss_kb = ru.ru_maxrss;
	if (got > 0)
		shim_spawn_error(run_dir, logfd, reason);

	fp_hit("shim.before_exit_record");
	if (exitrec_write(run_dir, &rec) < 0) {
		log_error("run %s: cannot write the exit record", a->run_id);
		goto out;
	}
	fp_hit("shim.after_exit_record");
	rc = 0;
out:
	shim_marker_close(&mark);
	if (errp[0] != -1)
		close(errp[0]);
	if (errp[1] != -1)
		close(errp[1]);
	if (logfd != -1)
		close(logfd);
	shim_kill_stragglers(getpgrp());
	return rc;
}
