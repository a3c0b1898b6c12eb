/* Worker verbs: what a job started by berth may say about its own run. The
 * run id, token and socket come from the environment the shim gave the job
 * (BERTH_RUN_ID, BERTH_TOKEN, BERTH_SOCKET); the coordinator checks the token
 * against the run, so a job can speak for itself and for nothing else. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char progress_usage[] =
	"usage: berth progress I/N [LABEL]\n"
	"\n"
	"Worker verb: report that the job is at step I of N, optionally naming\n"
	"the step. Shown by 'berth status' as a progress bar.\n";
static const char heartbeat_usage[] = "usage: berth heartbeat\n"
				      "\n"
				      "Worker verb: say that the job is alive and working.\n";
static const char note_usage[] =
	"usage: berth note TEXT\n"
	"\n"
	"Worker verb: attach a line of text to the run (shown by 'berth show').\n";
static const char should_stop_usage[] =
	"usage: berth should-stop\n"
	"       berth should-stop --seat ITEM [--owner O]\n"
	"\n"
	"Exit 0 when a stop was requested (the reason is printed), 1 when not,\n"
	"2 on an error. Without --seat it is a worker verb about the job's own\n"
	"run; with --seat it asks whether someone ran 'berth seat stop ITEM'.\n";

/* Parses only --help; returns -1 to go on, else the exit status. */
static int
only_help(int argc, char **argv, const char *usage)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	/* A negative number ("progress -1/3") is an argument, and a wrong
	 * one, not an unknown option -1: let the command say what is wrong. */
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] >= '0' && argv[1][1] <= '9') {
		optind = 1;
		return -1;
	}
	/* '+': a note or label may itself start with '-' after "--". */
	while ((c = cli_getopt(argc, argv, "+h", opts)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return CLI_OK;
		}
		return CLI_USAGE;
	}
	return -1;
}

/* One worker request; CLI_OK with *rep granted, else the exit status
 * (fail_rc for a refusal or an unreachable coordinator). */
static int
worker_call(const char *cmd, Berth__Request *req, Berth__Reply **rep, int fail_rc)
{
	struct rpc_client *c;
	const char *run_id;
	char what[64];
	int rc = fail_rc;

	*rep = NULL;
	if ((c = cli_connect_worker(cmd, &run_id)) == NULL)
		return CLI_USAGE;
	snprintf(what, sizeof what, "%s", cmd);
	if (cli_call(c, req, rep, cli_timeout_ms(), 0) == 0) {
		if (cli_check(*rep, what) == CLI_OK) {
			rc = CLI_OK;
		} else {
			berth__reply__free_unpacked(*rep, NULL);
			*rep = NULL;
		}
	}
	rpc_client_close(c);
	return rc;
}

static const char *
run_id_env(void)
{
	const char *r = getenv("BERTH_RUN_ID");

	return r ? r : "";
}

int
cmd_progress(int argc, char **argv)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Progress p = BERTH__PROGRESS__INIT;
	Berth__Reply *rep;
	int64_t i, n;
	int rc;

	if ((rc = only_help(argc, argv, progress_usage)) >= 0)
		return rc;
	if (optind >= argc)
		return cli_usage_error(argv[0], "missing I/N");
	if (cli_parse_frac(argv[optind], &i, &n) < 0)
		return cli_usage_error(
			argv[0],
			"bad I/N '%s' (use e.g. 3/10: whole numbers with 0 <= I <= N "
			"and N at least 1)",
			argv[optind]);
	if (optind + 2 < argc)
		return cli_usage_error(argv[0], "one LABEL (quote it: got '%s' too)",
				       argv[optind + 2]);
	p.run_id = (char *)run_id_env();
	p.has_index = p.has_total = 1;
	p.index = i;
	p.total = n;
	p.label = optind + 1 < argc ? argv[optind + 1] : NULL;
	req.verb_case = BERTH__REQUEST__VERB_PROGRESS;
	req.progress = &p;
	if ((rc = worker_call(argv[0], &req, &rep, CLI_FAIL)) != CLI_OK)
		return rc;
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

