/* berth-shim's isolation (supervisor/shim_iso.c), with real processes in
 * a temporary BERTH_HOME: an isolated job sees only worker.sock in an
 * empty home, and a failure to isolate never runs the job. Apart from
 * shim_test.c (the shim's life) as shim_iso.c is apart from shim.c; this
 * binary is also the isolated job's probe (`shim_iso_test probe ...`). */
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

/* ------------------------------------------------------------ isolation */

/* A unix socket listening at path (connects succeed on the backlog). */
static int
listen_at(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static const char *
probe_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return r == 0 ? "ok" : strerror(errno);
}

static const char *
probe_open(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd == -1)
		return strerror(errno);
	close(fd);
	return "ok";
}

/*
 * The isolated job's side (this binary, exec'd by the shim as
 * `shim_test probe HOME SHM_NAME`): one line per attempt, what it could
 * see and reach. An attack that works shows as "ok". Its parent is the
 * shim, a process outside the namespaces that sees the real home.
 */
static int
probe(char **argv)
{
	const char *h = argv[2];
	char path[PATH_MAX + 64];
	struct dirent *de;
	DIR *d;

	printf("entries:");
	if ((d = opendir(h)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				printf(" %s", de->d_name);
		closedir(d);
	}
	printf("\n");
	snprintf(path, sizeof(path), "%s/berth.db", h);
	printf("open berth.db: %s\n", probe_open(path));
	snprintf(path, sizeof(path), "%s/runs/other/output.log", h);
	printf("open other output: %s\n", probe_open(path));
	snprintf(path, sizeof(path), "%s/coordinator.sock", h);
	printf("connect coordinator.sock: %s\n", probe_connect(path));
	snprintf(path, sizeof(path), "%s/worker.sock", h);
	printf("connect worker.sock: %s\n", probe_connect(path));
	snprintf(path, sizeof(path), "/proc/%d/root%s/berth.db", (int)getppid(), h);
	printf("open via /proc/shim/root: %s\n", probe_open(path));
	snprintf(path, sizeof(path), "/proc/%d/cwd/.", (int)getppid());
	printf("open via /proc/shim/cwd: %s\n", probe_open(path));
	snprintf(path, sizeof(path), "/proc/%d/fd/1", (int)getppid());
	printf("open via /proc/shim/fd: %s\n", probe_open(path));
	snprintf(path, sizeof(path), "/dev/shm/%s", argv[3]);
	printf("open shm: %s\n", probe_open(path));
	printf("umount home: %s\n", umount2(h, MNT_DETACH) == 0 ? "ok" : strerror(errno));
	snprintf(path, sizeof(path), "%s/planted", h);
	printf("create in home: %s\n",
	       open(path, O_WRONLY | O_CREAT, 0600) >= 0 ? "ok" : strerror(errno));
	printf("uid: %d\n", (int)getuid());
	return 0;
}

static char self_exe[PATH_MAX];

/* 1 when this process may make a user namespace (always as root). */
static int
userns_available(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : 1);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* An isolated job sees an empty home holding only worker.sock, which it
 * can reach; not berth.db, coordinator.sock or another run's output, not
 * through /proc either, nor the group's shared memory; and it cannot take
 * the mounts away. Its output is captured as always. */
static void
test_isolated_job_sees_only_worker_sock(void **state)
{
	char path[PATH_MAX + 64], shm[64], out[4096], *argv[5];
	struct shim_proc p;
	struct exit_record rec;
	int wfd, cfd, fd;

	if (!userns_available())
		skip();
	snprintf(path, sizeof(path), "%s/berth.db", home);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && write(fd, "secret\n", 7) == 7);
	close(fd);
	snprintf(path, sizeof(path), "%s/runs/other", home);
	assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/runs/other/output.log", home);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/coordinator.sock", home);
	cfd = listen_at(path);
	snprintf(path, sizeof(path), "%s/worker.sock", home);
	wfd = listen_at(path);
	snprintf(shm, sizeof(shm), "berth-shim-test-%d", (int)getpid());
	snprintf(path, sizeof(path), "/dev/shm/%s", shm);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	argv[0] = self_exe;
	argv[1] = "probe";
	argv[2] = home;
	argv[3] = shm;
	argv[4] = NULL;
	shim_start_with(
		&p, (struct shim_args){ .home = home, .workdir = "", .argv = argv, .isolate = 1 });
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(exitrec_read(p.dir, &rec), 0);
	assert_true(rec.has_code);
	file_read(p.dir, "output.log", out, sizeof(out));
	assert_int_equal(rec.code, 0);
	if (getenv("SHIM_TEST_SHOW") != NULL)
		fputs(out, stderr);
	if (strstr(out, "entries: worker.sock\n") == NULL ||
	    strstr(out, "open berth.db: No such file or directory\n") == NULL ||
	    strstr(out, "open other output: No such file or directory\n") == NULL ||
	    strstr(out, "connect coordinator.sock: No such file or directory\n") == NULL ||
	    strstr(out, "connect worker.sock: ok\n") == NULL ||
	    strstr(out, "open via /proc/shim/root: Permission denied\n") == NULL ||
	    strstr(out, "open via /proc/shim/cwd: Permission denied\n") == NULL ||
	    strstr(out, "open via /proc/shim/fd: Permission denied\n") == NULL ||
	    strstr(out, "open shm: No such file or directory\n") == NULL ||
	    strstr(out, "umount home: Operation not permitted\n") == NULL ||
	    strstr(out, "create in home: Read-only file system\n") == NULL)
		fail_msg("isolated job saw:\n%s", out);
	unlink(path);
	close(wfd);
	close(cfd);
}

