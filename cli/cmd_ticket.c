/* Operator verbs on one ticket (hold, release, retry, cancel) and `berth
 * wait`, which outlives coordinator restarts: it keeps asking until every
 * ticket has settled or its own deadline passes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "util.h"

struct ticket_verb {
	const char *name;
	Berth__Request__VerbCase verb;
	const char *help;
};

static const struct ticket_verb verbs[] = {
    {"hold", BERTH__REQUEST__VERB_HOLD,
     "Keep a ready ticket from running until 'berth release'. A claimed\n"
     "(running) ticket cannot be held.\n"},
    {"release", BERTH__REQUEST__VERB_RELEASE, "Let a held ticket run again.\n"},
    {"retry", BERTH__REQUEST__VERB_RETRY,
     "Run a failed or cancelled ticket again, with a fresh retry budget.\n"},
    {"cancel", BERTH__REQUEST__VERB_CANCEL,
     "Cancel a ticket. A running job is stopped (SIGTERM, then SIGKILL after a\n"
     "grace period) and its run settles 'cancelled'.\n"},
};

/* One TicketRef verb; prints "ID STATE" of the ticket afterwards. */
static int ticket_verb(const struct ticket_verb *v, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	Berth__Reply *rep = NULL;
	const Berth__Ticket *t;
	char what[128];
	int c, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'h') {
			printf("usage: berth %s ID\n\n%s", v->name, v->help);
			return CLI_OK;
		}
		return CLI_USAGE;
	}
	if (optind >= argc)
		return cli_usage_error(argv[0], "missing ticket ID");
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one ID at a time (got '%s' too)",
		                       argv[optind + 1]);
	if (argv[optind][0] == '\0')
		return cli_usage_error(argv[0], "empty ID");
	ref.id = argv[optind];
	req.verb_case = v->verb;
	/* hold, release, retry and cancel share one union member type. */
	switch (v->verb) {
	case BERTH__REQUEST__VERB_HOLD:
		req.hold = &ref;
		break;
	case BERTH__REQUEST__VERB_RELEASE:
		req.release = &ref;
		break;
	case BERTH__REQUEST__VERB_RETRY:
		req.retry = &ref;
		break;
	default:
		req.cancel = &ref;
		break;
	}
	snprintf(what, sizeof what, "%s %s", v->name, ref.id);
	if ((rc = cli_request(&req, &rep, what)) != CLI_OK)
		return rc;
	if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_TICKET) {
		t = rep->granted->ticket;
		/* A cancel of a running ticket records a stop request; the
		 * ticket settles once the run has been stopped. */
		if (v->verb == BERTH__REQUEST__VERB_CANCEL && !cli_ticket_settled(t->state))
			printf("%s %s, stop requested\n", cli_esc(t->id ? t->id : ref.id),
			       cli_esc(t->state));
		else
			printf("%s %s\n", cli_esc(t->id ? t->id : ref.id), cli_esc(t->state));
	} else {
		printf("%s\n", cli_esc(ref.id));
	}
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

int cmd_hold(int argc, char **argv)
{
	return ticket_verb(&verbs[0], argc, argv);
}

int cmd_release(int argc, char **argv)
{
	return ticket_verb(&verbs[1], argc, argv);
}

int cmd_retry(int argc, char **argv)
{
	return ticket_verb(&verbs[2], argc, argv);
}

int cmd_cancel(int argc, char **argv)
{
	return ticket_verb(&verbs[3], argc, argv);
}

static const char wait_usage[] =
    "usage: berth wait ID... [--timeout DUR]\n"
    "\n"
    "Wait until every ticket has settled (succeeded, failed or cancelled).\n"
    "Keeps waiting while the coordinator restarts.\n"
    "\n"
    "  --timeout DUR   give up after DUR\n"
    "  --quiet         do not print each ticket's final state\n"
    "\n"
    "Exit status: 0 when all succeeded, 1 when any failed or was cancelled,\n"
    "2 on a usage error, an unknown ticket, or the timeout.\n";

/* The least time the first question of a wait gets, whatever its --timeout. */
#define WAIT_FIRST_MS 1000

