/* Talking to the coordinator from the command line: where the group lives,
 * how long to wait for it, and how its answers are told to a person. A
 * call retries the same request id until its timeout, so a coordinator
 * restart is ridden out (DESIGN §5); after a second the user is told what
 * the CLI is waiting for, so a hang never looks like a hang. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "observe.h"
#include "rpc_observe.h"
#include "util.h"

static char *home;
static char sock_path[PATH_MAX];

/* The home is checked once, the way every actor checks it (home_check),
 * but never created: a command that finds no home finds no group either,
 * and says so where it looks for the socket. */
const char *
cli_home(void)
{
	char err[PATH_MAX + 160];

	if (home != NULL)
		return home;
	if ((home = home_default()) == NULL) {
		cli_fail("cannot tell where berth lives: set BERTH_HOME or HOME");
		exit(CLI_FAIL);
	}
	if (home_check(home, 0, err, sizeof err) < 0) {
		cli_fail("%s", err);
		exit(CLI_FAIL);
	}
	return home;
}

const char *
cli_sock_path(void)
{
	if (sock_path[0] == '\0')
		snprintf(sock_path, sizeof sock_path, "%s/coordinator.sock", cli_home());
	return sock_path;
}

int
cli_timeout_ms(void)
{
	const char *s = getenv("BERTH_TIMEOUT");
	int64_t ms;

	/* main.c has already refused a malformed BERTH_TIMEOUT. */
	if (s != NULL && *s != '\0' && cli_parse_dur(s, 1, &ms) == 0)
		return ms > INT_MAX ? INT_MAX : (int)ms;
	return CLI_DEFAULT_TIMEOUT_MS;
}

/* Set while a call has been slow, so that cli_call can say that the
 * coordinator finally answered (and say nothing when it never did: the
 * error message follows then). */
static int call_was_slow;
/* The socket path the open client talks to (the CLI has one at a time). */
static const char *call_where = "";

static void
on_slow(void *arg, int slow, const char *what)
{
	const char *where = arg;

	if (slow) {
		call_was_slow = 1;
		fprintf(stderr, "berth: waiting for the coordinator at %s...\n", cli_esc(where));
	}
}

/* 1 when a pid recorded by the launcher under launch/ is alive: then a
 * missing socket means the coordinator is (re)starting, worth waiting for. */
static int
group_maybe_up(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], buf[32];
	struct dirent *de;
	DIR *d;
	FILE *f;
	long long pid;
	int up = 0;

	snprintf(dir, sizeof dir, "%s/launch", cli_home());
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!up && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".pid") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof buf, f) != NULL) {
			buf[strcspn(buf, "\r\n")] = '\0';
			if (cli_parse_int(buf, 2, INT_MAX, &pid) == 0 &&
			    (kill((pid_t)pid, 0) == 0 || errno == EPERM))
				up = 1;
		}
		fclose(f);
	}
	closedir(d);
	return up;
}

/* A socket this user may not reach (another user's home, or its socket)
 * is said at once, as "permission denied": it is neither a missing group
 * nor one that is slow to answer, and waiting would not change it. */
static int
sock_denied(const char *path, const char *cmd)
{
	struct stat st;

	if ((stat(path, &st) < 0 && errno == EACCES) ||
	    (access(path, W_OK) < 0 && errno == EACCES)) {
		cli_fail("%s%spermission denied: %s belongs to another user", cmd ? cmd : "",
			 cmd ? ": " : "", path);
		return 1;
	}
	return 0;
}

static struct rpc_client *
open_client(const char *url, const char *actor, const char *where)
{
	struct rpc_client *c;

	/* A CLI call is short: one plain connection per call, nng only when
	 * the coordinator is not answering at once (proto/rpc.h). */
	if ((c = rpc_client_open_direct(url, actor)) == NULL) {
		cli_fail("cannot open a connection to %s", where);
		return NULL;
	}
	rpc_client_on_slow(c, on_slow, (void *)where);
	call_where = where;
	return c;
}

