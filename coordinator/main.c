/*
 * berth-coordinator: the only process that opens the database. It answers
 * every mutation with granted or denied (DESIGN §1, §4-5). The logic is in
 * coord_server.c; this file is the command line and the signals.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coord_db.h"
#include "coord_server.h"
#include "labels.h"
#include "log.h"
#include "util.h"
#include "version.h"

/* Durations are bounded (30 days) so that now + one never overflows. */
#define MAIN_MAX_MS (30LL * 24 * 3600 * 1000)

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: berth-coordinator [--home DIR] [--lease-ms MS] [--backoff-ms MS]\n"
		"                         [--sync normal|full] [--allow-actor-exe PATH]...\n"
		"                         [--store postgresql://...] [--host-id ID]\n"
		"                         [--host-ttl MS] [--labels L1,L2...] [--foreground]\n"
		"\n"
		"Owns the store ($BERTH_HOME/berth.db, or the PostgreSQL database of\n"
		"--store) and answers every request on ipc://$BERTH_HOME/coordinator.sock. Runs in the foreground (the launcher\n"
		"supervises it; --foreground is accepted for symmetry) until SIGTERM or\n"
		"SIGINT.\n"
		"\n"
		"  --home DIR        state directory (default: $BERTH_HOME, else\n"
		"                    ${XDG_STATE_HOME:-$HOME/.local/state}/berth)\n"
		"  --lease-ms MS     default lease of a claimed run (default 30000)\n"
		"  --backoff-ms MS   base backoff before a failed ticket is retried (default 1000)\n"
		"  --sync MODE       sqlite synchronous: full (default) or normal\n"
		"  --store URL       keep the store in PostgreSQL (postgresql://... or\n"
		"                    postgres://..., as libpq reads it) instead of\n"
		"                    $BERTH_HOME/berth.db\n"
		"  --host-id ID      this host's name in the store (default: /etc/machine-id,\n"
		"                    else the host name): letters, digits, '.', '_', '-'\n"
		"  --host-ttl MS     this host's lease in the store (default 30000): a host\n"
		"                    that has not renewed it for this long may be declared\n"
		"                    lost by another host's recovery\n"
		"  --labels L1,L2    labels this host offers: a ticket added with --on\n"
		"                    LABEL,... is claimed only by a host that offers\n"
		"                    each (names as --host-id's, at most 16)\n"
		"  --allow-actor-exe PATH\n"
		"                    a program (absolute path, as /proc/PID/exe names it)\n"
		"                    that also counts as one of the group's actors, of any\n"
		"                    role, when it was started by the coordinator's own\n"
		"                    parent: for benchmarks and tests that play the actors\n"
		"                    (at most 8)\n");
}

#define COORD_STOP_GRACE_S 3

/* The one signal handler with a body: the store and the trace are closed
 * already, so ending here loses nothing. */
static void
coord_stop_overdue(int sig)
{
	static const char msg[] = "berth-coordinator: socket close overdue at stop; exiting\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(0);
	_exit(0);
}

/* 0 when id is a host id: 1 to COORD_HOST_MAX of [A-Za-z0-9._-], the
 * rule of every placement name (labels.h). */
static int
host_id_ok(const char *id)
{
	return strlen(id) <= COORD_HOST_MAX && labels_name_ok(id) ? 0 : -1;
}

/* The default host id: /etc/machine-id (systemd's, stable across boots),
 * else the host name. */