static int wait_show(struct rpc_client *cl, const char *id, Berth__Reply **rep, int timeout_ms)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show show = BERTH__SHOW__INIT;

	show.id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &show;
	return cli_call(cl, &req, rep, timeout_ms, 1);
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"timeout", required_argument, NULL, 't'},
	    {"quiet", no_argument, NULL, 'q'},
	    {NULL, 0, NULL, 0},
	};
	const Berth__Ticket *t;
	Berth__Reply *rep;
	struct rpc_client *cl = NULL;
	char **ids, **state = NULL, d[32], what[128];
	int64_t timeout = -1, deadline = 0, now;
	int c, nids, i, left, quiet = 0, rc = CLI_USAGE, all_ok = 1, call_ms, pass;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "ht:q", opts)) != -1) {
		switch (c) {
		case 'h':
			fputs(wait_usage, stdout);
			return CLI_OK;
		case 't':
			if (cli_parse_dur(optarg, 0, &timeout) < 0)
				return cli_usage_error(argv[0], "--timeout: bad duration '%s'",
				                       optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error(argv[0], "missing ticket ID");
	ids = argv + optind;
	nids = argc - optind;
	for (i = 0; i < nids; i++)
		if (ids[i][0] == '\0')
			return cli_usage_error(argv[0], "empty ID");
	if ((state = calloc((size_t)nids, sizeof *state)) == NULL)
		return cli_fail("out of memory");
	/* No group at all: exit 2, not 1, so a script never reads "could not
	 * wait" as "a ticket failed". */
	if ((cl = cli_connect()) == NULL)
		goto out;
	/* A timeout beyond the clock's range is no deadline at all. */
	if (timeout >= 0 && timeout <= INT64_MAX - clock_mono_ms())
		deadline = clock_mono_ms() + timeout;
	left = nids;
	for (pass = 0;; pass++) {
		for (i = 0; i < nids; i++) {
			if (state[i] != NULL)
				continue;
			call_ms = cli_timeout_ms();
			/* Every ticket is asked at least once (given up to a
			 * second to answer), so --timeout 0 checks without
			 * waiting instead of always timing out. */
			if (deadline != 0) {
				now = clock_mono_ms();
				if (now >= deadline && pass > 0)
					goto timeout;
				if (deadline - now < call_ms)
					call_ms = (int)(deadline - now);
				if (pass == 0 && call_ms < WAIT_FIRST_MS)
					call_ms = WAIT_FIRST_MS < cli_timeout_ms() ? WAIT_FIRST_MS
					                                           : cli_timeout_ms();
			}
			/* Quiet: an unanswered call is a restart to wait out,
			 * not a failure; the deadline decides. */
			if (wait_show(cl, ids[i], &rep, call_ms < 1 ? 1 : call_ms) < 0)
				continue;
			if (rep->result_case != BERTH__REPLY__RESULT_GRANTED ||
			    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_TICKET) {
				/* Only a verdict on the id ends the wait; a busy or
				 * failing coordinator is asked again. */
				if (rep->result_case == BERTH__REPLY__RESULT_ERROR &&
				    (rep->error->code == BERTH__ERROR_CODE__ERR_BUSY ||
				     rep->error->code == BERTH__ERROR_CODE__ERR_STORAGE)) {
					berth__reply__free_unpacked(rep, NULL);
					continue;
				}
				snprintf(what, sizeof what, "wait %s", ids[i]);
				if (cli_check(rep, what) == CLI_OK)
					cli_fail("%s: unexpected reply from the coordinator", what);
				berth__reply__free_unpacked(rep, NULL);
				goto out; /* exit 2: unknown ticket */
			}
			t = rep->granted->ticket;
			if (cli_ticket_settled(t->state)) {
				if ((state[i] = strdup(t->state)) == NULL) {
					berth__reply__free_unpacked(rep, NULL);
					rc = cli_fail("out of memory");
					goto out;
				}
				if (strcmp(t->state, "succeeded") != 0)
					all_ok = 0;
				left--;
			}
			berth__reply__free_unpacked(rep, NULL);
		}
		if (left == 0)
			break;
		if (deadline != 0 && clock_mono_ms() >= deadline)
			goto timeout;
		sleep_ms(150);
	}
	if (!quiet)
		for (i = 0; i < nids; i++)
			printf("%s %s\n", cli_esc(ids[i]), cli_esc(state[i]));
	rc = all_ok ? CLI_OK : CLI_FAIL;
	goto out;
timeout:
	dur_format(timeout, d, sizeof d);
	fprintf(stderr, "berth wait: timed out after %s;", d);
	for (i = 0; i < nids; i++)
		if (state[i] == NULL)
			fprintf(stderr, " %s", cli_esc(ids[i]));
	fprintf(stderr, " not settled\n");
	rc = CLI_USAGE;
out:
	if (cl != NULL)
		rpc_client_close(cl);
	for (i = 0; state != NULL && i < nids; i++)
		free(state[i]);
	free(state);
	return rc;
}
