/* A shim spawned ahead of its run (berth-shim --ahead) and the hand-off
 * that gives it the run (supervisor/handoff.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "exitrec.h"
#include "handoff.h"
#include "shim.h"
#include "shim_fixture.h"

/* ------------------------------------------------------------ the codec */

static char *job_argv[] = { "sh", "-c", "echo \"$FOO\"", NULL };
static char *job_env[] = { "FOO=bar baz", "PATH=/usr/bin:/bin", "EMPTY=", NULL };

static void
test_handoff_roundtrip(void **state)
{
	struct handoff h;
	char *msg, *body;
	size_t len;
	uint32_t n32;

	assert_int_equal(handoff_encode("r1", "/w", 1, job_argv, 3, job_env, 3, &msg, &len), 0);
	assert_memory_equal(msg, HANDOFF_MAGIC, 4);
	memcpy(&n32, msg + 4, sizeof(n32));
	assert_int_equal(n32, len - HANDOFF_HDR);
	body = malloc(n32);
	memcpy(body, msg + HANDOFF_HDR, n32);
	free(msg);
	assert_int_equal(handoff_parse(body, n32, &h), 0);
	assert_string_equal(h.run_id, "r1");
	assert_string_equal(h.workdir, "/w");
	assert_int_equal(h.isolate, 1);
	assert_string_equal(h.argv[0], "sh");
	assert_string_equal(h.argv[2], "echo \"$FOO\"");
	assert_null(h.argv[3]);
	assert_string_equal(h.env[0], "FOO=bar baz");
	assert_string_equal(h.env[2], "EMPTY=");
	assert_null(h.env[3]);
	handoff_free(&h);

	/* Nothing to run, or no run: nothing is encoded. */
	assert_int_equal(handoff_encode("r1", "", 0, job_argv, 0, NULL, 0, &msg, &len), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(handoff_encode("", "", 0, job_argv, 3, NULL, 0, &msg, &len), -1);
}

/* Parses body (a copy: handoff_parse takes it over); its result. */
static int
parse_copy(const char *body, size_t len)
{
	struct handoff h;
	char *b = malloc(len ? len : 1);
	int rc;

	memcpy(b, body, len);
	rc = handoff_parse(b, len, &h);
	if (rc == 0)
		handoff_free(&h);
	return rc;
}

/* A body that is not a whole, well-formed hand-off is refused, never read
 * past its end. */
static void
test_handoff_malformed(void **state)
{
	static const char ok[] = "r1\0/w\0"
				 "0\0"
				 "1\0true\0"
				 "1\0A=b";
	size_t i;

	assert_int_equal(parse_copy(ok, sizeof(ok)), 0);
	/* Every truncation of it. */
	for (i = 0; i < sizeof(ok); i++)
		assert_int_equal(parse_copy(ok, i), -1);
	assert_int_equal(parse_copy("\0/w\0"
				    "0\0"
				    "1\0true\0"
				    "0",
				    15),
			 -1); /* no run id */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "2\0"
				    "1\0true\0"
				    "0",
				    17),
			 -1); /* isolate */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "0\0"
				    "0\0"
				    "0",
				    12),
			 -1); /* no argv */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "0\0"
				    "9\0true\0"
				    "0",
				    17),
			 -1); /* argc */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "0\0"
				    "-1\0true\0"
				    "0",
				    18),
			 -1); /* argc */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "0\0"
				    "1\0true\0"
				    "0\0x",
				    19),
			 -1); /* trailing */
	assert_int_equal(parse_copy("r1\0/w\0"
				    "0\0"
				    "1\0true\0"
				    "99999999999999999999",
				    35),
			 -1);
}

