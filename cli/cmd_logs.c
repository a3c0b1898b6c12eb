/* berth logs: a run's captured output, read straight from
 * $BERTH_HOME/runs/<run>/output.log. The coordinator is asked only to
 * resolve a ticket id or alias to a run id and, with --follow, whether the
 * run has settled: the bytes themselves never go through it. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

static const char logs_usage[] =
    "usage: berth logs RUN [--follow]\n"
    "\n"
    "Print a run's output (stdout and stderr of the job). RUN is a run id, a\n"
    "run alias (T3-r1) or a ticket id (its latest run).\n"
    "\n"
    "  -f, --follow   keep printing new output until the run settles (for a\n"
    "                 ticket that has not run yet: wait for its first run)\n";

/* A full 128-bit run id can be read without asking the coordinator. */
static int is_run_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return i == 32;
}

/* Copies what is new in fd to stdout; -1 on a write or read error. */
static int pump(int fd)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -1;
	}
}

/* 1 settled, 0 not yet, -1 the coordinator did not answer this time. */
static int run_settled(struct rpc_client *c, const char *run_id)
{
	const Berth__Ticket *t;
	const Berth__Run *r;
	Berth__Reply *rep;
	int settled;

	if (cli_resolve(c, run_id, &rep, &t, &r, cli_timeout_ms(), 1) < 0)
		return -1;
	settled = r == NULL || cli_run_terminal(r->state) || (r->settled_ms != 0);
	berth__reply__free_unpacked(rep, NULL);
	return settled;
}

int cmd_logs(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"follow", no_argument, NULL, 'f'},
	    {NULL, 0, NULL, 0},
	};
	struct rpc_client *c = NULL;
	const Berth__Ticket *t;
	const Berth__Run *r;
	Berth__Reply *rep = NULL;
	char run_id[128], dir[PATH_MAX], path[PATH_MAX + 16];
	const char *id;
	int ch, follow = 0, fd = -1, rc = CLI_FAIL, settled, res;
	struct timespec ts = {0, 200 * 1000000L};

	optind = 0;
	while ((ch = cli_getopt(argc, argv, "hf", opts)) != -1) {
		switch (ch) {
		case 'h':
			fputs(logs_usage, stdout);
			return CLI_OK;
		case 'f':
			follow = 1;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error(argv[0], "missing RUN");
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one RUN at a time (got '%s' too)",
		                       argv[optind + 1]);
	id = argv[optind];
	if (*id == '\0' || strchr(id, '/') != NULL || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return cli_usage_error(argv[0], "bad RUN '%s'", id);

	if (is_run_id(id) && !follow) {
		snprintf(run_id, sizeof run_id, "%s", id);
	} else {
		if ((c = cli_connect()) == NULL)
			goto out;
		for (;;) {
			res = cli_resolve(c, id, &rep, &t, &r, cli_timeout_ms(), 0);
			if (res < 0)
				goto out;
			if (r != NULL)
				break;
			/* --follow on a ticket that has not run yet waits for
			 * its first run, unless it never will. */
			if (!follow || cli_ticket_settled(t->state)) {
				rc = cli_fail("logs %s: ticket %s has not run%s", id,
				              t->id ? t->id : id, follow ? "" : " yet");
				goto out;
			}
			berth__reply__free_unpacked(rep, NULL);
			rep = NULL;
			nanosleep(&ts, NULL);
		}
		snprintf(run_id, sizeof run_id, "%s", r->id ? r->id : "");
		settled = cli_run_terminal(r->state);
		berth__reply__free_unpacked(rep, NULL);
		rep = NULL;
		if (settled)
			follow = 0;
	}
	if (home_run_dir(cli_home(), run_id, dir, sizeof dir) < 0) {
		rc = cli_fail("logs %s: path too long", id);
		goto out;
	}
	snprintf(path, sizeof path, "%s/output.log", dir);
	/* With --follow the run may not have opened its log yet. */
	while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT || !follow) {
			rc = cli_fail("logs %s: %s: %s", id, path, strerror(errno));
			goto out;
		}
		if ((settled = run_settled(c, run_id)) == 1) {
			rc = cli_fail("logs %s: the run settled without output (%s missing)", id,
			              path);
			goto out;
		}
		nanosleep(&ts, NULL);
	}
	for (;;) {
		if (pump(fd) < 0) {
			rc = cli_fail("logs %s: %s", id, strerror(errno));
			goto out;
		}
		fflush(stdout);
		if (!follow)
			break;
		/* Settled means the shim has closed the log: one more read
		 * after the verdict picks up the last bytes. */
		if ((settled = run_settled(c, run_id)) == 1) {
			if (pump(fd) < 0) {
				rc = cli_fail("logs %s: %s", id, strerror(errno));
				goto out;
			}
			break;
		}
		nanosleep(&ts, NULL);
	}
	rc = CLI_OK;
out:
	fflush(stdout);
	if (fd >= 0)
		close(fd);
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
	if (c != NULL)
		rpc_client_close(c);
	return rc;
}
