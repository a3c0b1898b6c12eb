/* berth status: the group at a glance. Two sources: the coordinator's
 * status reply (decisions: runs, ticket counts, registered actors) and the
 * shared-memory status board (observation: which actor processes are up
 * and beating). The board needs no coordinator, so when it does not answer
 * status still says which actors are alive — and says plainly that the
 * coordinator is not answering. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "cli.h"
#include "clock.h"
#include "ident.h"
#include "json.h"
#include "msg.h"
#include "shm.h"
#include "util.h"

#define STATUS_TIMEOUT_MS 2000
#define BOARD_STALE_MS    10000

/* Why the home's shared memory is not used, when it is someone else's
 * (common/shm.h): "" when it is ours or absent. */
static char shm_why[512];

static const char status_usage[] =
	"usage: berth status [--json] [--timeout DUR]\n"
	"\n"
	"Actors and their pids, slots in use, each running run with its elapsed\n"
	"time and progress, and the number of tickets per state. Actors are also\n"
	"read from the shared-memory status board, so status works while the\n"
	"coordinator is down (it then says so and exits 1).\n"
	"\n"
	"  --json          one JSON object\n"
	"  --timeout DUR   how long to wait for the coordinator (default 2s)\n";

/* Alive means the same process, by identity (pid and start time): a pid
 * alone is never an identity (DESIGN §4), and a dead actor's pid may
 * already belong to something else. A process that exists but cannot be
 * read counts as alive, as everywhere else. */
static int
slot_alive(const struct board_slot *s)
{
	return !board_slot_stale(s, 0, INT64_MAX);
}

static int
actor_alive(const Berth__Actor *a)
{
	struct ident id;

	if (msg_ident_from(a->ident, &id) < 0)
		return 0;
	return ident_check(&id) != IDENT_GONE;
}

/* Why a slot's process is gone, for the reader who would otherwise find
 * its pid alive in ps: "" (no such process), "pid reused" (another
 * process has it now) or "zombie" (exited, not reaped yet). */
static const char *
slot_gone_why(const struct board_slot *s)
{
	struct ident now;

	if (s->pid <= 0 || ident_read(s->pid, &now) != 0)
		return "";
	return now.start_time != s->start_time ? "pid reused" : "zombie";
}

static const char *
run_cmd(const Berth__Run *r)
{
	return r->alias && *r->alias ? r->alias : r->id ? r->id : "?";
}

/* Slots in use and in all: the live supervisors' own, or what berth
 * slots gave the group. */
/* The labels a host offers (docs/MANY-HOSTS.md "Placement"), if any. */
static void
status_labels(const Berth__Host *h, const char *before, const char *after)
{
	size_t i;

	if (h->n_labels == 0)
		return;
	fputs(before, stdout);
	for (i = 0; i < h->n_labels; i++)
		printf("%s%s", i ? "," : "", cli_esc(h->labels[i]));
	fputs(after, stdout);
}

/* This host (with its labels) and, when the store holds more than one,
 * every host's lease (DESIGN §13). */
static void
status_hosts(const Berth__StatusReply *st)
{
	size_t i;

	if (st->host != NULL && st->host[0] != '\0') {
		printf("host: %s", cli_esc(st->host));
		for (i = 0; i < st->n_hosts; i++)
			if (st->hosts[i]->self)
				status_labels(st->hosts[i], " (labels ", ")");
		putchar('\n');
	}
	if (st->not_claiming != NULL && st->not_claiming[0] != '\0')
		printf("not claiming: %s\n", cli_esc(st->not_claiming));
	if (st->n_hosts < 2)
		return;
	for (i = 0; i < st->n_hosts; i++) {
		const Berth__Host *h = st->hosts[i];

		printf("  %-20s epoch %-4lld %s%s", cli_esc(h->host), (long long)h->epoch,
		       h->lapsed ? "lease lapsed" : "lease live", h->self ? " (this host)" : "");
		status_labels(h, "  labels ", "");
		putchar('\n');
	}
}

static void
status_slots(const Berth__StatusReply *st, uint32_t *used, uint32_t *total)
{
	size_t i;

	*used = *total = 0;
	for (i = 0; i < st->n_actors; i++) {
		const Berth__Actor *ac = st->actors[i];

		if (ac->actor && strcmp(ac->actor, "supervisor") == 0 && actor_alive(ac))
			*total += st->group && st->group->slots > 0 ? st->group->slots : ac->slots;
	}
	for (i = 0; i < st->n_running; i++)
		if (st->running[i]->state && run_state_parse(st->running[i]->state) == RUN_RUNNING)
			(*used)++;
}

