/* berth add: queue work. The CLI turns everything relative into something
 * absolute before it leaves the caller's shell: the working directory into
 * a canonical path, --at/--in into a wall time, the environment into the
 * explicit list the job will get. The coordinator never has to guess what
 * "here" or "in 5 minutes" meant. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "vec.h"
#include "berth_limits.h"
#include "clock.h"
#include "msg.h"

static const char add_usage[] =
	"usage: berth add [OPTIONS] -- CMD [ARG...]\n"
	"       berth add [OPTIONS] --batch FILE\n"
	"\n"
	"Queue a command as a ticket and print its id.\n"
	"\n"
	"  --name N          a name shown by list and show\n"
	"  --after ID,...    run only after these tickets have succeeded (if one\n"
	"                    fails or is cancelled, this one ends dependency_failed)\n"
	"  --after-any ID,...  run after these tickets have finished, however\n"
	"                    they ended\n"
	"  --key K           take seat key K while running (one holder per key)\n"
	"  --workdir D       run in directory D (default: the current directory);\n"
	"                    the job also takes the working tree D as a seat\n"
	"  --timeout DUR     stop the job after DUR (outcome timed_out)\n"
	"  --retries N       run again up to N times after a failure\n"
	"  --at TIME         first run at HH:MM[:SS] (today, or tomorrow if past)\n"
	"                    or YYYY-MM-DD[T ]HH:MM[:SS] (local; trailing Z = UTC)\n"
	"  --in DUR          first run after DUR\n"
	"  --every DUR       run every DUR, at least 1s (missed runs collapse into\n"
	"                    one)\n"
	"  --hold            queue it held (berth release ID lets it run)\n"
	"  --priority N      higher runs first (default 0)\n"
	"  --host H          only the host of id H may run it (many hosts on one\n"
	"                    store: docs/MANY-HOSTS.md)\n"
	"  --on L1[,L2...]   only a host that offers every label may run it (its\n"
	"                    group was launched with them); until one does, it waits\n"
	"  --env K=V         set a variable for the job (repeatable)\n"
	"  --clean-env       the job gets only PATH and HOME from your environment,\n"
	"                    and every --env\n"
	"  --isolate         run the job in its own user and mount namespace, where\n"
	"                    $BERTH_HOME holds only worker.sock: it cannot read the\n"
	"                    database, other runs' output or use the operator\n"
	"                    socket; worker verbs still work. Where user namespaces\n"
	"                    are not available the run fails, never runs unisolated\n"
	"  --batch FILE      one shell command per line ('-' = stdin), each run as\n"
	"                    sh -c LINE; blank lines and #comments are skipped;\n"
	"                    any number of lines, sent 1000 at a time: prints each\n"
	"                    id as it is queued, and on a failure says which lines\n"
	"                    were queued and which were not\n"
	"\n"
	"The job's environment is yours, as it is when you run berth add, plus\n"
	"every --env (never the environment of whoever started the group); berth\n"
	"adds BERTH_RUN_ID, BERTH_TOKEN, BERTH_SOCKET and BERTH_HOME. 'berth show'\n"
	"lists the names it keeps, not their values.\n"
	"\n"
	"Limits, checked before anything is sent: one argument, --env entry or\n"
	"batch line at most 131071 bytes; the command and its environment together\n"
	"at most 1 MiB; --name and --key at most 255 bytes; --workdir 4095; --after\n"
	"at most 1000 ids; a --host or --on name 1 to 64 letters, digits, '.', '_'\n"
	"or '-', at most 16 labels, none twice.\n";

enum {
	OPT_NAME = 256,
	OPT_AFTER,
	OPT_KEY,
	OPT_WORKDIR,
	OPT_TIMEOUT,
	OPT_RETRIES,
	OPT_AT,
	OPT_IN,
	OPT_EVERY,
	OPT_HOLD,
	OPT_PRIORITY,
	OPT_ENV,
	OPT_BATCH,
	OPT_ISOLATE,
	OPT_CLEAN_ENV,
	OPT_AFTER_ANY,
	OPT_HOST,
	OPT_ON,
};

/* The shortest --every: one firing a second at most. */
#define ADD_EVERY_MIN_MS 1000

