/* What the shim's unit tests share (shim_fixture.h): a temporary
 * BERTH_HOME and a shim run in a child as the supervisor runs one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim.h"
#include "shim_fixture.h"

char home[] = "/tmp/shim_test.XXXXXX";
int runno;

int
setup(void **state)
{
	char path[PATH_MAX];

	if (mkdtemp(home) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/runs", home);
	return mkdir(path, 0700);
}

int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

/* Starts shim_run in a child, like the supervisor would, with its go pipe;
 * a gives the options (its run_id and go_fd are filled in here). */
void
shim_start_with(struct shim_proc *p, struct shim_args a)
{
	int fds[2];

	snprintf(p->run, sizeof(p->run), "run%d", ++runno);
	snprintf(p->dir, sizeof(p->dir), "%s/runs/%s", home, p->run);
	assert_true(mkdir(p->dir, 0700) == 0 || errno == EEXIST);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		a.run_id = p->run;
		a.go_fd = fds[0];
		close(fds[1]);
		_exit(shim_run(&a));
	}
	close(fds[0]);
	p->go = fds[1];
}

void
shim_start(struct shim_proc *p, const char *workdir, char **argv)
{
	shim_start_with(p, (struct shim_args){ .home = home, .workdir = workdir, .argv = argv });
}

int
shim_finish(struct shim_proc *p, int go)
{
	int status;

	if (go)
		assert_int_equal(write(p->go, "g", 1), 1);
	close(p->go);
	assert_int_equal(waitpid(p->pid, &status, 0), p->pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

size_t
file_read(const char *dir, const char *name, char *buf, size_t n)
{
	char path[PATH_MAX];
	size_t got;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
	return got;
}