static int
host_default(char *out, size_t n)
{
	FILE *f = fopen("/etc/machine-id", "r");
	char buf[128] = "";

	if (f != NULL) {
		if (fgets(buf, sizeof buf, f) == NULL)
			buf[0] = '\0';
		fclose(f);
		buf[strcspn(buf, "\n")] = '\0';
	}
	if (host_id_ok(buf) != 0 && (gethostname(buf, sizeof buf) != 0 || host_id_ok(buf) != 0))
		return -1;
	snprintf(out, n, "%s", buf);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "lease-ms", required_argument, NULL, 'l' },
		{ "backoff-ms", required_argument, NULL, 'b' },
		{ "sync", required_argument, NULL, 's' },
		{ "store", required_argument, NULL, 'S' },
		{ "host-id", required_argument, NULL, 'I' },
		{ "host-ttl", required_argument, NULL, 'T' },
		{ "labels", required_argument, NULL, 'L' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "allow-actor-exe", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct coord_server_opts o;
	struct coord_server *cs = NULL;
	char *home = NULL, err[512], host[COORD_HOST_MAX + 1] = "";
	const char *exes[8];
	sigset_t set;
	int c, sfd = -1, rv;

	version_option(argc, argv, "berth-coordinator");
	memset(&o, 0, sizeof(o));
	o.sync_full = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			free(home);
			home = strdup(optarg);
			break;
		case 'l':
			if (opt_parse_ms("--lease-ms", optarg, 1, MAIN_MAX_MS, &o.lease_ms) != 0)
				return 2;
			break;
		case 'b':
			if (opt_parse_ms("--backoff-ms", optarg, 1, MAIN_MAX_MS, &o.backoff_ms) !=
			    0)
				return 2;
			break;
		case 's':
			if (strcmp(optarg, "full") == 0) {
				o.sync_full = 1;
			} else if (strcmp(optarg, "normal") == 0) {
				o.sync_full = 0;
			} else {
				fprintf(stderr,
					"berth-coordinator: --sync is full or normal, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (!coord_db_is_url(optarg)) {
				fprintf(stderr,
					"berth-coordinator: --store takes a postgresql:// URL, not "
					"'%s' (without --store the store is $BERTH_HOME/berth.db)\n",
					optarg);
				return 2;
			}
			o.store = optarg;
			break;
		case 'I':
			if (host_id_ok(optarg) != 0) {
				fprintf(stderr,
					"berth-coordinator: --host-id takes 1 to 64 letters, digits, "
					"'.', '_' or '-', not '%s'\n",
					optarg);
				return 2;
			}
			snprintf(host, sizeof host, "%s", optarg);
			break;
		case 'T':
			if (opt_parse_ms("--host-ttl", optarg, 100, MAIN_MAX_MS, &o.host_ttl_ms) !=
			    0)
				return 2;
			break;
		case 'L':
			if (labels_check_list(optarg, "--labels", err, sizeof err) != 0) {
				fprintf(stderr, "berth-coordinator: %s\n", err);
				return 2;
			}
			o.labels = optarg;
			break;
		case 'f': break;
		case 'A':
			if (optarg[0] != '/' ||
			    o.nactor_exes == (int)(sizeof(exes) / sizeof(exes[0]))) {
				fprintf(stderr,
					"berth-coordinator: --allow-actor-exe takes an absolute "
					"path, at most %zu times ('%s')\n",
					sizeof(exes) / sizeof(exes[0]), optarg);
				return 2;
			}
			exes[o.nactor_exes++] = optarg;
			o.actor_exes = exes;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "berth-coordinator: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (home == NULL && (home = home_default()) == NULL) {
		fprintf(stderr, "berth-coordinator: cannot tell the home directory: set BERTH_HOME "
				"or use --home\n");
		return 2;
	}
	o.home = home;
	if (host[0] == '\0' && host_default(host, sizeof host) != 0) {
		fprintf(stderr,
			"berth-coordinator: cannot tell this host's id from /etc/machine-id "
			"or its host name: use --host-id\n");
		free(home);
		return 2;
	}
	o.host_id = host;
	log_init("coordinator");
	/* Everything this process creates in the home (the database and its
	 * WAL, the trace, sockets, run files) is for the user alone (DESIGN
	 * §2), whatever umask it was started with. */
	umask(077);

	/* Signals never run logic: they become a readable fd. They are
	 * blocked before nng starts its threads, which inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_error("signalfd: %s", strerror(errno));
		free(home);
		return 1;
	}

	if ((rv = coord_server_open(&cs, &o, err, sizeof(err))) != 0) {
		log_error("%s", err);
		close(sfd);
		free(home);
		return rv;
	}
	rv = coord_server_run(cs, sfd) == 0 ? 0 : 1;
	/* Everything decided is committed; closing the socket can hang inside
	 * nng 1.5.2 (a client's pipe closing at the same moment), and a
	 * coordinator that never exits on SIGTERM blocks every stop. Bound it. */
	signal(SIGALRM, coord_stop_overdue);
	alarm(COORD_STOP_GRACE_S);
	coord_server_close(cs);
	alarm(0);
	log_info("stopped");
	close(sfd);
	free(home);
	return rv;
}
