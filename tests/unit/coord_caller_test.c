/* coord_caller: the caller classes, judged on a fake /proc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "coord_caller.h"

static char root[] = "/tmp/coord_caller_test.XXXXXX";
static char proc[512], bin[512];

static void
put(const char *rel, const char *text)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", proc, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* A fake process pid running exe with parent ppid. */
static void
fake_proc(int pid, const char *exe, int ppid)
{
	char path[1024], stat[600];

	snprintf(path, sizeof(path), "%s/%d", proc, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/exe", proc, pid);
	unlink(path);
	assert_int_equal(symlink(exe, path), 0);
	snprintf(path, sizeof(path), "%d/stat", pid);
	/* A command with a space and a ')' in it, as the kernel allows. */
	snprintf(stat, sizeof(stat),
		 "%d (odd) name) S %d %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid,
		 ppid, pid, pid, 4242 + pid);
	put(path, stat);
}

static int
setup(void **state)
{
	char path[1024], self[600];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(bin, sizeof(bin), "%s/bin", root);
	mkdir(proc, 0700);
	mkdir(bin, 0700);
	snprintf(path, sizeof(path), "%s/self", proc);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/self/exe", proc);
	snprintf(self, sizeof(self), "%s/berth-coordinator", bin);
	assert_int_equal(symlink(self, path), 0);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct rpc_peer
peer_of(int pid)
{
	struct rpc_peer p = { 1, pid, getuid(), getgid() };

	return p;
}

static void
classify(struct coord_callers *cc, int worker, int pid, uint32_t pipe, struct coord_caller *out)
{
	struct rpc_peer p = peer_of(pid);

	coord_callers_classify(cc, worker, &p, pipe, out);
}

static void
test_sibling_actors_by_executable(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct coord_caller c;
	char exe[600];

	(void)state;
	snprintf(exe, sizeof(exe), "%s/berth-supervisor", bin);
	fake_proc(101, exe, getppid());
	snprintf(exe, sizeof(exe), "%s/berth-recovery (deleted)", bin);
	fake_proc(102, exe, getppid());
	snprintf(exe, sizeof(exe), "%s/berth-reaper", bin);
	fake_proc(103, exe, getppid());

	classify(cc, 0, 101, 1, &c);
	assert_int_equal(c.cls, CALLER_ACTOR);
	assert_int_equal(c.roles, ROLE_SUPERVISOR);
	assert_true(c.verified);
	assert_int_equal(c.start_time, 4242 + 101);
	assert_string_equal(c.what, "supervisor");
	classify(cc, 0, 102, 2, &c);
	assert_int_equal(c.cls, CALLER_ACTOR);
	assert_int_equal(c.roles, ROLE_RECOVERY);
	classify(cc, 0, 103, 3, &c);
	assert_int_equal(c.roles, ROLE_REAPER);
	coord_callers_free(cc);
}

/* A job running the group's own supervisor binary is still a job: its
 * parent is its shim, not whoever started the coordinator. */
static void
test_actor_executable_with_another_parent_is_an_operator(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct coord_caller c;
	char exe[600];

	(void)state;
	snprintf(exe, sizeof(exe), "%s/berth-supervisor", bin);
	fake_proc(201, exe, 4000);
	classify(cc, 0, 201, 7, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	assert_int_equal(c.roles, 0);
	assert_false(c.verified);
	coord_callers_free(cc);
}

/* The right name in another directory (a copy the job made) is not ours. */
static void
test_actor_name_elsewhere_is_an_operator(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct coord_caller c;
	char exe[600];

	(void)state;
	snprintf(exe, sizeof(exe), "%s/elsewhere/berth-supervisor", root);
	fake_proc(301, exe, getppid());
	classify(cc, 0, 301, 8, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	snprintf(exe, sizeof(exe), "%s/berth", bin);
	fake_proc(302, exe, getppid());
	classify(cc, 0, 302, 9, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	assert_string_equal(c.what, "operator");
	coord_callers_free(cc);
}

static void
test_worker_socket_is_always_worker(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct coord_caller c;
	char exe[600];

	(void)state;
	snprintf(exe, sizeof(exe), "%s/berth-supervisor", bin);
	fake_proc(401, exe, getppid());
	classify(cc, 1, 401, 10, &c);
	assert_int_equal(c.cls, CALLER_WORKER);
	assert_int_equal(c.roles, 0);
	coord_callers_free(cc);
}

static void
test_unknown_peer_and_other_user_are_operators(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct rpc_peer p = { 0, 0, 0, 0 };
	struct coord_caller c;
	char exe[600];

	(void)state;
	coord_callers_classify(cc, 0, &p, 11, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	snprintf(exe, sizeof(exe), "%s/berth-supervisor", bin);
	fake_proc(501, exe, getppid());
	p = peer_of(501);
	p.uid = getuid() + 1;
	coord_callers_classify(cc, 0, &p, 12, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	coord_callers_free(cc);
}

static void
test_own_process_and_allowed_harness(void **state)
{
	char exe[600];
	const char *extra[1] = { exe };
	struct coord_callers *cc;
	struct coord_caller c;

	(void)state;
	snprintf(exe, sizeof(exe), "%s/berth-bench-coord", bin);
	cc = coord_callers_new(proc, extra, 1);
	fake_proc(601, exe, getppid());
	classify(cc, 0, 601, 13, &c);
	assert_int_equal(c.cls, CALLER_ACTOR);
	assert_int_equal(c.roles, ROLE_ANY);
	classify(cc, 0, (int)getpid(), 14, &c);
	assert_int_equal(c.cls, CALLER_ACTOR);
	assert_int_equal(c.roles, ROLE_ANY);
	coord_callers_free(cc);
}

/* The verdict is per connection: a process that exec()s after connecting
 * keeps the class it connected with. */
static void
test_verdict_is_kept_per_connection(void **state)
{
	struct coord_callers *cc = coord_callers_new(proc, NULL, 0);
	struct coord_caller c;
	char exe[600];

	(void)state;
	snprintf(exe, sizeof(exe), "%s/berth", bin);
	fake_proc(701, exe, getppid());
	classify(cc, 0, 701, 15, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	snprintf(exe, sizeof(exe), "%s/berth-supervisor", bin);
	fake_proc(701, exe, getppid());
	classify(cc, 0, 701, 15, &c);
	assert_int_equal(c.cls, CALLER_OPERATOR);
	classify(cc, 0, 701, 16, &c); /* a new connection is judged afresh */
	assert_int_equal(c.cls, CALLER_ACTOR);
	coord_callers_free(cc);
}

static void
test_role_names(void **state)
{
	(void)state;
	assert_int_equal(coord_role_of("supervisor"), ROLE_SUPERVISOR);
	assert_int_equal(coord_role_of("recovery"), ROLE_RECOVERY);
	assert_int_equal(coord_role_of("reaper"), ROLE_REAPER);
	assert_int_equal(coord_role_of("cli"), 0);
	assert_int_equal(coord_role_of(NULL), 0);
	assert_string_equal(coord_class_name(CALLER_WORKER), "worker");
	assert_string_equal(coord_class_name(CALLER_ACTOR), "actor");
	assert_string_equal(coord_class_name(CALLER_OPERATOR), "operator");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sibling_actors_by_executable),
		cmocka_unit_test(test_actor_executable_with_another_parent_is_an_operator),
		cmocka_unit_test(test_actor_name_elsewhere_is_an_operator),
		cmocka_unit_test(test_worker_socket_is_always_worker),
		cmocka_unit_test(test_unknown_peer_and_other_user_are_operators),
		cmocka_unit_test(test_own_process_and_allowed_harness),
		cmocka_unit_test(test_verdict_is_kept_per_connection),
		cmocka_unit_test(test_role_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
