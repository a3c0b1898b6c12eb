/*
 * The skeleton of an actor's main: failpoints, the signalfd, and the tick
 * loop of the actors that work in passes, written once so that what a
 * SIGTERM does between two passes is the same for every actor.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actor.h"
#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "util.h"
#include "observe.h"

int
actor_init(const char *home, const int *extra, int *usage)
{
	char err[256];
	sigset_t set;
	int fd;

	*usage = 0;
	/* Everything an actor creates in the home (the database and its WAL,
	 * the trace, sockets, run files) is for the user alone (DESIGN §2),
	 * whatever umask it was started with; the home itself is checked,
	 * never changed (home_ensure). */
	umask(077);
	if (home_ensure(home) < 0)
		return -1;
	if (fp_init_env(home, err, sizeof(err)) < 0) {
		log_error("BERTH_FAILPOINTS: %s", err);
		*usage = 1;
		return -1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (; extra != NULL && *extra != 0; extra++)
		sigaddset(&set, *extra);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1) {
		log_error("sigprocmask: %s", strerror(errno));
		return -1;
	}
	if ((fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		log_error("signalfd: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

int
actor_signals_read(int sigfd, int *chld)
{
	struct signalfd_siginfo si;
	int stop = 0;

	if (chld != NULL)
		*chld = 0;
	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (chld != NULL)
				*chld = 1;
		} else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			if (!stop)
				log_info("signal %u: stopping", si.ssi_signo);
			stop = 1;
		}
	}
	return stop;
}

int
actor_tick_loop(int sigfd, actor_tick_fn tick, void *arg)
{
	struct pollfd pfd = { .fd = sigfd, .events = POLLIN };
	int64_t next = clock_mono_ms(), now, delay;

	for (;;) {
		now = clock_mono_ms();
		if (now >= next) {
			if ((delay = tick(arg)) < 0)
				return -1;
			observe_beat(NULL);
			next = clock_mono_ms() + delay;
			continue;
		}
		if (poll(&pfd, 1, next - now > 60000 ? 60000 : (int)(next - now)) == -1) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			return -1;
		}
		if ((pfd.revents & POLLIN) && actor_signals_read(sigfd, NULL))
			return 0;
	}
}
