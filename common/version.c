/*
 * --version for every executable, from the one version string CMake
 * configures into berth_version.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth_version.h"
#include "version.h"

int
version_print(const char *prog)
{
	/* A version nobody could read (stdout closed, disk full) is a
	 * failure, as in every tool that prints something. */
	if (printf("%s %s\n", prog, BERTH_VERSION) < 0 || fflush(stdout) == EOF) {
		fprintf(stderr, "%s: cannot write the version to stdout\n", prog);
		return 1;
	}
	return 0;
}

void
version_option(int argc, char **argv, const char *prog)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0)
		exit(version_print(prog));
}