struct rpc_client *
cli_connect(void)
{
	char url[PATH_MAX + 16];
	struct rpc_client *c;
	struct stat st;

	if (sock_denied(cli_sock_path(), NULL))
		return NULL;
	if (stat(cli_sock_path(), &st) < 0 && !group_maybe_up()) {
		cli_fail("coordinator not running: no socket at %s (start the group with "
			 "'berth up')",
			 cli_sock_path());
		return NULL;
	}
	if (home_socket_url(cli_home(), url, sizeof url) < 0) {
		cli_fail("berth home path too long: %s", cli_home());
		return NULL;
	}
	if ((c = open_client(url, "cli", cli_sock_path())) == NULL)
		return NULL;
	/* The CLI's side of each exchange goes into the group's trace ring
	 * (DESIGN §9), but only into a ring the group has made: a mistyped
	 * --home must not leave shared memory behind. */
	if (stat(cli_sock_path(), &st) == 0 &&
	    observe_attach_ring(cli_home(), "cli", rpc_client_instance(c)) == 0)
		rpc_observe_install();
	return c;
}

struct rpc_client *
cli_connect_worker(const char *cmd, const char **run_id)
{
	static char url[PATH_MAX + 16];
	const char *sock = getenv("BERTH_SOCKET");
	const char *token = getenv("BERTH_TOKEN");
	const char *where;
	struct rpc_client *c;
	struct stat st;

	*run_id = getenv("BERTH_RUN_ID");
	if (sock == NULL || *sock == '\0' || token == NULL || *token == '\0' || *run_id == NULL ||
	    **run_id == '\0') {
		fprintf(stderr,
			"berth %s: not inside a berth run: %s is not set (worker verbs are for "
			"jobs started by berth, which get BERTH_SOCKET, BERTH_TOKEN and "
			"BERTH_RUN_ID)\n",
			cmd,
			sock == NULL || *sock == '\0'     ? "BERTH_SOCKET"
			: token == NULL || *token == '\0' ? "BERTH_TOKEN"
							  : "BERTH_RUN_ID");
		return NULL;
	}
	/* BERTH_SOCKET is a url ("ipc:///...") or a plain socket path. */
	if (strstr(sock, "://") != NULL)
		snprintf(url, sizeof url, "%s", sock);
	else
		snprintf(url, sizeof url, "ipc://%s", sock);
	where = strncmp(url, "ipc://", 6) == 0 ? url + 6 : url;
	if (where != url && sock_denied(where, cmd))
		return NULL;
	if ((c = open_client(url, "worker", where)) == NULL)
		return NULL;
	rpc_client_set_token(c, token);
	/* The shim gives jobs BERTH_HOME too: record the worker's side of
	 * each exchange in the group's trace ring. */
	if (getenv("BERTH_HOME") != NULL && strncmp(url, "ipc://", 6) == 0 &&
	    stat(url + 6, &st) == 0 &&
	    observe_attach_ring(cli_home(), "worker", rpc_client_instance(c)) == 0)
		rpc_observe_install();
	return c;
}

int
cli_call(struct rpc_client *c, Berth__Request *req, Berth__Reply **rep, int timeout_ms, int quiet)
{
	char d[32];
	int rc;

	*rep = NULL;
	call_was_slow = 0;
	rc = rpc_call(c, req, rep, timeout_ms);
	if (rc == 0) {
		if (call_was_slow)
			fprintf(stderr, "berth: the coordinator at %s answered\n",
				cli_esc(call_where));
		return 0;
	}
	if (!quiet) {
		dur_format(timeout_ms, d, sizeof d);
		if (rc == -ETIMEDOUT)
			cli_fail("no answer from the coordinator at %s after %s (is the group "
				 "running? start it with 'berth up')",
				 call_where, d);
		else
			cli_fail("talking to the coordinator at %s: %s", call_where, strerror(-rc));
	}
	return -1;
}

void
cli_fmt_facts(const Berth__Denied *d, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < d->n_facts && len < n; i++) {
		const Berth__Fact *f = d->facts[i];
		int w = snprintf(buf + len, n - len, "%s%s=%s", i ? ", " : "", f->key ? f->key : "",
				 f->value ? f->value : "");

		if (w < 0)
			break;
		len += (size_t)w;
	}
}