/* A worker.sock that is not a socket (a symlink to berth.db, planted by a
 * job that was not isolated) is not bound: the isolated home is empty. */
static void
test_isolated_home_binds_only_a_socket(void **state)
{
	char path[PATH_MAX + 64], db[PATH_MAX + 64], out[4096], *argv[5];
	struct shim_proc p;
	int fd;

	if (!userns_available())
		skip();
	snprintf(db, sizeof(db), "%s/berth.db", home);
	fd = open(db, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && write(fd, "secret\n", 7) == 7);
	close(fd);
	snprintf(path, sizeof(path), "%s/worker.sock", home);
	unlink(path);
	assert_int_equal(symlink(db, path), 0);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = "ls -A \"$0\"; cat \"$0/worker.sock\" 2>&1 | sed 's/.*: //'";
	argv[3] = home;
	argv[4] = NULL;
	shim_start_with(
		&p, (struct shim_args){ .home = home, .workdir = "", .argv = argv, .isolate = 1 });
	assert_int_equal(shim_finish(&p, 1), 0);
	file_read(p.dir, "output.log", out, sizeof(out));
	unlink(path);
	assert_string_equal(out, "No such file or directory\n");
}

/* Where the namespace cannot be made, the job is never run unisolated: the
 * run's spawn error says why, and the exit record says 126. */
static void
test_isolation_failure_never_runs_job(void **state)
{
	char marker[PATH_MAX], buf[1024];
	char *argv[] = { "touch", marker, NULL };
	struct shim_proc p;
	struct exit_record rec;

	snprintf(marker, sizeof(marker), "%s/ran-unisolated", home);
	setenv("BERTH_FAILPOINTS", "shim.unshare=error", 1);
	shim_start_with(
		&p, (struct shim_args){ .home = home, .workdir = "", .argv = argv, .isolate = 1 });
	unsetenv("BERTH_FAILPOINTS");
	assert_int_equal(shim_finish(&p, 1), 0);
	assert_int_equal(exitrec_read(p.dir, &rec), 0);
	assert_int_equal(rec.code, SHIM_EXIT_CANNOT);
	file_read(p.dir, "spawn_error", buf, sizeof(buf));
	assert_non_null(strstr(buf, "isolation: unshare(CLONE_NEWUSER|CLONE_NEWNS)"));
	assert_non_null(strstr(buf, "unprivileged user namespaces are not available here"));
	assert_non_null(strstr(buf, "the job was not run"));
	assert_int_equal(access(marker, F_OK), -1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isolated_job_sees_only_worker_sock),
		cmocka_unit_test(test_isolated_home_binds_only_a_socket),
		cmocka_unit_test(test_isolation_failure_never_runs_job),
	};

	if (argc >= 4 && strcmp(argv[1], "probe") == 0)
		return probe(argv);
	if (realpath("/proc/self/exe", self_exe) == NULL)
		return 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
