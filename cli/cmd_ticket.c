/* Operator verbs on tickets (hold, release, retry, cancel), each on one or
 * several ids, and `berth wait`, which outlives coordinator restarts: it
 * keeps asking until every ticket has settled or its own deadline passes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "json.h"
#include "util.h"

struct ticket_verb {
	const char *name;
	Berth__Request__VerbCase verb;
	const char *help;
};

static const struct ticket_verb verbs[] = {
	{ "hold", BERTH__REQUEST__VERB_HOLD,
	  "Keep ready tickets from running until 'berth release'. A claimed\n"
	  "(running) ticket cannot be held.\n" },
	{ "release", BERTH__REQUEST__VERB_RELEASE, "Let held tickets run again.\n" },
	{ "retry", BERTH__REQUEST__VERB_RETRY,
	  "Run failed or cancelled tickets again, with a fresh retry budget. Tickets\n"
	  "that ended dependency_failed because of one of them are queued again too.\n" },
	{ "cancel", BERTH__REQUEST__VERB_CANCEL,
	  "Cancel tickets. A running job is stopped (SIGTERM, then SIGKILL after a\n"
	  "grace period) and its run settles 'cancelled'.\n" },
};

static const char verb_options[] =
	"\n"
	"ID is a ticket (T3, or just 3), a run alias (T3-r1), a run id or its\n"
	"first 8+ hex digits, or 'last' (the newest ticket). Each ID is done on\n"
	"its own: what worked is printed, each refusal is said on stderr, and the\n"
	"exit status is 1 when any was refused.\n"
	"\n"
	"  --json   a JSON array of the changed tickets on stdout; each refusal a\n"
	"           JSON object {id, verb, reason, facts, message} on stderr\n";

/* A refusal under --json: the machine code and facts for a program, with
 * the sentence a person would have read. */
static void
refusal_json(const char *verb, const char *id, const Berth__Reply *rep)
{
	char text[768];
	size_t i;

	fputs("{\"id\":", stderr);
	json_str(stderr, id);
	fputs(",\"verb\":", stderr);
	json_str(stderr, verb);
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED) {
		fputs(",\"reason\":", stderr);
		json_str(stderr, rep->denied->reason ? rep->denied->reason : "");
		fputs(",\"facts\":{", stderr);
		for (i = 0; i < rep->denied->n_facts; i++) {
			const Berth__Fact *f = rep->denied->facts[i];

			if (i > 0)
				fputc(',', stderr);
			json_str(stderr, f->key ? f->key : "");
			fputc(':', stderr);
			json_str(stderr, f->value ? f->value : "");
		}
		fputc('}', stderr);
		cli_denial_text(verb, id, rep->denied, text, sizeof text);
	} else if (rep->result_case == BERTH__REPLY__RESULT_ERROR) {
		fputs(",\"error\":true", stderr);
		snprintf(text, sizeof text, "%s", rep->error->message ? rep->error->message : "");
	} else {
		snprintf(text, sizeof text, "unexpected reply");
	}
	fputs(",\"message\":", stderr);
	json_str(stderr, text);
	fputs("}\n", stderr);
}

/* "T4 held", or with a stop requested "T2 claimed, stop requested". */
static void
print_done(const struct ticket_verb *v, const char *id, const Berth__Reply *rep)
{
	const Berth__Ticket *t;

	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_TICKET) {
		printf("%s\n", cli_esc(id));
		return;
	}
	t = rep->granted->ticket;
	/* A cancel of a running ticket records a stop request; the ticket
	 * settles once the run has been stopped. */
	printf("%s %s%s\n", cli_esc(t->id ? t->id : id), cli_esc(t->state),
	       v->verb == BERTH__REQUEST__VERB_CANCEL && !cli_ticket_settled(t->state)
		       ? ", stop requested"
		       : "");
}

struct verb_run {
	const struct ticket_verb *v;
	int json;
	int done; /* changed tickets printed so far */
};

/* One id's answer: "ID STATE", or its JSON; a refusal as a sentence, or
 * as JSON with its code. */
static int
verb_each(void *arg, const char *id, const Berth__Reply *rep)
{
	struct verb_run *vr = arg;

	if (rep->result_case != BERTH__REPLY__RESULT_GRANTED) {
		if (vr->json)
			refusal_json(vr->v->name, id, rep);
		else
			cli_check_id(rep, vr->v->name, id);
		return -1;
	}
	if (!vr->json) {
		print_done(vr->v, id, rep);
		return 0;
	}
	/* Nothing on stdout unless something was done. */
	fputc(vr->done++ > 0 ? ',' : '[', stdout);
	if (rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_TICKET)
		cli_json_ticket(stdout, rep->granted->ticket, 0);
	else
		json_str(stdout, id);
	return 0;
}

