/* berth seat: explicit, owned leases any session can take (DESIGN §8). The
 * coordinator arbitrates; the CLI's job is to name the owner, record which
 * process owns the seat, canonicalise the working tree, and turn a refusal
 * into advice a person can act on. */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "ident.h"
#include "msg.h"
#include "seat_show.h"
#include "util.h"

static const char seat_usage[] =
	"usage: berth seat acquire ITEM [--key K] [--workdir D] [--owner O] [--ttl DUR]\n"
	"                               [--pid PID] [--kind K] [--state S] [--task]\n"
	"                               [--in-flight [--in-flight-ttl DUR] [--in-flight-pid PID]]\n"
	"       berth seat confirm ITEM STATE [--owner O]\n"
	"       berth seat clear ITEM [--owner O]\n"
	"       berth seat release ITEM [--owner O]\n"
	"       berth seat force-release ITEM\n"
	"       berth seat heartbeat ITEM [--owner O]\n"
	"       berth seat stop ITEM --reason R [--by WHO]\n"
	"       berth seat activity ITEM I/N LABEL [--owner O]\n"
	"       berth seat show ITEM [--json]\n"
	"       berth seat list [--json]\n"
	"       berth seat any-active [--json]\n"
	"\n"
	"A seat is a named lease. Two live holders coexist only when their keys are\n"
	"equal and non-empty (the default key is the item itself), and never on the\n"
	"same working tree. A holder whose heartbeat is older than its TTL, or\n"
	"whose owner process has died, is stale and can be taken over. A --task\n"
	"seat is seen by everyone but never blocked and never blocking.\n"
	"\n"
	"acquire exits 0 when you hold the seat afterwards (acquired, already_held,\n"
	"stolen) and 1 on a conflict, naming the holder, or when --in-flight finds\n"
	"a transition of yours already in flight (in_flight). That mark ends with\n"
	"'seat confirm ITEM STATE' (the transition committed STATE) or 'seat clear\n"
	"ITEM' (it did not), or heals by itself after --in-flight-ttl (default: the\n"
	"seat's TTL) or when its process (--in-flight-pid, else --pid) dies.\n"
	"\n"
	"The owner defaults to $BERTH_OWNER (blanks trimmed), else user@host, and\n"
	"lives by its heartbeat: keep it within the TTL with 'seat heartbeat'.\n"
	"--pid PID also ties the seat to that process: when it exits the seat is\n"
	"stale. release of a seat that is not there succeeds (already_free).\n"
	"any-active exits 0 when any live seat exists (--json lists them), else 1.\n";

enum {
	OPT_KEY = 256,
	OPT_WORKDIR,
	OPT_OWNER,
	OPT_TTL,
	OPT_REASON,
	OPT_JSON,
	OPT_PID,
	OPT_KIND,
	OPT_STATE,
	OPT_TASK,
	OPT_IN_FLIGHT,
	OPT_IN_FLIGHT_TTL,
	OPT_IN_FLIGHT_PID,
	OPT_BY,
};

static const struct option seat_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "workdir", required_argument, NULL, OPT_WORKDIR },
	{ "owner", required_argument, NULL, OPT_OWNER },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "reason", required_argument, NULL, OPT_REASON },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "task", no_argument, NULL, OPT_TASK },
	{ "in-flight", no_argument, NULL, OPT_IN_FLIGHT },
	{ "in-flight-ttl", required_argument, NULL, OPT_IN_FLIGHT_TTL },
	{ "in-flight-pid", required_argument, NULL, OPT_IN_FLIGHT_PID },
	{ "by", required_argument, NULL, OPT_BY },
	{ NULL, 0, NULL, 0 },
};

