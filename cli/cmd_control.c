/* Runtime control of a running group: berth slots, berth pause, berth
 * resume. The coordinator keeps what they set (for the life of the group's
 * launch) and its claim guard and the supervisors follow; no running job
 * is touched. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char slots_usage[] =
	"usage: berth slots [N] [--json]\n"
	"\n"
	"Change how many jobs the running group runs at once, from now until it\n"
	"stops (the next 'berth up' starts with its own slots). Without N,\n"
	"print the number. Fewer slots stop no running job: fewer are started\n"
	"until the count is below N.\n"
	"\n"
	"  --json   the group's settings as one JSON object\n";

static const char pause_usage[] =
	"usage: berth pause [--json]\n"
	"\n"
	"Stop starting jobs: nothing queued is claimed until 'berth resume'.\n"
	"Running jobs go on. Lasts until the group stops.\n"
	"\n"
	"  --json   the group's settings as one JSON object\n";

static const char resume_usage[] = "usage: berth resume [--json]\n"
				   "\n"
				   "Start jobs again after 'berth pause'.\n"
				   "\n"
				   "  --json   the group's settings as one JSON object\n";

/* The group's slots, in words. */
static void
say_slots(const Berth__GroupSettings *g)
{
	if (g->slots > 0 && g->supervisor_slots > 0 && g->slots != g->supervisor_slots)
		printf("slots: %u (set by berth slots; the supervisor was started with %u)\n",
		       g->slots, g->supervisor_slots);
	else if (g->slots > 0)
		printf("slots: %u (set by berth slots)\n", g->slots);
	else if (g->supervisor_slots > 0)
		printf("slots: %u (the supervisor's --slots)\n", g->supervisor_slots);
	else
		printf("slots: the supervisor's --slots (no supervisor has said hello yet)\n");
}

static void
group_json(const Berth__GroupSettings *g)
{
	printf("{\"slots\":%u,\"supervisor_slots\":%u,\"paused\":%s}\n",
	       g->slots > 0 ? g->slots : g->supervisor_slots, g->supervisor_slots,
	       g->paused ? "true" : "false");
}

/* One request whose reply carries the settings (a GroupSettings, or a
 * status reply for a plain `berth slots`). */
static int
group_call(Berth__Request *req, const char *what, int json,
	   void (*say)(const Berth__GroupSettings *))
{
	const Berth__GroupSettings *g = NULL;
	Berth__Reply *rep;
	int rc;

	if ((rc = cli_request(req, &rep, what)) != CLI_OK)
		return rc;
	if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_GROUP)
		g = rep->granted->group;
	else if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_STATUS)
		g = rep->granted->status->group;
	if (g == NULL) {
		berth__reply__free_unpacked(rep, NULL);
		return cli_fail("%s: the coordinator does not know this (an older coordinator?)",
				what);
	}
	if (json)
		group_json(g);
	else
		say(g);
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

/* --help and --json only; the first non-option argument in *arg. */
static int
group_opts(int argc, char **argv, const char *usage, int *json, const char **arg, int max_args)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*json = 0;
	*arg = NULL;
	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h': fputs(usage, stdout); return CLI_OK;
		case 'j': *json = 1; break;
		default: return CLI_USAGE;
		}
	}
	if (argc - optind > max_args)
		return cli_usage_error(argv[0], "unexpected argument '%s'",
				       argv[optind + max_args]);
	if (optind < argc)
		*arg = argv[optind];
	return -1;
}

int
cmd_slots(int argc, char **argv)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Slots s = BERTH__SLOTS__INIT;
	Berth__Status st = BERTH__STATUS__INIT;
	const char *arg;
	long long n;
	int json, rc;

	if ((rc = group_opts(argc, argv, slots_usage, &json, &arg, 1)) >= 0)
		return rc;
	if (arg == NULL) {
		req.verb_case = BERTH__REQUEST__VERB_STATUS;
		req.status = &st;
		return group_call(&req, "slots", json, say_slots);
	}
	if (cli_opt_int(argv[0], "N", arg, 1, 1024, &n) != CLI_OK)
		return CLI_USAGE;
	s.has_slots = 1;
	s.slots = (uint32_t)n;
	req.verb_case = BERTH__REQUEST__VERB_SLOTS;
	req.slots = &s;
	return group_call(&req, "slots", json, say_slots);
}

static void
say_paused(const Berth__GroupSettings *g)
{
	if (g->paused)
		printf("paused: no job is started until 'berth resume'; running jobs go on\n");
	else
		printf("resumed: queued jobs start again\n");
}

static int
pause_resume(int argc, char **argv, const char *usage, Berth__Request__VerbCase v)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__GroupRef g = BERTH__GROUP_REF__INIT;
	const char *arg;
	int json, rc;

	if ((rc = group_opts(argc, argv, usage, &json, &arg, 0)) >= 0)
		return rc;
	req.verb_case = v;
	/* pause and resume share one union member type. */
	req.pause = &g;
	return group_call(&req, argv[0], json, say_paused);
}

int
cmd_pause(int argc, char **argv)
{
	return pause_resume(argc, argv, pause_usage, BERTH__REQUEST__VERB_PAUSE);
}

int
cmd_resume(int argc, char **argv)
{
	return pause_resume(argc, argv, resume_usage, BERTH__REQUEST__VERB_RESUME);
}
