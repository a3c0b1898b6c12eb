/*
 * berth-reaper: ends what should stop existing (DESIGN §7). One loop: a
 * tick every --tick-ms; SIGTERM and SIGINT arrive through a signalfd and end
 * the loop between ticks.
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
#include "reap_pass.h"
#include "rpc.h"
#include "rpc_observe.h"
#include "util.h"
#include "version.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: berth-reaper [--home DIR] [--tick-ms MS] [--grace-ms MS] [--retention DUR]\n"
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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"home", required_argument, NULL, 'H'},
		{"tick-ms", required_argument, NULL, 't'},
		{"grace-ms", required_argument, NULL, 'g'},
		{"retention", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rpc_client *client = NULL;
	struct reap *r = NULL;
	struct reap_opts o;
	struct reap_stats st;
	struct pollfd pfd;
	sigset_t mask;
	char url[4200], err[256];
	char *home = NULL;
	int64_t tick_ms = 1000, grace_ms = 5000, retention_ms = 7 * 86400000LL, next;
	int c, sfd = -1, rc = 1, stop = 0;

	version_option(argc, argv, "berth-reaper");
	log_init("reaper");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			free(home);
			home = strdup(optarg);
			break;
		case 't':
			if (opt_parse_ms("--tick-ms", optarg, 0, INT_MAX, &tick_ms) < 0)
				return 2;
			if (tick_ms < 10)
				tick_ms = 10;
			break;
		case 'g':
			if (opt_parse_ms("--grace-ms", optarg, 0, INT_MAX, &grace_ms) < 0)
				return 2;
			break;
		case 'r':
			if (parse_retention(optarg, &retention_ms) < 0)
				return 2;
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
	    (client = rpc_client_open(url, "reaper")) == NULL)
		goto out;
	/* A SIGTERM during a pass ends the request it waits on (at most a
	 * second later), not only the pass: stopping while the coordinator is
	 * down must not wait out the request's timeout. */
	rpc_client_on_abort(client, rpc_stop_signal_pending, NULL);
	observe_attach(home, "reaper", rpc_client_instance(client));
	rpc_observe_install();
	memset(&o, 0, sizeof(o));
	o.home = home;
	o.grace_ms = grace_ms;
	o.retention_ms = retention_ms;
	o.rpc_timeout_ms = 10000;
	if ((r = reap_new(&o, client)) == NULL)
		goto out;
	if (reap_hello(r) < 0)
		goto out;

	log_info("running: tick %lldms, grace %lldms, retention %lldms", (long long)tick_ms,
		 (long long)grace_ms, (long long)retention_ms);
	observe_beat("running");
	next = clock_mono_ms();
	while (!stop) {
		int64_t now = clock_mono_ms();

		if (now >= next) {
			reap_pass(r, &st);
			observe_beat(NULL);
			next = clock_mono_ms() + tick_ms;
			continue;
		}
		pfd.fd = sfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(next - now)) < 0) {
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
	reap_free(r);
	rpc_client_close(client);
	if (sfd >= 0)
		close(sfd);
	free(home);
	return rc;
}