/* A pipe that closes before a whole message carries no run. */
static void
test_handoff_read_eof(void **state)
{
	struct handoff h;
	char *msg;
	size_t len;
	int p[2];

	assert_int_equal(pipe(p), 0);
	close(p[1]);
	assert_int_equal(handoff_read(p[0], &h), 0);
	close(p[0]);

	assert_int_equal(handoff_encode("r1", "", 0, job_argv, 3, job_env, 3, &msg, &len), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], msg, len - 3), (ssize_t)len - 3);
	close(p[1]);
	assert_int_equal(handoff_read(p[0], &h), 0);
	close(p[0]);

	/* Something that is not a hand-off at all. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "g", 1), 1);
	assert_int_equal(write(p[1], "0123456", 7), 7);
	close(p[1]);
	assert_int_equal(handoff_read(p[0], &h), -1);
	close(p[0]);
	free(msg);
}

/* ------------------------------------------------------------ the shim */

struct ahead {
	pid_t pid;
	int go;
};

/* shim_run --ahead in a child, as the supervisor spawns one. */
static void
ahead_start(struct ahead *s)
{
	struct shim_args a = { .home = home, .ahead = 1 };
	int fds[2];

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		a.go_fd = fds[0];
		close(fds[1]);
		_exit(shim_run(&a));
	}
	close(fds[0]);
	s->go = fds[1];
}