struct seat_args {
	const char *item;
	const char *key;
	char *workdir;
	const char *owner;
	const char *reason;
	const char *by;
	const char *kind;
	const char *state; /* --state, or confirm's STATE */
	int64_t ttl_ms;
	int json;
	int task;
	int in_flight;
	int64_t in_flight_ttl_ms;
	long long pid;           /* the owner process; -1: none */
	long long in_flight_pid; /* the transitioning process; -1: --pid's */
	int64_t index, total;
	const char *label;
};

/* Which options each subcommand takes, and how many positional words. */
struct seat_cmd {
	const char *name;
	const char *opts; /* letters: k w o t r j p K S T F L P b */
	int npos;         /* positional words after ITEM (activity: I/N LABEL; confirm: STATE) */
	int need_item;
};

static const struct seat_cmd seat_cmds[] = {
	{ "acquire", "kwotpKSTFLP", 0, 1 },
	{ "confirm", "o", 1, 1 },
	{ "clear", "o", 0, 1 },
	{ "release", "o", 0, 1 },
	{ "force-release", "", 0, 1 },
	{ "heartbeat", "o", 0, 1 },
	{ "stop", "rb", 0, 1 },
	{ "activity", "o", 2, 1 },
	{ "show", "j", 0, 1 },
	{ "list", "j", 0, 0 },
	{ "any-active", "j", 0, 0 },
};

static char owner_buf[512];

