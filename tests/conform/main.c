/*
 * berth-conform [--global] [--final] [-v] HOME: checks HOME's trace against
 * the transition relation the coordinator applies and against HOME's
 * database (conform.h, docs/VERIFICATION.md "Trace conformance"). Prints
 * one line per violation on stdout. Exit 0 when the trace conforms, 1 when
 * it does not, 2 when the inputs cannot be read or the command line is
 * wrong.
 *
 *   --global  the trace is the store's global trace (trace_log: every
 *             host's groups, a store on PostgreSQL), not HOME's file;
 *             HOME is any home on the store. On sqlite there is none (2).
 *   --final   the group is down: every line of the trace must be in the
 *             database (tests/integration/lib.sh's cleanup says so); the
 *             global trace is in the store's snapshot, and needs no such
 *             word (it is taken, and changes nothing)
 *   -v        a summary of what was checked, on stderr
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "log.h"

static int
usage(void)
{
	fprintf(stderr, "usage: berth-conform [--global] [--final] [-v] HOME\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct conform_opts o = { 0 };
	struct conform_stats st;
	const char *home = NULL;
	int i, verbose = 0, global = 0;
	long n;

	log_init("berth-conform");
	log_set_level(LOG_WARN); /* the store's notices at open */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--final") == 0)
			o.final = 1;
		else if (strcmp(argv[i], "--global") == 0)
			global = 1;
		else if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (argv[i][0] == '-' || home != NULL)
			return usage();
		else
			home = argv[i];
	}
	if (home == NULL)
		return usage();
	if ((n = global ? conform_global(home, &o, &st) : conform_home(home, &o, &st)) < 0)
		return 2;
	if (verbose && global)
		fprintf(stderr,
			"berth-conform: %s: the global trace: %" PRIu64 " groups of %" PRIu64
			" hosts, %" PRIu64 " lines, %" PRIu64 " moves, %" PRIu64
			" denials judged, %" PRIu64 " decisions matched with events, %" PRIu64
			" runs fenced, %" PRIu64 " runs, %" PRIu64 " tickets: %ld violation%s\n",
			home, st.groups, st.hosts, st.lines, st.moves, st.denials, st.events,
			st.fenced, st.runs, st.tickets, n, n == 1 ? "" : "s");
	else if (verbose)
		fprintf(stderr,
			"berth-conform: %s: %" PRIu64 " lines (seq %" PRIu64 "..%" PRIu64
			", the database's last decision %" PRIu64 "%s), %" PRIu64 " moves, %" PRIu64
			" denials judged, %" PRIu64 " decisions matched with events, %" PRIu64
			" runs, %" PRIu64 " tickets: %ld violation%s\n",
			home, st.lines, st.first_seq, st.last_seq, st.snapshot_seq,
			st.restored ? ", restored from trace_tail" : "", st.moves, st.denials,
			st.events, st.runs, st.tickets, n, n == 1 ? "" : "s");
	return n == 0 ? 0 : 1;
}
