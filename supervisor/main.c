#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "sup_loop.h"
#include "util.h"
#include "version.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: berth-supervisor [--home DIR] [--slots N] [--lease-ms MS] [--tick-ms MS]\n"
		"                        [--claim-wait-ms MS] [--isolate] [--no-ahead]\n"
		"  --home DIR         state directory (default $BERTH_HOME, else\n"
		"                     ${XDG_STATE_HOME:-$HOME/.local/state}/berth)\n"
		"  --slots N          jobs run at once (default 1)\n"
		"  --lease-ms MS      lease asked for on claim and renewal (default: the\n"
		"                     coordinator's)\n"
		"  --tick-ms MS       reconcile pass: renewals, adoption (default 1000, or a\n"
		"                     third of --lease-ms when that is shorter)\n"
		"  --claim-wait-ms MS how long the coordinator may hold an idle claim\n"
		"                     (default 5000)\n"
		"  --isolate          run every job isolated, as berth add --isolate does\n"
		"                     (a user and mount namespace whose $BERTH_HOME holds\n"
		"                     only worker.sock)\n"
		"  --no-ahead         spawn each job's shim after its claim and start it\n"
		"                     with its own request, instead of keeping one spawned\n"
		"                     ahead per free slot (the path of older coordinators)\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "slots", required_argument, NULL, 's' },
		{ "lease-ms", required_argument, NULL, 'l' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "claim-wait-ms", required_argument, NULL, 'w' },
		{ "isolate", no_argument, NULL, 'i' },
		{ "no-ahead", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sup_opts o = { .slots = 1, .lease_ms = 0, .tick_ms = 0, .claim_wait_ms = 5000 };
	char *home = NULL;
	int c, rc;

	version_option(argc, argv, "berth-supervisor");
	/* What the supervisor creates in the home is the user's alone; the
	 * jobs get back the umask it was started with (the user's: the
	 * launcher starts actors under it). */
	o.job_umask = umask(077);
	log_init("supervisor");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			free(home);
			home = strdup(optarg);
			break;
		case 's':
			if (opt_parse_int("--slots", optarg, 1, INT_MAX, &o.slots) == -1)
				return 2;
			break;
		case 'l':
			if (opt_parse_int("--lease-ms", optarg, 0, INT_MAX, &o.lease_ms) == -1)
				return 2;
			break;
		case 't':
			if (opt_parse_int("--tick-ms", optarg, 10, INT_MAX, &o.tick_ms) == -1)
				return 2;
			break;
		case 'w':
			if (opt_parse_int("--claim-wait-ms", optarg, 0, INT_MAX,
					  &o.claim_wait_ms) == -1)
				return 2;
			break;
		case 'i': o.isolate = 1; break;
		case 'A': o.no_ahead = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (o.tick_ms == 0) {
		o.tick_ms = 1000;
		if (o.lease_ms > 0 && o.lease_ms / 3 < o.tick_ms)
			o.tick_ms = o.lease_ms / 3 > 10 ? o.lease_ms / 3 : 10;
	}
	if (home == NULL && (home = home_default()) == NULL) {
		log_error("cannot tell the state directory: set BERTH_HOME or use --home");
		return 2;
	}
	if (home_ensure(home) < 0) {
		free(home);
		return 1;
	}
	o.home = home;
	rc = sup_loop_run(&o);
	free(home);
	return rc;
}
