/* failpoint: every action, N* counting, pause/release, observer, and the
 * parser's error messages. crash and exit(N) run in a forked child. */
#include <errno.h>
#include <pthread.h>
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

#include "clock.h"
#include "failpoint.h"

static char home[64];
static char seen_name[64], seen_action[64];
static int seen_count;

static void
observer(const char *name, const char *action)
{
	snprintf(seen_name, sizeof(seen_name), "%s", name);
	snprintf(seen_action, sizeof(seen_action), "%s", action);
	seen_count++;
}

static int
setup(void **state)
{
	snprintf(home, sizeof(home), "/tmp/fp_test.XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	fp_reset();
	fp_set_observer(NULL);
	seen_name[0] = seen_action[0] = '\0';
	seen_count = 0;
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	fp_reset();
	fp_set_observer(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	return system(cmd) == 0 ? 0 : -1;
}

static void
arm(const char *spec)
{
	char err[256] = "";

	if (fp_init(spec, home, err, sizeof(err)) != 0)
		fail_msg("fp_init(%s): %s", spec, err);
}

static void
assert_init_error(const char *spec, const char *want)
{
	char err[256] = "";

	assert_int_equal(fp_init(spec, home, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	/* A rejected spec arms nothing. */
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_PASS);
}

static void
test_unarmed_passes(void **state)
{
	char err[64];

	assert_int_equal(fp_init(NULL, home, err, sizeof(err)), 0);
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_PASS);
	assert_int_equal(fp_init("", home, err, sizeof(err)), 0);
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_PASS);
}

static void
test_other_points_pass(void **state)
{
	arm("supervisor.after_claim=error");
	assert_int_equal(fp_hit("supervisor.after_spawn"), FP_PASS);
	assert_int_equal(fp_hit("no.such_point"), FP_PASS);
}

static void
test_error_returns_error(void **state)
{
	arm("coordinator.before_commit=error");
	assert_int_equal(fp_hit("coordinator.before_commit"), FP_ERROR);
	assert_int_equal(fp_hit("coordinator.before_commit"), FP_ERROR);
}

static void
test_drop_returns_drop(void **state)
{
	arm("rpc.before_send=drop");
	assert_int_equal(fp_hit("rpc.before_send"), FP_DROP);
}

static void
test_sleep_sleeps(void **state)
{
	int64_t t0;

	arm("reaper.before_kill=sleep(120)");
	t0 = clock_mono_ms();
	assert_int_equal(fp_hit("reaper.before_kill"), FP_PASS);
	assert_true(clock_mono_ms() - t0 >= 120);
}

static void
test_count_prefix_fires_first_n(void **state)
{
	arm("supervisor.before_settle=2*error");
	assert_int_equal(fp_hit("supervisor.before_settle"), FP_ERROR);
	assert_int_equal(fp_hit("supervisor.before_settle"), FP_ERROR);
	assert_int_equal(fp_hit("supervisor.before_settle"), FP_PASS);
	assert_int_equal(fp_hit("supervisor.before_settle"), FP_PASS);
}

static void
test_multiple_entries_and_whitespace(void **state)
{
	arm("  supervisor.after_claim = 1 * error ;reaper.before_kill=drop ; "
	    "recovery.before_readopt =sleep( 1 );");
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_ERROR);
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_PASS);
	assert_int_equal(fp_hit("reaper.before_kill"), FP_DROP);
	assert_int_equal(fp_hit("recovery.before_readopt"), FP_PASS);
}

static void
test_observer_sees_firing(void **state)
{
	fp_set_observer(observer);
	arm("supervisor.after_spawn=1*drop");
	assert_int_equal(fp_hit("supervisor.after_spawn"), FP_DROP);
	assert_int_equal(seen_count, 1);
	assert_string_equal(seen_name, "supervisor.after_spawn");
	assert_string_equal(seen_action, "drop");
	/* Past its count the point does not fire and is not observed. */
	assert_int_equal(fp_hit("supervisor.after_spawn"), FP_PASS);
	assert_int_equal(seen_count, 1);
}