/* The ticket status carries for id (its name and command), or NULL. */
static const Berth__Ticket *
status_ticket(const Berth__StatusReply *st, const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < st->n_tickets; i++)
		if (st->tickets[i]->id && strcmp(st->tickets[i]->id, id) == 0)
			return st->tickets[i];
	return NULL;
}

/* A ticket's name ("-" without one) and its command, escaped, into the
 * two buffers. */
static void
status_label(const Berth__Ticket *t, char *name, size_t nn, char *cmd, size_t cn)
{
	char raw[4096];

	snprintf(name, nn, "%s", t && t->name && *t->name ? cli_esc(t->name) : "-");
	if (t == NULL) {
		snprintf(cmd, cn, "?");
		return;
	}
	cli_fmt_argv(t->argv, t->n_argv, raw, sizeof raw);
	snprintf(cmd, cn, "%s", cli_esc(raw));
}

/* The running runs, one row each, named by alias with their ticket's name
 * and command, fitted to the terminal. */
static int
status_running(const Berth__StatusReply *st)
{
	static const char *const heads[] = { "RUN",  "STATE",   "ELAPSED",
					     "NAME", "COMMAND", "PROGRESS" };
	static const size_t floors[] = { 0, 0, 0, 8, 16, 12 };
	char run[64], state[32], el[32], name[512], cmd[4096], prog[1024], bar[32];
	struct cli_table tb;
	size_t i;

	if (cli_table_init(&tb, 6, heads, floors) < 0)
		return -1;
	tb.indent = 2;
	printf("running:\n");
	for (i = 0; i < st->n_running; i++) {
		const Berth__Run *r = st->running[i];
		const char *cells[6] = { run, state, el, name, cmd, prog };
		int w = 0;

		snprintf(run, sizeof run, "%s", cli_esc(run_cmd(r)));
		snprintf(state, sizeof state, "%s", cli_esc(r->state ? r->state : "?"));
		if (r->started_ms != 0)
			dur_format(st->now_ms - r->started_ms, el, sizeof el);
		else
			snprintf(el, sizeof el, "-");
		status_label(status_ticket(st, r->ticket), name, sizeof name, cmd, sizeof cmd);
		prog[0] = '\0';
		if (r->progress_total > 0 || (r->progress_label && *r->progress_label)) {
			cli_fmt_bar(r->progress_index, r->progress_total, bar, sizeof bar);
			w = snprintf(prog, sizeof prog, "%s %lld/%lld %s", bar,
				     (long long)r->progress_index, (long long)r->progress_total,
				     cli_esc(r->progress_label));
		}
		if (r->stop_reason && *r->stop_reason && w >= 0 && (size_t)w < sizeof prog)
			snprintf(prog + w, sizeof prog - (size_t)w, "%s(stopping: %s)",
				 w ? " " : "", cli_esc(r->stop_reason));
		if (cli_table_add(&tb, cells) < 0) {
			cli_table_free(&tb);
			cli_fail("status: out of memory");
			return -1;
		}
	}
	cli_table_print(stdout, &tb, cli_term_width());
	cli_table_free(&tb);
	return 0;
}

/* The head of the queue: what runs next, in the order claims take it,
 * and why each one waits. */
static int
status_queue(const Berth__StatusReply *st)
{
	static const char *const heads[] = { "ID", "STATE", "NAME", "COMMAND", "WAITING" };
	static const size_t floors[] = { 0, 0, 8, 16, 16 };
	char id[64], state[32], name[512], cmd[4096], wait[1024];
	const char *cells[5] = { id, state, name, cmd, wait };
	struct cli_table tb;
	size_t i, rows = 0;

	if (cli_table_init(&tb, 5, heads, floors) < 0)
		return -1;
	tb.indent = 2;
	for (i = 0; i < st->n_tickets; i++) {
		const Berth__Ticket *t = st->tickets[i];

		if (t->state == NULL || ticket_state_parse(t->state) == TICKET_CLAIMED ||
		    cli_ticket_settled(t->state))
			continue;
		snprintf(id, sizeof id, "%s", cli_esc(t->id));
		snprintf(state, sizeof state, "%s", cli_esc(t->state));
		status_label(t, name, sizeof name, cmd, sizeof cmd);
		snprintf(wait, sizeof wait, "%s",
			 t->waiting && *t->waiting ? cli_esc(t->waiting) : "next in line");
		if (cli_table_add(&tb, cells) < 0) {
			cli_table_free(&tb);
			cli_fail("status: out of memory");
			return -1;
		}
		rows++;
	}
	if (rows > 0) {
		printf("queue (next first):\n");
		cli_table_print(stdout, &tb, cli_term_width());
	}
	cli_table_free(&tb);
	return 0;
}

