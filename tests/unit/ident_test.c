/* ident: /proc/<pid>/stat parsing and identity checks against a fake proc
 * tree (ident_set_proc_root), plus group signalling of real children. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ident.h"

#define BOOT_A "11111111-2222-3333-4444-555555555555"
#define BOOT_B "99999999-8888-7777-6666-555555555555"

struct fake {
	char root[64];
};

static void
write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void
fake_boot(struct fake *fk, const char *boot)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", fk->root);
	write_file(path, boot);
}

/* A stat line shaped like the kernel's: pid (comm) state ppid pgrp ... with
 * starttime as field 22. */
static void
fake_proc(struct fake *fk, int pid, const char *comm, char state, int pgrp,
	  unsigned long long start)
{
	char path[256], line[512];

	snprintf(path, sizeof(path), "%s/%d", fk->root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", fk->root, pid);
	snprintf(line, sizeof(line),
		 "%d (%s) %c 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %llu "
		 "12345678 456 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, comm, state, pgrp, pgrp, start);
	write_file(path, line);
}

static int
setup(void **state)
{
	struct fake *fk = calloc(1, sizeof(*fk));
	char path[256];

	snprintf(fk->root, sizeof(fk->root), "/tmp/ident_test.XXXXXX");
	if (mkdtemp(fk->root) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/sys", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel/random", fk->root);
	mkdir(path, 0755);
	fake_boot(fk, BOOT_A "\n");
	ident_set_proc_root(fk->root);
	*state = fk;
	return 0;
}

static int
teardown(void **state)
{
	struct fake *fk = *state;
	char cmd[128];

	ident_set_proc_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fk->root);
	if (system(cmd) != 0)
		return -1;
	free(fk);
	return 0;
}

static struct ident
recorded(const char *boot, pid_t pid, uint64_t start, pid_t pgid)
{
	struct ident id;

	memset(&id, 0, sizeof(id));
	snprintf(id.boot_id, sizeof(id.boot_id), "%s", boot);
	id.pid = pid;
	id.start_time = start;
	id.pgid = pgid;
	return id;
}

static void
test_parse_plain_comm(void **state)
{
	uint64_t st = 0;
	pid_t pg = 0;

	assert_int_equal(ident_parse_stat("42 (sleep) S 1 40 40 0 -1 4194560 1 0 0 0 0 0 0 0 "
					  "20 0 1 0 987654 1 1 1\n",
					  &st, &pg),
			 0);
	assert_int_equal(st, 987654);
	assert_int_equal(pg, 40);
}

/* A comm with spaces and parentheses must not shift the fields: only the
 * last ')' ends it. */
static void
test_parse_comm_with_spaces_and_parens(void **state)
{
	uint64_t st = 0;
	pid_t pg = 0;

	assert_int_equal(ident_parse_stat("7 (a) b (c) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 "
					  "20 0 1 0 31337 1 1 1\n",
					  &st, &pg),
			 0);
	assert_int_equal(st, 31337);
	assert_int_equal(pg, 77);
	assert_int_equal(ident_parse_stat("8 ()) 1 2 3 4 5 6 7 8 9) S 1 9 9 0 -1 0 0 0 0 0 0 "
					  "0 0 0 20 0 1 0 4242 1 1 1\n",
					  &st, &pg),
			 0);
	assert_int_equal(st, 4242);
	assert_int_equal(pg, 9);
}

static void
test_parse_rejects_malformed(void **state)
{
	uint64_t st;
	pid_t pg;

	assert_int_equal(ident_parse_stat("", &st, &pg), -EINVAL);
	assert_int_equal(ident_parse_stat("42 sleep S 1 40", &st, &pg), -EINVAL);
	/* Truncated before field 22. */
	assert_int_equal(
		ident_parse_stat("42 (x) S 1 40 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", &st, &pg),
		-EINVAL);
	/* Non-numeric start time and group. */
	assert_int_equal(
		ident_parse_stat("42 (x) S 1 40 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 zz 1", &st, &pg),
		-EINVAL);
	assert_int_equal(
		ident_parse_stat("42 (x) S 1 g 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1", &st, &pg),
		-EINVAL);
}

static void
test_boot_id_from_fake_root(void **state)
{
	char boot[40];

	assert_int_equal(ident_boot_id(boot), 0);
	assert_string_equal(boot, BOOT_A);
}

static void
test_real_boot_id_and_self(void **state)
{
	struct ident self;
	char boot[40];

	ident_set_proc_root(NULL);
	assert_int_equal(ident_boot_id(boot), 0);
	assert_int_equal(strlen(boot), 36);
	assert_int_equal(ident_self(&self), 0);
	assert_int_equal(self.pid, getpid());
	assert_int_equal(self.pgid, getpgrp());
	assert_true(self.start_time > 0);
	assert_string_equal(self.boot_id, boot);
	assert_int_equal(ident_check(&self), IDENT_MATCHES);
}

static void
test_read_fake_process(void **state)
{
	struct fake *fk = *state;
	struct ident id;

	fake_proc(fk, 4321, "a) b (c", 'S', 4321, 123456789ULL);
	assert_int_equal(ident_read(4321, &id), 0);
	assert_int_equal(id.pid, 4321);
	assert_int_equal(id.pgid, 4321);
	assert_int_equal(id.start_time, 123456789ULL);
	assert_string_equal(id.boot_id, BOOT_A);
}

static void
test_read_missing_is_esrch(void **state)
{
	struct ident id;

	assert_int_equal(ident_read(5555, &id), -ESRCH);
}

/* Exists but cannot be read (root bypasses permissions, so the stat file is
 * a directory): an error that is not ESRCH. */
static void
test_read_unreadable_is_other_errno(void **state)
{
	struct fake *fk = *state;
	char path[256];
	struct ident id;
	int r;

	snprintf(path, sizeof(path), "%s/6000", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/6000/stat", fk->root);
	mkdir(path, 0755);
	r = ident_read(6000, &id);
	assert_true(r < 0);
	assert_int_not_equal(r, -ESRCH);
}

static void
test_read_garbage_is_einval(void **state)
{
	struct fake *fk = *state;
	char path[256];
	struct ident id;

	snprintf(path, sizeof(path), "%s/6001", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/6001/stat", fk->root);
	write_file(path, "garbage\n");
	assert_int_equal(ident_read(6001, &id), -EINVAL);
}

static void
test_check_matches(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);

	fake_proc(fk, 4321, "a) b (c", 'S', 4321, 1000);
	assert_int_equal(ident_check(&rec), IDENT_MATCHES);
}

static void
test_check_missing_is_gone(void **state)
{
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);

	assert_int_equal(ident_check(&rec), IDENT_GONE);
}

static void
test_check_reused_pid_is_gone(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);

	fake_proc(fk, 4321, "other", 'S', 4321, 2000);
	assert_int_equal(ident_check(&rec), IDENT_GONE);
}

