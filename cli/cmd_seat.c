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
#include "util.h"

static const char seat_usage[] =
    "usage: berth seat acquire ITEM [--key K] [--workdir D] [--owner O] [--ttl DUR]\n"
    "                               [--pid PID]\n"
    "       berth seat release ITEM [--owner O]\n"
    "       berth seat force-release ITEM\n"
    "       berth seat heartbeat ITEM [--owner O]\n"
    "       berth seat stop ITEM --reason R\n"
    "       berth seat activity ITEM I/N LABEL [--owner O]\n"
    "       berth seat show ITEM [--json]\n"
    "       berth seat list [--json]\n"
    "\n"
    "A seat is a named lease. Two live holders coexist only when their keys are\n"
    "equal and non-empty (the default key is the item itself), and never on the\n"
    "same working tree. A holder whose heartbeat is older than its TTL, or\n"
    "whose owner process has died, is stale and can be taken over.\n"
    "\n"
    "acquire exits 0 when you hold the seat afterwards (acquired, already_held,\n"
    "stolen) and 1 on a conflict, naming the holder. The owner defaults to\n"
    "$BERTH_OWNER, else user@host; the owner process is the one that ran\n"
    "berth (the calling shell or agent): when it exits the seat goes stale.\n"
    "--pid PID names another owner process; --pid 0 records none, so only\n"
    "the TTL (kept fresh with 'seat heartbeat') decides.\n";

enum { OPT_KEY = 256, OPT_WORKDIR, OPT_OWNER, OPT_TTL, OPT_REASON, OPT_JSON, OPT_PID };

static const struct option seat_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"key", required_argument, NULL, OPT_KEY},
    {"workdir", required_argument, NULL, OPT_WORKDIR},
    {"owner", required_argument, NULL, OPT_OWNER},
    {"ttl", required_argument, NULL, OPT_TTL},
    {"reason", required_argument, NULL, OPT_REASON},
    {"json", no_argument, NULL, OPT_JSON},
    {"pid", required_argument, NULL, OPT_PID},
    {NULL, 0, NULL, 0},
};

struct seat_args {
	const char *item;
	const char *key;
	char *workdir;
	const char *owner;
	const char *reason;
	int64_t ttl_ms;
	int json;
	long long pid; /* the owner process; -1: the caller of berth */
	int64_t index, total;
	const char *label;
};

/* Which options each subcommand takes, and how many positional words. */
struct seat_cmd {
	const char *name;
	const char *opts; /* letters: k w o t r j p */
	int npos;         /* positional words after ITEM (activity: I/N LABEL) */
	int need_item;
};

static const struct seat_cmd seat_cmds[] = {
    {"acquire", "kwotp", 0, 1}, {"release", "o", 0, 1}, {"force-release", "", 0, 1},
    {"heartbeat", "o", 0, 1},   {"stop", "r", 0, 1},    {"activity", "o", 2, 1},
    {"show", "j", 0, 1},        {"list", "j", 0, 0},
};

static char owner_buf[512];

/* BERTH_OWNER, else user@host. */
static const char *default_owner(void)
{
	const char *o = getenv("BERTH_OWNER"), *user = getenv("USER");
	struct passwd *pw;
	char host[256];

	if (o != NULL && *o != '\0')
		return o;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_name != NULL)
		user = pw->pw_name;
	if (gethostname(host, sizeof host) < 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	snprintf(owner_buf, sizeof owner_buf, "%s@%s", user ? user : "unknown", host);
	return owner_buf;
}

static int opt_allowed(const struct seat_cmd *sc, int opt)
{
	char letter;

	switch (opt) {
	case OPT_KEY:
		letter = 'k';
		break;
	case OPT_WORKDIR:
		letter = 'w';
		break;
	case OPT_OWNER:
		letter = 'o';
		break;
	case OPT_TTL:
		letter = 't';
		break;
	case OPT_REASON:
		letter = 'r';
		break;
	case OPT_JSON:
		letter = 'j';
		break;
	case OPT_PID:
		letter = 'p';
		break;
	default:
		return 0;
	}
	return strchr(sc->opts, letter) != NULL;
}