static void
status_json(const Berth__StatusReply *st, const struct board_slot *slots, int nslots,
	    int have_board, int64_t now)
{
	uint32_t total = 0, used = 0;
	size_t i;
	int k, first = 1;

	fputs("{\"coordinator\":{\"socket\":", stdout);
	json_str(stdout, cli_sock_path());
	printf(",\"answering\":%s}", st ? "true" : "false");
	printf(",\"now_ms\":%lld", (long long)(st ? st->now_ms : now));

	fputs(",\"actors\":[", stdout);
	for (i = 0; st && i < st->n_actors; i++) {
		const Berth__Actor *a = st->actors[i];

		if (!first)
			fputc(',', stdout);
		first = 0;
		fputs("{\"source\":\"coordinator\",\"actor\":", stdout);
		json_str(stdout, a->actor ? a->actor : "");
		fputs(",\"instance\":", stdout);
		json_str(stdout, a->instance ? a->instance : "");
		if (a->ident && a->ident->pid > 0)
			printf(",\"pid\":%d,\"alive\":%s", a->ident->pid,
			       actor_alive(a) ? "true" : "false");
		else
			fputs(",\"pid\":null,\"alive\":null", stdout);
		printf(",\"seen_ms\":%lld,\"slots\":%u}", (long long)a->seen_ms, a->slots);
	}
	for (k = 0; k < nslots; k++) {
		const struct board_slot *s = &slots[k];

		if (!first)
			fputc(',', stdout);
		first = 0;
		fputs("{\"source\":\"board\",\"actor\":", stdout);
		json_str(stdout, s->actor);
		fputs(",\"instance\":", stdout);
		json_str(stdout, s->instance);
		fputs(",\"state\":", stdout);
		json_str(stdout, s->state);
		printf(",\"pid\":%d,\"alive\":%s,\"stale\":%s,\"started_ms\":%lld,"
		       "\"heartbeat_ms\":%lld,\"restarts\":%u,\"slots_total\":%u,"
		       "\"slots_used\":%u,\"sent\":%llu,\"granted\":%llu,\"denied\":%llu,"
		       "\"errors\":%llu,\"timeouts\":%llu}",
		       s->pid, slot_alive(s) ? "true" : "false",
		       board_slot_stale(s, now, BOARD_STALE_MS) ? "true" : "false",
		       (long long)s->started_ms, (long long)s->heartbeat_ms, s->restarts,
		       s->slots_total, s->slots_used, (unsigned long long)s->sent,
		       (unsigned long long)s->granted, (unsigned long long)s->denied,
		       (unsigned long long)s->errors, (unsigned long long)s->timeouts);
	}
	fputc(']', stdout);
	printf(",\"board\":%s", have_board ? "true" : "false");
	if (shm_why[0] != '\0') {
		fputs(",\"board_refused\":", stdout);
		json_str(stdout, shm_why);
	}

	fputs(",\"running\":", stdout);
	if (st) {
		fputc('[', stdout);
		for (i = 0; i < st->n_running; i++) {
			const Berth__Run *r = st->running[i];

			if (i > 0)
				fputc(',', stdout);
			/* The run object plus how long it has been going. */
			fputs("{\"run\":", stdout);
			cli_json_run(stdout, r);
			if (r->started_ms != 0)
				printf(",\"elapsed_ms\":%lld}",
				       (long long)(st->now_ms - r->started_ms));
			else
				fputs(",\"elapsed_ms\":null}", stdout);
		}
		fputc(']', stdout);
	} else {
		fputs("null", stdout);
	}
	if (st) {
		status_slots(st, &used, &total);
		printf(",\"slots\":{\"used\":%u,\"total\":%u}", used, total);
		printf(",\"paused\":%s", st->group && st->group->paused ? "true" : "false");
		fputs(",\"host\":", stdout);
		if (st->host != NULL)
			json_str(stdout, st->host);
		else
			fputs("null", stdout);
		fputs(",\"not_claiming\":", stdout);
		if (st->not_claiming != NULL)
			json_str(stdout, st->not_claiming);
		else
			fputs("null", stdout);
		fputs(",\"hosts\":[", stdout);
		for (i = 0; i < st->n_hosts; i++) {
			const Berth__Host *h = st->hosts[i];

			printf("%s{\"host\":", i ? "," : "");
			json_str(stdout, h->host);
			printf(",\"epoch\":%lld,\"lapsed\":%s,\"self\":%s,\"stale_runs\":%zu,"
			       "\"labels\":[",
			       (long long)h->epoch, h->lapsed ? "true" : "false",
			       h->self ? "true" : "false", h->n_stale_runs);
			for (size_t l = 0; l < h->n_labels; l++) {
				if (l > 0)
					fputc(',', stdout);
				json_str(stdout, h->labels[l]);
			}
			fputs("]}", stdout);
		}
		fputc(']', stdout);
		fputs(",\"store\":", stdout);
		if (st->store != NULL)
			json_str(stdout, st->store);
		else
			fputs("null", stdout);
		/* The tickets of the running runs, then the head of the queue. */
		fputs(",\"tickets_shown\":[", stdout);
		for (i = 0; i < st->n_tickets; i++) {
			if (i > 0)
				fputc(',', stdout);
			cli_json_ticket(stdout, st->tickets[i], 0);
		}
		fputc(']', stdout);
	} else {
		fputs(",\"slots\":null,\"paused\":null,\"host\":null,\"not_claiming\":null,"
		      "\"hosts\":null,\"store\":null,\"tickets_shown\":null",
		      stdout);
	}

	fputs(",\"tickets\":", stdout);
	if (st) {
		fputc('{', stdout);
		for (i = 0; i < st->n_ticket_counts; i++) {
			const Berth__Fact *f = st->ticket_counts[i];
			long long n = 0;

			if (i > 0)
				fputc(',', stdout);
			json_str(stdout, f->key ? f->key : "");
			cli_parse_int(f->value ? f->value : "0", 0, INT64_MAX, &n);
			printf(":%lld", n);
		}
		fputc('}', stdout);
	} else {
		fputs("null", stdout);
	}
	fputs("}\n", stdout);
}

