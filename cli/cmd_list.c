/* berth list and berth show: what the coordinator knows about tickets and
 * their runs, as a table, a detailed page, or JSON for scripts. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "util.h"

static const char list_usage[] =
    "usage: berth list [--json] [--state S] [--limit N]\n"
    "\n"
    "List tickets: id, state, attempts, when it is next due, its name or\n"
    "command, and why a ready ticket is not running.\n"
    "\n"
    "  --json      a JSON array of ticket objects\n"
    "  --state S   only tickets in state S (ready held claimed blocked\n"
    "              succeeded failed cancelled)\n"
    "  --limit N   at most N tickets\n";

static const char show_usage[] =
    "usage: berth show ID [--json]\n"
    "\n"
    "Show a ticket and its runs, oldest attempt first. ID is a ticket id (T3),\n"
    "a run id, or a run alias (T3-r1).\n"
    "\n"
    "  --json   one JSON object: id, state, attempts, ..., runs: [{id, attempt,\n"
    "           state, exit_code, signal, ...}]\n";

static const char *const ticket_states[] = {"ready",     "held",   "claimed",   "blocked",
                                            "succeeded", "failed", "cancelled", NULL};

static const char *ticket_label(const Berth__Ticket *t, char *buf, size_t n)
{
	if (t->name != NULL && *t->name != '\0')
		return t->name;
	cli_fmt_argv(t->argv, t->n_argv, buf, n);
	return buf;
}

/* Shortens s to width columns with a trailing "..." (bytes: good enough for
 * a table), never in the middle of a UTF-8 character. */
static const char *clip(const char *s, size_t width, char *buf, size_t n)
{
	size_t len = strlen(s), cut;

	if (len <= width || width < 4 || n <= width)
		return s;
	for (cut = width - 3; cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80; cut--)
		;
	memcpy(buf, s, cut);
	memcpy(buf + cut, "...", 4);
	return buf;
}

static void list_human(const Berth__TicketList *l)
{
	char cmd[512], c1[64], next[48], att[24];
	size_t i;

	if (l->n_tickets == 0) {
		printf("no tickets\n");
		return;
	}
	printf("%-8s %-10s %-8s %-12s %-40s %s\n", "ID", "STATE", "ATTEMPTS", "NEXT", "COMMAND",
	       "WAITING");
	for (i = 0; i < l->n_tickets; i++) {
		const Berth__Ticket *t = l->tickets[i];
		const char *st = t->state ? t->state : "?";

		/* Only a ready ticket is waiting for a time; for the others
		 * WAITING (or the state) says what they wait for. */
		if (t->next_due_ms != 0 && strcmp(st, "ready") == 0) {
			if (t->next_due_ms <= l->now_ms)
				snprintf(next, sizeof next, "due");
			else
				cli_fmt_rel(t->next_due_ms, l->now_ms, next, sizeof next);
		} else {
			snprintf(next, sizeof next, "-");
		}
		if (t->max_attempts > 0)
			snprintf(att, sizeof att, "%u/%u", t->attempts, t->max_attempts);
		else
			snprintf(att, sizeof att, "%u", t->attempts);
		printf("%-8s %-10s %-8s %-12s %-40s %s\n", cli_esc(t->id ? t->id : "?"), cli_esc(st),
		       att, next, clip(cli_esc(ticket_label(t, cmd, sizeof cmd)), 40, c1, sizeof c1),
		       cli_esc(t->waiting));
	}
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"json", no_argument, NULL, 'j'},
	    {"state", required_argument, NULL, 's'},
	    {"limit", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List list = BERTH__LIST__INIT;
	Berth__Reply *rep = NULL;
	const Berth__TicketList *l;
	long long n;
	size_t i;
	int c, json = 0, rc, known;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hjs:n:", opts)) != -1) {
		switch (c) {
		case 'h':
			fputs(list_usage, stdout);
			return CLI_OK;
		case 'j':
			json = 1;
			break;
		case 's':
			for (known = 0, i = 0; ticket_states[i] != NULL; i++)
				if (strcmp(optarg, ticket_states[i]) == 0)
					known = 1;
			if (!known)
				return cli_usage_error(argv[0], "--state: unknown state '%s'",
				                       optarg);
			list.state = optarg;
			break;
		case 'n':
			if (cli_parse_int(optarg, 1, UINT32_MAX, &n) < 0)
				return cli_usage_error(argv[0], "--limit: bad number '%s'", optarg);
			list.has_limit = 1;
			list.limit = (uint32_t)n;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &list;
	if ((rc = cli_request(&req, &rep, "list")) != CLI_OK)
		return rc;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_LIST) {
		berth__reply__free_unpacked(rep, NULL);
		return cli_fail("list: unexpected reply from the coordinator");
	}
	l = rep->granted->list;
	if (json) {
		fputc('[', stdout);
		for (i = 0; i < l->n_tickets; i++) {
			if (i > 0)
				fputc(',', stdout);
			cli_json_ticket(stdout, l->tickets[i], 0);
		}
		fputs("]\n", stdout);
	} else {
		list_human(l);
	}
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}