int
cmd_heartbeat(int argc, char **argv)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__WorkerRef w = BERTH__WORKER_REF__INIT;
	Berth__Reply *rep;
	int rc;

	if ((rc = only_help(argc, argv, heartbeat_usage)) >= 0)
		return rc;
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	w.run_id = (char *)run_id_env();
	req.verb_case = BERTH__REQUEST__VERB_HEARTBEAT;
	req.heartbeat = &w;
	if ((rc = worker_call(argv[0], &req, &rep, CLI_FAIL)) != CLI_OK)
		return rc;
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

int
cmd_note(int argc, char **argv)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Note note = BERTH__NOTE__INIT;
	Berth__Reply *rep;
	int rc;

	if ((rc = only_help(argc, argv, note_usage)) >= 0)
		return rc;
	if (optind >= argc || argv[optind][0] == '\0')
		return cli_usage_error(argv[0], "missing TEXT");
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one TEXT (quote it: got '%s' too)",
				       argv[optind + 1]);
	note.run_id = (char *)run_id_env();
	note.text = argv[optind];
	req.verb_case = BERTH__REQUEST__VERB_NOTE;
	req.note = &note;
	if ((rc = worker_call(argv[0], &req, &rep, CLI_FAIL)) != CLI_OK)
		return rc;
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

/* `should-stop --seat ITEM`: a seat holder asks whether a stop was asked of
 * it (DESIGN §8: a stop request annotates the seat, the holder reads it). */
static int
seat_should_stop(const char *item, const char *owner)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatRelease ref = BERTH__SEAT_RELEASE__INIT;
	Berth__Reply *rep = NULL;
	struct rpc_client *c;
	const Berth__Seat *s;
	char what[256];
	int rc = CLI_USAGE;

	ref.item = (char *)item;
	ref.owner = (char *)owner;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_SHOW;
	req.seat_show = &ref;
	snprintf(what, sizeof what, "should-stop --seat %s", item);
	if ((c = cli_connect()) == NULL)
		return CLI_USAGE;
	if (cli_call(c, &req, &rep, cli_timeout_ms(), 0) < 0 || cli_check(rep, what) != CLI_OK)
		goto out;
	if ((s = cli_seat_of(rep)) == NULL) {
		cli_fail("%s: no such seat", what);
		goto out;
	}
	if (s->stop_reason && *s->stop_reason) {
		printf("stop requested: %s\n", cli_esc(s->stop_reason));
		rc = CLI_OK;
	} else {
		rc = CLI_FAIL;
	}
out:
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
	rpc_client_close(c);
	return rc;
}

int
cmd_should_stop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "seat", required_argument, NULL, 's' },
		{ "owner", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__WorkerRef w = BERTH__WORKER_REF__INIT;
	Berth__Reply *rep;
	const char *seat = NULL, *owner = NULL;
	int c, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hs:o:", opts)) != -1) {
		switch (c) {
		case 'h': fputs(should_stop_usage, stdout); return CLI_OK;
		case 's': seat = optarg; break;
		case 'o': owner = optarg; break;
		default: return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	if (seat != NULL) {
		if (*seat == '\0')
			return cli_usage_error(argv[0], "--seat: empty item");
		return seat_should_stop(seat, owner);
	}
	if (owner != NULL)
		return cli_usage_error(argv[0], "--owner goes with --seat");
	w.run_id = (char *)run_id_env();
	req.verb_case = BERTH__REQUEST__VERB_SHOULD_STOP;
	req.should_stop = &w;
	/* 1 means "keep going": a failure must not look like that answer. */
	if ((rc = worker_call(argv[0], &req, &rep, CLI_USAGE)) != CLI_OK)
		return rc;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SHOULD_STOP) {
		berth__reply__free_unpacked(rep, NULL);
		cli_fail("should-stop: unexpected reply from the coordinator");
		return CLI_USAGE;
	}
	rc = rep->granted->should_stop->stop ? CLI_OK : CLI_FAIL;
	if (rc == CLI_OK)
		printf("stop requested: %s\n",
		       cli_esc(rep->granted->should_stop->reason &&
					       *rep->granted->should_stop->reason
				       ? rep->granted->should_stop->reason
				       : "stop"));
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}