/* s without leading and trailing blanks, in buf ("" when nothing is left). */
static const char *
trimmed(const char *s, char *buf, size_t n)
{
	size_t len;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f')
		s++;
	len = strlen(s);
	while (len > 0 && strchr(" \t\n\r\v\f", s[len - 1]) != NULL)
		len--;
	if (len >= n)
		len = n - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

/* BERTH_OWNER (trimmed: a stray blank from a shell must not make a second
 * owner), else user@host. The default owner names no process: it lives by
 * its heartbeat, so sequential commands from one session share the seat. */
static const char *
default_owner(void)
{
	const char *o = getenv("BERTH_OWNER"), *user = getenv("USER");
	struct passwd *pw;
	char host[256];

	if (o != NULL && *trimmed(o, owner_buf, sizeof owner_buf) != '\0')
		return owner_buf;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_name != NULL)
		user = pw->pw_name;
	if (gethostname(host, sizeof host) < 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	snprintf(owner_buf, sizeof owner_buf, "%s@%s", user ? user : "unknown", host);
	return owner_buf;
}

static int
opt_allowed(const struct seat_cmd *sc, int opt)
{
	char letter;

	switch (opt) {
	case OPT_KEY: letter = 'k'; break;
	case OPT_WORKDIR: letter = 'w'; break;
	case OPT_OWNER: letter = 'o'; break;
	case OPT_TTL: letter = 't'; break;
	case OPT_REASON: letter = 'r'; break;
	case OPT_JSON: letter = 'j'; break;
	case OPT_PID: letter = 'p'; break;
	case OPT_KIND: letter = 'K'; break;
	case OPT_STATE: letter = 'S'; break;
	case OPT_TASK: letter = 'T'; break;
	case OPT_IN_FLIGHT: letter = 'F'; break;
	case OPT_IN_FLIGHT_TTL: letter = 'L'; break;
	case OPT_IN_FLIGHT_PID: letter = 'P'; break;
	case OPT_BY: letter = 'b'; break;
	default: return 0;
	}
	return strchr(sc->opts, letter) != NULL;
}

static const char *
opt_name(int val)
{
	const struct option *o;

	for (o = seat_opts; o->name != NULL; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static int
seat_call(Berth__Request *req, Berth__Reply **rep)
{
	struct rpc_client *c;

	if ((c = cli_connect()) == NULL)
		return -1;
	if (cli_call(c, req, rep, cli_timeout_ms(), 0) < 0) {
		rpc_client_close(c);
		return -1;
	}
	rpc_client_close(c);
	return 0;
}

/* The identity of process pid into *id (boot_id kept in *me): 0 with
 * *out = id, 0 with *out = NULL for pid 0, or a usage error for a pid that
 * does not exist (an identity that cannot be read is sent as none). */
static int
seat_ident(const char *opt, long long pid, struct ident *me, Berth__Ident *id, Berth__Ident **out)
{
	int rc;

	*out = NULL;
	if (pid <= 0)
		return 0;
	if ((rc = ident_read((pid_t)pid, me)) == -ESRCH)
		return cli_usage_error("seat acquire", "%s %lld: no such process", opt, pid);
	if (rc == 0) {
		msg_ident_to(me, id);
		*out = id;
	}
	return 0;
}

static int
do_acquire(struct seat_args *a)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatAcquire acq = BERTH__SEAT_ACQUIRE__INIT;
	Berth__Ident id = BERTH__IDENT__INIT, fid = BERTH__IDENT__INIT;
	Berth__Reply *rep = NULL;
	const Berth__SeatOutcome *o;
	struct ident me, fme;
	char holder[1024];
	int rc = CLI_FAIL;

	acq.item = (char *)a->item;
	acq.key = (char *)a->key;
	acq.workdir = a->workdir;
	acq.owner = (char *)a->owner;
	acq.kind = (char *)a->kind;
	acq.state = (char *)a->state;
	acq.has_task = acq.has_in_flight = 1;
	acq.task = a->task;
	acq.in_flight = a->in_flight;
	if (a->ttl_ms > 0) {
		acq.has_ttl_ms = 1;
		acq.ttl_ms = a->ttl_ms;
	}
	if (a->in_flight_ttl_ms > 0) {
		acq.has_in_flight_ttl_ms = 1;
		acq.in_flight_ttl_ms = a->in_flight_ttl_ms;
	}
	/* The owner names no process unless --pid says which: an agent whose
	 * every command runs in a fresh shell would otherwise lose the seat
	 * the moment that shell exits. The in-flight mark's process is
	 * --in-flight-pid, else --pid's, else none (its TTL heals it). */
	if (a->in_flight_pid < 0)
		a->in_flight_pid = a->pid;
	if (seat_ident("--pid", a->pid, &me, &id, &acq.owner_ident) != 0 ||
	    (a->in_flight && seat_ident(a->in_flight_pid == a->pid ? "--pid" : "--in-flight-pid",
					a->in_flight_pid, &fme, &fid, &acq.in_flight_ident) != 0))
		return CLI_USAGE;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
	req.seat_acquire = &acq;
	if (seat_call(&req, &rep) < 0)
		return CLI_FAIL;
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED) {
		seat_describe_holder(rep->denied, holder, sizeof holder);
		rc = seat_acquire_refused(a->item, rep->denied->reason, holder,
					  cli_fact(rep->denied, "holder"));
		goto out;
	}
	if (cli_check(rep, "seat acquire") != CLI_OK)
		goto out;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEAT) {
		cli_fail("seat acquire: unexpected reply from the coordinator");
		goto out;
	}
	o = rep->granted->seat;
	if (o->outcome && strcmp(o->outcome, "acquired") == 0) {
		printf("acquired\n");
		rc = CLI_OK;
	} else if (o->outcome && strcmp(o->outcome, "already_held") == 0) {
		/* The word scripts read (test_cli_seat_lease, docs/SEATS.md). */
		printf("already_held\n");
		rc = CLI_OK;
	} else if (o->outcome && strcmp(o->outcome, "stolen") == 0) {
		if (o->previous && o->previous->owner)
			printf("stolen from %s\n", cli_esc(o->previous->owner));
		else
			printf("stolen\n");
		rc = CLI_OK;
	} else {
		/* A conflict carried as an outcome rather than a denial. */
		const Berth__Seat *h = o->previous ? o->previous : o->seat;

		snprintf(holder, sizeof holder, "%s", h && h->owner ? h->owner : "another owner");
		rc = seat_acquire_refused(a->item, o->outcome, holder, h ? h->item : NULL);
	}
out:
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

/* any-active (satelle's AnyActive, with staleness judged): the status is
 * the answer, as test(1)'s is: 0 when any live seat exists, 1 when none,
 * 2 when the coordinator could not say. --json lists the live seats. */
static int
do_any_active(const struct seat_args *a)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatList list = BERTH__SEAT_LIST__INIT;
	Berth__Reply *rep = NULL;
	int rc = CLI_USAGE;

	list.has_live_only = list.live_only = 1;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
	req.seat_list = &list;
	if (seat_call(&req, &rep) < 0)
		return CLI_USAGE;
	if (cli_check(rep, "seat any-active") != CLI_OK)
		goto out;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEATS) {
		cli_fail("seat any-active: unexpected reply from the coordinator");
		goto out;
	}
	if (a->json)
		seat_json_list(rep->granted->seats);
	rc = rep->granted->seats->n_seats > 0 ? CLI_OK : CLI_FAIL;
