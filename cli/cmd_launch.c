/* berth up / berth down: the launcher (scripts/berth-launch) under a
 * shorter name. The launcher is looked for next to the berth binary first
 * (build/bin/ or an install's bin/), then on PATH. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char up_usage[] =
    "usage: berth up [LAUNCH OPTIONS...]\n"
    "\n"
    "Start the group: runs 'berth-launch start --home HOME' with the given\n"
    "options (--slots N, --lease-ms MS, --tick-ms MS, --isolate, --foreground,\n"
    "...).\n"
    "Idempotent: a running group is left alone.\n";

static const char down_usage[] =
    "usage: berth down [LAUNCH OPTIONS...]\n"
    "\n"
    "Stop the group: runs 'berth-launch stop --home HOME' with the given\n"
    "options. Running jobs keep running (they are adopted at the next start)\n"
    "unless --kill-jobs is given.\n";

/* The launcher next to /proc/self/exe, else "berth-launch" for execvp. */
static const char *find_launcher(char *buf, size_t n)
{
	char self[PATH_MAX];
	ssize_t len;
	char *slash;

	len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len > 0) {
		self[len] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			snprintf(buf, n, "%s/berth-launch", self);
			if (access(buf, X_OK) == 0)
				return buf;
		}
	}
	return "berth-launch";
}

static int launch(const char *verb, const char *usage, int argc, char **argv)
{
	char path[PATH_MAX + 32];
	const char *exe;
	char **av;
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return CLI_OK;
		}
		if (strcmp(argv[i], "--") == 0)
			break;
	}
	if ((av = calloc((size_t)argc + 5, sizeof *av)) == NULL)
		return cli_fail("out of memory");
	exe = find_launcher(path, sizeof path);
	av[n++] = (char *)exe;
	av[n++] = (char *)verb;
	av[n++] = (char *)"--home";
	av[n++] = (char *)cli_home();
	for (i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	fflush(stdout);
	execvp(exe, av);
	cli_fail("%s: cannot run %s: %s (it is installed next to berth, or on PATH)", argv[0], exe,
	         strerror(errno));
	free(av);
	return CLI_FAIL;
}

int cmd_up(int argc, char **argv)
{
	return launch("start", up_usage, argc, argv);
}

int cmd_down(int argc, char **argv)
{
	return launch("stop", down_usage, argc, argv);
}