static void
test_check_previous_boot_is_gone(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);

	/* Same pid and start time, but the machine has rebooted. */
	fake_proc(fk, 4321, "job", 'S', 4321, 1000);
	fake_boot(fk, BOOT_B "\n");
	assert_int_equal(ident_check(&rec), IDENT_GONE);
}

static void
test_check_unreadable_is_unverifiable(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 6000, 1000, 6000);
	char path[256];

	snprintf(path, sizeof(path), "%s/6000", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/6000/stat", fk->root);
	mkdir(path, 0755);
	assert_int_equal(ident_check(&rec), IDENT_UNVERIFIABLE);
}

static void
test_check_unreadable_boot_id_is_unverifiable(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);
	char path[256];

	fake_proc(fk, 4321, "job", 'S', 4321, 1000);
	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", fk->root);
	unlink(path);
	assert_int_equal(ident_check(&rec), IDENT_UNVERIFIABLE);
}

static void
test_check_zombie_is_gone(void **state)
{
	struct fake *fk = *state;
	struct ident rec = recorded(BOOT_A, 4321, 1000, 4321);

	fake_proc(fk, 4321, "job", 'Z', 4321, 1000);
	assert_int_equal(ident_check(&rec), IDENT_GONE);
}

static void
test_status_names(void **state)
{
	assert_string_equal(ident_status_name(IDENT_MATCHES), "matches");
	assert_string_equal(ident_status_name(IDENT_GONE), "gone");
	assert_string_equal(ident_status_name(IDENT_UNVERIFIABLE), "unverifiable");
}

/* A real child leading its own process group, blocked until killed. */
static pid_t
spawn_group_leader(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* Dies with the test even when a failed assertion skips the
		 * test's own kill. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		setpgid(0, 0);
		alarm(120);
		for (;;)
			pause();
	}
	setpgid(pid, pid); /* both sides, so it holds whichever runs first */
	return pid;
}

static int
still_running(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static void
reap_killed(pid_t pid, int sig)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), sig);
}

static void
test_kill_group_signals_matching_leader(void **state)
{
	struct ident leader;
	pid_t pid;

	ident_set_proc_root(NULL);
	pid = spawn_group_leader();
	assert_int_equal(ident_read(pid, &leader), 0);
	leader.pgid = pid;
	assert_int_equal(ident_group_alive(pid), 1);
	assert_int_equal(ident_kill_group(&leader, SIGTERM), 0);
	reap_killed(pid, SIGTERM);
	assert_int_equal(ident_group_alive(pid), 0);
	/* Reaped: the same record is now gone and nothing is signalled. */
	assert_int_equal(ident_check(&leader), IDENT_GONE);
	assert_int_equal(ident_kill_group(&leader, SIGTERM), -ESRCH);
}