/* The child reports what its observer saw through a pipe, so the test
 * shows the observer runs before crash and exit(N) end the process. */
static int child_fd = -1;

static void
child_observer(const char *name, const char *action)
{
	char line[128];
	int len = snprintf(line, sizeof(line), "%s %s", name, action);

	if (child_fd >= 0 && write(child_fd, line, (size_t)len) < 0)
		_exit(98);
}

static int
hit_in_observed_child(const char *spec, const char *name, char *seen, size_t n)
{
	int fds[2], status;
	ssize_t got;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child_fd = fds[1];
		arm(spec);
		fp_set_observer(child_observer);
		fp_hit(name);
		_exit(99);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	got = read(fds[0], seen, n - 1);
	close(fds[0]);
	seen[got > 0 ? got : 0] = '\0';
	return status;
}

static void
test_crash_is_sigkill(void **state)
{
	char seen[128];
	int status;

	status = hit_in_observed_child("supervisor.after_claim=crash", "supervisor.after_claim",
				       seen, sizeof(seen));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	/* Observed before the process died. */
	assert_string_equal(seen, "supervisor.after_claim crash");
}

static void
test_exit_n_exits_with_n(void **state)
{
	char seen[128];
	int status;

	status = hit_in_observed_child("shim.before_exec=exit(7)", "shim.before_exec", seen,
				       sizeof(seen));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	assert_string_equal(seen, "shim.before_exec exit(7)");
}

struct releaser {
	char reached[256], release[256];
	int ok;
};

/* Waits for the .reached announcement, then releases the point. */
static void *
release_when_reached(void *arg)
{
	struct releaser *r = arg;
	int64_t deadline = clock_mono_ms() + 30000;
	struct timespec ts = { 0, 5 * 1000000L };
	FILE *f;

	while (access(r->reached, F_OK) < 0) {
		if (clock_mono_ms() > deadline)
			return NULL;
		nanosleep(&ts, NULL);
	}
	f = fopen(r->release, "w");
	if (f == NULL)
		return NULL;
	fclose(f);
	r->ok = 1;
	return NULL;
}

static void
test_pause_blocks_until_release(void **state)
{
	struct releaser r = { .ok = 0 };
	pthread_t t;
	struct stat st;
	char dir[128];

	snprintf(r.reached, sizeof(r.reached),
		 "%s/failpoints/supervisor.before_record_exit.reached", home);
	snprintf(r.release, sizeof(r.release),
		 "%s/failpoints/supervisor.before_record_exit.release", home);
	arm("supervisor.before_record_exit=2*pause");
	assert_int_equal(pthread_create(&t, NULL, release_when_reached, &r), 0);
	assert_int_equal(fp_hit("supervisor.before_record_exit"), FP_PASS);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.ok, 1);
	/* The release is consumed with the announcement. */
	assert_int_equal(access(r.release, F_OK), -1);
	assert_int_equal(access(r.reached, F_OK), -1);
	snprintf(dir, sizeof(dir), "%s/failpoints", home);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	/* The second hit pauses again and needs its own release. */
	r.ok = 0;
	assert_int_equal(pthread_create(&t, NULL, release_when_reached, &r), 0);
	assert_int_equal(fp_hit("supervisor.before_record_exit"), FP_PASS);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.ok, 1);
	/* Past 2 hits it no longer pauses. */
	assert_int_equal(fp_hit("supervisor.before_record_exit"), FP_PASS);
	assert_int_equal(access(r.reached, F_OK), -1);
}

/* Another process sees the pause and its pid in .reached, as a test driving
 * a real actor would. */
