#ifndef BERTH_AFTERCARE_H
#define BERTH_AFTERCARE_H
#include <limits.h>
#include <stdint.h>
#include "exitrec.h"

/* What a run left in its directory, runs/<run>/ (DESIGN §6): the started
 * marker, the shim's exit record, the job's output and the shim's spawn
 * error. Whoever settles a run (its supervisor, or recovery) reads it once
 * per event — the shim judged gone — and decides from that one reading, so
 * the record is parsed once and every actor applies the same capture rule.
 * The shim writes nothing after it is gone, so a later reading could not
 * tell more. */
struct aftercare {
	int started;        /* runs/<run>/started exists: the job executed (or may have) */
	int64_t started_ms; /* the marker's mtime (wall ms); 0 without a marker */
	int exit_present;   /* runs/<run>/exit exists, whole or not */
	int has_record;     /* ... and is a whole exit record, in rec */
	struct exit_record rec;
	int has_output;     /* runs/<run>/output.log is a regular file */
	int64_t output_bytes;
	int has_spawn_error; /* the shim could not execute the job: why, in spawn_error */
	char spawn_error[PATH_MAX + 512];
	/*
	 * The capture rule: the job's output is complete when the shim
	 * recorded the exit (it outlived the job, whose output it had open, and
	 * writes the record only after the job ended) and the output file is
	 * there to be read. Without a record the shim died first and output may
	 * be missing at the end; without the file there is nothing captured.
	 */
	int capture_complete;
};

/* Reads run_dir (home_run_dir). A started marker that cannot be looked at
 * counts as present (abandoning could run the job twice); a malformed or
 * unreadable exit record counts as none (logged: the shim writes it
 * atomically, so a damaged one tells nothing) but as present. 0, or -1
 * when run_dir cannot be named. */
int aftercare_read(const char *run_dir, struct aftercare *a);

#endif