static const char *opt_name(int val)
{
	const struct option *o;

	for (o = seat_opts; o->name != NULL; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static const char *fact(const Berth__Denied *d, const char *key)
{
	size_t i;

	for (i = 0; i < d->n_facts; i++)
		if (d->facts[i]->key && strcmp(d->facts[i]->key, key) == 0)
			return d->facts[i]->value;
	return NULL;
}

static void __attribute__((format(printf, 4, 5)))
appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*len >= n)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len += (size_t)w;
}

/* "alice@host (seat repo, key repo, workdir /src/app, held 3m, heartbeat
 * 12s ago)" from a denial's facts; unknown facts are appended as k=v. */
static void describe_holder(const Berth__Denied *d, char *buf, size_t n)
{
	static const char *const known[] = {"owner",  "holder",           "key", "workdir",
	                                    "age_ms", "heartbeat_age_ms", NULL};
	const char *owner = fact(d, "owner"), *item = fact(d, "holder"), *v;
	char dur[32];
	long long ms;
	size_t i, k, len;
	int w;

	w = snprintf(buf, n, "%s (seat %s", owner ? owner : "another owner", item ? item : "?");
	len = w > 0 ? (size_t)w : 0;
	if ((v = fact(d, "key")) && *v)
		appendf(buf, n, &len, ", key %s", v);
	if ((v = fact(d, "workdir")) && *v)
		appendf(buf, n, &len, ", workdir %s", v);
	if ((v = fact(d, "age_ms")) && cli_parse_int(v, 0, INT64_MAX, &ms) == 0) {
		dur_format(ms, dur, sizeof dur);
		appendf(buf, n, &len, ", held %s", dur);
	}
	if ((v = fact(d, "heartbeat_age_ms")) && cli_parse_int(v, 0, INT64_MAX, &ms) == 0) {
		dur_format(ms, dur, sizeof dur);
		appendf(buf, n, &len, ", heartbeat %s ago", dur);
	}
	for (i = 0; i < d->n_facts; i++) {
		const char *key = d->facts[i]->key ? d->facts[i]->key : "";

		for (k = 0; known[k] != NULL; k++)
			if (strcmp(key, known[k]) == 0)
				break;
		if (known[k] == NULL)
			appendf(buf, n, &len, ", %s=%s", key,
			        d->facts[i]->value ? d->facts[i]->value : "");
	}
	appendf(buf, n, &len, ")");
}

static int is_tree_conflict(const char *reason)
{
	return reason != NULL && strstr(reason, "tree") != NULL;
}

/* The refusal of an acquire, with the advice that fits it (key conflict:
 * wait or ask the holder; tree conflict: another working tree). */
static int acquire_refused(const char *item, const char *reason, const char *holder,
                           const char *holder_item)
{
	if (is_tree_conflict(reason))
		fprintf(stderr,
		        "berth: seat %s: tree_conflict: the working tree is held by %s\n"
		        "berth: use another working tree (e.g. git worktree add) for this work\n",
		        cli_esc(item), cli_esc(holder));
	else
		fprintf(stderr,
		        "berth: seat %s: conflict: held by %s\n"
		        "berth: wait until it is released, or ask the holder to stop: berth seat "
		        "stop %s --reason ...\n",
		        cli_esc(item), cli_esc(holder), cli_esc(holder_item ? holder_item : item));
	return CLI_FAIL;
}

