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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "exitrec.h"
#include "failpoint.h"
#include "handoff.h"
#include "ident.h"
#include "log.h"
#include "observe.h"
#include "shim.h"
#include "shim_iso.h"
#include "util.h"

#define SHIM_USAGE                                                                              \
	"berth-shim [--umask MODE] [--isolate] [--status-fd N] [--] HOME RUN_ID WORKDIR ARGV0 " \
	"[ARG...]\n"                                                                            \
	"       berth-shim --ahead [--umask MODE] [--status-fd N] [--] HOME"

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
		if (strcmp(argv[i], "--ahead") == 0) {
			a->ahead = 1;
			i++;
			continue;
		}
		if (strcmp(argv[i], "--status-fd") == 0 && i + 1 < argc) {
			errno = 0;
			m = strtol(argv[i + 1], &end, 10);
			if (errno != 0 || end == argv[i + 1] || *end != '\0' || m < 3 || m > 1023) {
				fprintf(stderr,
					"berth-shim: --status-fd wants a descriptor >= 3, "
					"not '%s'\n",
					argv[i + 1]);
				return -1;
			}
			a->status_fd = (int)m;
			i += 2;
			continue;
		}
		if (strcmp(argv[i], "--umask") == 0 && i + 1 < argc) {
			errno = 0;
			m = strtol(argv[i + 1], &end, 8);
			if (errno != 0 || end == argv[i + 1] || *end != '\0' || m < 0 || m > 0777) {
				fprintf(stderr,
					"berth-shim: --umask wants an octal mode, not '%s'\n",
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
	if (a->ahead && a->isolate) {
		fprintf(stderr,
			"berth-shim: --isolate comes with the hand-off, not with --ahead\n");
		return -1;
	}
	if (argc - i < (a->ahead ? 1 : 4) || (a->ahead && argc - i > 1)) {
		fprintf(stderr, "berth-shim: usage: " SHIM_USAGE "\n");
		return -1;
	}
	a->go_fd = 3;
	a->home = argv[i];
	if (a->ahead)
		return 0;
	a->run_id = argv[i + 1];
	a->workdir = argv[i + 2];
	a->argv = argv + i + 3;
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
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD };
	char why[PATH_MAX * 2 + 256];
	sigset_t none;
	size_t i;
	int null;

	/* A group of its own: the group is what a stop signals (the reaper,
	 * --kill-jobs), and the shim must outlive a SIGKILL of it to record
	 * how the job ended (DESIGN §6). The shim sets it too, so neither
	 * order of the two calls leaves a window. */
	setpgid(0, 0);
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

/* What one shim keeps from step to step (shim_run). */
struct shim {
	const struct shim_args *a;
	char run_dir[PATH_MAX];
	char exe[PATH_MAX]; /* the job's executable, found before the go ("" : execvp's) */
	struct shim_marker mark;
	struct shim_iso iso;
	int logfd;
	int recfd;       /* the reserved exit record, or -1 */
	int reserve_err; /* why it could not be reserved (errno), else 0 */
	int errp[2];     /* the job's exec-error pipe */
	pid_t job;
	struct exit_record rec;
};

/* Before the go, what does not depend on it (nothing synced: a sync here
 * would compete with the coordinator's commit of that very `start`). -1
 * when nothing can be recorded at all. */
static int
shim_prepare(struct shim *sh)
{
	const struct shim_args *a = sh->a;

	if (home_run_dir(a->home, a->run_id, sh->run_dir, sizeof(sh->run_dir)) == -1) {
		log_error("run dir for %s: name too long", a->run_id);
		return -1;
	}
	if (mkdir(sh->run_dir, 0700) == -1 && errno != EEXIST) {
		/* Without the run directory nothing can be recorded; the
		 * supervisor sees the shim gone with no trace of a start. */
		log_error("mkdir %s: %s", sh->run_dir, strerror(errno));
		return -1;
	}
	shim_marker_prepare(&sh->mark, sh->run_dir);
	if (shim_which(a->argv[0], sh->exe, sizeof(sh->exe)) == -1)
		sh->exe[0] = '\0';
	/* The exit record's space, so that the job's end can be written on a
	 * disk the job filled. Without it (already full) the job still runs:
	 * its end then needs free space, or reaches the supervisor over the
	 * status socket. */
	if (fp_hit("shim.reserve_exit") == FP_ERROR) {
		log_warn("reserve the exit record: failpoint shim.reserve_exit");
		sh->recfd = -ENOSPC;
	} else
		sh->recfd = exitrec_reserve(sh->run_dir);
	if (sh->recfd < 0) {
		sh->reserve_err = -sh->recfd;
		sh->recfd = -1;
	}
	return 0;
}

/* After the go: the output, the started marker, the job forked into its own
 * group. 0 when the job was forked; -1 when it was not (why is its spawn
 * error). */
static int
shim_launch(struct shim *sh)
{
	char path[PATH_MAX], reason[PATH_MAX + 512];
	const struct shim_args *a = sh->a;
	pid_t shim;

	if ((size_t)snprintf(path, sizeof(path), "%s/output.log", sh->run_dir) >= sizeof(path)) {
		log_error("run dir %s: name too long", sh->run_dir);
		return -1;
	}
	if ((sh->logfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(reason, sizeof(reason), "open %s: %s", path, strerror(errno));
		shim_spawn_error(sh->run_dir, -1, reason);
		return -1;
	}
	if (fp_hit("shim.before_exec") == FP_ERROR) {
		shim_spawn_error(sh->run_dir, sh->logfd, "exec: failpoint shim.before_exec");
		return -1;
	}
	if (a->isolate && shim_iso_prepare(&sh->iso, a->home, reason, sizeof(reason)) == -1) {
		shim_spawn_error(sh->run_dir, sh->logfd, reason);
		return -1;
	}
	/* From here on the job counts as executed (recovery reads this). */
	if (shim_marker_commit(&sh->mark) < 0) {
		snprintf(reason, sizeof(reason), "cannot mark %s started: %s", sh->run_dir,
			 strerror(errno));
		shim_spawn_error(sh->run_dir, sh->logfd, reason);
		return -1;
	}
	shim_marker_close(&sh->mark);
	if (pipe2(sh->errp, O_CLOEXEC) == -1) {
		snprintf(reason, sizeof(reason), "pipe: %s", strerror(errno));
		shim_spawn_error(sh->run_dir, sh->logfd, reason);
		return -1;
	}
	sh->rec.started_ms = clock_wall_ms();
	shim = getpid();
	if ((sh->job = fork()) == -1) {
		snprintf(reason, sizeof(reason), "fork: %s", strerror(errno));
		shim_spawn_error(sh->run_dir, sh->logfd, reason);
		return -1;
	}
	if (sh->job == 0) {
		close(sh->errp[0]);
		shim_child(a, &sh->iso, sh->exe, shim, sh->logfd, sh->errp[1]);
	}
	setpgid(sh->job, sh->job);
	close(sh->errp[1]);
	sh->errp[1] = -1;
	return 0;
}

/* 1 when the file system holding fd has no block left for us: the job's
 * writes to its output may have failed. */
static int
shim_fs_full(int fd)
{
	struct statvfs sv;

	if (fd == -1 || fstatvfs(fd, &sv) == -1)
		return 0;
	return (geteuid() == 0 ? sv.f_bfree : sv.f_bavail) == 0;
}

/* Waits for the job: its exit and rusage in sh->rec, and why it could not
 * be executed if it could not. -1 when it cannot be waited for. */
static int
shim_wait(struct shim *sh)
{
	char reason[PATH_MAX + 512];
	struct rusage ru;
	size_t got = 0;
	ssize_t n;
	int status;

	/* The pipe closes on a successful exec; anything read is why the
	 * job could not be executed. */
	for (;;) {
		n = read(sh->errp[0], reason + got, sizeof(reason) - 1 - got);
		if (n > 0 && (got += (size_t)n) < sizeof(reason) - 1)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	reason[got] = '\0';
	while (wait4(sh->job, &status, 0, &ru) == -1) {
		if (errno != EINTR) {
			log_error("wait4 %d: %s", (int)sh->job, strerror(errno));
			return -1;
		}
	}
	sh->rec.ended_ms = clock_wall_ms();
	if (WIFEXITED(status)) {
		sh->rec.has_code = 1;
		sh->rec.code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		sh->rec.has_signal = 1;
		sh->rec.signal = WTERMSIG(status);
	}
	sh->rec.utime_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
	sh->rec.stime_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	sh->rec.maxrss_kb = ru.ru_maxrss;
	if (got > 0)
		shim_spawn_error(sh->run_dir, sh->logfd, reason);
	return 0;
}

/* The record on disk: in its reserved space, else (no reservation, or the
 * overwrite failed) as a new file. 1 when it is durable. */
static int
shim_record_write(struct shim *sh)
{
	if (sh->recfd != -1 && exitrec_commit(sh->recfd, &sh->rec) == 0)
		return 1;
	if (exitrec_write(sh->run_dir, &sh->rec) == 0)
		return 1;
	if (errno == ENOSPC || sh->recfd == -1)
		sh->rec.disk_full = 1;
	return 0;
}

/* The status to the supervisor, on the socket it gave us (--status-fd). A
 * blocking send: a supervisor busy for a moment is waited for (up to the
 * socket's send timeout, which the supervisor sets); a gone one refuses it
 * at once. 1 when sent. */
static int
shim_status_send(struct shim *sh, int durable)
{
	char buf[EXITREC_STATUS_MAX];
	int n;

	if (sh->a->status_fd <= 0)
		return 0;
	if ((n = exitrec_status_format(buf, sh->a->run_id, &sh->rec, durable)) < 0) {
		log_error("run %s: cannot format the status", sh->a->run_id);
		return 0;
	}
	for (;;) {
		if (send(sh->a->status_fd, buf, (size_t)n, MSG_NOSIGNAL) == n)
			return 1;
		if (errno != EINTR)
			break;
	}
	log_warn("run %s: status to the supervisor: %s", sh->a->run_id, strerror(errno));
	return 0;
}

/*
 * The job is over: end what it left, then record its end and tell the
 * supervisor. The status goes to the supervisor whether or not the record
 * reached the disk, saying which: when it did not (the disk is full and
 * there was no reservation, or writing failed), the supervisor checkpoints
 * the exit from the status, and the shim stays, trying again, so that a
 * supervisor that dies before its checkpoint still leaves a live shim
 * behind (recovery readopts the run) that writes the record as soon as it
 * can. A settled run's lingering shim is ended by the reaper.
 */
static void
shim_finish(struct shim *sh)
{
	int durable, delay_ms = 100;

	sh->rec.stragglers = shim_end_descendants();
	sh->rec.disk_full = sh->reserve_err == ENOSPC || shim_fs_full(sh->logfd);
	if (fp_hit("shim.before_exit_record") == FP_ERROR) {
		log_error("run %s: failpoint shim.before_exit_record: the record is not written",
			  sh->a->run_id);
		sh->rec.disk_full = 1;
		durable = 0;
	} else
		durable = shim_record_write(sh);
	fp_hit("shim.after_exit_record");
	shim_status_send(sh, durable);
	while (!durable) {
		nanosleep(&(struct timespec){ delay_ms / 1000, (delay_ms % 1000) * 1000000L },
			  NULL);
		delay_ms = delay_ms < 5000 ? 2 * delay_ms : 10000;
		if ((durable = shim_record_write(sh)) != 0)
			log_info("run %s: exit record written at last", sh->a->run_id);
	}
}

int
shim_run(const struct shim_args *given)
{
	struct shim_args args = *given, *a = &args;
	struct shim sh = {
		.a = a, .mark = { .dir = -1 }, .logfd = -1, .recfd = -1, .errp = { -1, -1 }
	};
	struct handoff ho = { 0 };
	char fperr[256], reason[PATH_MAX + 512];
	pid_t self = getpid();
	int rc = SHIM_EXIT_CANNOT, fp_ok;

	/* Leader of a new session, so the job and all it starts without
	 * leaving the session are found as its members (the supervisor spawns
	 * us as a session leader already; started by hand we make ourselves
	 * one). */
	if (getsid(0) != self && setsid() == -1 && getpgrp() != self && setpgid(0, 0) == -1) {
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
	/* A signal meant for the job (a cancel, a timeout, an operator's kill
	 * of the old layout's shared group) leaves the shim to record it. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* The status socket is the shim's alone, never the job's. */
	if (a->status_fd > 0 && fcntl(a->status_fd, F_SETFD, FD_CLOEXEC) == -1)
		log_warn("status fd %d: %s", a->status_fd, strerror(errno));

	fp_ok = fp_init_env(a->home, fperr, sizeof(fperr)) == 0;
	if (a->ahead) {
		if ((rc = shim_take_handoff(a, &ho)) <= 0) {
			if (rc == 0)
				log_debug("no run for this shim: the job is not run");
			rc = rc == 0 ? 0 : SHIM_EXIT_CANNOT;
			goto out;
		}
		rc = SHIM_EXIT_CANNOT;
		/* The ring and the preparation are on the path to the job
		 * now; the spawn they used to follow is not. */
		observe_attach_ring(a->home, "shim", a->run_id);
		if (shim_prepare(&sh) == -1)
			goto out;
		goto go;
	}
	/* A fired shim failpoint shows in the trace ring (observation only).
	 * Attached before the go: opening the ring is not on the path from
	 * the go to the job's exec. */
	observe_attach_ring(a->home, "shim", a->run_id);
	if (shim_prepare(&sh) == -1)
		return SHIM_EXIT_CANNOT;

	if (!shim_wait_go(a->go_fd)) {
		log_info("run %s: no go from the supervisor, the job is not run", a->run_id);
		if (sh.recfd != -1) {
			char path[PATH_MAX + 8];

			snprintf(path, sizeof(path), "%s/exit", sh.run_dir);
			unlink(path);
		}
		rc = 0;
		goto out;
	}
go:
	if (prctl(PR_SET_PDEATHSIG, 0) == -1)
		log_warn("prctl PDEATHSIG 0: %s", strerror(errno));
	close(a->go_fd);
	/* Orphans of the job come to us, so they can be ended and reaped
	 * when the job is over. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl CHILD_SUBREAPER: %s", strerror(errno));
	unsetenv("BERTH_FAILPOINTS");

	if (!fp_ok) {
		snprintf(reason, sizeof(reason), "shim failpoints: %s", fperr);
		shim_spawn_error(sh.run_dir, -1, reason);
		goto out;
	}
	if (shim_launch(&sh) == -1 || shim_wait(&sh) == -1) {
		shim_end_descendants();
		goto out;
	}
	shim_finish(&sh);
	rc = 0;
out:
	shim_marker_close(&sh.mark);
	if (sh.errp[0] != -1)
		close(sh.errp[0]);
	if (sh.errp[1] != -1)
		close(sh.errp[1]);
	if (sh.logfd != -1)
		close(sh.logfd);
	if (sh.recfd != -1)
		close(sh.recfd);
	handoff_free(&ho);
	return rc;
}
