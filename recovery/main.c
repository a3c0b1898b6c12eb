/*
 * berth-recovery: finds runs whose owner is gone and finishes them
 * (DESIGN §7). One loop: a pass at start, then one every tick; SIGTERM and
 * SIGINT arrive through a signalfd and end the loop between passes.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "observe.h"
#include "rcv_pass.h"
#include "rpc.h"
#include "rpc_observe.h"
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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"home", required_argument, NULL, 'H'},
		{"lease-ms", required_argument, NULL, 'l'},
		{"tick-ms", required_argument, NULL, 't'},
		{"once", no_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rpc_client *client = NULL;
	struct rcv *r = NULL;
	struct rcv_opts o;
	struct rcv_stats st;
	struct pollfd pfd;
	sigset_t mask;
	char url[4200], err[256];
	char *home = NULL;
	int64_t lease_ms = 0, tick_ms = 1000, next;
	int c, once = 0, sfd = -1, rc = 1, stop = 0;

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
			if (opt_parse_ms("--tick-ms", optarg, 0, INT_MAX, &tick_ms) < 0)
				return 2;
			if (tick_ms < 10)
				tick_ms = 10;
			break;
		case 'o':
			once = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
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
	if (fp_init_env(home, err, sizeof(err)) < 0) {
		log_error("BERTH_FAILPOINTS: %s", err);
		goto out;
	}

	/* Signals never run logic: they become readable on a signalfd. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_error("signalfd: %s", strerror(errno));
		goto out;
	}

	if (home_socket_url(home, url, sizeof(url)) < 0 ||
	    (client = rpc_client_open(url, "recovery")) == NULL)
		goto out;
	/* A SIGTERM during a pass ends the request it waits on (at most a
	 * second later), not only the pass: stopping while the coordinator is
	 * down must not wait out the request's timeout. */
	rpc_client_on_abort(client, rpc_stop_signal_pending, NULL);
	/* Observation only: the first pass writes to the trace ring, the
	 * loop also takes a board slot. */
	if (once)
		observe_attach_ring(home, "recovery", rpc_client_instance(client));
	else
		observe_attach(home, "recovery", rpc_client_instance(client));
	rpc_observe_install();
	memset(&o, 0, sizeof(o));
	o.home = home;
	o.lease_ms = (uint32_t)lease_ms;
	o.rpc_timeout_ms = 10000;
	o.confirm_ms = tick_ms < 250 ? 250 : tick_ms / 2;
	if ((r = rcv_new(&o, client)) == NULL)
		goto out;
	if (rcv_hello(r) < 0)
		goto out;

	if (once) {
		/* Verdicts that need a second look (a claimed run whose owner
		 * died) get it here, so the launcher's first pass is whole. */
		if (rcv_pass(r, &st) < 0)
			goto out;
		if (st.pending > 0) {
			usleep((useconds_t)o.confirm_ms * 1000);
			if (rcv_pass(r, &st) < 0)
				goto out;
		}
		log_info("first pass done: %d runs, %d acted on, %d waiting", st.scanned,
			 st.acted, st.waiting);
		rc = 0;
		goto out;
	}

	log_info("running: tick %lldms", (long long)tick_ms);
	observe_beat("running");
	next = clock_mono_ms();
	while (!stop) {
		int64_t now = clock_mono_ms();
		int timeout;

		if (now >= next) {
			if (rcv_pass(r, &st) == 0 && (st.acted > 0 || st.waiting > 0))
				log_debug("pass: %d runs, %d acted on, %d waiting, %d to confirm",
					  st.scanned, st.acted, st.waiting, st.pending);
			observe_beat(NULL);
			/* A run awaiting confirmation is looked at again as
			 * soon as the confirmation delay allows. */
			next = clock_mono_ms() + (st.pending > 0 && o.confirm_ms < tick_ms
							  ? o.confirm_ms : tick_ms);
			continue;
		}
		timeout = (int)(next - now);
		pfd.fd = sfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			goto out;
		}
		if (pfd.revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				log_info("signal %u: stopping", si.ssi_signo);
				stop = 1;
			}
		}
	}
	rc = 0;
out:
	observe_detach(rc == 0 ? "stopped" : "failed");
	rcv_free(r);
	rpc_client_close(client);
	if (sfd >= 0)
		close(sfd);
	free(home);
	return rc;
}