out:
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

static int
do_simple(const struct seat_cmd *sc, struct seat_args *a)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatRelease ref = BERTH__SEAT_RELEASE__INIT;
	Berth__SeatStop stop = BERTH__SEAT_STOP__INIT;
	Berth__SeatActivity act = BERTH__SEAT_ACTIVITY__INIT;
	Berth__SeatList list = BERTH__SEAT_LIST__INIT;
	Berth__SeatConfirm conf = BERTH__SEAT_CONFIRM__INIT;
	Berth__Reply *rep = NULL;
	char what[256];
	const char *outcome;
	int rc = CLI_FAIL;

	ref.item = (char *)a->item;
	ref.owner = (char *)a->owner;
	if (strcmp(sc->name, "confirm") == 0) {
		conf.item = (char *)a->item;
		conf.owner = (char *)a->owner;
		conf.state = (char *)a->state;
		req.verb_case = BERTH__REQUEST__VERB_SEAT_CONFIRM;
		req.seat_confirm = &conf;
	} else if (strcmp(sc->name, "clear") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_CLEAR;
		req.seat_clear = &ref;
	} else if (strcmp(sc->name, "release") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_RELEASE;
		req.seat_release = &ref;
	} else if (strcmp(sc->name, "force-release") == 0) {
		ref.owner = NULL;
		req.verb_case = BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE;
		req.seat_force_release = &ref;
	} else if (strcmp(sc->name, "heartbeat") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_HEARTBEAT;
		req.seat_heartbeat = &ref;
	} else if (strcmp(sc->name, "stop") == 0) {
		stop.item = (char *)a->item;
		stop.reason = (char *)a->reason;
		stop.requester = (char *)a->by;
		req.verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
		req.seat_stop = &stop;
	} else if (strcmp(sc->name, "activity") == 0) {
		act.item = (char *)a->item;
		act.has_index = act.has_total = 1;
		act.index = a->index;
		act.total = a->total;
		act.label = (char *)a->label;
		act.owner = (char *)a->owner;
		req.verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
		req.seat_activity = &act;
	} else if (strcmp(sc->name, "show") == 0) {
		ref.owner = NULL;
		req.verb_case = BERTH__REQUEST__VERB_SEAT_SHOW;
		req.seat_show = &ref;
	} else {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
		req.seat_list = &list;
	}
	if (seat_call(&req, &rep) < 0)
		return CLI_FAIL;
	snprintf(what, sizeof what, "seat %s%s%s", sc->name, a->item ? " " : "",
		 a->item ? a->item : "");
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED && cli_fact(rep->denied, "run") &&
	    rep->denied->reason != NULL && strcmp(rep->denied->reason, "held_by_run") == 0) {
		cli_fail("%s: the seat is held by run %s, which is still running; cancel the run "
			 "instead (its seat goes when it ends)",
			 what, cli_esc(cli_fact(rep->denied, "run")));
		goto out;
	}
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED && cli_fact(rep->denied, "owner")) {
		char holder[1024];

		seat_describe_holder(rep->denied, holder, sizeof holder);
		cli_fail("%s: %s: held by %s", what,
			 rep->denied->reason ? rep->denied->reason : "denied", holder);
		goto out;
	}
	if (cli_check(rep, what) != CLI_OK)
		goto out;
	if (strcmp(sc->name, "list") == 0) {
		if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEATS) {
			cli_fail("%s: unexpected reply from the coordinator", what);
			goto out;
		}
		if (a->json)
			seat_json_list(rep->granted->seats);
		else
			seat_table(rep->granted->seats);
		rc = CLI_OK;
		goto out;
	}
	if (strcmp(sc->name, "show") == 0) {
		const Berth__Seat *s = cli_seat_of(rep);

		if (s == NULL) {
			cli_fail("%s: no such seat", what);
			goto out;
		}
		if (a->json) {
			cli_json_seat(stdout, s, clock_wall_ms());
			fputc('\n', stdout);
		} else {
			seat_human(s, clock_wall_ms());
		}
		rc = CLI_OK;
		goto out;
	}
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEAT) {
		cli_fail("%s: unexpected reply from the coordinator", what);
		goto out;
	}
	/* A verb the coordinator declined inside a granted reply (e.g.
	 * "not_owner") is still a failure for the caller. */
	outcome = rep->granted->seat->outcome;
	if (outcome != NULL &&
	    (strcmp(outcome, "not_owner") == 0 || strcmp(outcome, "absent") == 0 ||
	     strcmp(outcome, "not_found") == 0 || strcmp(outcome, "stale") == 0)) {
		const Berth__Seat *s = rep->granted->seat->seat;

		cli_fail("%s: %s%s%s", what, seat_words(outcome), s && s->owner ? ", held by " : "",
			 s && s->owner ? s->owner : "");
		goto out;
	}
	/* The outcome word scripts read (already_free, confirmed, ...). */
	printf("%s\n", cli_esc(outcome && *outcome ? outcome : "ok"));
	rc = CLI_OK;