static const struct option add_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "after", required_argument, NULL, OPT_AFTER },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "workdir", required_argument, NULL, OPT_WORKDIR },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "at", required_argument, NULL, OPT_AT },
	{ "in", required_argument, NULL, OPT_IN },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "hold", no_argument, NULL, OPT_HOLD },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "isolate", no_argument, NULL, OPT_ISOLATE },
	{ "clean-env", no_argument, NULL, OPT_CLEAN_ENV },
	{ "after-any", required_argument, NULL, OPT_AFTER_ANY },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "on", required_argument, NULL, OPT_ON },
	{ NULL, 0, NULL, 0 },
};

/* Variables of the caller that are berth's own business, never a ticket's:
 * a job's identity (its token must never be stored with another ticket),
 * the actors' failpoints, and the home, which the shim sets to the
 * group's own. */
static int
env_private(const char *kv)
{
	static const char *const names[] = { "BERTH_RUN_ID", "BERTH_TOKEN", "BERTH_SOCKET",
					     "BERTH_HOME", "BERTH_FAILPOINTS" };
	size_t i, len = strcspn(kv, "=");

	if (strncmp(kv, "BERTH_FAILPOINTS_", 17) == 0)
		return 1;
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == len && strncmp(kv, names[i], len) == 0)
			return 1;
	return 0;
}

/* 1 when kv's name is one of given's (an --env overrides it). */
static int
env_given(char **given, size_t ngiven, const char *kv)
{
	size_t j, len = strcspn(kv, "=");

	for (j = 0; j < ngiven; j++)
		if (strncmp(given[j], kv, len) == 0 && given[j][len] == '=')
			return 1;
	return 0;
}

/* The environment a ticket captures (DESIGN §12): the caller's, as every
 * peer passes it, then every --env; with --clean-env only PATH and HOME of
 * the caller, so the job finds the same programs, and every --env. The
 * caller's is what berth was started with (main.c keeps it before --home
 * and --timeout are exported). */
static int
build_env(char **given, size_t ngiven, int clean, char ***env, size_t *nenv)
{
	char **caller = cli_caller_env();
	size_t i, j, n = 0, max = ngiven + 1;
	char **v;

	for (i = 0; caller != NULL && caller[i] != NULL; i++)
		max++;
	if ((v = calloc(max, sizeof *v)) == NULL)
		return -1;
	for (i = 0; caller != NULL && caller[i] != NULL; i++) {
		const char *kv = caller[i];
		size_t len = strcspn(kv, "=");

		if (kv[len] != '=' || len == 0 || env_private(kv) || env_given(given, ngiven, kv))
			continue;
		if (clean && !((len == 4 && strncmp(kv, "PATH", 4) == 0) ||
			       (len == 4 && strncmp(kv, "HOME", 4) == 0)))
			continue;
		if ((v[n++] = strdup(kv)) == NULL)
			goto fail;
	}
	for (j = 0; j < ngiven; j++)
		if ((v[n++] = strdup(given[j])) == NULL)
			goto fail;
	*env = v;
	*nenv = n;
	return 0;
fail:
	vec_free_str(v);
	return -1;
}

/* Lines first..last of the batch file, as "line 7" or "lines 7-2011". */
static void
batch_span(const struct cli_batch *b, size_t first, size_t last, char *buf, size_t n)
{
	if (first == last)
		snprintf(buf, n, "line %ld", b->lineno[first]);
	else
		snprintf(buf, n, "lines %ld-%ld", b->lineno[first], b->lineno[last]);
}

/* One chunk, [from, to): its AddBatch, sent with one request id however
 * often it must be sent (the coordinator answers a repeat with its stored
 * reply, so a chunk is queued once). CLI_OK with the granted reply in *rep;
 * CLI_FAIL after printing why. *unknown is set when no answer came at all:
 * the chunk may or may not have been queued. */
