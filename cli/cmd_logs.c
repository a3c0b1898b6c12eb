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
	"usage: berth logs [RUN] [--follow]\n"
	"\n"
	"Print a run's output (stdout and stderr of the job). RUN is a run id or\n"
	"its first 8+ hex digits, a run alias (T3-r1), or a ticket (T3, or just 3:\n"
	"its latest run); without one, the newest ticket's latest run.\n"
	"\n"
	"  -f, --follow   keep printing new output until the run settles (for a\n"
	"                 ticket that has not run yet: wait for its first run),\n"
	"                 then say how it ended on stderr and exit with the job's\n"
	"                 own status (0 when it succeeded, its exit code, 128+N\n"
	"                 for signal N, else 1)\n";

/* A full 128-bit run id can be read without asking the coordinator. */
static int
is_run_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return i == 32;
}

/* Copies what is new in fd to stdout; -1 on a write or read error. */
static int
pump(int fd)
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

/* How a followed run ended, for its last line. */
struct run_end_note {
	char alias[48];
	char state[24];
	int exit_known, exit_code, signal_known, signal;
	int status; /* cli_run_exit_status */
};

/* 1 settled (with how, in *e), 0 not yet, -1 the coordinator did not
 * answer this time. */
static int
run_settled(struct rpc_client *c, const char *run_id, struct run_end_note *e)
{
	const Berth__Ticket *t;
	const Berth__Run *r;
	Berth__Reply *rep;
	int settled;

	if (cli_resolve(c, "logs", run_id, &rep, &t, &r, cli_timeout_ms(), 1) < 0)
		return -1;
	settled = r == NULL || cli_run_terminal(r->state) || (r->settled_ms != 0);
	if (settled && r != NULL) {
		snprintf(e->alias, sizeof e->alias, "%s", r->alias ? r->alias : run_id);
		snprintf(e->state, sizeof e->state, "%s", r->state ? r->state : "?");
		e->exit_known = cli_run_exit_known(r);
		e->exit_code = r->exit_code;
		e->signal_known = cli_run_signal_known(r);
		e->signal = r->signal;
		e->status = cli_run_exit_status(r);
	}
	berth__reply__free_unpacked(rep, NULL);
	return settled;
}

/* The last line of --follow, on stderr: "T2-r1 failed (exit 4)". */
static void
say_end(const struct run_end_note *e)
{
	fprintf(stderr, "berth logs: %s %s", cli_esc(e->alias), cli_esc(e->state));
	if (e->exit_known && !(e->exit_code == 0 && run_state_parse(e->state) == RUN_SUCCEEDED))
		fprintf(stderr, " (exit %d)", e->exit_code);
	else if (e->signal_known && e->signal > 0)
		fprintf(stderr, " (signal %d, %s)", e->signal, strsignal(e->signal));
	fputc('\n', stderr);
}

int
cmd_logs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "follow", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpc_client *c = NULL;
	struct run_end_note end;
	const Berth__Ticket *t;
	const Berth__Run *r;
	Berth__Reply *rep = NULL;
	char run_id[128], dir[PATH_MAX], path[PATH_MAX + 16], id[CLI_ID_MAX];
	int ch, follow = 0, live = 0, fd = -1, rc = CLI_FAIL, settled = 0, res;
	struct timespec ts = { 0, 200 * 1000000L };

	optind = 0;
	while ((ch = cli_getopt(argc, argv, "hf", opts)) != -1) {
		switch (ch) {
		case 'h': fputs(logs_usage, stdout); return CLI_OK;
		case 'f': follow = 1; break;
		default: return CLI_USAGE;
		}
	}
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one RUN at a time (got '%s' too)",
				       argv[optind + 1]);
	/* No RUN: the newest ticket's latest run. The id is checked here, so
	 * nothing but an id ever becomes part of a path below. */
	if (cli_id_arg(argv[0], optind < argc ? argv[optind] : "last", id, sizeof id) != CLI_OK)
		return CLI_USAGE;
	memset(&end, 0, sizeof end);

	if (is_run_id(id) && !follow) {
		snprintf(run_id, sizeof run_id, "%s", id);
	} else {
		if ((c = cli_connect()) == NULL)
			goto out;
		for (;;) {
			res = cli_resolve(c, "logs", id, &rep, &t, &r, cli_timeout_ms(), 0);
			if (res < 0)
				goto out;
			if (r != NULL)
				break;
			/* --follow on a ticket that has not run yet waits for
			 * its first run, unless it never will. */
			if (!follow || cli_ticket_settled(t->state)) {
				if (follow)
					rc = cli_fail("logs %s: ticket %s ended %s without running",
						      id, t->id ? t->id : id, t->state);
				else
					rc = cli_fail("logs %s: ticket %s has not run yet", id,
						      t->id ? t->id : id);
				goto out;
			}
			berth__reply__free_unpacked(rep, NULL);
			rep = NULL;
			nanosleep(&ts, NULL);
		}
		snprintf(run_id, sizeof run_id, "%s", r->id ? r->id : "");
		berth__reply__free_unpacked(rep, NULL);
		rep = NULL;
		live = follow;
		if (follow && (settled = run_settled(c, run_id, &end)) == 1)
			live = 0;
	}
	if (home_run_dir(cli_home(), run_id, dir, sizeof dir) < 0) {
		rc = cli_fail("logs %s: path too long", id);
		goto out;
	}
	snprintf(path, sizeof path, "%s/output.log", dir);
	/* With --follow the run may not have opened its log yet. */
	while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT || !live) {
			rc = cli_fail("logs %s: %s: %s", id, path, strerror(errno));
			goto out;
		}
		if ((settled = run_settled(c, run_id, &end)) == 1) {
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
		if (!live)
			break;
		/* Settled means the shim has closed the log: one more read
		 * after the verdict picks up the last bytes. */
		if ((settled = run_settled(c, run_id, &end)) == 1) {
			if (pump(fd) < 0) {
				rc = cli_fail("logs %s: %s", id, strerror(errno));
				goto out;
			}
			break;
		}
		nanosleep(&ts, NULL);
	}
	rc = CLI_OK;
	/* --follow ends with how the run ended, and its job's status. */
	if (follow && settled == 1) {
		fflush(stdout);
		say_end(&end);
		rc = end.status;
	}
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
