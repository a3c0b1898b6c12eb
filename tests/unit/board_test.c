/*
 * The status board: slots per actor, restarts counted when another process
 * takes an actor's slot, a consistent copy for readers, and a slot whose
 * process is gone reported stale.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "board.h"
#include "clock.h"
#include "observe.h"
#include "ring.h"
#include "shm.h"

static char home[64];
static int shm_scans; /* opendir("/dev/shm") calls: shm_collect() runs */

/* Counts the segment scans (shm_collect reads /dev/shm); the real opendir
 * does the work. */
DIR *
opendir(const char *name)
{
	static DIR *(*real)(const char *);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "opendir");
	if (strcmp(name, "/dev/shm") == 0)
		shm_scans++;
	return real(name);
}

static int
setup(void **state)
{
	snprintf(home, sizeof(home), "/tmp/board_test.XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	shm_unlink_home(home);
	rmdir(home);
	return 0;
}

static const struct board_slot *
find(const struct board_slot *v, int n, const char *actor)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].actor, actor) == 0)
			return &v[i];
	return NULL;
}

static void
test_missing_board(void **state)
{
	assert_null(board_open(home, 0));
}

/* Attach fills the slot with this process; beat changes state and time. */
static void
test_attach_beat_read(void **state)
{
	struct board *b = board_open(home, 1), *r;
	struct board_slot *s, v[BOARD_SLOTS];
	const struct board_slot *me;
	int n;

	assert_non_null(b);
	s = board_attach(b, "supervisor", "0123456789abcdef");
	assert_non_null(s);
	r = board_open(home, 0);
	assert_non_null(r);
	n = board_read(r, v, BOARD_SLOTS);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].actor, "supervisor");
	assert_string_equal(v[0].instance, "0123456789abcdef");
	assert_string_equal(v[0].state, "starting");
	assert_int_equal(v[0].pid, getpid());
	assert_true(v[0].start_time > 0);
	assert_int_equal(v[0].restarts, 0);

	clock_fake_set(v[0].heartbeat_ms + 5000);
	board_beat(s, "running");
	board_count(s, BOARD_SENT);
	board_count(s, BOARD_SENT);
	board_count(s, BOARD_DENIED);
	board_set_slots(s, 4, 1);
	clock_fake_clear();
	n = board_read(r, v, BOARD_SLOTS);
	assert_int_equal(n, 1);
	me = find(v, n, "supervisor");
	assert_non_null(me);
	assert_string_equal(me->state, "running");
	assert_int_equal(me->heartbeat_ms, me->started_ms + 5000);
	assert_int_equal(me->sent, 2);
	assert_int_equal(me->denied, 1);
	assert_int_equal(me->slots_total, 4);
	assert_int_equal(me->slots_used, 1);

	/* Distinct actors, distinct slots. */
	assert_non_null(board_attach(b, "reaper", "1111111111111111"));
	assert_int_equal(board_read(r, v, BOARD_SLOTS), 2);
	assert_non_null(find(v, 2, "reaper"));
	assert_int_equal(board_read(r, v, 1), 1);
	board_close(r);
	board_close(b);
}

/* A child attaches as an actor and exits: its slot stays on the board and
 * is reported stale by identity, however fresh its heartbeat. A live slot
 * is stale only when its heartbeat is old. */
static void
test_dead_actor_is_stale(void **state)
{
	struct board *b = board_open(home, 1);
	struct board_slot v[BOARD_SLOTS];
	const struct board_slot *dead, *live;
	int64_t now;
	pid_t pid;
	int status, n;

	assert_non_null(b);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct board *c = board_open(home, 0);
		struct board_slot *s =
			c != NULL ? board_attach(c, "recovery", "aaaaaaaaaaaaaaaa") : NULL;

		if (s == NULL)
			_exit(2);
		board_beat(s, "running");
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(board_attach(b, "coordinator", "bbbbbbbbbbbbbbbb"));
	n = board_read(b, v, BOARD_SLOTS);
	assert_int_equal(n, 2);
	dead = find(v, n, "recovery");
	live = find(v, n, "coordinator");
	assert_non_null(dead);
	assert_non_null(live);
	assert_int_equal(dead->pid, pid);
	assert_string_equal(dead->state, "running");
	now = clock_wall_ms();
	assert_int_equal(board_slot_stale(dead, dead->heartbeat_ms, 60000), 1);
	assert_int_equal(board_slot_stale(live, now, 60000), 0);
	assert_int_equal(board_slot_stale(live, now + 61000, 60000), 1);
	board_close(b);
}

/* A new process of the same actor takes the old slot and counts a restart;
 * attaching again from the same process does not. */
static void
test_restart_counted(void **state)
{
	struct board *b = board_open(home, 1);
	struct board_slot v[BOARD_SLOTS];
	struct board_slot *s;
	pid_t pid;
	int status, n;

	assert_non_null(b);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct board *c = board_open(home, 0);

		_exit(c != NULL && board_attach(c, "reaper", "cccccccccccccccc") != NULL ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	s = board_attach(b, "reaper", "dddddddddddddddd");
	assert_non_null(s);
	assert_non_null(board_attach(b, "reaper", "dddddddddddddddd"));
	n = board_read(b, v, BOARD_SLOTS);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].restarts, 1);
	assert_int_equal(v[0].pid, getpid());
	assert_string_equal(v[0].instance, "dddddddddddddddd");
	assert_string_equal(v[0].state, "starting");
	assert_int_equal(v[0].sent, 0);
	board_close(b);
}