static void
test_pause_in_child_released_by_parent(void **state)
{
	char reached[256], release[256], buf[32] = "";
	int64_t deadline = clock_mono_ms() + 30000;
	struct timespec ts = { 0, 5 * 1000000L };
	int status;
	FILE *f;
	pid_t pid;

	snprintf(reached, sizeof(reached), "%s/failpoints/recovery.before_settle.reached", home);
	snprintf(release, sizeof(release), "%s/failpoints/recovery.before_settle.release", home);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
		arm("recovery.before_settle=pause");
		_exit(fp_hit("recovery.before_settle") == FP_PASS ? 0 : 1);
	}
	while (access(reached, F_OK) < 0) {
		assert_true(clock_mono_ms() < deadline);
		nanosleep(&ts, NULL);
	}
	/* Still blocked while not released. */
	nanosleep(&ts, NULL);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	f = fopen(reached, "r");
	if (f != NULL) {
		if (fgets(buf, sizeof(buf), f) == NULL)
			buf[0] = '\0';
		fclose(f);
	}
	assert_int_equal(atoi(buf), pid);
	f = fopen(release, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* fp_armed says whether a point would still fire, without firing it. */
static void
test_armed(void **state)
{
	arm("supervisor.after_claim=2*error;supervisor.before_settle=sleep(0)");
	assert_int_equal(fp_armed("supervisor.after_claim"), 1);
	assert_int_equal(fp_armed("supervisor.before_settle"), 1);
	assert_int_equal(fp_armed("supervisor.after_spawn"), 0);
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_ERROR);
	assert_int_equal(fp_armed("supervisor.after_claim"), 1);
	assert_int_equal(fp_hit("supervisor.after_claim"), FP_ERROR);
	/* Its hits are spent: it would not fire again. */
	assert_int_equal(fp_armed("supervisor.after_claim"), 0);
	assert_int_equal(fp_hit("supervisor.before_settle"), FP_PASS);
	assert_int_equal(fp_armed("supervisor.before_settle"), 1);
	fp_reset();
	assert_int_equal(fp_armed("supervisor.before_settle"), 0);
}

static void
test_all_required_points_exist(void **state)
{
	static const char *const names[] = {
		"coordinator.before_commit",
		"coordinator.after_commit",
		"coordinator.before_reply",
		"supervisor.after_claim",
		"supervisor.after_spawn",
		"supervisor.before_start",
		"supervisor.after_start",
		"supervisor.before_handoff",
		"supervisor.before_record_exit",
		"supervisor.after_record_exit",
		"supervisor.before_settle",
		"shim.before_exec",
		"shim.before_exit_record",
		"shim.after_exit_record",
		"recovery.before_record_exit",
		"recovery.before_readopt",
		"recovery.before_settle",
		"recovery.before_abandon",
		"reaper.before_kill",
		"reaper.after_kill",
		"reaper.before_settle",
		"rpc.before_send",
		"rpc.after_send",
	};
	char spec[128];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(spec, sizeof(spec), "%s=error", names[i]);
		arm(spec);
		assert_int_equal(fp_hit(names[i]), FP_ERROR);
	}
}

static void
test_error_unknown_name(void **state)
{
	assert_init_error("supervisor.befor_claim=crash",
			  "unknown failpoint \"supervisor.befor_claim\"");
}

static void
test_error_bad_action(void **state)
{
	assert_init_error("supervisor.after_claim=crsh",
			  "failpoint supervisor.after_claim: bad action \"crsh\"");
	assert_init_error("supervisor.after_claim=",
			  "failpoint supervisor.after_claim: bad action \"\"");
	assert_init_error("supervisor.after_claim=crash now",
			  "failpoint supervisor.after_claim: bad action \"crash now\"");
}

static void
test_error_bad_exit_and_sleep(void **state)
{
	assert_init_error("supervisor.after_claim=exit",
			  "failpoint supervisor.after_claim: bad action \"exit\"");
	assert_init_error("supervisor.after_claim=exit(256)",
			  "failpoint supervisor.after_claim: bad action \"exit(256)\"");
	assert_init_error("supervisor.after_claim=exit(x)",
			  "failpoint supervisor.after_claim: bad action \"exit(x)\"");
	assert_init_error("supervisor.after_claim=sleep(-5)",
			  "failpoint supervisor.after_claim: bad action \"sleep(-5)\"");
	assert_init_error("supervisor.after_claim=sleep(10",
			  "failpoint supervisor.after_claim: bad action \"sleep(10\"");
	assert_init_error("supervisor.after_claim=sleep(99999999999)",
			  "failpoint supervisor.after_claim: bad action \"sleep(99999999999)\"");
}

