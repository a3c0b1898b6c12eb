/* berth up / berth down: the launcher (scripts/berth-launch) under a
 * shorter name. Where the launcher is looked for: see find_launcher. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth_version.h"
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

/* dir/berth-launch into buf when that is an executable file. */
static int
exe_in(const char *dir, char *buf, size_t n)
{
	struct stat st;

	if ((size_t)snprintf(buf, n, "%s/berth-launch", dir) >= n)
		return -1;
	if (stat(buf, &st) == -1 || !S_ISREG(st.st_mode) || access(buf, X_OK) == -1)
		return -1;
	return 0;
}

/* Cuts path to its directory ("/a/b" -> "/a", "/b" -> "/"). */
static void
cut_to_dir(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash != NULL)
		*(slash == path ? slash + 1 : slash) = '\0';
}

/* The install's libexec directory seen from bindir: BERTH_LIBEXEC_FROM_BIN
 * ("../libexec/berth") with its ".." applied, so a message names the real
 * place. */
static void
libexec_of(const char *bindir, char *buf, size_t n)
{
	const char *rel = BERTH_LIBEXEC_FROM_BIN;
	size_t l;

	if (rel[0] == '/') {
		snprintf(buf, n, "%s", rel);
		return;
	}
	snprintf(buf, n, "%s", bindir);
	for (; strncmp(rel, "../", 3) == 0; rel += 3)
		cut_to_dir(buf);
	l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s", l > 0 && buf[l - 1] == '/' ? "" : "/", rel);
}

/*
 * The launcher, in this order: next to this binary's real path
 * (/proc/self/exe: a build's bin/, an install's bin/, the target of a
 * symlink); in the install's libexec directory relative to it; then on
 * PATH. A copy of berth elsewhere has no launcher next to it, so the
 * install layout around it or PATH must provide one. 0 with the path in
 * buf, or -1 after saying everywhere it looked.
 */
static int
find_launcher(const char *cmd, char *buf, size_t n)
{
	char self[PATH_MAX], dir[PATH_MAX], libexec[PATH_MAX * 2], entry[PATH_MAX];
	const char *path, *p;
	ssize_t len;
	size_t l;

	len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0) {
		cli_fail("%s: cannot find berth-launch: readlink /proc/self/exe: %s", cmd,
			 len < 0 ? strerror(errno) : "empty");
		return -1;
	}
	self[len] = '\0';
	snprintf(dir, sizeof dir, "%s", self);
	cut_to_dir(dir);
	if (exe_in(dir, buf, n) == 0)
		return 0;
	libexec_of(dir, libexec, sizeof libexec);
	if (exe_in(libexec, buf, n) == 0)
		return 0;
	/* PATH as execvp reads it, except that an empty entry (the current
	 * directory) is skipped: berth up must not run whatever the directory
	 * someone is in happens to call berth-launch. */
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p += l + (p[l] == ':')) {
		l = strcspn(p, ":");
		if (l == 0 || l >= sizeof entry)
			continue;
		memcpy(entry, p, l);
		entry[l] = '\0';
		if (exe_in(entry, buf, n) == 0)
			return 0;
	}
	cli_fail("%s: cannot find berth-launch: not in %s (next to %s), not in %s, not on PATH "
		 "(%s); install berth with 'cmake --install build --prefix DIR' and run "
		 "DIR/bin/berth, or put the directory that holds berth-launch on PATH",
		 cmd, dir, self, libexec, *path != '\0' ? path : "empty");
	return -1;
}

static int
launch(const char *verb, const char *usage, int argc, char **argv)
{
	char exe[PATH_MAX * 2 + 32];
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
	if (find_launcher(argv[0], exe, sizeof exe) != 0)
		return CLI_FAIL;
	if ((av = calloc((size_t)argc + 5, sizeof *av)) == NULL)
		return cli_fail("out of memory");
	av[n++] = exe;
	av[n++] = (char *)verb;
	av[n++] = (char *)"--home";
	av[n++] = (char *)cli_home();
	for (i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	fflush(stdout);
	execv(exe, av);
	cli_fail("%s: cannot run %s: %s", argv[0], exe, strerror(errno));
	free(av);
	return CLI_FAIL;
}

int
cmd_up(int argc, char **argv)
{
	return launch("start", up_usage, argc, argv);
}

int
cmd_down(int argc, char **argv)
{
	return launch("stop", down_usage, argc, argv);
}
