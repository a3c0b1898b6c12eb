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
const char *cli_home(void)
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

const char *cli_sock_path(void)
{
	if (sock_path[0] == '\0')
		snprintf(sock_path, sizeof sock_path, "%s/coordinator.sock", cli_home());
	return sock_path;
}

int cli_timeout_ms(void)
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

static void on_slow(void *arg, int slow, const char *what)
{
	const char *where = arg;

	if (slow) {
		call_was_slow = 1;
		fprintf(stderr, "berth: waiting for the coordinator at %s...\n", cli_esc(where));
	}
}

/* 1 when a pid recorded by the launcher under launch/ is alive: then a
 * missing socket means the coordinator is (re)starting, worth waiting for. */
static int group_maybe_up(void)
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
static int sock_denied(const char *path, const char *cmd)
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

static struct rpc_client *open_client(const char *url, const char *actor, const char *where)
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

struct rpc_client *cli_connect(void)
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

struct rpc_client *cli_connect_worker(const char *cmd, const char **run_id)
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

int cli_call(struct rpc_client *c, Berth__Request *req, Berth__Reply **rep, int timeout_ms,
             int quiet)
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

void cli_fmt_facts(const Berth__Denied *d, char *buf, size_t n)
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

static const char *error_name(Berth__ErrorCode code)
{
	switch (code) {
	case BERTH__ERROR_CODE__ERR_MALFORMED:
		return "malformed request";
	case BERTH__ERROR_CODE__ERR_VERSION:
		return "protocol version mismatch (the CLI and the coordinator are from "
		       "different builds)";
	case BERTH__ERROR_CODE__ERR_STORAGE:
		return "storage error";
	case BERTH__ERROR_CODE__ERR_NOT_FOUND:
		return "not found";
	case BERTH__ERROR_CODE__ERR_INVALID:
		return "invalid";
	case BERTH__ERROR_CODE__ERR_AUTH:
		return "not authorised";
	case BERTH__ERROR_CODE__ERR_TOO_LARGE:
		return "request too large";
	case BERTH__ERROR_CODE__ERR_UNKNOWN_VERB:
		return "the coordinator does not know this verb";
	case BERTH__ERROR_CODE__ERR_BUSY:
		return "the coordinator is shutting down";
	default:
		return "error";
	}
}

int cli_check(const Berth__Reply *rep, const char *what)
{
	char facts[512];

	switch (rep->result_case) {
	case BERTH__REPLY__RESULT_GRANTED:
		return CLI_OK;
	case BERTH__REPLY__RESULT_DENIED:
		cli_fmt_facts(rep->denied, facts, sizeof facts);
		if (facts[0] != '\0')
			return cli_fail("%s: denied: %s (%s)", what,
			                rep->denied->reason ? rep->denied->reason : "?", facts);
		return cli_fail("%s: denied: %s", what,
		                rep->denied->reason ? rep->denied->reason : "?");
	case BERTH__REPLY__RESULT_ERROR:
		if (rep->error->message != NULL && *rep->error->message != '\0')
			return cli_fail("%s: %s: %s", what, error_name(rep->error->code),
			                rep->error->message);
		return cli_fail("%s: %s", what, error_name(rep->error->code));
	default:
		return cli_fail("%s: the coordinator sent an empty reply", what);
	}
}

int cli_request(Berth__Request *req, Berth__Reply **rep, const char *what)
{
	struct rpc_client *c;
	int rc = CLI_FAIL;

	*rep = NULL;
	if ((c = cli_connect()) == NULL)
		return CLI_FAIL;
	if (cli_call(c, req, rep, cli_timeout_ms(), 0) < 0)
		goto out;
	if (cli_check(*rep, what) != CLI_OK) {
		berth__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		goto out;
	}
	rc = CLI_OK;
out:
	rpc_client_close(c);
	return rc;
}

int cli_resolve(struct rpc_client *c, const char *id, Berth__Reply **rep,
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
	snprintf(what, sizeof what, "show %s", id);
	if (cli_check(*rep, what) != CLI_OK ||
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

		if ((r->id && strcmp(r->id, id) == 0) || (r->alias && strcmp(r->alias, id) == 0)) {
			*run = r;
			return 0;
		}
	}
	if (t->n_runs > 0)
		*run = t->runs[t->n_runs - 1];
	return 0;
}

const Berth__Seat *cli_seat_of(const Berth__Reply *rep)
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