out:
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

int
cmd_seat(int argc, char **argv)
{
	static char arg_owner[512], arg_by[512];
	struct seat_args a;
	const struct seat_cmd *sc = NULL;
	char cmdname[64];
	size_t i;
	int c, rc = CLI_USAGE, pos;

	memset(&a, 0, sizeof a);
	a.pid = -1;
	a.in_flight_pid = -1;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(seat_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_USAGE : CLI_OK;
	}
	for (i = 0; i < sizeof seat_cmds / sizeof seat_cmds[0]; i++)
		if (strcmp(argv[1], seat_cmds[i].name) == 0)
			sc = &seat_cmds[i];
	if (sc == NULL)
		return cli_usage_error("seat", "unknown seat command '%s'", argv[1]);
	snprintf(cmdname, sizeof cmdname, "seat %s", sc->name);
	argv[1] = cmdname; /* messages say "berth seat acquire: ..." */
	argc--;
	argv++;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", seat_opts)) != -1) {
		if (c == 'h') {
			fputs(seat_usage, stdout);
			rc = CLI_OK;
			goto out;
		}
		if (c == '?')
			goto out;
		if (!opt_allowed(sc, c)) {
			cli_usage_error(argv[0], "option --%s does not apply here", opt_name(c));
			goto out;
		}
		switch (c) {
		case OPT_KEY:
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--key: empty key");
				goto out;
			}
			a.key = optarg;
			break;
		case OPT_WORKDIR:
			free(a.workdir);
			if ((a.workdir = realpath(optarg, NULL)) == NULL) {
				cli_usage_error(argv[0], "--workdir %s: %s", optarg,
						strerror(errno));
				goto out;
			}
			break;
		case OPT_OWNER:
			if (*trimmed(optarg, arg_owner, sizeof arg_owner) == '\0') {
				cli_usage_error(argv[0], "--owner: empty owner");
				goto out;
			}
			a.owner = arg_owner;
			break;
		case OPT_BY:
			if (*trimmed(optarg, arg_by, sizeof arg_by) == '\0') {
				cli_usage_error(argv[0], "--by: empty name");
				goto out;
			}
			a.by = arg_by;
			break;
		case OPT_KIND: a.kind = optarg; break;
		case OPT_STATE:
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--state: empty state");
				goto out;
			}
			a.state = optarg;
			break;
		case OPT_TASK: a.task = 1; break;
		case OPT_IN_FLIGHT: a.in_flight = 1; break;
		case OPT_IN_FLIGHT_TTL:
			if (cli_parse_dur(optarg, 1, &a.in_flight_ttl_ms) < 0) {
				cli_usage_error(argv[0], "--in-flight-ttl: bad duration '%s'",
						optarg);
				goto out;
			}
			break;
		case OPT_IN_FLIGHT_PID:
			if (cli_parse_int(optarg, 0, INT32_MAX, &a.in_flight_pid) < 0) {
				cli_usage_error(argv[0], "--in-flight-pid: bad number '%s'",
						optarg);
				goto out;
			}
			break;
		case OPT_TTL:
			if (cli_opt_dur(argv[0], "--ttl", optarg, 1, INT64_MAX, &a.ttl_ms) !=
			    CLI_OK)
				goto out;
			break;
		case OPT_REASON:
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--reason: empty reason");
				goto out;
			}
			a.reason = optarg;
			break;
		case OPT_JSON: a.json = 1; break;
		case OPT_PID:
			if (cli_opt_int(argv[0], "--pid", optarg, 0, INT32_MAX, &a.pid) != CLI_OK)
				goto out;
			break;
		}
	}
	pos = optind;
	if (sc->need_item) {
		if (pos >= argc || argv[pos][0] == '\0') {
			cli_usage_error(argv[0], "missing ITEM");
			goto out;
		}
		a.item = argv[pos++];
	}
	if (sc->npos == 1) {
		if (pos >= argc || argv[pos][0] == '\0') {
			cli_usage_error(argv[0], "expected ITEM STATE");
			goto out;
		}
		a.state = argv[pos++];
	} else if (sc->npos == 2) {
		if (pos + 2 > argc) {
			cli_usage_error(argv[0], "expected ITEM I/N LABEL");
			goto out;
		}
		if (cli_parse_frac(argv[pos], &a.index, &a.total) < 0) {
			cli_usage_error(argv[0], "bad I/N '%s' (use e.g. 3/10, with 0 <= I <= N)",
					argv[pos]);
			goto out;
		}
		a.label = argv[pos + 1];
		pos += 2;
	}
	if (pos < argc) {
		cli_usage_error(argv[0], "unexpected argument '%s'", argv[pos]);
		goto out;
	}
	if (strcmp(sc->name, "stop") == 0 && a.reason == NULL) {
		cli_usage_error(argv[0], "--reason R is required");
		goto out;
	}
	if ((a.in_flight_ttl_ms > 0 || a.in_flight_pid >= 0) && !a.in_flight) {
		cli_usage_error(argv[0], "--in-flight-ttl and --in-flight-pid go with --in-flight");
		goto out;
	}
	if (a.owner == NULL && strchr(sc->opts, 'o') != NULL)
		a.owner = default_owner();
	/* Who asks for a stop: --by, else the caller as an owner would be. */
	if (a.by == NULL && strchr(sc->opts, 'b') != NULL)
		a.by = default_owner();
	if (strcmp(sc->name, "acquire") == 0)
		rc = do_acquire(&a);
	else if (strcmp(sc->name, "any-active") == 0)
		rc = do_any_active(&a);
	else
		rc = do_simple(sc, &a);
out:
	free(a.workdir);
	return rc;
}
