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
    "List tickets: id, state, attempts, when it is next due, its name and\n"
    "command, and why a ticket is not running. The table fits the terminal\n"
    "($COLUMNS, else its width): the command and the reason are cut, a row\n"
    "never wraps.\n"
    "\n"
    "  --json      a JSON array of ticket objects\n"
    "  --state S   only tickets in state S (ready held claimed blocked\n"
    "              succeeded failed cancelled dependency_failed); ready is\n"
    "              a ticket that can run, not one waiting for a dependency\n"
    "  --limit N   at most N tickets\n";

static const char show_usage[] =
    "usage: berth show [ID] [--json]\n"
    "\n"
    "Show a ticket and its runs, oldest attempt first. ID is a ticket (T3, or\n"
    "just 3), a run alias (T3-r1), a run id or its first 8+ hex digits, or\n"
    "'last'; without an ID, the newest ticket. The environment is shown by\n"
    "its variables' names, never their values.\n"
    "\n"
    "  --json   one JSON object: id, state, attempts, ..., runs: [{id, attempt,\n"
    "           state, exit_code, signal, ...}]\n";

/* The columns of `berth list`. NAME only when some ticket has one. The
 * command and the reason shrink first when the terminal is narrow; the
 * floors keep enough of each to recognise it. */
enum { L_ID, L_STATE, L_ATTEMPTS, L_NEXT, L_NAME, L_COMMAND, L_WAITING, L_NCOLS };

static const char *const list_heads[L_NCOLS] = {"ID",   "STATE",   "ATTEMPTS", "NEXT",
                                                "NAME", "COMMAND", "WAITING"};

/* One ticket's row; cells escaped, the command quoted for a shell. */
static int list_row(struct cli_table *tb, const Berth__Ticket *t, int64_t now, int names)
{
	char cmd[4096], next[48], att[24], id[64], st[32], name[512], wait[1024];
	const char *cells[L_NCOLS], *state = t->state ? t->state : "?";
	size_t k, c = 0;

	/* Only a ready ticket is waiting for a time; for the others WAITING
	 * (or the state) says what they wait for. */
	if (t->next_due_ms != 0 && ticket_state_parse(state) == TICKET_READY) {
		if (t->next_due_ms <= now)
			snprintf(next, sizeof next, "due");
		else
			cli_fmt_rel(t->next_due_ms, now, next, sizeof next);
	} else {
		snprintf(next, sizeof next, "-");
	}
	if (t->max_attempts > 0)
		snprintf(att, sizeof att, "%u/%u", t->attempts, t->max_attempts);
	else
		snprintf(att, sizeof att, "%u", t->attempts);
	cli_fmt_argv(t->argv, t->n_argv, cmd, sizeof cmd);
	snprintf(id, sizeof id, "%s", cli_esc(t->id ? t->id : "?"));
	snprintf(st, sizeof st, "%s", cli_esc(state));
	snprintf(name, sizeof name, "%s", t->name && *t->name ? cli_esc(t->name) : "-");
	snprintf(wait, sizeof wait, "%s", cli_esc(t->waiting));
	for (k = 0; k < L_NCOLS; k++) {
		if (k == L_NAME && !names)
			continue;
		cells[c++] = k == L_ID         ? id
		             : k == L_STATE    ? st
		             : k == L_ATTEMPTS ? att
		             : k == L_NEXT     ? next
		             : k == L_NAME     ? name
		             : k == L_COMMAND  ? cli_esc(cmd)
		                               : wait;
	}
	return cli_table_add(tb, cells);
}

static int list_human(const Berth__TicketList *l)
{
	static const size_t floors[L_NCOLS] = {[L_NAME] = 8, [L_COMMAND] = 16, [L_WAITING] = 12};
	const char *heads[L_NCOLS];
	size_t floor[L_NCOLS], i, k, c = 0;
	struct cli_table tb;
	int names = 0, rc = CLI_OK;

	if (l->n_tickets == 0) {
		printf("no tickets\n");
		return CLI_OK;
	}
	for (i = 0; i < l->n_tickets; i++)
		if (l->tickets[i]->name && *l->tickets[i]->name)
			names = 1;
	for (k = 0; k < L_NCOLS; k++) {
		if (k == L_NAME && !names)
			continue;
		heads[c] = list_heads[k];
		floor[c++] = floors[k];
	}
	if (cli_table_init(&tb, c, heads, floor) < 0)
		return cli_fail("list: bad table");
	for (i = 0; i < l->n_tickets && rc == CLI_OK; i++)
		if (list_row(&tb, l->tickets[i], l->now_ms, names) < 0)
			rc = cli_fail("list: out of memory");
	if (rc == CLI_OK)
		cli_table_print(stdout, &tb, cli_term_width());
	cli_table_free(&tb);
	return rc;
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
	int c, json = 0, rc;

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
			if (ticket_state_parse(optarg) == TICKET_ABSENT &&
			    strcmp(optarg, ticket_blocked_name) != 0)
				return cli_usage_error(argv[0], "--state: unknown state '%s'",
				                       optarg);
			list.state = optarg;
			break;
		case 'n':
			if (cli_opt_int(argv[0], "--limit", optarg, 1, UINT32_MAX, &n) != CLI_OK)
				return CLI_USAGE;
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
		rc = list_human(l);
	}
	berth__reply__free_unpacked(rep, NULL);
	return rc;
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
	/* Names only: the values may be secrets, and stay with the job. */
	if (t->n_env > 0) {
		char name[256];

		printf("  env:       %zu variable%s:", t->n_env, t->n_env == 1 ? "" : "s");
		for (i = 0; i < t->n_env; i++) {
			cli_env_name(t->env[i], name, sizeof name);
			printf(" %s", cli_esc(name));
		}
		putchar('\n');
	}
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
		printf("%s\n", t->after_any ? " (however they end: --after-any)" : "");
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
	char what[128], id[CLI_ID_MAX];
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
	if (optind + 1 < argc)
		return cli_usage_error(argv[0], "one ID at a time (got '%s' too)",
		                       argv[optind + 1]);
	/* No ID: the newest ticket, as `berth show last`. */
	if (cli_id_arg(argv[0], optind < argc ? argv[optind] : "last", id, sizeof id) != CLI_OK)
		return CLI_USAGE;
	show.id = id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &show;
	if ((rc = cli_request_id(&req, &rep, "show", id)) != CLI_OK)
		return rc;
	snprintf(what, sizeof what, "show %s", id);
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
