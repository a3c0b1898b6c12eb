/* berth edit, berth remove, berth clean: change a queued ticket, delete
 * finished ones. The coordinator deletes the rows and names the runs they
 * had; their directories under $BERTH_HOME/runs/ are deleted here, by the
 * same user, once the coordinator has said the runs are gone. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "json.h"
#include "util.h"
#include "vec.h"

static const char edit_usage[] =
	"usage: berth edit ID [OPTIONS] [-- CMD [ARG...]]\n"
	"\n"
	"Change a queued ticket (ready or held; not one that is running or has\n"
	"finished). Only what is given changes; a command after the options\n"
	"replaces the ticket's.\n"
	"\n"
	"  --name N          a new name\n"
	"  --priority N      a new priority (higher runs first)\n"
	"  --env K=V         set a variable for the job (repeatable)\n"
	"  --unset-env K     remove a variable (repeatable)\n"
	"  --at TIME         run once at TIME (as for berth add)\n"
	"  --in DUR          run once after DUR\n"
	"  --every DUR       run every DUR from now, at least 1s\n"
	"  --now             run as soon as a slot is free\n"
	"  --host H          only host H may run it (as for berth add)\n"
	"  --on L1[,L2...]   only a host offering every label may run it; replaces\n"
	"                    the ticket's labels\n"
	"  --anywhere        any host may run it: no --host, no labels\n";

static const char remove_usage[] =
	"usage: berth remove ID... [--json]\n"
	"\n"
	"Delete finished tickets (succeeded, failed, cancelled, dependency_failed)\n"
	"with their runs and their output (runs/<run>/). A ticket an unfinished\n"
	"one waits for is kept. Each ID is done on its own.\n"
	"\n"
	"  --json   a JSON array of what was removed: {ticket, runs}\n";

static const char clean_usage[] =
	"usage: berth clean [--older DUR] [--state S] [--json]\n"
	"\n"
	"Delete every finished ticket with its runs and their output, as berth\n"
	"remove does; one an unfinished ticket waits for is kept.\n"
	"\n"
	"  --older DUR   only those that finished more than DUR ago\n"
	"  --state S     only those in state S (succeeded, failed, cancelled,\n"
	"                dependency_failed)\n"
	"  --json        {removed: [ids], runs: n, kept: [ids]}\n";

/* ------------------------------------------------------------ run data */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* runs/<run>/ of a run the coordinator has removed: 0, or -1 after a
 * warning (the rows are gone either way; the reaper does not know these
 * directories any more, so the path is said). */
static int
remove_run_dir(const char *run)
{
	char dir[PATH_MAX];

	if (strlen(run) != 32 || strspn(run, "0123456789abcdef") != 32 ||
	    home_run_dir(cli_home(), run, dir, sizeof dir) < 0) {
		fprintf(stderr, "berth: the coordinator named a strange run '%s'; left alone\n",
			cli_esc(run));
		return -1;
	}
	if (access(dir, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS) != 0) {
		cli_fail("cannot delete %s: %m (delete it by hand)", dir);
		return -1;
	}
	return 0;
}

static int
remove_dirs(const Berth__Removed *r)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < r->n_runs; i++)
		if (remove_run_dir(r->runs[i]) < 0)
			rc = -1;
	return rc;
}

/* ------------------------------------------------------------ edit */

enum {
	OPT_NAME = 256,
	OPT_PRIORITY,
	OPT_ENV,
	OPT_UNSET,
	OPT_AT,
	OPT_IN,
	OPT_EVERY,
	OPT_NOW,
	OPT_HOST,
	OPT_ON,
	OPT_ANYWHERE,
};

/* Appends s to a NULL-terminated vector; 0 or -1. */
static int
push(char ***v, size_t *n, char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof **v);

	if (nv == NULL)
		return -1;
	*v = nv;
	nv[(*n)++] = s;
	nv[*n] = NULL;
	return 0;
}