/* The coordinator did not answer: say why, as far as the board knows, on
 * the line after, so nobody has to read the table to learn it is dead. */
static void
status_silent(const struct board_slot *slots, int nslots, int64_t now)
{
	const struct board_slot *c = NULL;
	char a[64];
	int k;

	printf("coordinator: not answering at %s\n", cli_esc(cli_sock_path()));
	for (k = 0; k < nslots; k++)
		if (strcmp(slots[k].actor, "coordinator") == 0)
			c = &slots[k];
	if (c == NULL)
		return;
	cli_fmt_rel(c->heartbeat_ms, now, a, sizeof a);
	if (!slot_alive(c))
		printf("  its process is %s (pid %d, last heartbeat %s)\n",
		       strcmp(c->state, "stopped") == 0 ? "stopped" : "dead", c->pid, a);
	else if (board_slot_stale(c, now, BOARD_STALE_MS))
		printf("  its process is alive but stuck (pid %d, last heartbeat %s)\n", c->pid, a);
	else
		printf("  its process is up (pid %d, heartbeat %s)\n", c->pid, a);
}

static void
status_human(const Berth__StatusReply *st, const struct board_slot *slots, int nslots,
	     int have_board, int64_t now)
{
	char a[64], d[32];
	uint32_t total = 0, used = 0;
	size_t i;
	int k;

	if (st)
		printf("coordinator: answering at %s\n", cli_esc(cli_sock_path()));
	else
		status_silent(slots, nslots, now);

	printf("actors:\n");
	if (nslots > 0) {
		for (k = 0; k < nslots; k++) {
			const struct board_slot *s = &slots[k];

			cli_fmt_rel(s->heartbeat_ms, now, a, sizeof a);
			if (!slot_alive(s)) {
				/* Gone: a graceful stop says so on the board. */
				const char *why = slot_gone_why(s);

				printf("  %-12s pid %-7d %-9s last heartbeat %s%s%s%s\n",
				       cli_esc(s->actor), s->pid,
				       strcmp(s->state, "stopped") == 0 ? "stopped" : "dead", a,
				       *why ? " (" : "", why, *why ? ")" : "");
				continue;
			}
			dur_format(now - s->started_ms, d, sizeof d);
			printf("  %-12s pid %-7d %-9s up %-7s heartbeat %s", cli_esc(s->actor),
			       s->pid, cli_esc(s->state), d, a);
			if (s->restarts > 0)
				printf("  restarts %u", s->restarts);
			if (s->slots_total > 0)
				printf("  slots %u/%u", s->slots_used, s->slots_total);
			if (board_slot_stale(s, now, BOARD_STALE_MS))
				printf("  (stale)");
			putchar('\n');
		}
	} else if (st && st->n_actors > 0) {
		/* No board: the actors the coordinator has heard from. */
		for (i = 0; i < st->n_actors; i++) {
			const Berth__Actor *ac = st->actors[i];
			int pid = ac->ident ? ac->ident->pid : 0;

			cli_fmt_rel(ac->seen_ms, now, a, sizeof a);
			printf("  %-12s pid %-7d %-9s last hello %s\n",
			       cli_esc(ac->actor ? ac->actor : "?"), pid,
			       actor_alive(ac) ? "alive" : "dead", a);
		}
	} else {
		printf("  none%s\n", have_board ? "" : " known (no status board)");
	}
	if (shm_why[0] != '\0')
		printf("board: not used: %s (observation is off for this home)\n", shm_why);
	if (!st)
		return;

	if (st->store != NULL && st->store[0] != '\0')
		printf("store: %s\n", cli_esc(st->store));
	status_hosts(st);
	status_slots(st, &used, &total);
	printf("slots: %u/%u in use%s\n", used, total,
	       st->group && st->group->slots > 0 ? " (set by berth slots)" : "");
	if (st->group && st->group->paused)
		printf("paused: no job is started until 'berth resume'; running jobs go on\n");
	if (st->n_running == 0)
		printf("running: nothing\n");
	else if (status_running(st) < 0)
		return;
	if (status_queue(st) < 0)
		return;
	printf("tickets:");
	if (st->n_ticket_counts == 0)
		printf(" none");
	for (i = 0; i < st->n_ticket_counts; i++)
		printf("%s %s %s", i ? "," : "", cli_esc(st->ticket_counts[i]->key),
		       cli_esc(st->ticket_counts[i]->value));
	putchar('\n');
}