static int
batch_chunk(struct rpc_client *c, Berth__Add **addp, size_t from, size_t to, Berth__Reply **rep,
	    int *unknown)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__AddBatch batch = BERTH__ADD_BATCH__INIT;
	int tries;

	*rep = NULL;
	*unknown = 0;
	batch.adds = addp + from;
	batch.n_adds = to - from;
	req.verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
	req.add_batch = &batch;
	for (tries = 0; tries < 3; tries++) {
		if (cli_call(c, &req, rep, cli_timeout_ms(), tries < 2) == 0)
			break;
		*rep = NULL;
	}
	if (*rep == NULL) {
		*unknown = 1;
		return CLI_FAIL;
	}
	if (cli_check(*rep, "add --batch") != CLI_OK)
		return CLI_FAIL;
	if ((*rep)->granted->payload_case != BERTH__GRANTED__PAYLOAD_ADD_BATCH ||
	    (*rep)->granted->add_batch->n_tickets != to - from) {
		cli_fail("add --batch: the coordinator's reply does not carry %zu ticket ids",
			 to - from);
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* What a failed batch leaves: lines before from were queued (their ids are
 * on stdout), those of the failed chunk [from, to) were not or, when no
 * answer came, may have been, and the rest were not. */
static void
batch_report(const struct cli_batch *b, size_t from, size_t to, int unknown)
{
	char done[64] = "", chunk[64], rest[64] = "";

	if (from > 0)
		batch_span(b, 0, from - 1, done, sizeof done);
	if (!unknown) {
		batch_span(b, from, b->n - 1, rest, sizeof rest);
		if (from > 0)
			cli_fail("add --batch: %s were queued (their ids are above); %s were not",
				 done, rest);
		else
			cli_fail("add --batch: nothing was queued (%s)", rest);
		return;
	}
	batch_span(b, from, to - 1, chunk, sizeof chunk);
	if (to < b->n)
		batch_span(b, to, b->n - 1, rest, sizeof rest);
	cli_fail("add --batch: %s%s%sno answer came for %s: they may or may not be queued "
		 "(berth list shows them if they are)%s%s%s",
		 from > 0 ? done : "", from > 0 ? " were queued (their ids are above)" : "",
		 from > 0 ? "; " : "", chunk, to < b->n ? "; " : "", rest,
		 to < b->n ? " were not" : "");
}

/*
 * Any number of lines, in chunks (BERTH_BATCH_CHUNK lines and at most
 * BERTH_BATCH_CHUNK_BYTES each), one transaction each: each chunk's ids are
 * printed as it is queued, and a failure says which lines were queued and
 * which were not.
 */
static int
add_batch(Berth__Add **addp, const struct cli_batch *lines)
{
	struct rpc_client *c;
	Berth__Reply *rep;
	size_t from = 0, to, i, bytes;
	int rc = CLI_OK, unknown;

	if ((c = cli_connect()) == NULL)
		return CLI_FAIL;
	while (from < lines->n) {
		bytes = 0;
		for (to = from; to < lines->n && to - from < BERTH_BATCH_CHUNK; to++) {
			bytes += berth__add__get_packed_size(addp[to]) + 8;
			if (bytes > BERTH_BATCH_CHUNK_BYTES && to > from)
				break;
		}
		if (batch_chunk(c, addp, from, to, &rep, &unknown) != CLI_OK) {
			batch_report(lines, from, to, unknown);
			if (rep != NULL)
				berth__reply__free_unpacked(rep, NULL);
			rc = CLI_FAIL;
			break;
		}
		for (i = 0; i < rep->granted->add_batch->n_tickets; i++)
			printf("%s\n", cli_esc(rep->granted->add_batch->tickets[i]));
		fflush(stdout);
		berth__reply__free_unpacked(rep, NULL);
		from = to;
	}
	rpc_client_close(c);
	return rc;
}

/* --after's ids as tickets ("3" is T3), rewritten in place; -1 when one
 * is not a ticket id. */
static int
after_ids(char **ids, size_t n)
{
	char buf[CLI_ID_MAX], *d;
	size_t i;

	for (i = 0; i < n; i++) {
		if (cli_parse_id(ids[i], buf, sizeof buf) != CLI_ID_TICKET ||
		    (d = strdup(buf)) == NULL)
			return -1;
		free(ids[i]);
		ids[i] = d;
	}
	return 0;
}

/* A canonical existing directory; NULL after a usage error. */
static char *
canonical_dir(const char *cmd, const char *d)
{
	struct stat st;
	char *p;

	if ((p = realpath(d, NULL)) == NULL) {
		cli_usage_error(cmd, "working directory %s: %s", d, strerror(errno));
		return NULL;
	}
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cli_usage_error(cmd, "working directory %s is not a directory", d);
		free(p);
		return NULL;
	}
	return p;
}

