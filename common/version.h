#ifndef BERTH_VERSION_H
#define BERTH_VERSION_H

/* Every executable prints the same version, project(berth VERSION ...) in
 * the top CMakeLists.txt, configured into berth_version.h at build time. */

/* Prints "<prog> <version>" on stdout; 0, or 1 when stdout cannot be
 * written (the exit status for --version). */
int version_print(const char *prog);
/* The first line of an actor's main: when argv[1] is --version, prints the
 * version and exits; otherwise returns. Only argv[1], so that a job's own
 * arguments (the shim passes them on) are never taken for the option. */
void version_option(int argc, char **argv, const char *prog);

#endif