static const char *
error_name(Berth__ErrorCode code)
{
	switch (code) {
	case BERTH__ERROR_CODE__ERR_MALFORMED: return "malformed request";
	case BERTH__ERROR_CODE__ERR_VERSION:
		return "protocol version mismatch (the CLI and the coordinator are from "
		       "different builds)";
	case BERTH__ERROR_CODE__ERR_STORAGE: return "storage error";
	case BERTH__ERROR_CODE__ERR_NOT_FOUND: return "not found";
	case BERTH__ERROR_CODE__ERR_INVALID: return "invalid";
	case BERTH__ERROR_CODE__ERR_AUTH: return "not authorised";
	case BERTH__ERROR_CODE__ERR_TOO_LARGE: return "request too large";
	case BERTH__ERROR_CODE__ERR_UNKNOWN_VERB: return "the coordinator does not know this verb";
	case BERTH__ERROR_CODE__ERR_BUSY: return "the coordinator is shutting down";
	default: return "error";
	}
}

const char *
cli_fact(const Berth__Denied *d, const char *key)
{
	size_t i;

	for (i = 0; d != NULL && i < d->n_facts; i++)
		if (d->facts[i]->key != NULL && strcmp(d->facts[i]->key, key) == 0)
			return d->facts[i]->value ? d->facts[i]->value : "";
	return NULL;
}

static int
finished(const char *state)
{
	return ticket_state_final(ticket_state_parse(state));
}

/*
 * A denial of an operator verb on a ticket, as a person would say it. The
 * guard's reason and facts are the coordinator's (DESIGN §4); here they
 * only become words. 0 with the sentence in buf, or -1 when this denial
 * has no sentence of its own (the caller then says it generically).
 */
static int
denial_sentence(const char *verb, const char *id, const Berth__Denied *d, char *buf, size_t n)
{
	const char *reason = d->reason ? d->reason : "";
	const char *st = cli_fact(d, "state");
	const char *dep = cli_fact(d, "dependency");

	if (st == NULL)
		st = "";
	if (strcmp(reason, "not_ready") == 0 || strcmp(reason, "not_editable") == 0 ||
	    strcmp(reason, "not_finished") == 0) {
		int running = ticket_state_parse(st) == TICKET_CLAIMED ||
			      run_state_parse(st) == RUN_RUNNING;

		if (ticket_state_parse(st) == TICKET_DEPENDENCY_FAILED &&
		    strcmp(verb, "retry") == 0 && dep && *dep)
			snprintf(
				buf, n,
				"%s never ran: its dependency %s did not succeed; retry %s, and %s "
				"runs after it",
				id, dep, dep, id);
		else if (finished(st) && strcmp(verb, "retry") != 0 && strcmp(verb, "remove") != 0)
			snprintf(buf, n, "%s has already finished (%s); nothing to %s", id, st,
				 verb);
		else if (strcmp(verb, "hold") == 0 && running)
			snprintf(buf, n,
				 "%s is running; only a queued ticket can be held ('berth cancel "
				 "%s' stops it)",
				 id, id);
		else if (strcmp(verb, "release") == 0)
			snprintf(buf, n, "%s is not held (it is %s); nothing to release", id,
				 running ? "running" : st);
		else if (strcmp(verb, "retry") == 0 && ticket_state_parse(st) == TICKET_SUCCEEDED)
			snprintf(buf, n,
				 "%s has succeeded; only a failed or cancelled ticket can be "
				 "retried",
				 id);
		else if (strcmp(verb, "retry") == 0)
			snprintf(
				buf, n,
				"%s has not finished (it is %s); only a failed or cancelled ticket "
				"can be retried",
				id, running ? "running" : st);
		else if (strcmp(verb, "edit") == 0)
			snprintf(buf, n,
				 "%s is %s; only a queued ticket (ready or held) can be edited", id,
				 running ? "running" : st);
		else if (strcmp(verb, "remove") == 0)
			snprintf(buf, n,
				 "%s has not finished (it is %s); only a finished ticket can be "
				 "removed (cancel it first)",
				 id, running ? "running" : st);
		else
			return -1;
		return 0;
	}
	if (strcmp(reason, "has_dependents") == 0 && (dep = cli_fact(d, "dependent")) != NULL) {
		snprintf(buf, n,
			 "%s is kept: %s waits for it (--after) and has not finished; remove or "
			 "cancel %s first",
			 id, dep, dep);
		return 0;
	}
	if (strcmp(reason, "paused") == 0) {
		snprintf(buf, n, "the group is paused ('berth resume' starts jobs again)");
		return 0;
	}
	if (strcmp(reason, "not_permitted") == 0) {
		snprintf(buf, n, "%s %s: not permitted from here", verb, id);
		return 0;
	}
	return -1;
}