static void seat_human(const Berth__Seat *s, int64_t now)
{
	char a[96], b[32];

	printf("%s\n", cli_esc(s->item ? s->item : "?"));
	printf("  owner:     %s", cli_esc(s->owner ? s->owner : "?"));
	if (s->owner_ident && s->owner_ident->pid > 0)
		printf(" (pid %d)", s->owner_ident->pid);
	putchar('\n');
	printf("  key:       %s\n", cli_esc(s->key && *s->key ? s->key : s->item ? s->item : "-"));
	printf("  workdir:   %s\n", cli_esc(s->workdir && *s->workdir ? s->workdir : "-"));
	cli_fmt_when(s->acquired_ms, now, a, sizeof a);
	printf("  acquired:  %s\n", a);
	cli_fmt_rel(s->heartbeat_ms, now, a, sizeof a);
	dur_format(s->ttl_ms, b, sizeof b);
	printf("  heartbeat: %s (ttl %s)%s\n", a, b, s->stale ? ", STALE" : "");
	if (s->run_id && *s->run_id)
		printf("  run:       %s\n", cli_esc(s->run_id));
	if (s->stop_reason && *s->stop_reason)
		printf("  stop:      requested: %s\n", cli_esc(s->stop_reason));
	if (!s->stale && (s->activity_total > 0 || (s->activity_label && *s->activity_label))) {
		cli_fmt_bar(s->activity_index, s->activity_total, b, sizeof b);
		printf("  activity:  %s %lld/%lld %s\n", b, (long long)s->activity_index,
		       (long long)s->activity_total, cli_esc(s->activity_label));
	}
}

static void seat_table(const Berth__SeatListReply *l)
{
	char age[32], hb[32];
	size_t i;

	if (l->n_seats == 0) {
		printf("no seats\n");
		return;
	}
	printf("%-20s %-24s %-7s %-9s %-16s %-30s %s\n", "ITEM", "OWNER", "AGE", "HEARTBEAT", "KEY",
	       "WORKDIR", "NOTE");
	for (i = 0; i < l->n_seats; i++) {
		const Berth__Seat *s = l->seats[i];

		dur_format(s->acquired_ms ? l->now_ms - s->acquired_ms : 0, age, sizeof age);
		dur_format(s->heartbeat_ms ? l->now_ms - s->heartbeat_ms : 0, hb, sizeof hb);
		printf("%-20s %-24s %-7s %-9s %-16s %-30s", cli_esc(s->item ? s->item : "?"),
		       cli_esc(s->owner ? s->owner : "?"), age, hb,
		       cli_esc(s->key && *s->key ? s->key
		               : s->item         ? s->item
		                                 : "-"),
		       cli_esc(s->workdir && *s->workdir ? s->workdir : "-"));
		if (s->stale)
			printf(" stale");
		if (s->stop_reason && *s->stop_reason)
			printf(" stop: %s", cli_esc(s->stop_reason));
		if (!s->stale &&
		    (s->activity_total > 0 || (s->activity_label && *s->activity_label)))
			printf(" %lld/%lld %s", (long long)s->activity_index,
			       (long long)s->activity_total, cli_esc(s->activity_label));
		putchar('\n');
	}
}

static int seat_call(Berth__Request *req, Berth__Reply **rep)
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

static int do_acquire(struct seat_args *a)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatAcquire acq = BERTH__SEAT_ACQUIRE__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__Reply *rep = NULL;
	const Berth__SeatOutcome *o;
	struct ident me;
	char holder[1024];
	int rc = CLI_FAIL, idrc;

	acq.item = (char *)a->item;
	acq.key = (char *)a->key;
	acq.workdir = a->workdir;
	acq.owner = (char *)a->owner;
	if (a->ttl_ms > 0) {
		acq.has_ttl_ms = 1;
		acq.ttl_ms = a->ttl_ms;
	}
	/* The owner process is the one that ran berth (the shell or agent):
	 * berth itself exits at once, its caller lives as long as the work.
	 * An agent whose every command runs in a fresh shell names itself
	 * with --pid, or --pid 0 to leave liveness to the TTL. */
	if (a->pid < 0)
		a->pid = getppid();
	idrc = a->pid > 0 ? ident_read((pid_t)a->pid, &me) : -ESRCH;
	if (a->pid > 0 && idrc == -ESRCH)
		return cli_usage_error("seat acquire", "--pid %lld: no such process", a->pid);
	if (idrc == 0) {
		msg_ident_to(&me, &id);
		acq.owner_ident = &id;
	}
	req.verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
	req.seat_acquire = &acq;
	if (seat_call(&req, &rep) < 0)
		return CLI_FAIL;
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED) {
		describe_holder(rep->denied, holder, sizeof holder);
		rc = acquire_refused(a->item, rep->denied->reason, holder,
		                     fact(rep->denied, "holder"));
		goto out;
	}
	if (cli_check(rep, "seat acquire") != CLI_OK)
		goto out;
	if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEAT) {
		cli_fail("seat acquire: unexpected reply from the coordinator");
		goto out;
	}
	o = rep->granted->seat;
	if (o->outcome &&
	    (strcmp(o->outcome, "acquired") == 0 || strcmp(o->outcome, "already_held") == 0)) {
		printf("%s\n", cli_esc(o->outcome));
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
		rc = acquire_refused(a->item, o->outcome, holder, h ? h->item : NULL);
	}