int
cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Status sreq = BERTH__STATUS__INIT;
	Berth__Reply *rep = NULL;
	const Berth__StatusReply *st = NULL;
	struct board_slot slots[BOARD_SLOTS];
	struct rpc_client *c;
	struct board *bd;
	int64_t timeout = STATUS_TIMEOUT_MS, now;
	int ch, json = 0, nslots = 0, have_board = 0, rc = CLI_OK;

	if (getenv("BERTH_TIMEOUT") != NULL)
		timeout = cli_timeout_ms();
	optind = 0;
	while ((ch = cli_getopt(argc, argv, "hjt:", opts)) != -1) {
		switch (ch) {
		case 'h': fputs(status_usage, stdout); return CLI_OK;
		case 'j': json = 1; break;
		case 't':
			if (cli_opt_dur(argv[0], "--timeout", optarg, 1, INT64_MAX, &timeout) !=
			    CLI_OK)
				return CLI_USAGE;
			break;
		default: return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);

	/* The board first: it is what still answers when nothing else does.
	 * One that is not ours is never read: it may be forged. */
	if (!shm_refused(cli_home(), shm_why, sizeof shm_why) &&
	    (bd = board_open(cli_home(), 0)) != NULL) {
		have_board = 1;
		nslots = board_read(bd, slots, BOARD_SLOTS);
		board_close(bd);
		if (nslots < 0)
			nslots = 0;
	}

	req.verb_case = BERTH__REQUEST__VERB_STATUS;
	req.status = &sreq;
	/* Either failure below has already said on stderr where it looked. */
	if ((c = cli_connect()) != NULL) {
		if (cli_call(c, &req, &rep, (int)timeout, 0) == 0) {
			if (cli_check(rep, "status") == CLI_OK &&
			    rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_STATUS)
				st = rep->granted->status;
			else if (rep->result_case == BERTH__REPLY__RESULT_GRANTED)
				cli_fail("status: unexpected reply from the coordinator");
		}
		rpc_client_close(c);
	}
	if (st == NULL)
		rc = CLI_FAIL;
	now = clock_wall_ms();
	if (json)
		status_json(st, slots, nslots, have_board, now);
	else
		status_human(st, slots, nslots, have_board, now);
	if (rep != NULL)
		berth__reply__free_unpacked(rep, NULL);
	return rc;
}
