/*
 * The shared memory of a home: names, the exclusive creation, the owner and
 * mode check on every attach (a segment made by someone else is never
 * used), the header check, removal of our own segments only, and the
 * collection of segments whose home is gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "shm.h"

/* A uid that is not ours, for segments "made by another user" (root only). */
#define OTHER_UID 65534

static char home[64];

static const struct shm_layout layout = {
	.kind = SHM_BOARD,
	.magic = SHM_MAGIC_BOARD,
	.version = 2,
	.nslots = 8,
	.cellsize = 64,
	.size = sizeof(struct shm_header) + 8 * 64,
};

static int
setup(void **state)
{
	snprintf(home, sizeof(home), "/tmp/shm_test.XXXXXX");
	return mkdtemp(home) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char name[48];
	int k;

	/* Whatever a test made, ours or chowned away (we are root then). */
	for (k = 0; k < SHM_NKINDS; k++) {
		shm_name(home, (enum shm_kind)k, name, sizeof(name));
		shm_unlink(name);
	}
	rmdir(home);
	return 0;
}

/* The segment as another process made it: mode (exactly, past the umask),
 * owner (-1: ours), and size bytes of 'x'. */
static void
squat(enum shm_kind kind, mode_t mode, uid_t owner, size_t size)
{
	char name[48];
	char *buf;
	int fd;

	shm_name(home, kind, name, sizeof(name));
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	if (owner != (uid_t)-1)
		assert_int_equal(fchown(fd, owner, (gid_t)-1), 0);
	if (size > 0) {
		buf = malloc(size);
		memset(buf, 'x', size);
		assert_int_equal(write(fd, buf, size), (ssize_t)size);
		free(buf);
	}
	close(fd);
}

static struct stat
stat_of(enum shm_kind kind)
{
	char name[48], path[64];
	struct stat st;

	shm_name(home, kind, name, sizeof(name));
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	memset(&st, 0, sizeof(st));
	if (stat(path, &st) != 0)
		st.st_nlink = 0;
	return st;
}

static void
test_name(void **state)
{
	char a[48], b[48], link[80], rel[PATH_MAX], cwd[PATH_MAX];

	shm_name(home, SHM_BOARD, a, sizeof(a));
	assert_int_equal(strncmp(a, "/berth-", 7), 0);
	assert_int_equal(strlen(a), 7 + 16);
	/* "/../" in the path, a symlink to the home and a relative path name
	 * the same segment. */
	snprintf(rel, sizeof(rel), "%s/../%s", home, home + 5);
	shm_name(rel, SHM_BOARD, b, sizeof(b));
	assert_string_equal(a, b);
	snprintf(link, sizeof(link), "%s.link", home);
	assert_int_equal(symlink(home, link), 0);
	shm_name(link, SHM_BOARD, b, sizeof(b));
	unlink(link);
	assert_string_equal(a, b);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/tmp"), 0);
	snprintf(rel, sizeof(rel), "%s", home + strlen("/tmp/"));
	shm_name(rel, SHM_BOARD, b, sizeof(b));
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(a, b);
	/* The ring is the board's name plus "-ring"; another home differs. */
	shm_name(home, SHM_RING, b, sizeof(b));
	assert_int_equal(strncmp(a, b, strlen(a)), 0);
	assert_string_equal(b + strlen(a), "-ring");
	shm_name("/tmp", SHM_BOARD, b, sizeof(b));
	assert_string_not_equal(a, b);
}

/* Made exclusively, 0600, ours, and stamped with the home's real path; a
 * second attach uses the same memory. */
static void
test_create(void **state)
{
	struct shm_seg s1, s2;
	struct shm_header *h;
	struct stat st;
	char real[PATH_MAX];

	umask(0);
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &s1, NULL, 0), SHM_OK);
	umask(022);
	st = stat_of(SHM_BOARD);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal((size_t)st.st_size, layout.size);
	h = s1.base;
	assert_int_equal(h->magic, SHM_MAGIC_BOARD);
	assert_int_equal(h->version, 2);
	assert_non_null(realpath(home, real));
	assert_string_equal(h->home, real);
	assert_int_equal(shm_attach(home, &layout, 0, &s2, NULL, 0), SHM_OK);
	((char *)s1.base)[layout.size - 1] = 'z';
	assert_int_equal(((char *)s2.base)[layout.size - 1], 'z');
	assert_true(shm_linked(&s2));
	shm_detach(&s1);
	shm_detach(&s2);
}