/* The schedule options; CLI_OK, or a usage error. */
static int
edit_when(const char *cmd, int c, const char *arg, Berth__Edit *m, const char **given)
{
	static const char *const names[] = { "--at", "--in", "--every", "--now" };
	const char *name = names[c - OPT_AT];
	int64_t ms;

	if (*given != NULL)
		return cli_usage_error(cmd, "%s and %s exclude each other", *given, name);
	*given = name;
	switch (c) {
	case OPT_AT:
		if (cli_parse_at(arg, clock_wall_ms(), &ms) < 0)
			return cli_usage_error(cmd,
					       "--at: bad time '%s' (use HH:MM[:SS] or "
					       "YYYY-MM-DD HH:MM[:SS])",
					       arg);
		m->has_at_ms = 1;
		m->at_ms = ms;
		break;
	case OPT_IN:
		if (cli_opt_dur(cmd, "--in", arg, 0, INT64_MAX - clock_wall_ms(), &ms) != CLI_OK)
			return CLI_USAGE;
		m->has_at_ms = 1;
		m->at_ms = clock_wall_ms() + ms;
		break;
	case OPT_EVERY:
		if (cli_opt_dur(cmd, "--every", arg, 1000, INT64_MAX, &ms) != CLI_OK)
			return CLI_USAGE;
		m->has_every_ms = 1;
		m->every_ms = ms;
		break;
	default:
		m->has_now = 1;
		m->now = 1;
		break;
	}
	return CLI_OK;
}

/* --host, --on, --anywhere: the placement, as add's; --anywhere clears
 * both and excludes the others. */
static int
edit_place(const char *cmd, int c, char *arg, Berth__Edit *m, int *anywhere)
{
	if (c == OPT_ANYWHERE ? !*anywhere && (m->host != NULL || m->has_set_labels) : *anywhere)
		return cli_usage_error(cmd, "--anywhere excludes --host and --on");
	switch (c) {
	case OPT_ANYWHERE:
		*anywhere = 1;
		m->host = (char *)"";
		m->has_set_labels = m->set_labels = 1;
		return CLI_OK;
	case OPT_HOST: return cli_opt_place(cmd, 1, arg, &m->host, NULL, NULL);
	default:
		m->has_set_labels = m->set_labels = 1;
		return cli_opt_place(cmd, 0, arg, NULL, &m->labels, &m->n_labels);
	}
}

/* One option of edit into m: CLI_OK, CLI_USAGE (said), or CLI_FAIL (out
 * of memory, said). */
static int
edit_option(const char *cmd, int c, char *arg, Berth__Edit *m, const char **when, int *anywhere)
{
	long long num;

	switch (c) {
	case OPT_NAME: m->name = arg; return CLI_OK;
	case OPT_PRIORITY:
		if (cli_opt_int(cmd, "--priority", arg, INT32_MIN, INT32_MAX, &num) != CLI_OK)
			return CLI_USAGE;
		m->has_priority = 1;
		m->priority = (int32_t)num;
		return CLI_OK;
	case OPT_ENV:
		if (cli_parse_env(arg) < 0)
			return cli_usage_error(cmd, "--env: expected NAME=VALUE, got '%s'", arg);
		return push(&m->set_env, &m->n_set_env, arg) < 0 ? cli_fail("out of memory")
								 : CLI_OK;
	case OPT_UNSET:
		if (*arg == '\0' || strchr(arg, '=') != NULL)
			return cli_usage_error(cmd, "--unset-env: expected a NAME, got '%s'", arg);
		return push(&m->unset_env, &m->n_unset_env, arg) < 0 ? cli_fail("out of memory")
								     : CLI_OK;
	case OPT_AT:
	case OPT_IN:
	case OPT_EVERY:
	case OPT_NOW: return edit_when(cmd, c, arg, m, when);
	case OPT_HOST:
	case OPT_ON:
	case OPT_ANYWHERE: return edit_place(cmd, c, arg, m, anywhere);
	default: return CLI_USAGE;
	}
}

