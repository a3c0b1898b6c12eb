#ifndef BERTH_EXITREC_H
#define BERTH_EXITREC_H
#include <stdint.h>

/* The shim's durable record of a job's exit, runs/<run>/exit. It is what lets
 * a run's true status survive any crash of the supervisor: whoever settles
 * the run reads the same record. Text, one "key value" per line:
 *   exit_code 3        (or: signal 9)
 *   started_ms ...  ended_ms ...  utime_us ...  stime_us ...  maxrss_kb ...
 * The "started" marker, runs/<run>/started, is written (fsync) just before the
 * job is forked: without it the job never executed. */
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
};

/* A record is text of fewer than EXITREC_MAX bytes. */
#define EXITREC_MAX 4096

int exitrec_write(const char *run_dir, const struct exit_record *r);
/* 0, -ENOENT when no record exists, -EINVAL when it is malformed. */
int exitrec_read(const char *run_dir, struct exit_record *r);
/* What exitrec_read does with the file's bytes, and what exitrec_write
 * writes: parse text of len bytes (no NUL needed; 0, or -EINVAL when it is
 * not one whole record), format r into buf (its length, or -1 when r has
 * not exactly one of code and signal, or buf is too small). */
int exitrec_parse(const char *text, size_t len, struct exit_record *r);
int exitrec_format(const struct exit_record *r, char *buf, size_t len);
int exitrec_mark_started(const char *run_dir);
/* 1 when runs/<run>/started exists, 0 when it does not, -errno when that
 * cannot be told (treat as started: abandoning could run the job twice). */
int exitrec_started(const char *run_dir);

#endif