void
cli_denial_text(const char *verb, const char *id, const Berth__Denied *d, char *buf, size_t n)
{
	char facts[512], words[64];
	size_t i;

	if (id != NULL && denial_sentence(verb, id, d, buf, n) == 0)
		return;
	/* No sentence of its own: the reason in words, and its facts. */
	snprintf(words, sizeof words, "%s", d->reason ? d->reason : "refused");
	for (i = 0; words[i] != '\0'; i++)
		if (words[i] == '_')
			words[i] = ' ';
	cli_fmt_facts(d, facts, sizeof facts);
	snprintf(buf, n, "%s%s%s: refused: %s%s%s%s", verb, id ? " " : "", id ? id : "", words,
		 facts[0] ? " (" : "", facts, facts[0] ? ")" : "");
}

int
cli_check_id(const Berth__Reply *rep, const char *verb, const char *id)
{
	char what[160], text[768];

	snprintf(what, sizeof what, "%s%s%s", verb, id ? " " : "", id ? id : "");
	switch (rep->result_case) {
	case BERTH__REPLY__RESULT_GRANTED: return CLI_OK;
	case BERTH__REPLY__RESULT_DENIED:
		cli_denial_text(verb, id, rep->denied, text, sizeof text);
		return cli_fail("%s", text);
	case BERTH__REPLY__RESULT_ERROR:
		/* The coordinator's message says what was not found or not
		 * valid; its code's name would only repeat it. */
		if (rep->error->message != NULL && *rep->error->message != '\0' &&
		    (rep->error->code == BERTH__ERROR_CODE__ERR_NOT_FOUND ||
		     rep->error->code == BERTH__ERROR_CODE__ERR_INVALID))
			return cli_fail("%s: %s", what, rep->error->message);
		if (rep->error->message != NULL && *rep->error->message != '\0')
			return cli_fail("%s: %s: %s", what, error_name(rep->error->code),
					rep->error->message);
		return cli_fail("%s: %s", what, error_name(rep->error->code));
	default: return cli_fail("%s: the coordinator sent an empty reply", what);
	}
}

int
cli_check(const Berth__Reply *rep, const char *what)
{
	return cli_check_id(rep, what, NULL);
}

int
cli_each_id(const char *cmd, int n, char **args, Berth__Request__VerbCase verb,
	    int (*each)(void *arg, const char *id, const Berth__Reply *rep), void *arg)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TicketRef ref = BERTH__TICKET_REF__INIT;
	struct rpc_client *cl;
	char(*ids)[CLI_ID_MAX];
	int i, rc = CLI_OK;

	if (n <= 0)
		return cli_usage_error(cmd, "missing ticket ID");
	if ((ids = calloc((size_t)n, sizeof *ids)) == NULL)
		return cli_fail("out of memory");
	/* Every id is checked before anything is asked: a typo in the third
	 * must not leave the first two done. */
	for (i = 0; i < n; i++)
		if (cli_id_arg(cmd, args[i], ids[i], sizeof ids[i]) != CLI_OK) {
			free(ids);
			return CLI_USAGE;
		}
	if ((cl = cli_connect()) == NULL) {
		free(ids);
		return CLI_FAIL;
	}
	req.verb_case = verb;
	/* Every such verb's field is a TicketRef: one union member serves. */
	req.hold = &ref;
	for (i = 0; i < n; i++) {
		Berth__Reply *rep = NULL;

		ref.id = ids[i];
		/* A fresh request id per ticket: the same one would be a retry,
		 * answered with the first ticket's stored reply. */
		req.has_req_id = 0;
		req.req_id = 0;
		if (cli_call(cl, &req, &rep, cli_timeout_ms(), 0) < 0) {
			rc = CLI_FAIL;
			break;
		}
		if (each(arg, ids[i], rep) < 0)
			rc = CLI_FAIL;
		berth__reply__free_unpacked(rep, NULL);
	}
	rpc_client_close(cl);
	free(ids);
	return rc;
}