/* A full board gives a new actor the slot of one whose process is gone. */
static void
test_full_board_reuses_dead_slot(void **state)
{
	struct board *b = board_open(home, 1);
	struct board_slot v[BOARD_SLOTS];
	char name[16];
	pid_t pid;
	int i, status;

	assert_non_null(b);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct board *c = board_open(home, 0);

		_exit(c != NULL && board_attach(c, "gone", "eeeeeeeeeeeeeeee") != NULL ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	for (i = 1; i < BOARD_SLOTS; i++) {
		snprintf(name, sizeof(name), "actor%d", i);
		assert_non_null(board_attach(b, name, "ffffffffffffffff"));
	}
	assert_non_null(board_attach(b, "newcomer", "ffffffffffffffff"));
	assert_int_equal(board_read(b, v, BOARD_SLOTS), BOARD_SLOTS);
	assert_null(find(v, BOARD_SLOTS, "gone"));
	assert_non_null(find(v, BOARD_SLOTS, "newcomer"));
	/* No dead slot left: the next newcomer is refused, not misplaced. */
	assert_null(board_attach(b, "another", "ffffffffffffffff"));
	board_close(b);
}

/* While another process rewrites its slot as fast as it can, every copy a
 * reader gets is one whole version: instance and state always agree. */
static void
test_read_is_consistent(void **state)
{
	struct board *b = board_open(home, 1);
	struct board_slot v[BOARD_SLOTS];
	pid_t pid;
	int i, n, status;

	assert_non_null(b);
	assert_non_null(board_attach(b, "supervisor", "0000000000000000"));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct board *c = board_open(home, 0);
		struct board_slot *s = board_attach(c, "supervisor", "0000000000000000");
		char st[16];

		for (i = 0; i < 200000; i++) {
			memset(st, 'A' + i % 26, 15);
			st[15] = '\0';
			board_beat(s, st);
		}
		_exit(0);
	}
	for (i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
		n = board_read(b, v, BOARD_SLOTS);
		assert_int_equal(n, 1);
		if (v[0].state[0] >= 'A' && v[0].state[0] <= 'Z') {
			char one[2] = { v[0].state[0], '\0' };

			assert_int_equal(strspn(v[0].state, one), 15);
		}
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	board_close(b);
}

/* Opening the board and the ring, even creating them, and attaching an
 * actor never scan /dev/shm (every shim and CLI call opens the ring): only
 * shm_collect does, which the reaper calls. A client never makes the
 * ring. */
static void
test_only_collect_scans(void **state)
{
	struct board *b;
	struct ring *t;

	(void)state;
	shm_scans = 0;
	assert_int_equal(observe_attach_ring(home, "cli", "x"), -1);
	assert_null(ring_open(home, 0));
	b = board_open(home, 1);
	t = ring_open(home, 1);
	assert_non_null(b);
	assert_non_null(t);
	board_close(b);
	ring_close(t);
	assert_int_equal(observe_attach_ring(home, "cli", "x"), 0);
	observe_detach(NULL);
	assert_int_equal(observe_attach(home, "coordinator", "x"), 0);
	observe_detach("failed");
	assert_int_equal(shm_scans, 0);
	shm_collect();
	assert_int_equal(shm_scans, 1);
}

/* The group's segments go with its last actor to stop gracefully: not with
 * the first, not with one that failed, and an actor killed outright does
 * not count as left behind. */
static void
test_last_leaver_removes(void **state)
{
	struct board *b1, *b2;
	struct board_slot *s1;
	struct ring *t;
	int status;
	pid_t pid;

	b1 = board_open(home, 1);
	t = ring_open(home, 1);
	assert_non_null(b1);
	assert_non_null(t);
	ring_close(t);
	s1 = board_attach(b1, "coordinator", "1111111111111111");
	assert_non_null(s1);
	/* Another actor, in another process, that stays. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct board *c = board_open(home, 0);

		board_attach(c, "supervisor", "2222222222222222");
		pause();
		_exit(0);
	}
	while ((b2 = board_open(home, 0)) != NULL) {
		struct board_slot v[BOARD_SLOTS];
		int n = board_read(b2, v, BOARD_SLOTS);

		board_close(b2);
		if (n == 2)
			break;
		usleep(1000);
	}
	assert_int_equal(board_leave(b1, s1, "stopped"), 0);
	assert_non_null(b2 = board_open(home, 0));
	board_close(b2);
	/* Killed, not stopped: gone by identity, so the next leaver is last. */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	s1 = board_attach(b1, "coordinator", "1111111111111111");
	assert_non_null(s1);
	assert_int_equal(board_leave(b1, s1, "stopped"), 1);
	assert_null(board_open(home, 0));
	assert_null(ring_open(home, 0));
	/* Attaching to the removed board is refused: it is nobody's now. */
	assert_null(board_attach(b1, "reaper", "3333333333333333"));
	assert_int_equal(errno, ESTALE);
	board_close(b1);
	/* observe_attach opens again and makes a fresh board and ring; a
	 * failed exit leaves them for the launcher's restart. */
	assert_int_equal(observe_attach(home, "reaper", "3333333333333333"), 0);
	observe_detach("failed");
	assert_non_null(b2 = board_open(home, 0));
	board_close(b2);
	assert_non_null(t = ring_open(home, 0));
	ring_close(t);
	assert_int_equal(observe_attach(home, "reaper", "3333333333333333"), 0);
	observe_detach("stopped");
	assert_null(board_open(home, 0));
	assert_null(ring_open(home, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_board, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_beat_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_actor_is_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_board_reuses_dead_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_is_consistent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_collect_scans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_leaver_removes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