static int
ahead_wait(struct ahead *s)
{
	int status;

	close(s->go);
	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Hands run to the shim (the whole message, however long) and waits. */
static int
ahead_run(struct ahead *s, const char *run, char **argv, size_t argc, char **env, size_t envc)
{
	size_t len, off = 0;
	ssize_t n;
	char *msg;

	assert_int_equal(handoff_encode(run, home, 0, argv, argc, env, envc, &msg, &len), 0);
	while (off < len) {
		n = write(s->go, msg + off, len - off);
		assert_true(n > 0);
		off += (size_t)n;
	}
	free(msg);
	return ahead_wait(s);
}

static void
run_dir(const char *run, char *dir, size_t n)
{
	snprintf(dir, n, "%s/runs/%s", home, run);
}

/* The hand-off makes it that run's shim: the job runs in the workdir with
 * the environment it carries (and none of the shim's own failpoints),
 * marked started, its exit recorded. */
static void
test_ahead_runs_the_handoff(void **state)
{
	char *argv[] = { "sh", "-c", "pwd; echo \"$FOO\"; echo \"fp=${BERTH_FAILPOINTS-unset}\"",
			 NULL };
	char dir[PATH_MAX], buf[PATH_MAX + 64], want[PATH_MAX + 64];
	struct exit_record rec;
	struct ahead s;
	struct stat st;

	setenv("BERTH_FAILPOINTS", "", 1);
	ahead_start(&s);
	unsetenv("BERTH_FAILPOINTS");
	assert_int_equal(ahead_run(&s, "ahead1", argv, 3, job_env, 3), 0);
	run_dir("ahead1", dir, sizeof(dir));
	file_read(dir, "output.log", buf, sizeof(buf));
	snprintf(want, sizeof(want), "%s\nbar baz\nfp=unset\n", home);
	assert_string_equal(buf, want);
	assert_int_equal(exitrec_read(dir, &rec), 0);
	assert_true(rec.has_code);
	assert_int_equal(rec.code, 0);
	snprintf(buf, sizeof(buf), "%s/started", dir);
	assert_int_equal(stat(buf, &st), 0);
}

/* No hand-off, no run: the shim ends and leaves nothing behind. */
static void
test_ahead_without_handoff(void **state)
{
	char dir[PATH_MAX];
	struct ahead s;
	struct stat st;

	ahead_start(&s);
	assert_int_equal(ahead_wait(&s), 0);
	/* Half a hand-off is none either. */
	ahead_start(&s);
	assert_int_equal(write(s.go, HANDOFF_MAGIC, 4), 4);
	assert_int_equal(ahead_wait(&s), 0);
	run_dir("never", dir, sizeof(dir));
	assert_int_equal(stat(dir, &st), -1);
}

/* A hand-off far larger than a pipe holds (a ticket may carry 1 MiB of
 * argv and environment, an entry at most BERTH_ARG_MAX) arrives whole. */
static void
test_ahead_big_handoff(void **state)
{
	char *argv[] = { "sh", "-c", "echo $((${#B0} + ${#B1} + ${#B2}))", NULL };
	char *env[4], dir[PATH_MAX], buf[64];
	size_t big = 100000, i;
	struct ahead s;

	for (i = 0; i < 3; i++) {
		env[i] = malloc(big + 4);
		snprintf(env[i], 4, "B%zu=", i);
		memset(env[i] + 3, 'x', big);
		env[i][big + 3] = '\0';
	}
	env[3] = NULL;
	ahead_start(&s);
	assert_int_equal(ahead_run(&s, "ahead-big", argv, 3, env, 3), 0);
	run_dir("ahead-big", dir, sizeof(dir));
	file_read(dir, "output.log", buf, sizeof(buf));
	assert_string_equal(buf, "300000\n");
	for (i = 0; i < 3; i++)
		free(env[i]);
}

static void
test_parse_ahead(void **state)
{
	char *ok[] = { "berth-shim", "--ahead", "--umask", "022", "--", "/h", NULL };
	char *iso[] = { "berth-shim", "--ahead", "--isolate", "--", "/h", NULL };
	char *extra[] = { "berth-shim", "--ahead", "--", "/h", "r1", NULL };
	char *none[] = { "berth-shim", "--ahead", "--", NULL };
	struct shim_args a;

	assert_int_equal(shim_parse(6, ok, &a), 0);
	assert_int_equal(a.ahead, 1);
	assert_string_equal(a.home, "/h");
	assert_null(a.run_id);
	assert_int_equal(a.go_fd, 3);
	assert_int_equal(a.job_umask, 022);
	assert_int_equal(shim_parse(5, iso, &a), -1);
	assert_int_equal(shim_parse(5, extra, &a), -1);
	assert_int_equal(shim_parse(3, none, &a), -1);
}

/* Once it has its run, a shim spawned ahead shows it on its command line,
 * as a shim spawned for the run does: "berth-shim -- HOME RUN_ID". */
static void
test_retitled_with_its_run(void **state)
{
	extern char **environ;
	static const char line[] = "/x/berth-shim\0--ahead\0--umask\0"
				   "022\0--\0/home/u/h";
	char area[sizeof(line)], *argv[6], *msg, **env = environ;
	struct shim_args a = { 0 };
	struct handoff h;
	size_t len, i, off = 0;
	int p[2];

	memcpy(area, line, sizeof(line));
	for (i = 0; i < 6; i++) {
		argv[i] = area + off;
		off += strlen(argv[i]) + 1;
	}
	shim_title_area(&a, 6, argv);
	assert_ptr_equal(a.title, area);
	assert_int_equal(a.title_len, sizeof(line));
	a.home = argv[5];
	assert_int_equal(handoff_encode("run7", "", 0, job_argv, 3, job_env, 3, &msg, &len), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], msg, len), (ssize_t)len);
	close(p[1]);
	a.go_fd = p[0];
	assert_int_equal(shim_take_handoff(&a, &h), 1);
	/* The job's environment is the shim's now. */
	assert_string_equal(getenv("FOO"), "bar baz");
	environ = env;
	assert_memory_equal(area, "berth-shim\0--\0/home/u/h\0run7\0", 30);
	for (i = 30; i < sizeof(line); i++)
		assert_int_equal(area[i], 0);
	assert_string_equal(a.home, "/home/u/h");
	assert_string_equal(a.run_id, "run7");
	close(p[0]);
	handoff_free(&h);
	free(msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handoff_roundtrip),
		cmocka_unit_test(test_handoff_malformed),
		cmocka_unit_test(test_handoff_read_eof),
		cmocka_unit_test(test_ahead_runs_the_handoff),
		cmocka_unit_test(test_ahead_without_handoff),
		cmocka_unit_test(test_ahead_big_handoff),
		cmocka_unit_test(test_parse_ahead),
		cmocka_unit_test(test_retitled_with_its_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
