#ifndef BERTH_CONFORM_H
#define BERTH_CONFORM_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Trace conformance (docs/VERIFICATION.md "Trace conformance"): a home's
 * trace/trace.jsonl replayed, in seq order, against the transition relation
 * the coordinator itself applies (proto/run_moves.def, compiled into
 * coordinator/coord_moves.c, read here through coord_moves_find()) and the
 * verb table (coordinator/coord_verbs.c), then compared with the final
 * store (berth.db, or the PostgreSQL database the home names): its runs,
 * its tickets and its own log of committed decisions (the events table).
 *
 * The database is read in one read transaction. Its trace_tail row names
 * the last decision committed in that snapshot (seq S, with its line), so
 * the replay takes the lines up to S and is exact while the group runs; a
 * line S that never reached the file (a crash between COMMIT and the
 * write) is taken from trace_tail, as the next coordinator would restore
 * it.
 */

struct conform_opts {
	/* The group is down: every line of the file is in the snapshot, and a
	 * line past S that would have committed is a decision the database
	 * lost. Without it, lines past S are not read (decided after the
	 * snapshot was taken). */
	int final;
	FILE *out;         /* one line per violation; NULL: stdout */
	size_t max_report; /* violations printed before they are only counted; 0: 50 */
	/* conform_files: the directory of coordinator.key, which opening a
	 * PostgreSQL store needs (the home); NULL beside a sqlite file.
	 * conform_home uses the home. */
	const char *key_dir;
};

struct conform_stats {
	uint64_t lines;     /* trace lines replayed */
	uint64_t first_seq; /* 0 when there was none */
	uint64_t last_seq;
	uint64_t snapshot_seq; /* trace_tail's seq: the last committed decision */
	int restored;          /* line S came from trace_tail */
	uint64_t moves;        /* granted run moves (claim, start, ...) replayed */
	uint64_t denials;      /* denials judged against the table */
	uint64_t events;       /* committed decisions matched with the events table */
	uint64_t runs;
	uint64_t tickets;
	uint64_t violations;
	uint64_t groups; /* conform_global: trace_log's rows */
	uint64_t hosts;  /* conform_global: the hosts that wrote them */
	uint64_t fenced; /* conform_global: runs fenced by a granted host_lost */
};

/* Checks home (trace/trace.jsonl against its store: the PostgreSQL URL in
 * home/store, else home/berth.db). The number of violations (0: the trace
 * conforms), or -1 when the inputs cannot be read (said on stderr). A home
 * with neither a database nor a trace has decided nothing, and conforms.
 * st may be NULL. */
long conform_home(const char *home, const struct conform_opts *o, struct conform_stats *st);

/* The same for a trace file and a store given apart: a sqlite file's path
 * or a PostgreSQL URL (with o->key_dir). */
long conform_files(const char *trace, const char *store, const struct conform_opts *o,
		   struct conform_stats *st);

/*
 * A shared store's global trace (docs/VERIFICATION.md "The global
 * trace"): every host's groups of lines in trace_log, in id order (the
 * order the decision lock let them commit), replayed as one trace against
 * the same tables and the store's events, runs and tickets, in one
 * snapshot. A line's host is its row's; a run is its claimer's host's,
 * fenced once a granted host_lost names that host. home is any home on
 * the store (its store file names it; the key is in the home). The
 * number of violations, or -1 (said on stderr): also for a home on
 * sqlite, which keeps no global trace.
 */
long conform_global(const char *home, const struct conform_opts *o, struct conform_stats *st);

#endif
