/*
 * berth-recovery: finds runs whose owner is gone and finishes them
 * (DESIGN §7). A pass at start, then one every tick (actor_tick_loop).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor.h"
#include "log.h"
#include "observe.h"
#include "rcv_pass.h"
#include "rpc_pass.h"
#include "util.h"
#include "version.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: berth-recovery [--home DIR] [--lease-ms MS] [--tick-ms MS] [--once]\n"
		   "  --home DIR     state directory (default $BERTH_HOME)\n"
		   "  --lease-ms MS  lease granted to a readopted run (default: coordinator's)\n"
		   "  --tick-ms MS   interval between passes (default 1000)\n"
		   "  --once         one full pass, then exit (the launcher runs this\n"
		   "                 before the supervisor claims)\n");
}

struct tick {
	struct rcv *r;
	int64_t tick_ms, confirm_ms;
};

static int64_t
tick(void *arg)
{
	struct tick *t = arg;
	struct rcv_stats st;
	int rc;

	if ((rc = rcv_pass(t->r, &st)) == -2)
		return -1;
	if (rc == 0 && (st.acted > 0 || st.waiting > 0))
		log_debug("pass: %d runs, %d acted on, %d waiting, %d to confirm", st.scanned,
			  st.acted, st.waiting, st.pending);
	/* A run awaiting confirmation is looked at again as soon as the
	 * confirmation delay allows. */
	return st.pending > 0 && t->confirm_ms < t->tick_ms ? t->confirm_ms : t->tick_ms;
}

/* The launcher's first pass (--once): verdicts that need a second look (a
 * claimed run whose owner died) get it here, so the pass is whole. */
static int
first_pass(struct rcv *r, int64_t confirm_ms)
{
	struct rcv_stats st;

	if (rcv_pass(r, &st) < 0)
		return -1;
	if (st.pending > 0) {
		usleep((useconds_t)confirm_ms * 1000);
		if (rcv_pass(r, &st) < 0)
			return -1;
	}
	log_info("first pass done: %d runs, %d acted on, %d waiting", st.scanned, st.acted,
		 st.waiting);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "lease-ms", required_argument, NULL, 'l' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpc_client *client = NULL;
	struct tick t = { .tick_ms = 1000 };
	struct rcv_opts o;
	char *home = NULL;
	int64_t lease_ms = 0;
	int c, once = 0, sfd = -1, rc = 1, usage_err;

	version_option(argc, argv, "berth-recovery");
	log_init("recovery");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			free(home);
			home = strdup(optarg);
			break;
		case 'l':
			if (opt_parse_ms("--lease-ms", optarg, 0, INT_MAX, &lease_ms) < 0)
				return 2;
			break;
		case 't':
			if (opt_parse_ms("--tick-ms", optarg, 0, INT_MAX, &t.tick_ms) < 0)
				return 2;
			if (t.tick_ms < 10)
				t.tick_ms = 10;
			break;
		case 'o': once = 1; break;
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
	if ((sfd = actor_init(home, NULL, &usage_err)) < 0)
		goto out;
	/* The first pass only writes to the trace ring; the loop also takes a
	 * board slot. */
	if ((client = rpc_pass_client(home, "recovery", !once)) == NULL)
		goto out;
	memset(&o, 0, sizeof(o));
	o.home = home;
	o.lease_ms = (uint32_t)lease_ms;
	o.rpc_timeout_ms = 10000;
	o.confirm_ms = t.tick_ms < 250 ? 250 : t.tick_ms / 2;
	t.confirm_ms = o.confirm_ms;
	if ((t.r = rcv_new(&o, client)) == NULL || rcv_hello(t.r) < 0)
		goto out;
	if (once) {
		rc = first_pass(t.r, o.confirm_ms) < 0 ? 1 : 0;
		goto out;
	}
	log_info("running: tick %lldms", (long long)t.tick_ms);
	observe_beat(BOARD_RUNNING);
	rc = actor_tick_loop(sfd, tick, &t) < 0 ? 1 : 0;
out:
	observe_detach(rc == 0 ? BOARD_STOPPED : BOARD_FAILED);
	rcv_free(t.r);
	rpc_client_close(client);
	if (sfd >= 0)
		close(sfd);
	free(home);
	return rc;
}
