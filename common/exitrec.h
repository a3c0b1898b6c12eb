#ifndef BERTH_EXITREC_H
#define BERTH_EXITREC_H
#include <stddef.h>
#include <stdint.h>

/* The shim's durable record of a job's exit, runs/<run>/exit. It is what lets
 * a run's true status survive any crash of the supervisor: whoever settles
 * the run reads the same record. Text, one "key value" per line:
 *   exit_code 3        (or: signal 9; or, in a reservation: pending 1)
 *   started_ms ...  ended_ms ...  utime_us ...  stime_us ...  maxrss_kb ...
 *   stragglers N       descendants the shim ended after the job
 *   disk_full 0|1      output.log's file system was full: output may be cut
 *   sum XXXXXXXX       FNV-1a of every byte before this line
 *   pad ........       to EXITREC_SIZE bytes
 *
 * The record has a fixed size so that its space can be reserved before the
 * job starts (exitrec_reserve, at the go) and the end overwritten in place
 * (exitrec_commit): the outcome never needs a free block on a disk the job
 * may have filled. Readers ignore keys they do not know (pad, and keys a
 * later version adds), and records without sum, stragglers or disk_full
 * (older shims) still read. The "started" marker, runs/<run>/started, is
 * written (fsync) just before the job is forked: without it the job never
 * executed. */

#define EXITREC_SIZE 512
/* What a reader takes: a file of EXITREC_MAX bytes or more is no record. */
#define EXITREC_MAX 4096

struct exit_record {
	int has_code;
	int code;
	int has_signal;
	int signal;
	int64_t started_ms;
	int64_t ended_ms;
	int64_t utime_us;
	int64_t stime_us;
	int64_t maxrss_kb;
	int stragglers; /* descendants of the job the shim ended when it was over */
	int disk_full;  /* the job's output may have been cut by a full disk */
};

/* What exitrec_write and exitrec_commit write: the record's bytes into buf
 * of len bytes (r, or the reservation when r is NULL). EXITREC_SIZE, or -1
 * when r holds neither or both of code and signal or len is too small. */
int exitrec_format(const struct exit_record *r, char *buf, size_t len);
/* What exitrec_read does with the file's bytes (len of them, no NUL
 * needed): 0; -EINPROGRESS for a reservation (also an empty or all-zero
 * one: reserved, and its content never reached the disk); -EINVAL when it
 * is not one whole record (a torn overwrite fails its sum). */
int exitrec_parse(const char *buf, size_t len, struct exit_record *r);

/* Creates runs/<run>/exit holding the reservation, its blocks allocated
 * (posix_fallocate) and written, nothing synced. The open descriptor, or
 * -errno (logged). */
int exitrec_reserve(const char *run_dir);
/* Overwrites a reservation in place and syncs it (fdatasync): needs no free
 * space. 0, or -errno (logged). */
int exitrec_commit(int fd, const struct exit_record *r);
/* Writes the record without a reservation: temp file, fsync, rename, fsync
 * of the directory. 0 or -1 (logged). */
int exitrec_write(const char *run_dir, const struct exit_record *r);
/* 0; -ENOENT when no record exists; -EINPROGRESS when only the reservation
 * does (the job has not ended, or its shim died before writing); -EINVAL
 * when it is malformed; any other -errno when it cannot be read now (no
 * descriptors, ...: try again later, never take it as none). */
int exitrec_read(const char *run_dir, struct exit_record *r);
/*
 * The shim's status message to its supervisor (DESIGN §6: the supervisor
 * learns the status from the shim itself, so a full disk never costs it),
 * one datagram on the status socket the supervisor gave it:
 *   status 1\n  run RUN_ID\n  durable 0|1\n  and the record's bytes
 * durable says whether the record is also on disk. EXITREC_STATUS_MAX
 * bounds one message.
 */
#define EXITREC_STATUS_MAX 1024
/* The message's length, or -1 (run id too long, or r invalid). */
int exitrec_status_format(char buf[EXITREC_STATUS_MAX], const char *run_id,
			  const struct exit_record *r, int durable);
/* 0 with the run id (NUL-terminated, at most idlen - 1 bytes), the record
 * and durable, or -EINVAL. */
int exitrec_status_parse(const char *buf, size_t len, char *run_id, size_t idlen,
			 struct exit_record *r, int *durable);
int exitrec_mark_started(const char *run_dir);
/* 1 when runs/<run>/started exists, 0 when it does not, -errno when that
 * cannot be told (treat as started: abandoning could run the job twice). */
int exitrec_started(const char *run_dir);

#endif
