/* Spawning the shim (supervisor/sup_spawn.c): the argument and environment
 * layout the shim relies on, and what posix_spawn hands the shim: its go
 * pipe on fd 3, a new session, no blocked or ignored signals, stdin from
 * /dev/null. A shell script stands in for berth-shim and reports what it
 * was given. */
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sup_spawn.h"
#include "vec.h"

static char *job_argv[] = { "sh", "-c", "echo $BERTH_RUN_ID", NULL };
static char *ticket_env[] = { "COLOR=blue", "PATH=/ticket/bin", "BERTH_TOKEN=forged",
			      "BERTH_FAILPOINTS=shim.before_exec=crash", "NOEQUALS" };

static void
fill_req(struct sup_spawn_req *r, const char *home, const char *shim)
{
	memset(r, 0, sizeof(*r));
	r->shim_path = shim;
	r->home = home;
	r->run_id = "0123456789abcdef0123456789abcdef";
	r->workdir = "/tmp";
	r->argv = job_argv;
	r->argc = 3;
	r->ticket_env = ticket_env;
	r->nenv = 5;
	r->token = "tok";
	r->socket_url = "ipc:///h/coordinator.sock";
	r->job_umask = 022;
	r->status_fd = -1;
}

static size_t
count(char **v)
{
	size_t n = 0;

	while (v[n] != NULL)
		n++;
	return n;
}

/* berth-shim --umask MODE -- HOME RUN_ID WORKDIR ARGV0 [ARG...] */
static void
test_argv_layout(void **state)
{
	struct sup_spawn_req r;
	char **a;

	fill_req(&r, "/h", "/bin/berth-shim");
	a = sup_spawn_argv(&r);
	assert_non_null(a);
	assert_int_equal(count(a), 10);
	assert_string_equal(a[0], "/bin/berth-shim");
	assert_string_equal(a[1], "--umask");
	assert_string_equal(a[2], "022");
	assert_string_equal(a[3], "--");
	assert_string_equal(a[4], "/h");
	assert_string_equal(a[5], r.run_id);
	assert_string_equal(a[6], "/tmp");
	assert_string_equal(a[7], "sh");
	assert_string_equal(a[8], "-c");
	assert_string_equal(a[9], "echo $BERTH_RUN_ID");
	vec_free_str(a);

	/* No workdir: an empty argument, so the positions never shift. */
	r.workdir = NULL;
	a = sup_spawn_argv(&r);
	assert_non_null(a);
	assert_string_equal(a[6], "");
	assert_string_equal(a[7], "sh");
	vec_free_str(a);

	/* Isolated: one more option before "--". */
	r.isolate = 1;
	a = sup_spawn_argv(&r);
	assert_non_null(a);
	assert_string_equal(a[3], "--isolate");
	assert_string_equal(a[4], "--");
	assert_string_equal(a[5], "/h");
	vec_free_str(a);
	r.isolate = 0;

	/* A status socket: --status-fd 4 before "--". */
	r.status_fd = 10;
	a = sup_spawn_argv(&r);
	assert_non_null(a);
	assert_string_equal(a[3], "--status-fd");
	assert_string_equal(a[4], "4");
	assert_string_equal(a[5], "--");
	vec_free_str(a);
	r.status_fd = -1;

	/* No command, no spawn. */
	r.argc = 0;
	assert_null(sup_spawn_argv(&r));
}

/* The ticket's environment, then berth's own variables; failpoint settings
 * never reach the job, and nothing of the supervisor's own environment
 * does (a secret of whoever started the group). */
static void
test_env_layers(void **state)
{
	struct sup_spawn_req r;
	char **e;
	size_t i, paths = 0;

	setenv("SUPERVISOR_SECRET", "s3cret", 1);
	fill_req(&r, "/h", "/bin/berth-shim");
	e = sup_spawn_env(&r);
	assert_non_null(e);
	assert_string_equal(sup_spawn_getenv(e, "PATH"), "/ticket/bin");
	assert_string_equal(sup_spawn_getenv(e, "COLOR"), "blue");
	assert_null(sup_spawn_getenv(e, "HOME"));
	assert_null(sup_spawn_getenv(e, "SUPERVISOR_SECRET"));
	assert_string_equal(sup_spawn_getenv(e, "BERTH_RUN_ID"), r.run_id);
	assert_string_equal(sup_spawn_getenv(e, "BERTH_TOKEN"), "tok");
	assert_string_equal(sup_spawn_getenv(e, "BERTH_SOCKET"), "ipc:///h/coordinator.sock");
	assert_string_equal(sup_spawn_getenv(e, "BERTH_HOME"), "/h");
	assert_null(sup_spawn_getenv(e, "BERTH_FAILPOINTS"));
	assert_null(sup_spawn_getenv(e, "NOEQUALS"));
	for (i = 0; e[i] != NULL; i++)
		paths += strncmp(e[i], "PATH=", 5) == 0;
	assert_int_equal(paths, 1);
	/* The ticket's variables and berth's four, nothing else. */
	assert_int_equal(count(e), 6);
	vec_free_str(e);
	unsetenv("SUPERVISOR_SECRET");

	/* The shim's own failpoints travel as BERTH_FAILPOINTS (it removes
	 * them before executing the job). */
	r.shim_failpoints = "shim.before_exit_record=crash";
	e = sup_spawn_env(&r);
	assert_non_null(e);
	assert_string_equal(sup_spawn_getenv(e, "BERTH_FAILPOINTS"),
			    "shim.before_exit_record=crash");
	assert_null(sup_spawn_getenv(e, "HOME"));
	vec_free_str(e);
}