static void show_run(const Berth__Run *r, int64_t now)
{
	char a[96], b[96], d[32];
	size_t i;

	printf("  %s  %s  %s", cli_esc(r->alias && *r->alias ? r->alias : "?"),
	       cli_esc(r->id ? r->id : "?"), cli_esc(r->state ? r->state : "?"));
	if (cli_run_exit_known(r))
		printf("  exit %d", r->exit_code);
	if (cli_run_signal_known(r))
		printf("  signal %d", r->signal);
	putchar('\n');
	if (r->started_ms != 0) {
		cli_fmt_when(r->started_ms, now, a, sizeof a);
		printf("      started:  %s\n", a);
	} else if (r->claimed_ms != 0) {
		cli_fmt_when(r->claimed_ms, now, a, sizeof a);
		printf("      claimed:  %s\n", a);
	}
	if (r->ended_ms != 0) {
		cli_fmt_when(r->ended_ms, now, a, sizeof a);
		if (r->started_ms != 0 && r->ended_ms >= r->started_ms) {
			dur_format(r->ended_ms - r->started_ms, d, sizeof d);
			printf("      ended:    %s, took %s\n", a, d);
		} else {
			printf("      ended:    %s\n", a);
		}
	} else if (!cli_run_terminal(r->state) && r->started_ms != 0) {
		dur_format(now - r->started_ms, d, sizeof d);
		printf("      running:  %s\n", d);
	}
	if (r->settled_ms != 0) {
		cli_fmt_when(r->settled_ms, now, a, sizeof a);
		printf("      settled:  %s\n", a);
	}
	if (r->shim != NULL && r->shim->pid > 0)
		printf("      pid:      %d (group %d)\n", r->shim->pid, r->shim->pgid);
	if (r->owner && *r->owner)
		printf("      owner:    %s\n", cli_esc(r->owner));
	if (r->reason && *r->reason)
		printf("      reason:   %s\n", cli_esc(r->reason));
	if (r->stop_reason && *r->stop_reason) {
		cli_fmt_when(r->stop_ms, now, a, sizeof a);
		printf("      stop:     %s, requested %s\n", cli_esc(r->stop_reason), a);
	}
	if (r->progress_total > 0 || (r->progress_label && *r->progress_label)) {
		cli_fmt_bar(r->progress_index, r->progress_total, b, sizeof b);
		cli_fmt_rel(r->progress_ms, now, a, sizeof a);
		printf("      progress: %s %lld/%lld %s (%s)\n", b, (long long)r->progress_index,
		       (long long)r->progress_total, cli_esc(r->progress_label), a);
	}
	if (r->heartbeat_ms != 0) {
		cli_fmt_rel(r->heartbeat_ms, now, a, sizeof a);
		printf("      heartbeat: %s\n", a);
	}
	for (i = 0; i < r->n_notes; i++)
		printf("      note:     %s\n", cli_esc(r->notes[i]));
	if (r->has_output_bytes)
		printf("      output:   %lld bytes%s\n", (long long)r->output_bytes,
		       r->capture_complete ? "" : " (capture incomplete)");
}