int
cli_id_arg(const char *cmd, const char *s, char *buf, size_t n)
{
	if (cli_parse_id(s, buf, n) > 0)
		return CLI_OK;
	return cli_usage_error(cmd,
			       "bad ID '%s' (a ticket T3 or 3, a run alias T3-r1, a run id or "
			       "its first 8+ hex digits, or last)",
			       s);
}

int
cli_request(Berth__Request *req, Berth__Reply **rep, const char *what)
{
	return cli_request_id(req, rep, what, NULL);
}

int
cli_request_id(Berth__Request *req, Berth__Reply **rep, const char *verb, const char *id)
{
	struct rpc_client *c;
	int rc = CLI_FAIL;

	*rep = NULL;
	if ((c = cli_connect()) == NULL)
		return CLI_FAIL;
	if (cli_call(c, req, rep, cli_timeout_ms(), 0) < 0)
		goto out;
	if (cli_check_id(*rep, verb, id) != CLI_OK) {
		berth__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		goto out;
	}
	rc = CLI_OK;
out:
	rpc_client_close(c);
	return rc;
}

int
cli_resolve(struct rpc_client *c, const char *cmd, const char *id, Berth__Reply **rep,
	    const Berth__Ticket **ticket, const Berth__Run **run, int timeout_ms, int quiet)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Show show = BERTH__SHOW__INIT;
	const Berth__Ticket *t;
	char what[128];
	size_t i;

	*rep = NULL;
	*run = NULL;
	show.id = (char *)id;
	req.verb_case = BERTH__REQUEST__VERB_SHOW;
	req.show = &show;
	if (cli_call(c, &req, rep, timeout_ms, quiet) < 0)
		return -1;
	snprintf(what, sizeof what, "%s %s", cmd, id);
	if (cli_check_id(*rep, cmd, id) != CLI_OK ||
	    (*rep)->granted->payload_case != BERTH__GRANTED__PAYLOAD_TICKET) {
		if ((*rep)->result_case == BERTH__REPLY__RESULT_GRANTED)
			cli_fail("%s: unexpected reply", what);
		berth__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		return -2;
	}
	t = (*rep)->granted->ticket;
	*ticket = t;
	/* Which run the id names: itself (run id or alias), else the latest. */
	for (i = 0; i < t->n_runs; i++) {
		const Berth__Run *r = t->runs[i];

		/* A run id prefix (8+ hex) names its run too. */
		if ((r->id && strlen(id) >= 8 && strncmp(r->id, id, strlen(id)) == 0) ||
		    (r->alias && strcmp(r->alias, id) == 0)) {
			*run = r;
			return 0;
		}
	}
	if (t->n_runs > 0)
		*run = t->runs[t->n_runs - 1];
	return 0;
}

const Berth__Seat *
cli_seat_of(const Berth__Reply *rep)
{
	const Berth__Granted *g;

	if (rep->result_case != BERTH__REPLY__RESULT_GRANTED)
		return NULL;
	g = rep->granted;
	if (g->payload_case == BERTH__GRANTED__PAYLOAD_SEAT && g->seat != NULL)
		return g->seat->seat;
	if (g->payload_case == BERTH__GRANTED__PAYLOAD_SEATS && g->seats != NULL &&
	    g->seats->n_seats > 0)
		return g->seats->seats[0];
	return NULL;
}