static const char fake_shim[] =
	"#!/bin/sh\n"
	/* HOME follows "--" */
	"for a in \"$@\"; do [ \"$p\" = -- ] && { d=$a; break; }; p=$a; done\n"
	"PATH=/usr/bin:/bin\n"
	"{\n"
	"  echo \"argc=$#\"\n"
	"  for a in \"$@\"; do echo \"arg=$a\"; done\n"
	"  echo \"pid=$$\"\n"
	"  echo \"stdin=$(readlink /proc/$$/fd/0)\"\n"
	"  echo \"fd4=$(readlink /proc/$$/fd/4)\"\n"
	/* Builtins only: a shell blocks signals around its forks. */
	"  while read -r k v; do case $k in SigBlk:|SigIgn:) printf '%s\\t%s\\n' \"$k\" \"$v\";; esac; done"
	" < /proc/$$/status\n"
	"  read -r st < /proc/$$/stat\n"
	"  set -- ${st##*) }\n"
	"  echo \"pgrp=$3\"\n"
	"  echo \"sid=$4\"\n"
	"  env | sed 's/^/env:/'\n"
	"  echo \"go=$(head -c 1 <&3)\"\n"
	"} > \"$d/out.tmp\"\n"
	"mv \"$d/out.tmp\" \"$d/out\"\n";