int
cmd_add(int argc, char **argv)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add add = BERTH__ADD__INIT;
	Berth__Add *adds = NULL, **addp = NULL;
	Berth__Reply *rep = NULL;
	struct cli_batch lines = { NULL, NULL, 0 };
	char **after = NULL, **given = NULL, **env = NULL, **newg, **sh_argv = NULL;
	char **labels = NULL;
	const char *batch_file = NULL, *when_opt = NULL;
	char *workdir = NULL, err[256];
	size_t nafter = 0, ngiven = 0, nenv = 0, i;
	long long num;
	int64_t ms;
	int c, rc = CLI_USAGE, clean_env = 0;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "+h", add_opts)) != -1) {
		switch (c) {
		case 'h':
			fputs(add_usage, stdout);
			rc = CLI_OK;
			goto out;
		case OPT_NAME: add.name = optarg; break;
		case OPT_AFTER:
		case OPT_AFTER_ANY:
			if (after != NULL && add.after_any != (c == OPT_AFTER_ANY)) {
				cli_usage_error(argv[0],
						"--after and --after-any exclude each other");
				goto out;
			}
			vec_free_str(after);
			after = NULL;
			if (cli_split_list(optarg, &after, &nafter) < 0 ||
			    after_ids(after, nafter) < 0) {
				cli_usage_error(argv[0],
						"%s: bad list '%s' (use ID,ID,...: T3 or 3)",
						c == OPT_AFTER ? "--after" : "--after-any", optarg);
				goto out;
			}
			add.has_after_any = c == OPT_AFTER_ANY;
			add.after_any = c == OPT_AFTER_ANY;
			break;
		case OPT_KEY:
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--key: empty key");
				goto out;
			}
			add.key = optarg;
			break;
		case OPT_WORKDIR:
			free(workdir);
			if ((workdir = canonical_dir(argv[0], optarg)) == NULL)
				goto out;
			break;
		case OPT_TIMEOUT:
			if (cli_opt_dur(argv[0], "--timeout", optarg, 1, INT64_MAX, &ms) != CLI_OK)
				goto out;
			add.has_timeout_ms = 1;
			add.timeout_ms = ms;
			break;
		case OPT_RETRIES:
			if (cli_opt_int(argv[0], "--retries", optarg, 0, 1000000, &num) != CLI_OK)
				goto out;
			add.has_retries = 1;
			add.retries = (uint32_t)num;
			break;
		case OPT_AT:
		case OPT_IN:
		case OPT_EVERY:
			if (when_opt != NULL) {
				cli_usage_error(argv[0], "--%s and %s exclude each other",
						c == OPT_AT   ? "at"
						: c == OPT_IN ? "in"
							      : "every",
						when_opt);
				goto out;
			}
			when_opt = c == OPT_AT ? "--at" : c == OPT_IN ? "--in" : "--every";
			if (c == OPT_AT && cli_parse_at(optarg, clock_wall_ms(), &ms) < 0) {
				cli_usage_error(argv[0],
						"--at: bad time '%s' (use HH:MM[:SS] or "
						"YYYY-MM-DD HH:MM[:SS])",
						optarg);
				goto out;
			}
			if (c == OPT_IN) {
				if (cli_opt_dur(argv[0], "--in", optarg, 0,
						INT64_MAX - clock_wall_ms(), &ms) != CLI_OK)
					goto out;
				ms += clock_wall_ms();
			}
			if (c == OPT_EVERY) {
				/* A floor, so that a typo (1ms for 1m) cannot
				 * turn the queue into a busy loop. */
				if (cli_opt_dur(argv[0], "--every", optarg, ADD_EVERY_MIN_MS,
						INT64_MAX, &ms) != CLI_OK)
					goto out;
				add.has_every_ms = 1;
				add.every_ms = ms;
			} else {
				add.has_at_ms = 1;
				add.at_ms = ms;
			}
			break;
		case OPT_HOLD:
			add.has_hold = 1;
			add.hold = 1;
			break;
		case OPT_PRIORITY:
			if (cli_opt_int(argv[0], "--priority", optarg, INT32_MIN, INT32_MAX,
					&num) != CLI_OK)
				goto out;
			add.has_priority = 1;
			add.priority = (int32_t)num;
			break;
		case OPT_ENV:
			if (cli_parse_env(optarg) < 0) {
				cli_usage_error(argv[0], "--env: expected NAME=VALUE, got '%s'",
						optarg);
				goto out;
			}
			if ((newg = realloc(given, (ngiven + 2) * sizeof *given)) == NULL) {
				rc = cli_fail("out of memory");
				goto out;
			}
			given = newg;
			given[ngiven++] = optarg;
			given[ngiven] = NULL;
			break;
		case OPT_BATCH: batch_file = optarg; break;
		case OPT_ISOLATE:
			add.has_isolate = 1;
			add.isolate = 1;
			break;
		case OPT_CLEAN_ENV: clean_env = 1; break;
		case OPT_HOST:
		case OPT_ON:
			if (cli_opt_place(argv[0], c == OPT_HOST, optarg, &add.host, &labels,
					  &add.n_labels) != CLI_OK)
				goto out;
			add.labels = labels;
			break;
		default: goto out;
		}
	}
	if (batch_file != NULL && optind < argc) {
		cli_usage_error(argv[0], "--batch takes its commands from the file, not after --");
		goto out;
	}
	if (batch_file == NULL && optind >= argc) {
		cli_usage_error(argv[0], "missing command (berth add [OPTIONS] -- CMD [ARG...])");
		goto out;
	}
	if (batch_file == NULL && argv[optind][0] == '\0') {
		cli_usage_error(argv[0], "empty command");
		goto out;
	}
	if (workdir == NULL) {
		/* The job runs where it was queued, but only a named --workdir
		 * claims the working tree as a seat (Add.workdir_default). */
		if ((workdir = canonical_dir(argv[0], ".")) == NULL)
			goto out;
		add.has_workdir_default = 1;
		add.workdir_default = 1;
	}
	if (build_env(given, ngiven, clean_env, &env, &nenv) < 0) {
		rc = cli_fail("out of memory");
		goto out;
	}
	add.workdir = workdir;
	add.env = env;
	add.n_env = nenv;
	add.after = after;
	add.n_after = nafter;

	if (batch_file == NULL) {
		add.argv = argv + optind;
		add.n_argv = (size_t)(argc - optind);
		if (msg_add_limits(&add, err, sizeof err) != 0) {
			cli_usage_error(argv[0], "%s", err);
			goto out;
		}
		req.verb_case = BERTH__REQUEST__VERB_ADD;
		req.add = &add;
		if ((rc = cli_request(&req, &rep, "add")) != CLI_OK)
			goto out;
		if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_ADD ||
		    rep->granted->add->ticket == NULL) {
			rc = cli_fail("add: the coordinator's reply carries no ticket id");
			goto out;
		}
		printf("%s\n", cli_esc(rep->granted->add->ticket));
		goto out;
	}

	if (strcmp(batch_file, "-") == 0) {
		if (cli_batch_read(stdin, &lines, err, sizeof err) < 0) {
			cli_usage_error(argv[0], "--batch -: %s", err);
			goto out;
		}
	} else {
		FILE *f = fopen(batch_file, "r");

		if (f == NULL) {
			cli_usage_error(argv[0], "--batch %s: %s", batch_file, strerror(errno));
			goto out;
		}
		c = cli_batch_read(f, &lines, err, sizeof err);
		fclose(f);
		if (c < 0) {
			cli_usage_error(argv[0], "--batch %s: %s", batch_file, err);
			goto out;
		}
	}
	adds = calloc(lines.n, sizeof *adds);
	addp = calloc(lines.n, sizeof *addp);
	sh_argv = calloc(lines.n * 3, sizeof *sh_argv);
	if (adds == NULL || addp == NULL || sh_argv == NULL) {
		rc = cli_fail("out of memory");
		goto out;
	}
	for (i = 0; i < lines.n; i++) {
		adds[i] = add;
		sh_argv[3 * i] = (char *)"sh";
		sh_argv[3 * i + 1] = (char *)"-c";
		sh_argv[3 * i + 2] = lines.lines[i];
		adds[i].argv = sh_argv + 3 * i;
		adds[i].n_argv = 3;
		addp[i] = &adds[i];
		/* Every line within the limits before the first is sent. */
		if (msg_add_limits(&adds[i], err, sizeof err) != 0) {
			cli_usage_error(argv[0], "--batch %s: line %ld: %s", batch_file,
					lines.lineno[i], err);
			goto out;
		}
	}
	rc = add_batch(addp, &lines);
out:
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
	cli_batch_free(&lines);
	vec_free_str(after);
	vec_free_str(labels);
	vec_free_str(env);
	free(given);
	free(workdir);
	free(adds);
	free(addp);
	free(sh_argv);
	return rc;
}