static void show_human(const Berth__Ticket *t)
{
	char a[96], cmd[4096], d[32];
	int64_t now = clock_wall_ms();
	size_t i;

	printf("%s  %s", cli_esc(t->id ? t->id : "?"), cli_esc(t->state ? t->state : "?"));
	if (t->name && *t->name)
		printf("  %s", cli_esc(t->name));
	putchar('\n');
	cli_fmt_argv(t->argv, t->n_argv, cmd, sizeof cmd);
	printf("  command:   %s\n", cli_esc(cmd));
	printf("  workdir:   %s\n", cli_esc(t->workdir && *t->workdir ? t->workdir : "-"));
	if (t->key && *t->key)
		printf("  key:       %s\n", cli_esc(t->key));
	if (t->max_attempts > 0)
		printf("  attempts:  %u of at most %u\n", t->attempts, t->max_attempts);
	else
		printf("  attempts:  %u\n", t->attempts);
	if (t->priority != 0)
		printf("  priority:  %d\n", t->priority);
	if (t->isolate)
		printf("  isolated:  yes (own user and mount namespace)\n");
	if (t->timeout_ms > 0) {
		dur_format(t->timeout_ms, d, sizeof d);
		printf("  timeout:   %s\n", d);
	}
	if (t->every_ms > 0) {
		dur_format(t->every_ms, d, sizeof d);
		printf("  every:     %s\n", d);
	}
	if (t->n_after > 0) {
		printf("  after:     ");
		for (i = 0; i < t->n_after; i++)
			printf("%s%s", i ? ", " : "", cli_esc(t->after[i]));
		putchar('\n');
	}
	cli_fmt_when(t->created_ms, now, a, sizeof a);
	printf("  created:   %s\n", a);
	if (t->next_due_ms != 0 && !cli_ticket_settled(t->state)) {
		cli_fmt_when(t->next_due_ms, now, a, sizeof a);
		printf("  next due:  %s\n", a);
	}
	if (t->waiting && *t->waiting)
		printf("  waiting:   %s\n", cli_esc(t->waiting));
	if (t->n_runs == 0) {
		printf("runs: none yet\n");
		return;
	}
	printf("runs:\n");
	for (i = 0; i < t->n_runs; i++)
		show_run(t->runs[i], now);
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"json", no_argument, NULL, 'j'},
	    {NULL, 0, NULL, 0},
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show show = BERTH__SHOW__INIT;
	Berth__Reply *rep = NULL;
	char what[128];
	int c, json = 0, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h':
			fputs(show_usage, stdout);
			return CLI_OK;
		case 'j':
			json = 1;
			break;
		default:
			return CLI_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error(argv[0], "missing ID");
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one ID at a time (got '%s' too)",
		                       argv[optind + 1]);
	if (argv[optind][0] == '\0')
		return cli_usage_error(argv[0], "empty ID");
	show.id = argv[optind];
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &show;
	snprintf(what, sizeof what, "show %s", show.id);
	if ((rc = cli_request(&req, &rep, what)) != CLI_OK)
		return rc;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_TICKET) {
		berth__reply__free_unpacked(rep, NULL);
		return cli_fail("%s: unexpected reply from the coordinator", what);
	}
	if (json) {
		cli_json_ticket(stdout, rep->granted->ticket, 1);
		fputc('\n', stdout);
	} else {
		show_human(rep->granted->ticket);
	}
	berth__reply__free_unpacked(rep, NULL);
	return CLI_OK;
}
