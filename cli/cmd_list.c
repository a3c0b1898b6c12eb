/* berth list and berth show: what the coordinator knows about tickets and
 * their runs, as a table, a detailed page, or JSON for scripts. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "util.h"

static const char list_usage[] =
	"usage: berth list [--json] [--state S] [--limit N | --all]\n"
	"\n"
	"List tickets, newest first: id, state, attempts, when it is next due, its\n"
	"name and command, and why a ticket is not running. Every ticket is listed\n"
	"(fetched page by page, printed once all came); with --limit, when more\n"
	"match, stderr says how many were left out. The table fits the terminal\n"
	"($COLUMNS, else its width): the command and the reason are cut, a row\n"
	"never wraps.\n"
	"\n"
	"  --json      a JSON array of ticket objects (every one, or the newest N)\n"
	"  --state S   only tickets in state S (ready held claimed blocked\n"
	"              succeeded failed cancelled dependency_failed); ready is\n"
	"              a ticket that can run, not one waiting for a dependency\n"
	"  --limit N   only the newest N tickets\n"
	"  --all       every ticket (the default; undoes an earlier --limit)\n";

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

static const char *const list_heads[L_NCOLS] = { "ID",   "STATE",   "ATTEMPTS", "NEXT",
						 "NAME", "COMMAND", "WAITING" };

/* One ticket's row; cells escaped, the command quoted for a shell. */
static int
list_row(struct cli_table *tb, const Berth__Ticket *t, int64_t now, int names)
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

/* Tickets per request: a page comes back quickly and stays small; the
 * coordinator may cut one shorter (its reply budget), and the cursor goes
 * on from there either way. */
#define LIST_PAGE 1000

/* The pages of one listing, fetched whole before anything is printed (a
 * failure halfway prints nothing on stdout). */
struct list_pages {
	Berth__Reply **v;
	size_t n, cap;
	size_t shown;
	uint64_t left; /* matching tickets beyond the last page (--limit) */
};

static void
list_pages_free(struct list_pages *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		berth__reply__free_unpacked(p->v[i], NULL);
	free(p->v);
	memset(p, 0, sizeof *p);
}

/* One page into p: 0, or -1 after printing why. */
static int
list_page(struct rpc_client *c, Berth__Request *req, struct list_pages *p)
{
	Berth__Reply *rep, **v;

	if (cli_call(c, req, &rep, cli_timeout_ms(), 0) < 0)
		return -1;
	if (cli_check(rep, "list") != CLI_OK) {
		berth__reply__free_unpacked(rep, NULL);
		return -1;
	}
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_LIST) {
		berth__reply__free_unpacked(rep, NULL);
		cli_fail("list: unexpected reply from the coordinator");
		return -1;
	}
	if (p->n == p->cap) {
		if ((v = realloc(p->v, (p->cap ? 2 * p->cap : 16) * sizeof *v)) == NULL) {
			berth__reply__free_unpacked(rep, NULL);
			cli_fail("out of memory");
			return -1;
		}
		p->v = v;
		p->cap = p->cap ? 2 * p->cap : 16;
	}
	p->v[p->n++] = rep;
	p->shown += rep->granted->list->n_tickets;
	return 0;
}

/* Every matching ticket newest first, page by page with the cursor; with
 * limit (0: none) only the newest limit, and how many were left. */
static int
list_fetch(Berth__List *list, uint32_t limit, struct list_pages *p)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	const Berth__TicketList *l;
	struct rpc_client *c;
	char *cursor = NULL;
	int rc = CLI_FAIL;

	memset(p, 0, sizeof *p);
	if ((c = cli_connect()) == NULL)
		return CLI_FAIL;
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = list;
	list->has_newest_first = list->newest_first = 1;
	list->has_limit = 1;
	for (;;) {
		list->limit = LIST_PAGE;
		if (limit > 0 && limit - p->shown < LIST_PAGE)
			list->limit = limit - (uint32_t)p->shown;
		list->after = cursor;
		if (list_page(c, &req, p) < 0)
			goto out;
		l = p->v[p->n - 1]->granted->list;
		free(cursor);
		cursor = l->next != NULL ? strdup(l->next) : NULL;
		if (l->next != NULL && cursor == NULL) {
			cli_fail("out of memory");
			goto out;
		}
		/* The end, or as many as asked for: what is beyond is counted. */
		if (cursor == NULL || l->n_tickets == 0 || (limit > 0 && p->shown >= limit)) {
			p->left = cursor != NULL && l->has_more ? l->more : 0;
			break;
		}
	}
	rc = CLI_OK;
