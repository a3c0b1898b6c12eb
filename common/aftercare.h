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
	int exit_present;   /* runs/<run>/exit holds a record, whole or not (a mere
			     * reservation is no record) */
	int has_record;     /* ... and it is a whole exit record, in rec */
	int from_status;    /* rec came from the shim's status message, not the file */
	struct exit_record rec;
	int has_output; /* runs/<run>/output.log is a regular file */
	int64_t output_bytes;
	int has_spawn_error; /* the shim could not execute the job: why, in spawn_error */
	char spawn_error[PATH_MAX + 512];
	/*
	 * Something is there but cannot be read now (no descriptors left, an
	 * I/O error, ...): the errno, else 0. Nothing may be decided from such
	 * a reading — taking the record as absent would settle a run orphaned
	 * (or abandon one that ran) for want of a descriptor — so the caller
	 * reads again later.
	 */
	int unreadable;
	int record_unreadable;      /* ... the exit record's errno */
	int spawn_error_unreadable; /* ... the spawn error's */
	/*
	 * The capture rule: the job's output is complete when the shim
	 * recorded the exit (it outlived the job, whose output it had open, and
	 * writes the record only after the job ended), the output file is
	 * there to be read, and its file system was not full (the record's
	 * disk_full: the job's writes may have failed, so its end may be
	 * missing). Without a record the shim died first and output may be
	 * missing at the end; without the file there is nothing captured.
	 */
	int capture_complete;
};

/* Reads run_dir (home_run_dir). A started marker that cannot be looked at
 * counts as present (abandoning could run the job twice); a malformed exit
 * record counts as none (logged: a damaged one tells nothing) but as
 * present; one that cannot be read sets unreadable. 0, or -1 when run_dir
 * cannot be named. */
int aftercare_read(const char *run_dir, struct aftercare *a);
/* The shim's own account of the end, from its status message (DESIGN §6:
 * the supervisor learns the status from the shim itself): taken when the
 * file holds no whole record (the disk was full, or the record cannot be
 * read now), so a full disk never costs the exit status. The job ran: the
 * shim sends it only after the job ended. */
void aftercare_use_status(struct aftercare *a, const struct exit_record *status);

#endif
