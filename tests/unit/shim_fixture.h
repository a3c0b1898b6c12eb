#ifndef BERTH_SHIM_FIXTURE_H
#define BERTH_SHIM_FIXTURE_H
/* The shim's unit tests (shim_test.c, shim_iso_test.c) share this
 * fixture: a temporary BERTH_HOME with its runs/, made by the group's
 * setup and removed by its teardown, and shim_run started in a child with
 * its go pipe, as the supervisor starts a shim. */
#include <stddef.h>
#include <sys/types.h>

#include "shim.h"

extern char home[];
extern int runno; /* the runs started so far: the last one is run<runno> */

struct shim_proc {
	char run[32];
	char dir[PATH_MAX];
	pid_t pid;
	int go;
};

int setup(void **state);
int teardown(void **state);
/* Starts shim_run in a child, with its go pipe; a gives the options. */
void shim_start_with(struct shim_proc *p, struct shim_args a);
void shim_start(struct shim_proc *p, const char *workdir, char **argv);
/* Sends the go byte (when go), and waits for the shim: its exit status. */
int shim_finish(struct shim_proc *p, int go);
/* dir/name read into buf (at most n - 1 bytes, terminated): its length. */
size_t file_read(const char *dir, const char *name, char *buf, size_t n);

#endif
