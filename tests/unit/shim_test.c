/* berth-shim's life (supervisor/shim.c), with real processes in a temporary
 * BERTH_HOME: nothing runs without the go byte, the exit record says exactly
 * how the job ended, output is captured, an exec or chdir failure is told
 * apart from the job failing, and nothing the job left in its group
 * survives the shim. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "aftercare.h"
#include "exitrec.h"
#include "shim.h"
#include "shim_fixture.h"

/* What the shim left, read as every actor reads it (common/aftercare.c). */
static int
read_rec(const char *dir, struct exit_record *rec)
{
	struct aftercare a;

	if (aftercare_read(dir, &a) < 0 || !a.has_record)
		return a.exit_present ? -EINVAL : -ENOENT;
	*rec = a.rec;
	return 0;
}

static int
started_marker(const char *dir)
{
	struct aftercare a;

	return aftercare_read(dir, &a) == 0 && a.started;
}

static int
file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return 0;
	return access(path, F_OK) == 0;
}

/* How many entries dir holds, "." and ".." aside. */
static int
dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static int
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The exit code is recorded exactly, with times, and output is captured. */
static void
test_exit_code_and_output(void **state)
{
	char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct shim_proc p;
	struct exit_record rec;
	char buf[256];

	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_true(rec.has_code);
	assert_false(rec.has_signal);
	assert_int_equal(rec.code, 3);
	assert_true(rec.started_ms > 0);
	assert_true(rec.ended_ms >= rec.started_ms);
	assert_int_equal(started_marker(p.dir), 1);
	file_read(p.dir, "output.log", buf, sizeof(buf));
	assert_string_equal(buf, "out\nerr\n");
	assert_false(file_exists(p.dir, "spawn_error"));
}

/* A job killed by a signal is recorded as that signal, not an exit code. */
static void
test_signal_recorded(void **state)
{
	char *argv[] = { "sh", "-c", "kill -9 $$", NULL };
	struct shim_proc p;
	struct exit_record rec;

	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_true(rec.has_signal);
	assert_false(rec.has_code);
	assert_int_equal(rec.signal, 9);
}

/* Without the go byte nothing executes and nothing is recorded. */
static void
test_no_go_runs_nothing(void **state)
{
	char marker[PATH_MAX];
	char *argv[] = { "touch", marker, NULL };
	struct shim_proc p;

	snprintf(marker, sizeof(marker), "%s/touched", home);
	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 0), 0);
	assert_int_equal(access(marker, F_OK), -1);
	assert_int_equal(started_marker(p.dir), 0);
	assert_false(file_exists(p.dir, "exit"));
	assert_false(file_exists(p.dir, "output.log"));
}

/* The started marker is made at the go, empty (its existence is the fact;
 * recovery only stats it), with no temp file left beside it. */