/* One TicketRef verb per id; prints "ID STATE" of each changed ticket. */
static int
ticket_verb(const struct ticket_verb *v, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct verb_run vr = { v, 0, 0 };
	int c, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: berth %s ID... [--json]\n\n%s%s", v->name, v->help,
			       verb_options);
			return CLI_OK;
		case 'j': vr.json = 1; break;
		default: return CLI_USAGE;
		}
	}
	rc = cli_each_id(argv[0], argc - optind, argv + optind, v->verb, verb_each, &vr);
	if (vr.done > 0)
		fputs("]\n", stdout);
	return rc;
}

int
cmd_hold(int argc, char **argv)
{
	return ticket_verb(&verbs[0], argc, argv);
}

int
cmd_release(int argc, char **argv)
{
	return ticket_verb(&verbs[1], argc, argv);
}

int
cmd_retry(int argc, char **argv)
{
	return ticket_verb(&verbs[2], argc, argv);
}

int
cmd_cancel(int argc, char **argv)
{
	return ticket_verb(&verbs[3], argc, argv);
}

static const char wait_usage[] =
	"usage: berth wait [ID...] [--timeout DUR] [--quiet] [--exit-code]\n"
	"\n"
	"Wait until every ticket has settled (succeeded, failed, cancelled or\n"
	"dependency_failed), then print each one's final state. Without an ID,\n"
	"wait for the newest ticket ('last'). Keeps waiting while the coordinator\n"
	"restarts.\n"
	"\n"
	"  --timeout DUR   give up after DUR (exit 124)\n"
	"  --quiet         do not print each ticket's final state\n"
	"  --exit-code     one ticket: exit with its job's own status (0 when it\n"
	"                  succeeded, its exit code, 128+N for signal N, else 1)\n"
	"\n"
	"Exit status: 0 when all succeeded, 1 when any did not, 2 on a usage\n"
	"error or an unknown ticket, 124 on the timeout.\n";

/* The least time the first question of a wait gets, whatever its --timeout. */
#define WAIT_FIRST_MS 1000

static int
wait_show(struct rpc_client *cl, const char *id, Berth__Reply **rep, int timeout_ms)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show show = BERTH__SHOW__INIT;

	show.id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &show;
	return cli_call(cl, &req, rep, timeout_ms, 1);
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* What wait keeps of a settled ticket. */
struct waited {
	char id[CLI_ID_MAX]; /* as asked ("last" included) */
	char *ticket;        /* the ticket's own id, once known */
	char *state;         /* NULL while not settled */
	int status;          /* cli_ticket_exit_status */
};

/* The time the next question to the coordinator may take: its timeout, cut
 * to what is left of the deadline; but every ticket is asked at least once
 * (given up to a second), so --timeout 0 checks instead of always timing
 * out. 0: the deadline has passed. */
static int
wait_call_ms(int64_t deadline, int first)
{
	int call_ms = cli_timeout_ms();
	int64_t now;

	if (deadline == 0)
		return call_ms;
	now = clock_mono_ms();
	if (now >= deadline && !first)
		return 0;
	if (deadline - now < call_ms)
		call_ms = (int)(deadline - now);
	if (first && call_ms < WAIT_FIRST_MS)
		call_ms = WAIT_FIRST_MS < cli_timeout_ms() ? WAIT_FIRST_MS : cli_timeout_ms();
	return call_ms < 1 ? 1 : call_ms;
}

/* One question about w: 1 settled, 0 not yet (or no answer this time), -1
 * a verdict on the id itself (unknown ticket: printed). */