out:
	free(cursor);
	rpc_client_close(c);
	if (rc != CLI_OK)
		list_pages_free(p);
	return rc;
}

/* The table of every page, in order. */
static int
list_human(const struct list_pages *p)
{
	static const size_t floors[L_NCOLS] = { [L_NAME] = 8, [L_COMMAND] = 16, [L_WAITING] = 12 };
	const char *heads[L_NCOLS];
	const Berth__TicketList *l;
	size_t floor[L_NCOLS], i, j, k, c = 0;
	struct cli_table tb;
	int names = 0, rc = CLI_OK;

	if (p->shown == 0) {
		printf("no tickets\n");
		return CLI_OK;
	}
	for (j = 0; j < p->n; j++)
		for (l = p->v[j]->granted->list, i = 0; i < l->n_tickets; i++)
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
	for (j = 0; j < p->n; j++)
		for (l = p->v[j]->granted->list, i = 0; i < l->n_tickets && rc == CLI_OK; i++)
			if (list_row(&tb, l->tickets[i], l->now_ms, names) < 0)
				rc = cli_fail("list: out of memory");
	if (rc == CLI_OK)
		cli_table_print(stdout, &tb, cli_term_width());
	cli_table_free(&tb);
	return rc;
}

int
cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "state", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	Berth__List list = BERTH__LIST__INIT;
	struct list_pages pages;
	uint32_t limit = 0;
	long long n;
	size_t i, j, k = 0;
	int c, json = 0, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hjs:n:a", opts)) != -1) {
		switch (c) {
		case 'h': fputs(list_usage, stdout); return CLI_OK;
		case 'j': json = 1; break;
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
			limit = (uint32_t)n;
			break;
		case 'a': limit = 0; break;
		default: return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	if ((rc = list_fetch(&list, limit, &pages)) != CLI_OK)
		return rc;
	if (json) {
		fputc('[', stdout);
		for (i = 0; i < pages.n; i++) {
			const Berth__TicketList *l = pages.v[i]->granted->list;

			for (j = 0; j < l->n_tickets; j++, k++) {
				if (k > 0)
					fputc(',', stdout);
				cli_json_ticket(stdout, l->tickets[j], 0);
			}
		}
		fputs("]\n", stdout);
	} else {
		rc = list_human(&pages);
	}
	/* Never short without a word (DESIGN §12). */
	if (rc == CLI_OK && pages.left > 0)
		fprintf(stderr,
			"berth list: %zu ticket%s shown, the newest; %llu older not shown (--all "
			"lists every one)\n",
			pages.shown, pages.shown == 1 ? "" : "s", (unsigned long long)pages.left);
	list_pages_free(&pages);
	return rc;
}

static void
show_run(const Berth__Run *r, int64_t now)
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
	if (r->host && *r->host)
		printf("      host:     %s\n", cli_esc(r->host));
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
		       r->has_disk_full && r->disk_full
			       ? " (capture incomplete: cut by a full disk; the exit status was kept)"
		       : r->capture_complete ? ""
					     : " (capture incomplete)");
	if (r->has_stragglers && r->stragglers > 0)
		printf("      stragglers: %d process%s the job left behind, ended\n", r->stragglers,
		       r->stragglers == 1 ? "" : "es");
}

static void
show_human(const Berth__Ticket *t)
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
	if ((t->host_wanted && *t->host_wanted) || t->n_labels > 0) {
		printf("  placement: ");
		if (t->host_wanted && *t->host_wanted)
			printf("host %s%s", cli_esc(t->host_wanted), t->n_labels > 0 ? ", " : "");
		if (t->n_labels > 0)
			printf("label%s ", t->n_labels == 1 ? "" : "s");
		for (i = 0; i < t->n_labels; i++)
			printf("%s%s", i ? "," : "", cli_esc(t->labels[i]));
		putchar('\n');
	}
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

int
cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show show = BERTH__SHOW__INIT;
	Berth__Reply *rep = NULL;
	char what[128], id[CLI_ID_MAX];
	int c, json = 0, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "hj", opts)) != -1) {
		switch (c) {
		case 'h': fputs(show_usage, stdout); return CLI_OK;
		case 'j': json = 1; break;
		default: return CLI_USAGE;
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