static void
test_marker_empty_at_go(void **state)
{
	char *argv[] = { "true", NULL };
	char path[PATH_MAX + 16];
	struct shim_proc p;
	struct timespec go;
	struct stat st;

	shim_start(&p, "", argv);
	/* File times come from the coarse clock, hence that clock here. */
	assert_int_equal(clock_gettime(CLOCK_REALTIME_COARSE, &go), 0);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(started_marker(p.dir), 1);
	snprintf(path, sizeof(path), "%s/started", p.dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_false(ts_before(&st.st_mtim, &go));
	assert_int_equal(dir_entries(p.dir), 3); /* started, output.log, exit */
}

/* A started marker already there (only a shim of the same run could have
 * made it) does not stop the job: it is synced and the job runs. */
static void
test_marker_already_there(void **state)
{
	char *argv[] = { "sh", "-c", "echo ran", NULL };
	char dir[PATH_MAX], path[PATH_MAX + 32], buf[64];
	struct exit_record rec;
	struct shim_proc p;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/runs/run%d", home, runno + 1);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/started", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	shim_start(&p, "", argv);
	assert_string_equal(p.dir, dir);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_int_equal(rec.code, 0);
	assert_int_equal(started_marker(p.dir), 1);
	file_read(p.dir, "output.log", buf, sizeof(buf));
	assert_string_equal(buf, "ran\n");
}

/* The executable is looked up in PATH before the go, but what runs is what
 * execvp would run: the first match in PATH order, a relative PATH entry
 * taken from the workdir, and a script without `#!` run by sh. */
static void
test_path_lookup_as_execvp(void **state)
{
	char wd[PATH_MAX], a[PATH_MAX], b[PATH_MAX], path[3 * PATH_MAX + 64], buf[128];
	char *argv[] = { "berth-shim-test-cmd", NULL };
	const char *old = getenv("PATH");
	char *saved = strdup(old != NULL ? old : "/usr/bin:/bin");
	struct shim_proc p;
	FILE *f;
	int i;

	snprintf(wd, sizeof(wd), "%s/wd", home);
	snprintf(a, sizeof(a), "%s/wd/rel", home);
	snprintf(b, sizeof(b), "%s/abs", home);
	assert_int_equal(mkdir(wd, 0700), 0);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	/* Same name in both; neither has a #! line. */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/berth-shim-test-cmd", i == 0 ? a : b);
		assert_non_null(f = fopen(path, "w"));
		fprintf(f, "echo %s\n", i == 0 ? "relative" : "absolute");
		fclose(f);
		assert_int_equal(chmod(path, 0755), 0);
	}

	/* An absolute entry first: it wins. */
	snprintf(path, sizeof(path), "%s:rel:%s", b, saved);
	setenv("PATH", path, 1);
	shim_start(&p, wd, argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	file_read(p.dir, "output.log", buf, sizeof(buf));
	assert_string_equal(buf, "absolute\n");

	/* A relative entry first: it is looked up in the workdir. */
	snprintf(path, sizeof(path), "rel:%s:%s", b, saved);
	setenv("PATH", path, 1);
	shim_start(&p, wd, argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	file_read(p.dir, "output.log", buf, sizeof(buf));
	assert_string_equal(buf, "relative\n");

	setenv("PATH", saved, 1);
	free(saved);
}

/* A missing executable: exit 127, the reason in spawn_error and the log. */
static void
test_exec_failure_reported(void **state)
{
	char *argv[] = { "/nonexistent/berth-no-such-command", "x", NULL };
	struct shim_proc p;
	struct exit_record rec;
	char buf[512];

	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_true(rec.has_code);
	assert_int_equal(rec.code, SHIM_EXIT_NOTFOUND);
	file_read(p.dir, "spawn_error", buf, sizeof(buf));
	assert_non_null(strstr(buf, "exec /nonexistent/berth-no-such-command"));
	assert_non_null(strstr(buf, "No such file or directory"));
	file_read(p.dir, "output.log", buf, sizeof(buf));
	assert_non_null(strstr(buf, "berth-no-such-command"));
}

/* A workdir that does not exist: exit 126 and a chdir reason; the job
 * never ran. */
static void
test_chdir_failure_reported(void **state)
{
	char marker[PATH_MAX];
	char *argv[] = { "touch", marker, NULL };
	struct shim_proc p;
	struct exit_record rec;
	char buf[512];

	snprintf(marker, sizeof(marker), "%s/touched-chdir", home);
	shim_start(&p, "/nonexistent/workdir", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_int_equal(rec.code, SHIM_EXIT_CANNOT);
	file_read(p.dir, "spawn_error", buf, sizeof(buf));
	assert_non_null(strstr(buf, "chdir /nonexistent/workdir"));
	assert_int_equal(access(marker, F_OK), -1);
}

/* The job runs in its workdir, with the failpoint settings removed. */
static void
test_workdir_and_env(void **state)
{
	char *argv[] = { "sh", "-c", "pwd; echo \"fp=${BERTH_FAILPOINTS-unset}\"", NULL };
	struct shim_proc p;
	char buf[PATH_MAX + 64], want[PATH_MAX + 64];

	setenv("BERTH_FAILPOINTS", "", 1);
	shim_start(&p, home, argv);
	unsetenv("BERTH_FAILPOINTS");
	assert_int_equal(shim_finish(&p, 1), 0);
	file_read(p.dir, "output.log", buf, sizeof(buf));
	snprintf(want, sizeof(want), "%s\nfp=unset\n", home);
	assert_string_equal(buf, want);
}

static int
pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	/* A zombie is dead for our purpose. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[2] != 'Z';
}

/* A grandchild left running in the group is killed before the shim exits;
 * so is one started detached in the background. */
static void
test_stragglers_killed(void **state)
{
	char script[PATH_MAX + 128];
	char *argv[] = { "sh", "-c", script, NULL };
	struct shim_proc p;
	struct exit_record rec;
	char buf[128];
	pid_t gc1, gc2;

	snprintf(script, sizeof(script),
		 "sleep 300 & echo $! > %s/gc1; (sleep 301 & echo $! > %s/gc2); exit 0", home,
		 home);
	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_int_equal(rec.code, 0);
	file_read(home, "gc1", buf, sizeof(buf));
	gc1 = (pid_t)atoi(buf);
	assert_true(gc1 > 0);
	assert_false(pid_alive(gc1));
	file_read(home, "gc2", buf, sizeof(buf));
	gc2 = (pid_t)atoi(buf);
	assert_true(gc2 > 0);
	assert_false(pid_alive(gc2));
}

/* As a shim is: a session leader and child subreaper. With no child left
 * there is nobody to end (no /proc scan needed); then a child in the
 * session, its child orphaned to us, and a grandchild that left the session
 * with setsid (its parent still alive) are all ended, and counted once. */
static void
test_end_descendants(void **state)
{
	pid_t leader = fork();
	int status;

	(void)state;
	assert_true(leader >= 0);
	if (leader == 0) {
		int fds[2], n0, n1;
		pid_t a, b = 0, c = 0, got[2];

		if (setsid() == -1 || prctl(PR_SET_CHILD_SUBREAPER, 1) == -1 || pipe(fds) == -1)
			_exit(2);
		n0 = shim_end_descendants();
		if ((a = fork()) == 0) {
			if ((b = fork()) == 0) {
				pause();
				_exit(0);
			}
			if ((c = fork()) == 0) {
				if (setsid() == -1)
					_exit(5);
				pause();
				_exit(0);
			}
			got[0] = b;
			got[1] = c;
			if (write(fds[1], got, sizeof(got)) != (ssize_t)sizeof(got))
				_exit(3);
			pause(); /* a stays: c's parent is alive, outside c's session */
			_exit(0);
		}
		if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got))
			_exit(4);
		b = got[0];
		c = got[1];
		/* Until c has left the session. */
		while (getsid(c) == getpid())
			usleep(1000);
		n1 = shim_end_descendants();
		if (n0 != 0 || n1 != 3 || kill(a, 0) == 0 || kill(b, 0) == 0 || kill(c, 0) == 0)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void
test_parse(void **state)
{
	char *ok[] = { "berth-shim", "/h", "r1", "/w", "true", "x", NULL };
	char *bad[] = { "berth-shim", "/h", "r1", "/w", NULL };
	struct shim_args a;

	assert_int_equal(shim_parse(6, ok, &a), 0);
	assert_string_equal(a.home, "/h");
	assert_string_equal(a.run_id, "r1");
	assert_string_equal(a.workdir, "/w");
	assert_string_equal(a.argv[0], "true");
	assert_string_equal(a.argv[1], "x");
	assert_null(a.argv[2]);
	assert_int_equal(a.go_fd, 3);
	assert_int_equal(a.has_umask, 0);
	assert_int_equal(shim_parse(4, bad, &a), -1);
}

/* The supervisor's form: options, "--", then the positions as before. The
 * job's own arguments are never taken for options. */
static void
test_parse_options(void **state)
{
	char *ok[] = {
		"berth-shim", "--umask", "022", "--", "/h", "r1", "/w", "ls", "--umask", NULL
	};
	char *iso[] = { "berth-shim", "--isolate", "--umask", "077", "--",
			"/h",         "r1",        "/w",      "x",   NULL };
	char *badmask[] = { "berth-shim", "--umask", "9", "--", "/h", "r1", "/w", "true", NULL };
	char *unknown[] = { "berth-shim", "--what", "/h", "r1", "/w", "true", NULL };
	struct shim_args a;

	assert_int_equal(shim_parse(9, ok, &a), 0);
	assert_int_equal(a.has_umask, 1);
	assert_int_equal(a.job_umask, 022);
	assert_string_equal(a.home, "/h");
	assert_string_equal(a.argv[0], "ls");
	assert_string_equal(a.argv[1], "--umask");
	assert_int_equal(a.isolate, 0);
	assert_int_equal(shim_parse(9, iso, &a), 0);
	assert_int_equal(a.isolate, 1);
	assert_int_equal(a.job_umask, 077);
	assert_string_equal(a.argv[0], "x");
	assert_int_equal(shim_parse(8, badmask, &a), -1);
	assert_int_equal(shim_parse(6, unknown, &a), -1);
}

/* The shim runs under 077; the job gets the umask it was given. */
static void
test_job_umask(void **state)
{
	struct shim_proc p;
	char *argv[] = { "sh", "-c", "umask", NULL };
	char path[PATH_MAX + 16], buf[32];
	mode_t old = umask(077);
	int fd;

	ssize_t n;

	shim_start_with(&p, (struct shim_args){ .home = home,
						.workdir = "",
						.argv = argv,
						.has_umask = 1,
						.job_umask = 027 });
	assert_int_equal(shim_finish(&p, 1), 0);
	umask(old);
	snprintf(path, sizeof(path), "%s/output.log", p.dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "0027\n");
}

/* A status socket as the supervisor makes one (SOCK_SEQPACKET, the
 * reader's end with SO_PASSCRED). sv[0]: ours; sv[1]: the shim's. */
static void
status_pair(int sv[2])
{
	int on = 1;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
}

/* One status message from the socket, and the pid the kernel says sent it. */
static void
status_recv(int fd, char *id, size_t idlen, struct exit_record *rec, int *durable, pid_t *from)
{
	char buf[EXITREC_STATUS_MAX], cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	assert_true((n = recvmsg(fd, &mh, 0)) > 0);
	*from = 0;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
			*from = ((struct ucred *)(void *)CMSG_DATA(c))->pid;
	assert_int_equal(exitrec_status_parse(buf, (size_t)n, id, idlen, rec, durable), 0);
}

/* The end goes to the supervisor too, from the shim itself (the kernel
 * says so), and the reserved record holds the same. */
static void
test_status_to_supervisor(void **state)
{
	char *argv[] = { "sh", "-c", "exit 4", NULL };
	struct exit_record rec, onfile;
	struct shim_proc p;
	char id[64];
	int sv[2], durable;
	pid_t from;

	status_pair(sv);
	shim_start_with(&p,
			(struct shim_args){
				.home = home, .workdir = "", .argv = argv, .status_fd = sv[1] });
	close(sv[1]);
	assert_int_equal(shim_finish(&p, 1), 0);
	status_recv(sv[0], id, sizeof(id), &rec, &durable, &from);
	close(sv[0]);
	assert_string_equal(id, p.run);
	assert_int_equal(from, p.pid);
	assert_int_equal(durable, 1);
	assert_true(rec.has_code);
	assert_int_equal(rec.code, 4);
	assert_int_equal(read_rec(p.dir, &onfile), 0);
	assert_int_equal(onfile.code, 4);
	assert_int_equal(onfile.ended_ms, rec.ended_ms);
}

/* With no reservation and a write that fails, the status still reaches
 * the supervisor, saying the record is not on disk; the shim stays and
 * writes it once it can. */
static void
test_status_when_record_fails(void **state)
{
	char *argv[] = { "sh", "-c", "exit 5", NULL };
	struct exit_record rec;
	struct shim_proc p;
	char id[64];
	int sv[2], durable;
	pid_t from;

	status_pair(sv);
	setenv("BERTH_FAILPOINTS", "shim.reserve_exit=error;shim.before_exit_record=error", 1);
	shim_start_with(&p,
			(struct shim_args){
				.home = home, .workdir = "", .argv = argv, .status_fd = sv[1] });
	unsetenv("BERTH_FAILPOINTS");
	close(sv[1]);
	assert_int_equal(write(p.go, "g", 1), 1);
	status_recv(sv[0], id, sizeof(id), &rec, &durable, &from);
	assert_int_equal(durable, 0);
	assert_int_equal(rec.code, 5);
	assert_int_equal(rec.disk_full, 1);
	assert_int_equal(shim_finish(&p, 0), 0);
	close(sv[0]);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_int_equal(rec.code, 5);
}

/* The job leads a group of its own: a SIGKILL of that group (a stop after
 * its grace) leaves the shim, which records the signal. */
static void
test_group_kill_keeps_the_facts(void **state)
{
	char script[PATH_MAX + 64];
	char *argv[] = { "sh", "-c", script, NULL };
	struct exit_record rec;
	struct shim_proc p;
	char buf[64];
	pid_t job;
	int i;

	snprintf(script, sizeof(script), "trap '' TERM; echo $$ > %s/job.pid; sleep 300", home);
	shim_start(&p, "", argv);
	assert_int_equal(write(p.go, "g", 1), 1);
	for (i = 0; i < 2000 && !file_exists(home, "job.pid"); i++)
		usleep(5000);
	usleep(20000);
	file_read(home, "job.pid", buf, sizeof(buf));
	job = (pid_t)atoi(buf);
	assert_true(job > 1);
	assert_int_equal(getpgid(job), job);
	assert_true(getpgid(p.pid) != job);
	assert_int_equal(kill(-job, SIGTERM), 0); /* ignored by the job */
	assert_int_equal(kill(-job, SIGKILL), 0);
	assert_int_equal(shim_finish(&p, 0), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_true(rec.has_signal);
	assert_int_equal(rec.signal, SIGKILL);
}

/* Descendants that left the session (setsid, env -i setsid) are ended when
 * the job is over, and counted in the record. */
static void
test_setsid_descendants_ended(void **state)
{
	char script[2 * PATH_MAX + 256];
	char *argv[] = { "sh", "-c", script, NULL };
	struct exit_record rec;
	struct shim_proc p;
	char buf[64];
	pid_t a, b;

	snprintf(script, sizeof(script),
		 "setsid sh -c 'echo $$ > %s/ss1; exec sleep 300' & "
		 "env -i setsid sh -c 'echo $$ > %s/ss2; exec sleep 301' & "
		 "while [ ! -s %s/ss1 ] || [ ! -s %s/ss2 ]; do sleep 0.01; done; exit 0",
		 home, home, home, home);
	shim_start(&p, "", argv);
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(read_rec(p.dir, &rec), 0);
	assert_int_equal(rec.code, 0);
	file_read(home, "ss1", buf, sizeof(buf));
	a = (pid_t)atoi(buf);
	file_read(home, "ss2", buf, sizeof(buf));
	b = (pid_t)atoi(buf);
	assert_true(a > 1 && b > 1);
	assert_false(pid_alive(a));
	assert_false(pid_alive(b));
	assert_true(rec.stragglers >= 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code_and_output),
		cmocka_unit_test(test_signal_recorded),
		cmocka_unit_test(test_no_go_runs_nothing),
		cmocka_unit_test(test_marker_empty_at_go),
		cmocka_unit_test(test_marker_already_there),
		cmocka_unit_test(test_path_lookup_as_execvp),
		cmocka_unit_test(test_exec_failure_reported),
		cmocka_unit_test(test_chdir_failure_reported),
		cmocka_unit_test(test_workdir_and_env),
		cmocka_unit_test(test_stragglers_killed),
		cmocka_unit_test(test_end_descendants),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_options),
		cmocka_unit_test(test_job_umask),
		cmocka_unit_test(test_status_to_supervisor),
		cmocka_unit_test(test_status_when_record_fails),
		cmocka_unit_test(test_group_kill_keeps_the_facts),
		cmocka_unit_test(test_setsid_descendants_ended),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