out:
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

static int do_simple(const struct seat_cmd *sc, struct seat_args *a)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatRelease ref = BERTH__SEAT_RELEASE__INIT;
	Berth__SeatStop stop = BERTH__SEAT_STOP__INIT;
	Berth__SeatActivity act = BERTH__SEAT_ACTIVITY__INIT;
	Berth__SeatList list = BERTH__SEAT_LIST__INIT;
	Berth__Reply *rep = NULL;
	char what[256];
	const char *outcome;
	size_t i;
	int rc = CLI_FAIL;

	ref.item = (char *)a->item;
	ref.owner = (char *)a->owner;
	if (strcmp(sc->name, "release") == 0) {
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
	if (rep->result_case == BERTH__REPLY__RESULT_DENIED && fact(rep->denied, "owner")) {
		char holder[1024];

		describe_holder(rep->denied, holder, sizeof holder);
		cli_fail("%s: %s: held by %s", what,
		         rep->denied->reason ? rep->denied->reason : "denied", holder);
		goto out;
	}
	if (cli_check(rep, what) != CLI_OK)
		goto out;
	if (strcmp(sc->name, "list") == 0) {
		const Berth__SeatListReply *l;

		if (rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SEATS) {
			cli_fail("%s: unexpected reply from the coordinator", what);
			goto out;
		}
		l = rep->granted->seats;
		if (a->json) {
			fputc('[', stdout);
			for (i = 0; i < l->n_seats; i++) {
				if (i > 0)
					fputc(',', stdout);
				cli_json_seat(stdout, l->seats[i], l->now_ms);
			}
			fputs("]\n", stdout);
		} else {
			seat_table(l);
		}
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

		cli_fail("%s: %s%s%s", what, outcome, s && s->owner ? ", held by " : "",
		         s && s->owner ? s->owner : "");
		goto out;
	}
	printf("%s\n", cli_esc(outcome && *outcome ? outcome : "ok"));
	rc = CLI_OK;
out:
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

int cmd_seat(int argc, char **argv)
{
	struct seat_args a;
	const struct seat_cmd *sc = NULL;
	char cmdname[64];
	size_t i;
	int c, rc = CLI_USAGE, pos;

	memset(&a, 0, sizeof a);
	a.pid = -1;
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
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--owner: empty owner");
				goto out;
			}
			a.owner = optarg;
			break;
		case OPT_TTL:
			if (cli_parse_dur(optarg, 1, &a.ttl_ms) < 0) {
				cli_usage_error(argv[0], "--ttl: bad duration '%s'", optarg);
				goto out;
			}
			break;
		case OPT_REASON:
			if (*optarg == '\0') {
				cli_usage_error(argv[0], "--reason: empty reason");
				goto out;
			}
			a.reason = optarg;
			break;
		case OPT_JSON:
			a.json = 1;
			break;
		case OPT_PID:
			if (cli_parse_int(optarg, 0, INT32_MAX, &a.pid) < 0) {
				cli_usage_error(argv[0], "--pid: bad number '%s'", optarg);
				goto out;
			}
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
	if (sc->npos == 2) {
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
	if (a.owner == NULL && strchr(sc->opts, 'o') != NULL)
		a.owner = default_owner();
	if (strcmp(sc->name, "acquire") == 0)
		rc = do_acquire(&a);
	else
		rc = do_simple(sc, &a);
out:
	free(a.workdir);
	return rc;
}