/* The fake tree says the pid now belongs to another process (other start
 * time): the real group with that id must not be touched. */
static void
test_kill_group_skips_reused_pid(void **state)
{
	struct fake *fk = *state;
	struct ident rec;
	pid_t pid = spawn_group_leader();

	fake_proc(fk, pid, "imposter", 'S', pid, 2000);
	rec = recorded(BOOT_A, pid, 1000, pid);
	assert_int_equal(ident_kill_group(&rec, SIGKILL), -ESRCH);
	assert_true(still_running(pid));
	fake_boot(fk, BOOT_B "\n");
	fake_proc(fk, pid, "job", 'S', pid, 1000);
	assert_int_equal(ident_kill_group(&rec, SIGKILL), -ESRCH);
	assert_true(still_running(pid));
	kill(pid, SIGKILL);
	reap_killed(pid, SIGKILL);
}

static void
test_kill_group_skips_unverifiable(void **state)
{
	struct fake *fk = *state;
	struct ident rec;
	char path[256];
	pid_t pid = spawn_group_leader();
	int r;

	snprintf(path, sizeof(path), "%s/%d", fk->root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", fk->root, (int)pid);
	mkdir(path, 0755);
	rec = recorded(BOOT_A, pid, 1000, pid);
	r = ident_kill_group(&rec, SIGKILL);
	assert_true(r < 0);
	assert_int_not_equal(r, -ESRCH);
	assert_true(still_running(pid));
	kill(pid, SIGKILL);
	reap_killed(pid, SIGKILL);
}

/* Through the fake tree the identity matches, and the real group is
 * signalled: the check gates the kill, nothing else. */
static void
test_kill_group_fake_match_signals(void **state)
{
	struct fake *fk = *state;
	struct ident rec;
	pid_t pid = spawn_group_leader();

	fake_proc(fk, pid, "a) b (c", 'S', pid, 1000);
	rec = recorded(BOOT_A, pid, 1000, pid);
	assert_int_equal(ident_kill_group(&rec, SIGKILL), 0);
	reap_killed(pid, SIGKILL);
}

static void
test_kill_group_leader_moved_group(void **state)
{
	struct fake *fk = *state;
	struct ident rec;
	pid_t pid = spawn_group_leader();

	fake_proc(fk, pid, "job", 'S', pid + 1, 1000);
	rec = recorded(BOOT_A, pid, 1000, pid);
	assert_int_equal(ident_kill_group(&rec, SIGKILL), -ESRCH);
	assert_true(still_running(pid));
	kill(pid, SIGKILL);
	reap_killed(pid, SIGKILL);
}

static void
test_kill_group_refuses_pgid_one_or_less(void **state)
{
	struct ident rec = recorded(BOOT_A, 1, 1000, 1);

	assert_int_equal(ident_kill_group(&rec, 0), -EINVAL);
	rec = recorded(BOOT_A, 0, 1000, 0);
	assert_int_equal(ident_kill_group(&rec, 0), -EINVAL);
	assert_int_equal(ident_group_alive(1), 0);
	assert_int_equal(ident_group_alive(0), 0);
}

/* A session leader (as a shim is) with two members: one in a group of
 * its own (as the job is), one in the leader's group. Their pids come back
 * through out[]. */
static pid_t
spawn_session(pid_t out[2])
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t m[2];
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setsid() == -1)
			_exit(1);
		for (i = 0; i < 2; i++) {
			pid_t l = getpid();

			if ((m[i] = fork()) == 0) {
				/* A leader already gone would never signal us:
				 * leave at once (nothing may keep ctest's pipe). */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != l)
					_exit(0);
				if (i == 0)
					setpgid(0, 0);
				alarm(120);
				for (;;)
					pause();
			}
		}
		setpgid(m[0], m[0]);
		if (write(fds[1], m, sizeof(m)) != (ssize_t)sizeof(m))
			_exit(1);
		alarm(120);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], out, 2 * sizeof(pid_t)), (ssize_t)(2 * sizeof(pid_t)));
	close(fds[0]);
	return pid;
}

static char
proc_state(pid_t pid)
{
	struct ident_proc *v;
	size_t n, i;
	char st = 0;

	assert_int_equal(ident_procs(&v, &n), 0);
	for (i = 0; i < n; i++)
		if (v[i].pid == pid)
			st = v[i].state;
	free(v);
	return st;
}