static void
test_absent(void **state)
{
	struct shm_seg s;
	char why[256];

	assert_int_equal(shm_attach(home, &layout, SHM_QUIET, &s, why, sizeof(why)), SHM_ABSENT);
	assert_int_equal(stat_of(SHM_BOARD).st_nlink, 0);
	assert_int_equal(shm_refused(home, why, sizeof(why)), 0);
}

/* A segment of ours someone widened to 0644 is not used: not resized, not
 * stamped, not written; the refusal names the mode, and status can tell. */
static void
test_refuse_wide_mode(void **state)
{
	struct shm_seg s;
	char why[256];
	struct stat st;

	squat(SHM_BOARD, 0644, (uid_t)-1, 100);
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE | SHM_QUIET, &s, why, sizeof(why)),
			 SHM_REFUSED);
	assert_non_null(strstr(why, "mode 0644"));
	st = stat_of(SHM_BOARD);
	assert_int_equal(st.st_size, 100);
	assert_int_equal(shm_refused(home, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "mode 0644"));
	/* Group bits alone are enough to refuse. */
	teardown(state);
	setup(state);
	squat(SHM_RING, 0620, (uid_t)-1, 0);
	assert_int_equal(
		shm_attach(home,
			   &(struct shm_layout){
				   .kind = SHM_RING, .magic = 1, .version = 2, .size = 8192 },
			   SHM_CREATE | SHM_QUIET, &s, why, sizeof(why)),
		SHM_REFUSED);
	assert_int_equal(shm_refused(home, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "-ring has mode 0620"));
}

/* Another user's segment under our name (made first, 0600 or 0644) is never
 * used, even by root who could open it. */
static void
test_refuse_other_owner(void **state)
{
	struct shm_seg s;
	char why[256], want[64];

	if (geteuid() != 0)
		skip(); /* making a segment owned by someone else needs root */
	squat(SHM_BOARD, 0600, OTHER_UID, 100);
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE | SHM_QUIET, &s, why, sizeof(why)),
			 SHM_REFUSED);
	snprintf(want, sizeof(want), "owned by uid %d", OTHER_UID);
	assert_non_null(strstr(why, want));
	assert_int_equal(stat_of(SHM_BOARD).st_size, 100);
	assert_int_equal(shm_attach(home, &layout, SHM_QUIET, &s, NULL, 0), SHM_REFUSED);
	/* Not ours to remove either. */
	assert_int_equal(shm_unlink_home(home), 0);
	assert_int_equal(stat_of(SHM_BOARD).st_nlink, 1);
}

/* A squatted home says so once per process: the first refusal is a
 * warning, the rest are not. (Every other test here attaches quietly, so
 * the forked child has not warned yet.) */
static void
test_refusal_logged_once(void **state)
{
	char path[96], line[512];
	struct shm_seg s;
	int status, warns = 0;
	pid_t pid;
	FILE *f;

	squat(SHM_BOARD, 0644, (uid_t)-1, 0);
	squat(SHM_RING, 0644, (uid_t)-1, 0);
	snprintf(path, sizeof(path), "%s.log", home);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct shm_layout ring = layout;

		ring.kind = SHM_RING;
		dup2(fd, 2);
		log_set_level(LOG_INFO);
		shm_attach(home, &layout, SHM_CREATE, &s, NULL, 0);
		shm_attach(home, &ring, SHM_CREATE, &s, NULL, 0);
		shm_attach(home, &layout, SHM_CREATE, &s, NULL, 0);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "shared memory not used") != NULL)
			warns++;
	fclose(f);
	unlink(path);
	assert_int_equal(warns, 1);
}

/* Ours but not what we expect: another build's layout, another home's
 * header. Never stamped over, never used. */
static void
test_layout(void **state)
{
	struct shm_layout other = layout;
	struct shm_seg s, t;
	struct shm_header *h;
	char why[256];

	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &s, NULL, 0), SHM_OK);
	other.version = 3;
	assert_int_equal(shm_attach(home, &other, SHM_CREATE | SHM_QUIET, &t, why, sizeof(why)),
			 SHM_LAYOUT);
	assert_non_null(strstr(why, "unknown layout"));
	h = s.base;
	assert_int_equal(h->version, 2);
	snprintf(h->home, sizeof(h->home), "/somewhere/else");
	assert_int_equal(shm_attach(home, &layout, SHM_QUIET, &t, why, sizeof(why)), SHM_LAYOUT);
	assert_non_null(strstr(why, "another home"));
	shm_detach(&s);
}