int
cmd_edit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "priority", required_argument, NULL, OPT_PRIORITY },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "unset-env", required_argument, NULL, OPT_UNSET },
		{ "at", required_argument, NULL, OPT_AT },
		{ "in", required_argument, NULL, OPT_IN },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "now", no_argument, NULL, OPT_NOW },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "on", required_argument, NULL, OPT_ON },
		{ "anywhere", no_argument, NULL, OPT_ANYWHERE },
		{ NULL, 0, NULL, 0 },
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Edit m = BERTH__EDIT__INIT;
	Berth__Reply *rep = NULL;
	const char *when = NULL;
	char id[CLI_ID_MAX];
	int c, pass, rc = CLI_USAGE, changes = 0, anywhere = 0;

	optind = 0;
	id[0] = '\0';
	/* Options before and after the ID (berth edit --priority 5 T3, berth
	 * edit T3 --priority 5); '+' ends them at the first other word, so a
	 * command after them may have options of its own. */
	for (pass = 0; pass < 2; pass++) {
		while ((c = cli_getopt(argc, argv, "+h", opts)) != -1) {
			if (c == 'h') {
				fputs(edit_usage, stdout);
				rc = CLI_OK;
				goto out;
			}
			if ((rc = edit_option(argv[0], c, optarg, &m, &when, &anywhere)) != CLI_OK)
				goto out;
			changes++;
		}
		rc = CLI_USAGE;
		if (pass > 0)
			break;
		if (optind >= argc) {
			cli_usage_error(argv[0], "missing ticket ID");
			goto out;
		}
		if (cli_id_arg(argv[0], argv[optind], id, sizeof id) != CLI_OK)
			goto out;
		optind++;
	}
	if (optind < argc) {
		if (argv[optind][0] == '\0') {
			cli_usage_error(argv[0], "empty command");
			goto out;
		}
		m.argv = argv + optind;
		m.n_argv = (size_t)(argc - optind);
		changes++;
	}
	if (changes == 0) {
		cli_usage_error(argv[0], "nothing to change (see --help)");
		goto out;
	}
	m.id = id;
	req.verb_case = BERTH__REQUEST__VERB_EDIT;
	req.edit = &m;
	if ((rc = cli_request_id(&req, &rep, "edit", id)) != CLI_OK)
		goto out;
	if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_TICKET)
		printf("%s edited (%s)\n", cli_esc(rep->granted->ticket->id),
		       cli_esc(rep->granted->ticket->state));
	else
		printf("%s edited\n", cli_esc(id));
out:
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
	free(m.set_env);
	free(m.unset_env);
	vec_free_str(m.labels);
	return rc;
}

/* ------------------------------------------------------------ remove, clean */

static void
removed_json(FILE *f, const char *ticket, const Berth__Removed *r)
{
	size_t i;

	fputs("{\"ticket\":", f);
	json_str(f, ticket);
	fputs(",\"runs\":[", f);
	for (i = 0; i < r->n_runs; i++) {
		if (i > 0)
			fputc(',', f);
		json_str(f, r->runs[i] ? r->runs[i] : "");
	}
	fputs("]}", f);
}

struct remove_run {
	int json;
	int done;
};

/* One id's answer: the removed ticket, its runs' directories deleted. */
static int
remove_each(void *arg, const char *id, const Berth__Reply *rep)
{
	struct remove_run *rr = arg;
	const Berth__Removed *r;
	const char *t;
	int rc = 0;

	if (cli_check_id(rep, "remove", id) != CLI_OK ||
	    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_REMOVED)
		return -1;
	r = rep->granted->removed;
	t = r->n_tickets > 0 ? r->tickets[0] : id;
	if (remove_dirs(r) < 0)
		rc = -1;
	if (rr->json) {
		fputc(rr->done++ > 0 ? ',' : '[', stdout);
		removed_json(stdout, t, r);
	} else {
		printf("%s removed (%zu run%s)\n", cli_esc(t), r->n_runs,
		       r->n_runs == 1 ? "" : "s");
	}
	return rc;
}