/* The session's members are signalled, each by its identity; the leader
 * (the shim) never is. Afterwards nobody else is alive in it. */
static void
test_session_kill_spares_leader(void **state)
{
	struct ident leader;
	pid_t m[2], pid;
	int i;

	ident_set_proc_root(NULL);
	pid = spawn_session(m);
	assert_int_equal(ident_read(pid, &leader), 0);
	assert_int_equal(ident_session_alive(&leader), 1);
	assert_int_equal(ident_session_kill(&leader, SIGKILL), 2);
	for (i = 0; i < 2000 && (proc_state(m[0]) != 'Z' || proc_state(m[1]) != 'Z'); i++)
		usleep(1000);
	assert_int_equal(proc_state(m[0]), 'Z');
	assert_int_equal(proc_state(m[1]), 'Z');
	assert_int_equal(ident_session_alive(&leader), 0);
	assert_int_equal(ident_check(&leader), IDENT_MATCHES);
	assert_int_equal(ident_session_kill(&leader, SIGKILL), 0);
	kill(pid, SIGKILL);
	reap_killed(pid, SIGKILL);
	assert_int_equal(ident_session_kill(&leader, SIGKILL), -ESRCH);
	assert_int_equal(ident_session_alive(&leader), 0);
}

/* A leader that no longer matches (reused pid) or cannot be read has its
 * session left alone: nothing is signalled, and unverifiable is not "no
 * one alive". */
static void
test_session_kill_needs_the_leader(void **state)
{
	struct fake *fk = *state;
	struct ident rec;
	char path[256];
	pid_t m[2], pid;

	pid = spawn_session(m);
	fake_proc(fk, pid, "imposter", 'S', pid, 2000);
	rec = recorded(BOOT_A, pid, 1000, pid);
	assert_int_equal(ident_session_kill(&rec, SIGKILL), -ESRCH);
	snprintf(path, sizeof(path), "%s/%d/stat", fk->root, (int)pid);
	unlink(path);
	mkdir(path, 0755);
	assert_true(ident_session_kill(&rec, SIGKILL) < 0);
	assert_int_not_equal(ident_session_kill(&rec, SIGKILL), -ESRCH);
	assert_true(ident_session_alive(&rec) < 0);
	ident_set_proc_root(NULL);
	assert_true(still_running(pid));
	assert_int_equal(kill(m[0], 0), 0);
	assert_int_equal(kill(m[1], 0), 0);
	kill(pid, SIGKILL);
	reap_killed(pid, SIGKILL);
}

/* The process walk lists what the tree holds, and fails whole (never
 * short) when an entry cannot be read. */
static void
test_procs_walk(void **state)
{
	struct fake *fk = *state;
	struct ident_proc *v;
	char path[256];
	size_t n;

	fake_proc(fk, 40, "a", 'S', 40, 7);
	fake_proc(fk, 41, "b) c", 'Z', 40, 8);
	assert_int_equal(ident_procs(&v, &n), 0);
	assert_int_equal(n, 2);
	assert_true((v[0].pid == 40 && v[1].pid == 41) || (v[0].pid == 41 && v[1].pid == 40));
	assert_int_equal(v[0].sid, 40);
	free(v);
	snprintf(path, sizeof(path), "%s/42/stat", fk->root);
	snprintf(path, sizeof(path), "%s/42", fk->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/42/stat", fk->root);
	mkdir(path, 0755);
	assert_true(ident_procs(&v, &n) < 0);
	assert_null(v);
	assert_int_equal(n, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_parse_plain_comm),
		T(test_parse_comm_with_spaces_and_parens),
		T(test_parse_rejects_malformed),
		T(test_boot_id_from_fake_root),
		T(test_real_boot_id_and_self),
		T(test_read_fake_process),
		T(test_read_missing_is_esrch),
		T(test_read_unreadable_is_other_errno),
		T(test_read_garbage_is_einval),
		T(test_check_matches),
		T(test_check_missing_is_gone),
		T(test_check_reused_pid_is_gone),
		T(test_check_previous_boot_is_gone),
		T(test_check_unreadable_is_unverifiable),
		T(test_check_unreadable_boot_id_is_unverifiable),
		T(test_check_zombie_is_gone),
		T(test_status_names),
		T(test_kill_group_signals_matching_leader),
		T(test_kill_group_skips_reused_pid),
		T(test_kill_group_skips_unverifiable),
		T(test_kill_group_fake_match_signals),
		T(test_kill_group_leader_moved_group),
		T(test_kill_group_refuses_pgid_one_or_less),
		T(test_session_kill_spares_leader),
		T(test_session_kill_needs_the_leader),
		T(test_procs_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
