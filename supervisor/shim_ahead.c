/*
 * A shim spawned ahead of its run (berth-shim --ahead, DESIGN §4, §6): the
 * hand-off that makes it the shim of one run, and the command line that
 * then names that run.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "handoff.h"
#include "shim.h"

void
shim_title_area(struct shim_args *a, int argc, char **argv)
{
	char *end;
	int i;

	a->title = NULL;
	a->title_len = 0;
	if (argc < 1 || argv[0] == NULL)
		return;
	end = argv[0] + strlen(argv[0]) + 1;
	for (i = 1; i < argc; i++) {
		if (argv[i] != end)
			return;
		end = argv[i] + strlen(argv[i]) + 1;
	}
	a->title = argv[0];
	a->title_len = (size_t)(end - argv[0]);
}

/* "berth-shim -- HOME RUN_ID" over the command line, NUL-padded, when it
 * fits (the --ahead line it replaces is longer): what ps shows of a shim
 * spawned for its run, options aside, with HOME after "--" where the
 * launcher looks for it. HOME lives in that memory: it is moved with it,
 * and a->home follows. */
static void
shim_retitle(struct shim_args *a)
{
	static const char head[] = "berth-shim\0--";
	size_t h, r, n = sizeof(head);

	if (a->title == NULL)
		return;
	h = strlen(a->home) + 1;
	r = strlen(a->run_id) + 1;
	if (n + h + r > a->title_len)
		return;
	memmove(a->title + n, a->home, h);
	a->home = a->title + n;
	memset(a->title + n + h, 0, a->title_len - n - h);
	memcpy(a->title, head, n);
	memcpy(a->title + n + h, a->run_id, r);
}

/*
 * A shim spawned ahead (--ahead) knows no run until the hand-off comes on
 * its go pipe: the run, the job and its environment, which becomes the
 * shim's own (the job inherits it, and the PATH lookup reads it). The
 * hand-off is also the go: the fused claim recorded the run running with
 * this shim's identity before the supervisor wrote it. 1 with the run in
 * *a; 0 when the pipe closed without one (nothing to run).
 */
int
shim_take_handoff(struct shim_args *a, struct handoff *ho)
{
	extern char **environ;

	switch (handoff_read(a->go_fd, ho)) {
	case 1: break;
	case 0: return 0;
	default: return -1;
	}
	a->run_id = ho->run_id;
	a->workdir = ho->workdir;
	a->isolate = ho->isolate;
	a->argv = ho->argv;
	environ = ho->env;
	shim_retitle(a);
	return 1;
}