int
cmd_remove(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct remove_run rr = { 0, 0 };
	int c, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h': fputs(remove_usage, stdout); return CLI_OK;
		case 'j': rr.json = 1; break;
		default: return CLI_USAGE;
		}
	}
	rc = cli_each_id(argv[0], argc - optind, argv + optind, BERTH__REQUEST__VERB_REMOVE,
			 remove_each, &rr);
	if (rr.done > 0)
		fputs("]\n", stdout);
	return rc;
}

int
cmd_clean(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "older", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Clean m = BERTH__CLEAN__INIT;
	struct rpc_client *cl;
	char **removed = NULL, **kept = NULL;
	size_t nremoved = 0, nkept = 0, rcap = 0, kcap = 0, runs = 0, i, got;
	int c, json = 0, rc = CLI_OK;
	int64_t ms;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h': fputs(clean_usage, stdout); return CLI_OK;
		case 'j': json = 1; break;
		case 'o':
			if (cli_opt_dur(argv[0], "--older", optarg, 0, INT64_MAX, &ms) != CLI_OK)
				return CLI_USAGE;
			m.has_older_ms = 1;
			m.older_ms = ms;
			break;
		case 's':
			if (!ticket_state_final(ticket_state_parse(optarg)))
				return cli_usage_error(
					argv[0],
					"--state: '%s' is not a finished state (succeeded, "
					"failed, cancelled, dependency_failed)",
					optarg);
			m.state = optarg;
			break;
		default: return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	if ((cl = cli_connect()) == NULL)
		return CLI_FAIL;
	req.verb_case = BERTH__REQUEST__VERB_CLEAN;
	req.clean = &m;
	/* The coordinator removes a batch at a time: ask until a batch
	 * removes nothing. */
	for (;;) {
		Berth__Reply *rep = NULL;
		const Berth__Removed *r;

		req.has_req_id = 0;
		req.req_id = 0;
		if (cli_call(cl, &req, &rep, cli_timeout_ms(), 0) < 0) {
			rc = CLI_FAIL;
			break;
		}
		if (cli_check(rep, "clean") != CLI_OK ||
		    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_REMOVED) {
			berth__reply__free_unpacked(rep, NULL);
			rc = CLI_FAIL;
			break;
		}
		r = rep->granted->removed;
		if (remove_dirs(r) < 0)
			rc = CLI_FAIL;
		runs += r->n_runs;
		for (i = 0; i < r->n_tickets; i++)
			if (vec_push_str(&removed, &nremoved, &rcap, r->tickets[i]) < 0)
				rc = cli_fail("out of memory");
		if (r->n_tickets == 0) {
			for (i = 0; i < r->n_kept; i++)
				if (vec_push_str(&kept, &nkept, &kcap, r->kept[i]) < 0)
					rc = cli_fail("out of memory");
		}
		got = r->n_tickets;
		berth__reply__free_unpacked(rep, NULL);
		if (got == 0 || rc != CLI_OK)
			break;
	}
	rpc_client_close(cl);
	if (json) {
		fputs("{\"removed\":[", stdout);
		for (i = 0; i < nremoved; i++) {
			if (i > 0)
				fputc(',', stdout);
			json_str(stdout, removed[i]);
		}
		printf("],\"runs\":%zu,\"kept\":[", runs);
		for (i = 0; i < nkept; i++) {
			if (i > 0)
				fputc(',', stdout);
			json_str(stdout, kept[i]);
		}
		fputs("]}\n", stdout);
	} else {
		printf("removed %zu ticket%s (%zu run%s)\n", nremoved, nremoved == 1 ? "" : "s",
		       runs, runs == 1 ? "" : "s");
		if (nkept > 0) {
			printf("kept");
			for (i = 0; i < nkept; i++)
				printf(" %s", cli_esc(kept[i]));
			printf(": an unfinished ticket waits for %s\n", nkept == 1 ? "it" : "them");
		}
	}
	vec_free_str(removed);
	vec_free_str(kept);
	return rc;
}