static int
wait_one(struct rpc_client *cl, struct waited *w, int call_ms)
{
	const Berth__Ticket *t;
	Berth__Reply *rep;
	int rc = 0;

	/* Quiet: an unanswered call is a restart to wait out, not a
	 * failure; the deadline decides. */
	if (wait_show(cl, w->id, &rep, call_ms) < 0)
		return 0;
	if (rep->result_case != BERTH__REPLY__RESULT_GRANTED ||
	    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_TICKET) {
		/* Only a verdict on the id ends the wait; a busy or failing
		 * coordinator is asked again. */
		if (rep->result_case == BERTH__REPLY__RESULT_ERROR &&
		    (rep->error->code == BERTH__ERROR_CODE__ERR_BUSY ||
		     rep->error->code == BERTH__ERROR_CODE__ERR_STORAGE)) {
			berth__reply__free_unpacked(rep, NULL);
			return 0;
		}
		if (cli_check_id(rep, "wait", w->id) == CLI_OK)
			cli_fail("wait %s: unexpected reply from the coordinator", w->id);
		berth__reply__free_unpacked(rep, NULL);
		return -1;
	}
	t = rep->granted->ticket;
	/* "last" is fixed at the first answer: a ticket added while we wait
	 * does not become the one waited for. */
	if (w->ticket == NULL && t->id != NULL && (w->ticket = strdup(t->id)) != NULL)
		snprintf(w->id, sizeof w->id, "%s", t->id);
	if (cli_ticket_settled(t->state)) {
		w->state = strdup(t->state);
		w->status = cli_ticket_exit_status(t);
		rc = w->state != NULL ? 1 : 0;
	}
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

int
cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "exit-code", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpc_client *cl = NULL;
	struct waited *w = NULL;
	char d[32];
	int64_t timeout = -1, deadline = 0;
	int c, nids, i, left, quiet = 0, rc = CLI_USAGE, all_ok = 1, pass, exit_code = 0, ms;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "ht:q", opts)) != -1) {
		switch (c) {
		case 'h': fputs(wait_usage, stdout); return CLI_OK;
		case 't':
			if (cli_opt_dur(argv[0], "--timeout", optarg, 0, INT64_MAX, &timeout) !=
			    CLI_OK)
				return CLI_USAGE;
			break;
		case 'q': quiet = 1; break;
		case 'x': exit_code = 1; break;
		default: return CLI_USAGE;
		}
	}
	nids = optind < argc ? argc - optind : 1;
	if (exit_code && nids > 1)
		return cli_usage_error(argv[0], "--exit-code takes one ticket (got %d)", nids);
	if ((w = calloc((size_t)nids, sizeof *w)) == NULL)
		return cli_fail("out of memory");
	for (i = 0; i < nids; i++) {
		if (optind >= argc)
			snprintf(w[i].id, sizeof w[i].id, "last");
		else if (cli_id_arg(argv[0], argv[optind + i], w[i].id, sizeof w[i].id) != CLI_OK)
			goto out;
	}
	/* No group at all: exit 2, not 1, so a script never reads "could not
	 * wait" as "a ticket failed". */
	if ((cl = cli_connect()) == NULL)
		goto out;
	/* A timeout beyond the clock's range is no deadline at all. */
	if (timeout >= 0 && timeout <= INT64_MAX - clock_mono_ms())
		deadline = clock_mono_ms() + timeout;
	left = nids;
	for (pass = 0; left > 0; pass++) {
		for (i = 0; i < nids; i++) {
			if (w[i].state != NULL)
				continue;
			if ((ms = wait_call_ms(deadline, pass == 0)) == 0)
				goto timeout;
			switch (wait_one(cl, &w[i], ms)) {
			case -1: goto out; /* exit 2: unknown ticket */
			case 1:
				if (ticket_state_parse(w[i].state) != TICKET_SUCCEEDED)
					all_ok = 0;
				left--;
				break;
			}
		}
		if (left == 0)
			break;
		if (deadline != 0 && clock_mono_ms() >= deadline)
			goto timeout;
		sleep_ms(150);
	}
	if (!quiet)
		for (i = 0; i < nids; i++)
			printf("%s %s\n", cli_esc(w[i].id), cli_esc(w[i].state));
	rc = exit_code ? w[0].status : all_ok ? CLI_OK : CLI_FAIL;
	goto out;
timeout:
	dur_format(timeout, d, sizeof d);
	fprintf(stderr, "berth wait: timed out after %s;", d);
	for (i = 0; i < nids; i++)
		if (w[i].state == NULL)
			fprintf(stderr, " %s", cli_esc(w[i].id));
	fprintf(stderr, " not settled\n");
	rc = CLI_TIMEOUT;
out:
	if (cl != NULL)
		rpc_client_close(cl);
	for (i = 0; w != NULL && i < nids; i++) {
		free(w[i].ticket);
		free(w[i].state);
	}
	free(w);
	return rc;
}