static void
write_fake_shim(const char *dir, char *path, size_t n)
{
	FILE *f;

	/* No report from an earlier test may be mistaken for this one's. */
	snprintf(path, n, "%s/out", dir);
	unlink(path);
	snprintf(path, n, "%s/fake-shim", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(fake_shim, f);
	fclose(f);
	assert_int_equal(chmod(path, 0700), 0);
}

/* Reads dir/out once the fake shim has written it (generous deadline). */
static char *
wait_report(const char *dir, pid_t pid)
{
	char path[PATH_MAX];
	static char buf[65536];
	int i, status;
	FILE *f = NULL;
	size_t n;

	snprintf(path, sizeof(path), "%s/out", dir);
	for (i = 0; i < 3000 && (f = fopen(path, "r")) == NULL; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return buf;
}

static int
has_line(const char *buf, const char *line)
{
	size_t len = strlen(line);
	const char *p = buf;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == buf || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

/* Prints the fake shim's report when an expected line is missing. */
#define assert_line(rep, line)                                         \
	do {                                                           \
		if (!has_line(rep, line))                              \
			fail_msg("no line \"%s\" in:\n%s", line, rep); \
	} while (0)

static char tmpdir[] = "/tmp/sup_spawn_test.XXXXXX";

static int
setup(void **state)
{
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* What the shim is handed: the go pipe on fd 3 (the byte arrives), its own
 * session and group, no signal blocked or SIGPIPE ignored although the
 * supervisor has both, stdin from /dev/null, and the job's environment. */
static void
test_spawn_hands_shim(void **state)
{
	struct sup_spawn_req r;
	char shim[PATH_MAX], err[256], want[64], *rep, *sigign;
	sigset_t blk, old;
	pid_t pid;
	int go;

	write_fake_shim(tmpdir, shim, sizeof(shim));
	fill_req(&r, tmpdir, shim);
	sigemptyset(&blk);
	sigaddset(&blk, SIGCHLD);
	sigaddset(&blk, SIGTERM);
	sigprocmask(SIG_BLOCK, &blk, &old);
	signal(SIGPIPE, SIG_IGN);
	/* What the supervisor itself was started with stays its own. */
	setenv("SUPERVISOR_SECRET", "s3cret", 1);

	assert_int_equal(sup_spawn_shim(&r, &pid, &go, err, sizeof(err)), 0);
	unsetenv("SUPERVISOR_SECRET");
	assert_true(pid > 0);
	assert_true(go > 2);
	/* The write end is ours alone: close-on-exec. */
	assert_true(fcntl(go, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	rep = wait_report(tmpdir, pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);

	assert_line(rep, "argc=9");
	assert_false(has_line(rep, "arg=--status-fd"));
	assert_line(rep, "arg=--umask");
	assert_line(rep, "arg=022");
	assert_line(rep, "arg=0123456789abcdef0123456789abcdef");
	assert_line(rep, "arg=/tmp");
	assert_line(rep, "arg=echo $BERTH_RUN_ID");
	assert_line(rep, "go=g");
	assert_line(rep, "stdin=/dev/null");
	assert_line(rep, "SigBlk:\t0000000000000000");
	/* SIGPIPE (bit 12) is ignored by the supervisor, never by the shim. */
	sigign = strstr(rep, "SigIgn:\t");
	assert_non_null(sigign);
	assert_int_equal(strtoull(sigign + 8, NULL, 16) & (1ULL << (SIGPIPE - 1)), 0);
	snprintf(want, sizeof(want), "pgrp=%d", (int)pid);
	assert_line(rep, want);
	snprintf(want, sizeof(want), "sid=%d", (int)pid);
	assert_line(rep, want);
	assert_line(rep, "env:BERTH_TOKEN=tok");
	assert_line(rep, "env:COLOR=blue");
	assert_false(has_line(rep, "env:BERTH_FAILPOINTS=shim.before_exec=crash"));
	assert_false(has_line(rep, "env:SUPERVISOR_SECRET=s3cret"));
	unlink(shim);
	snprintf(shim, sizeof(shim), "%s/out", tmpdir);
	unlink(shim);
}

/* The status socket's write end reaches the shim on fd 4, named by
 * --status-fd 4. */
static void
test_spawn_hands_status_socket(void **state)
{
	struct sup_spawn_req r;
	char shim[PATH_MAX], err[256], want[64], *rep;
	struct stat st;
	pid_t pid;
	int go, sv[2], hi;

	write_fake_shim(tmpdir, shim, sizeof(shim));
	fill_req(&r, tmpdir, shim);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_true((hi = fcntl(sv[1], F_DUPFD_CLOEXEC, 10)) >= 10);
	r.status_fd = hi;
	assert_int_equal(sup_spawn_shim(&r, &pid, &go, err, sizeof(err)), 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	rep = wait_report(tmpdir, pid);
	assert_line(rep, "arg=--status-fd");
	assert_line(rep, "arg=4");
	assert_int_equal(fstat(hi, &st), 0);
	snprintf(want, sizeof(want), "fd4=socket:[%lu]", (unsigned long)st.st_ino);
	assert_line(rep, want);
	close(sv[0]);
	close(sv[1]);
	close(hi);
	unlink(shim);
	snprintf(shim, sizeof(shim), "%s/out", tmpdir);
	unlink(shim);
}

/* A supervisor that dies (or closes the pipe without a go) gives the shim
 * end-of-file, never a go byte. */
static void
test_spawn_closed_pipe_is_eof(void **state)
{
	struct sup_spawn_req r;
	char shim[PATH_MAX], err[256], *rep;
	pid_t pid;
	int go;

	write_fake_shim(tmpdir, shim, sizeof(shim));
	fill_req(&r, tmpdir, shim);
	assert_int_equal(sup_spawn_shim(&r, &pid, &go, err, sizeof(err)), 0);
	close(go);
	rep = wait_report(tmpdir, pid);
	assert_line(rep, "go=");
	unlink(shim);
	snprintf(shim, sizeof(shim), "%s/out", tmpdir);
	unlink(shim);
}

/* A shim that cannot be executed is an error with a reason, no process. */
static void
test_spawn_missing_shim(void **state)
{
	struct sup_spawn_req r;
	char shim[PATH_MAX], err[256];
	pid_t pid;
	int go;

	snprintf(shim, sizeof(shim), "%s/no-such-shim", tmpdir);
	fill_req(&r, tmpdir, shim);
	assert_int_equal(sup_spawn_shim(&r, &pid, &go, err, sizeof(err)), -ENOENT);
	assert_int_equal(pid, -1);
	assert_int_equal(go, -1);
	assert_non_null(strstr(err, "no-such-shim"));
	assert_non_null(strstr(err, "No such file"));
}

/* The shim is looked for next to the running executable. */
static void
test_shim_path(void **state)
{
	char path[PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	assert_int_equal(sup_spawn_shim_path(path, sizeof(path)), 0);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	strcat(exe, "/berth-shim");
	assert_string_equal(path, exe);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_argv_layout),
		cmocka_unit_test(test_env_layers),
		cmocka_unit_test(test_spawn_hands_shim),
		cmocka_unit_test(test_spawn_hands_status_socket),
		cmocka_unit_test(test_spawn_closed_pipe_is_eof),
		cmocka_unit_test(test_spawn_missing_shim),
		cmocka_unit_test(test_shim_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
