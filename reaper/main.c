/*
 * berth-reaper: ends what should stop existing (DESIGN §7): a tick every
 * --tick-ms (actor_tick_loop).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor.h"
#include "clock.h"
#include "log.h"
#include "observe.h"
#include "reap_pass.h"
#include "rpc_pass.h"
#include "shm.h"
#include "util.h"
#include "version.h"

/* How often the segments of removed homes are looked for. */
#define REAP_COLLECT_MS (10 * 60 * 1000)

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: berth-reaper [--home DIR] [--tick-ms MS] [--grace-ms MS] [--retention DUR]\n"
		"  --home DIR       state directory (default $BERTH_HOME)\n"
		"  --tick-ms MS     interval between ticks (default 1000)\n"
		"  --grace-ms MS    SIGTERM to SIGKILL of a stopped run (default 5000)\n"
		"  --retention DUR  keep run data this long after settlement (default 7d;\n"
		"                   ms, s, m, h, d suffixes)\n");
}

/* A duration with a "d" (days) suffix too: retention is counted in days. */
static int
parse_retention(const char *s, int64_t *out)
{
	size_t n = strlen(s);
	char *end;
	long long v;

	if (n > 1 && s[n - 1] == 'd') {
		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno == 0 && end == s + n - 1 && v >= 0 && v < 100000) {
			*out = v * 86400000LL;
			return 0;
		}
	} else if (dur_parse(s, out) == 0)
		return 0;
	fprintf(stderr, "berth-reaper: --retention: not a duration: %s\n", s);
	return -1;
}

struct tick {
	struct reap *r;
	int64_t tick_ms;
	int64_t next_collect; /* monotonic: the next shm_collect */
};

static int64_t
tick(void *arg)
{
	struct tick *t = arg;
	struct reap_stats st;
	int64_t now = clock_mono_ms();

	/* The shared memory of homes that are gone (shm.h): what should stop
	 * existing is the reaper's business, and every group runs one. */
	if (now >= t->next_collect) {
		shm_collect();
		t->next_collect = now + REAP_COLLECT_MS;
	}
	if (reap_pass(t->r, &st) == -2)
		return -1;
	return t->tick_ms;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "grace-ms", required_argument, NULL, 'g' },
		{ "retention", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpc_client *client = NULL;
	struct tick t = { .tick_ms = 1000 };
	struct reap_opts o;
	char *home = NULL;
	int64_t grace_ms = 5000, retention_ms = 7 * 86400000LL;
	int c, sfd = -1, rc = 1, usage_err;

	version_option(argc, argv, "berth-reaper");
	log_init("reaper");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			free(home);
			home = strdup(optarg);
			break;
		case 't':
			if (opt_parse_ms("--tick-ms", optarg, 0, INT_MAX, &t.tick_ms) < 0)
				return 2;
			if (t.tick_ms < 10)
				t.tick_ms = 10;
			break;
		case 'g':
			if (opt_parse_ms("--grace-ms", optarg, 0, INT_MAX, &grace_ms) < 0)
				return 2;
			break;
		case 'r':
			if (parse_retention(optarg, &retention_ms) < 0)
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (home == NULL && (home = home_default()) == NULL) {
		log_error("cannot tell the state directory: set BERTH_HOME or --home");
		return 1;
	}
	if ((sfd = actor_init(home, NULL, &usage_err)) < 0 ||
	    (client = rpc_pass_client(home, "reaper", 1)) == NULL)
		goto out;
	memset(&o, 0, sizeof(o));
	o.home = home;
	o.grace_ms = grace_ms;
	o.retention_ms = retention_ms;
	o.rpc_timeout_ms = 10000;
	if ((t.r = reap_new(&o, client)) == NULL || reap_hello(t.r) < 0)
		goto out;
	log_info("running: tick %lldms, grace %lldms, retention %lldms", (long long)t.tick_ms,
		 (long long)grace_ms, (long long)retention_ms);
	observe_beat(BOARD_RUNNING);
	rc = actor_tick_loop(sfd, tick, &t) < 0 ? 1 : 0;
out:
	observe_detach(rc == 0 ? BOARD_STOPPED : BOARD_FAILED);
	reap_free(t.r);
	rpc_client_close(client);
	if (sfd >= 0)
		close(sfd);
	free(home);
	return rc;
}