static void
test_error_bad_count(void **state)
{
	assert_init_error("supervisor.after_claim=0*crash",
			  "failpoint supervisor.after_claim: bad action \"0*crash\"");
	assert_init_error("supervisor.after_claim=3crash",
			  "failpoint supervisor.after_claim: bad action \"3crash\"");
	assert_init_error("supervisor.after_claim=*crash",
			  "failpoint supervisor.after_claim: bad action \"*crash\"");
}

static void
test_error_missing_equals(void **state)
{
	assert_init_error("supervisor.after_claim",
			  "failpoint \"supervisor.after_claim\": missing \"=action\"");
	assert_init_error("=crash", "failpoint entry without a name");
}

static void
test_error_armed_twice(void **state)
{
	assert_init_error("reaper.before_kill=drop;reaper.before_kill=error",
			  "failpoint reaper.before_kill armed twice");
}

static void
test_error_pause_without_home(void **state)
{
	char err[256] = "";

	assert_int_equal(fp_init("reaper.before_kill=pause", NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "failpoint reaper.before_kill: pause needs a home directory");
}

/* A later entry's error still rejects the whole spec. */
static void
test_error_rejects_whole_spec(void **state)
{
	assert_init_error("supervisor.after_claim=error;bogus=crash",
			  "unknown failpoint \"bogus\"");
}

static void
test_init_env(void **state)
{
	char err[64];

	setenv("BERTH_FAILPOINTS", "rpc.after_send=drop", 1);
	assert_int_equal(fp_init_env(home, err, sizeof(err)), 0);
	unsetenv("BERTH_FAILPOINTS");
	assert_int_equal(fp_hit("rpc.after_send"), FP_DROP);
	assert_int_equal(fp_init_env(home, err, sizeof(err)), 0);
	assert_int_equal(fp_hit("rpc.after_send"), FP_PASS);
}

/* fp_skip: the effect in front of the point is skipped for error and drop,
 * done for nothing armed and for a sleep that is over. */
static void
test_skip(void **state)
{
	char err[256];

	assert_int_equal(fp_skip("supervisor.before_settle", "settle not sent"), 0);
	assert_int_equal(fp_init("supervisor.before_settle=1*error;recovery.before_settle=drop;"
				 "reaper.before_kill=sleep(1)",
				 home, err, sizeof(err)),
			 0);
	assert_int_equal(fp_skip("supervisor.before_settle", "settle not sent"), 1);
	assert_int_equal(fp_skip("supervisor.before_settle", "settle not sent"), 0); /* 1* */
	assert_int_equal(fp_skip("recovery.before_settle", "settle not sent"), 1);
	assert_int_equal(fp_skip("reaper.before_kill", "not signalled"), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_unarmed_passes),
		T(test_other_points_pass),
		T(test_error_returns_error),
		T(test_drop_returns_drop),
		T(test_sleep_sleeps),
		T(test_count_prefix_fires_first_n),
		T(test_multiple_entries_and_whitespace),
		T(test_observer_sees_firing),
		T(test_crash_is_sigkill),
		T(test_exit_n_exits_with_n),
		T(test_pause_blocks_until_release),
		T(test_pause_in_child_released_by_parent),
		T(test_armed),
		T(test_all_required_points_exist),
		T(test_error_unknown_name),
		T(test_error_bad_action),
		T(test_error_bad_exit_and_sleep),
		T(test_error_bad_count),
		T(test_error_missing_equals),
		T(test_error_armed_twice),
		T(test_error_pause_without_home),
		T(test_error_rejects_whole_spec),
		T(test_init_env),
		T(test_skip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
