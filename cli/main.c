/* berth: the command line. Global options, then one dispatch table; every
 * command lives in a cmd_*.c file and returns the exit status. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "version.h"

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
};

static const struct command commands[] = {
	{ "add", cmd_add, "queue a command as a ticket (prints its id)" },
	{ "list", cmd_list, "list tickets" },
	{ "show", cmd_show, "show a ticket or run and its attempts" },
	{ "hold", cmd_hold, "keep ready tickets from running" },
	{ "release", cmd_release, "let held tickets run again" },
	{ "retry", cmd_retry, "run failed or cancelled tickets again" },
	{ "cancel", cmd_cancel, "cancel tickets (a running job is stopped)" },
	{ "edit", cmd_edit, "change a queued ticket's command, env, priority, schedule" },
	{ "remove", cmd_remove, "delete finished tickets and their output" },
	{ "clean", cmd_clean, "delete finished tickets, by age or state" },
	{ "wait", cmd_wait, "wait until tickets have settled" },
	{ "status", cmd_status, "actors, slots, running jobs, ticket counts" },
	{ "logs", cmd_logs, "print a run's output" },
	{ "trace", cmd_trace, "the message trace: timeline, JSON or SVG" },
	{ "seat", cmd_seat, "explicit seats: acquire, release, list, ..." },
	{ "slots", cmd_slots, "change how many jobs the running group runs at once" },
	{ "pause", cmd_pause, "stop starting jobs (running ones go on)" },
	{ "resume", cmd_resume, "start jobs again after pause" },
	{ "up", cmd_up, "start the group (scripts/berth-launch start)" },
	{ "down", cmd_down, "stop the group (scripts/berth-launch stop)" },
	{ "progress", cmd_progress, "worker: report progress I/N [LABEL]" },
	{ "heartbeat", cmd_heartbeat, "worker: say the job is alive" },
	{ "note", cmd_note, "worker: attach a note to the run" },
	{ "should-stop", cmd_should_stop, "worker: exit 0 when a stop was requested" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: berth [--home DIR] [--timeout DUR] COMMAND [ARGS...]\n"
		   "\n"
		   "Options:\n"
		   "  --home DIR      the berth home (default: $BERTH_HOME, else\n"
		   "                  ${XDG_STATE_HOME:-$HOME/.local/state}/berth)\n"
		   "  --timeout DUR   how long to wait for the coordinator (default 10s,\n"
		   "                  or $BERTH_TIMEOUT)\n"
		   "  --version       print the version and exit\n"
		   "\n"
		   "Commands:\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nEvery command takes --help. Durations: 250ms, 5s, 2m, 1h.\n");
}

static int
run(const struct command *c, int argc, char **argv)
{
	return c->fn(argc, argv);
}

/* --home DIR becomes BERTH_HOME, absolute, so that every command and every
 * process the CLI starts (berth-launch) agrees on it. */
static int
set_home(const char *dir)
{
	char cwd[PATH_MAX], abs[PATH_MAX * 2];

	if (*dir == '\0')
		return cli_usage_error("--home", "needs a directory");
	if (dir[0] != '/') {
		if (getcwd(cwd, sizeof cwd) == NULL)
			return cli_fail("cannot resolve --home %s: %m", dir);
		snprintf(abs, sizeof abs, "%s/%s", cwd, dir);
		dir = abs;
	}
	if (setenv("BERTH_HOME", dir, 1) < 0)
		return cli_fail("setenv: %m");
	return 0;
}

extern char **environ;

/* The environment berth was started with, before --home and --timeout are
 * exported into it: what `berth add` gives a job (DESIGN §12). A shallow
 * copy: setenv replaces the entries of environ, never the strings that
 * were there at exec. */
static char **caller_env;

char **
cli_caller_env(void)
{
	return caller_env;
}

static void
keep_caller_env(void)
{
	size_t n = 0;

	while (environ != NULL && environ[n] != NULL)
		n++;
	if ((caller_env = calloc(n + 1, sizeof *caller_env)) == NULL)
		return;
	memcpy(caller_env, environ, n * sizeof *caller_env);
}

int
main(int argc, char **argv)
{
	const char *v, *t;
	int64_t ms;
	size_t i;
	int a = 1;

	keep_caller_env();

	/* Library warnings (rpc, shared memory) reach the user; chatter not,
	 * unless BERTH_LOG_LEVEL asks for it. */
	log_set_level(LOG_WARN);
	log_init("berth");
	while (a < argc && argv[a][0] == '-') {
		const char *o = argv[a];

		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			usage(stdout);
			return CLI_OK;
		}
		if (strcmp(o, "--version") == 0)
			return version_print("berth");
		if (strcmp(o, "--home") == 0 || strcmp(o, "--timeout") == 0) {
			if (a + 1 >= argc) {
				fprintf(stderr, "berth: option %s needs a value\n", cli_esc(o));
				return CLI_USAGE;
			}
			v = argv[++a];
		} else if (strncmp(o, "--home=", 7) == 0 || strncmp(o, "--timeout=", 10) == 0) {
			v = strchr(o, '=') + 1;
		} else {
			fprintf(stderr, "berth: unknown option %s\nTry 'berth --help'.\n",
				cli_esc(o));
			return CLI_USAGE;
		}
		if (strncmp(o, "--home", 6) == 0) {
			if (set_home(v) != 0)
				return CLI_USAGE;
		} else {
			if (cli_parse_dur(v, 1, &ms) < 0) {
				fprintf(stderr,
					"berth: --timeout: bad duration '%s' (use e.g. 500ms, 5s, "
					"2m; at least 1ms)\n",
					cli_esc(v));
				return CLI_USAGE;
			}
			if (setenv("BERTH_TIMEOUT", v, 1) < 0)
				return cli_fail("setenv: %m");
		}
		a++;
	}
	if ((t = getenv("BERTH_TIMEOUT")) != NULL && *t != '\0' && cli_parse_dur(t, 1, &ms) < 0) {
		fprintf(stderr,
			"berth: BERTH_TIMEOUT: bad duration '%s' (use e.g. 500ms, 5s, 2m; at "
			"least 1ms)\n",
			cli_esc(t));
		return CLI_USAGE;
	}
	if (a >= argc) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[a], "help") == 0) {
		if (a + 1 >= argc || strcmp(argv[a + 1], "--help") == 0 ||
		    strcmp(argv[a + 1], "-h") == 0) {
			usage(stdout);
			return CLI_OK;
		}
		for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
			if (strcmp(commands[i].name, argv[a + 1]) == 0) {
				char *hv[] = { argv[a + 1], (char *)"--help", NULL };

				return run(&commands[i], 2, hv);
			}
		}
		fprintf(stderr, "berth: unknown command '%s'\nTry 'berth --help'.\n",
			cli_esc(argv[a + 1]));
		return CLI_USAGE;
	}
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, argv[a]) == 0)
			return run(&commands[i], argc - a, argv + a);
	fprintf(stderr, "berth: unknown command '%s'\nTry 'berth --help'.\n", cli_esc(argv[a]));
	return CLI_USAGE;
}