/* A half-made segment (created, not yet sized) is absent to a reader. */
static void
test_half_made(void **state)
{
	struct shm_seg s;

	squat(SHM_BOARD, 0600, (uid_t)-1, 0);
	assert_int_equal(shm_attach(home, &layout, SHM_QUIET, &s, NULL, 0), SHM_ABSENT);
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &s, NULL, 0), SHM_OK);
	assert_int_equal(stat_of(SHM_BOARD).st_size, (off_t)layout.size);
	shm_detach(&s);
}

/* Unlinking removes the names; what is mapped stays readable but is no
 * longer linked, and the next attach makes a new segment. */
static void
test_unlink(void **state)
{
	struct shm_layout ring = layout;
	struct shm_seg b, r, again;

	ring.kind = SHM_RING;
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &b, NULL, 0), SHM_OK);
	assert_int_equal(shm_attach(home, &ring, SHM_CREATE, &r, NULL, 0), SHM_OK);
	((char *)b.base)[layout.size - 1] = 'q';
	assert_int_equal(shm_unlink_home(home), 0);
	assert_int_equal(stat_of(SHM_BOARD).st_nlink, 0);
	assert_int_equal(stat_of(SHM_RING).st_nlink, 0);
	assert_false(shm_linked(&b));
	assert_int_equal(((char *)b.base)[layout.size - 1], 'q');
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &again, NULL, 0), SHM_OK);
	assert_int_equal(((char *)again.base)[layout.size - 1], 0);
	assert_int_equal(shm_unlink_home(home), 0);
	assert_int_equal(shm_unlink_home(home), 0); /* nothing left: still fine */
	shm_detach(&b);
	shm_detach(&r);
	shm_detach(&again);
}

/* The segments of a removed home are collected; a live home's are kept, and
 * so are another user's (root only). */
static void
test_collect(void **state)
{
	struct shm_layout ring = layout;
	char gone[64], name[48];
	struct shm_seg s;
	int fd;

	ring.kind = SHM_RING;
	ring.magic = SHM_MAGIC_RING;
	snprintf(gone, sizeof(gone), "/tmp/shm_test_gone.XXXXXX");
	assert_non_null(mkdtemp(gone));
	assert_int_equal(shm_attach(gone, &layout, SHM_CREATE, &s, NULL, 0), SHM_OK);
	shm_detach(&s);
	assert_int_equal(shm_attach(gone, &ring, SHM_CREATE, &s, NULL, 0), SHM_OK);
	shm_detach(&s);
	assert_int_equal(shm_attach(home, &layout, SHM_CREATE, &s, NULL, 0), SHM_OK);
	shm_detach(&s);
	/* Both homes exist: nothing of theirs goes. (Other processes may
	 * collect at the same moment, so the test checks what is left.) */
	shm_collect();
	assert_int_equal(shm_attach(gone, &layout, SHM_QUIET, &s, NULL, 0), SHM_OK);
	shm_detach(&s);
	assert_int_equal(rmdir(gone), 0);
	if (geteuid() == 0) {
		/* The removed home's ring handed to another user stays. */
		shm_name(gone, SHM_RING, name, sizeof(name));
		fd = shm_open(name, O_RDWR, 0);
		assert_true(fd >= 0);
		assert_int_equal(fchown(fd, OTHER_UID, (gid_t)-1), 0);
		close(fd);
	}
	shm_collect();
	assert_int_equal(shm_attach(gone, &layout, SHM_QUIET, &s, NULL, 0), SHM_ABSENT);
	if (geteuid() == 0) {
		assert_int_equal(shm_attach(gone, &ring, SHM_QUIET, &s, NULL, 0), SHM_REFUSED);
		shm_unlink(name);
	} else {
		assert_int_equal(shm_attach(gone, &ring, SHM_QUIET, &s, NULL, 0), SHM_ABSENT);
	}
	assert_int_equal(shm_attach(home, &layout, SHM_QUIET, &s, NULL, 0), SHM_OK);
	shm_detach(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_wide_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_other_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_logged_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collect, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
