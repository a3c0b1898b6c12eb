/*
 * The shim's exit record and started marker (runs/<run>/exit, .../started).
 *
 * The record is written one of two ways. Normally its EXITREC_SIZE bytes
 * are reserved before the go (exitrec_reserve: created, allocated, holding
 * "pending 1") and overwritten in place when the job is over
 * (exitrec_commit): a disk the job filled cannot refuse that write. Without
 * a reservation (the disk was already full at the go) it is written with
 * file_write_atomic (temp file, fsync, rename, fsync of the directory),
 * which needs free space. Either way a reader finds no record, the
 * reservation, or a whole record: an overwrite torn by a power loss fails
 * the record's sum and is reported as malformed, never guessed at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "exitrec.h"
#include "log.h"
#include "util.h"

/* FNV-1a, 32 bits: enough to tell a whole record from a torn overwrite. */
static uint32_t
exitrec_sum(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n-- > 0) {
		h ^= (unsigned char)*p++;
		h *= 16777619u;
	}
	return h;
}

int
exitrec_format(const struct exit_record *r, char *buf, size_t len)
{
	int n;

	if ((r != NULL && r->has_code == r->has_signal) || len < EXITREC_SIZE)
		return -1;
	if (r == NULL)
		n = snprintf(buf, EXITREC_SIZE, "pending 1\n");
	else
		n = snprintf(buf, EXITREC_SIZE,
			     "%s %d\nstarted_ms %lld\nended_ms %lld\nutime_us %lld\nstime_us %lld\n"
			     "maxrss_kb %lld\nstragglers %d\ndisk_full %d\n",
			     r->has_code ? "exit_code" : "signal",
			     r->has_code ? r->code : r->signal, (long long)r->started_ms,
			     (long long)r->ended_ms, (long long)r->utime_us, (long long)r->stime_us,
			     (long long)r->maxrss_kb, r->stragglers, r->disk_full ? 1 : 0);
	/* The lines above are at most ~260 bytes, so the sum and some pad
	 * always fit. */
	n += snprintf(buf + n, EXITREC_SIZE - (size_t)n, "sum %08x\npad ",
		      (unsigned)exitrec_sum(buf, (size_t)n));
	memset(buf + n, '.', EXITREC_SIZE - (size_t)n - 1);
	buf[EXITREC_SIZE - 1] = '\n';
	return EXITREC_SIZE;
}

int
exitrec_write(const char *run_dir, const struct exit_record *r)
{
	char path[PATH_MAX], buf[EXITREC_SIZE];
	int n;

	if (exitrec_format(r, buf, sizeof(buf)) < 0) {
		log_error("exit record for %s: needs exactly one of code and signal", run_dir);
		return -1;
	}
	n = snprintf(path, sizeof(path), "%s/exit", run_dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		log_error("%s: path too long", run_dir);
		return -1;
	}
	return file_write_atomic(path, buf, sizeof(buf));
}

/* The whole buffer at offset 0; 0 or -errno. */
static int
exitrec_pwrite(int fd, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t w;

	while (off < len) {
		w = pwrite(fd, buf + off, len - off, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

int
exitrec_reserve(const char *run_dir)
{
	char path[PATH_MAX], buf[EXITREC_SIZE];
	int fd, rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/exit", run_dir) >= sizeof(path)) {
		log_error("%s: path too long", run_dir);
		return -ENAMETOOLONG;
	}
	/* O_EXCL: a record already there is never overwritten by a
	 * reservation (one shim per run; anything else is left to be read). */
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1) {
		rc = -errno;
		log_warn("reserve %s: %s", path, strerror(-rc));
		return rc;
	}
	exitrec_format(NULL, buf, sizeof(buf));
	/* posix_fallocate makes the blocks the file's own; writing them too
	 * leaves no unwritten extent for the commit to convert. */
	if ((rc = -posix_fallocate(fd, 0, sizeof(buf))) != 0 ||
	    (rc = exitrec_pwrite(fd, buf, sizeof(buf))) != 0) {
		log_warn("reserve %s: %s", path, strerror(-rc));
		close(fd);
		unlink(path);
		return rc;
	}
	return fd;
}

int
exitrec_commit(int fd, const struct exit_record *r)
{
	char buf[EXITREC_SIZE];
	int rc;

	if (exitrec_format(r, buf, sizeof(buf)) < 0) {
		log_error("exit record: needs exactly one of code and signal");
		return -EINVAL;
	}
	if ((rc = exitrec_pwrite(fd, buf, sizeof(buf))) == 0 && fdatasync(fd) == -1)
		rc = -errno;
	if (rc != 0)
		log_error("write the reserved exit record: %s", strerror(-rc));
	return rc;
}

static int
exitrec_int(const char *v, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

enum {
	K_CODE,
	K_SIGNAL,
	K_STARTED,
	K_ENDED,
	K_UTIME,
	K_STIME,
	K_MAXRSS,
	K_STRAGGLERS,
	K_DISK_FULL,
	K_PENDING,
	K_NKEYS
};

/* Reads "key value" lines. Every known key may appear once; the last line
 * must be complete; unknown keys are ignored so the record may grow. A sum
 * line must match the bytes before it, and what follows it is not read (the
 * pad, or the tail of an older content a torn overwrite left behind). */
int
exitrec_parse(const char *in, size_t len, struct exit_record *r)
{
	static const char *const keys[K_NKEYS] = {
		"exit_code", "signal",    "started_ms", "ended_ms",  "utime_us",
		"stime_us",  "maxrss_kb", "stragglers", "disk_full", "pending",
	};
	static const int64_t lo[K_NKEYS] = { 0,         0,         INT64_MIN, INT64_MIN, INT64_MIN,
					     INT64_MIN, INT64_MIN, 0,         0,         1 };
	static const int64_t hi[K_NKEYS] = { 255,       255,       INT64_MAX, INT64_MAX, INT64_MAX,
					     INT64_MAX, INT64_MAX, INT32_MAX, 1,         1 };
	char buf[EXITREC_MAX], *line, *next, *sp, *end;
	int64_t v[K_NKEYS] = { 0 };
	unsigned seen = 0, required;
	unsigned long sum;
	size_t i;
	int k;

	/* An empty or all-zero file is a reservation whose content never
	 * reached the disk (a crash right after its creation). */
	for (i = 0; i < len && in[i] == '\0'; i++)
		;
	if (i == len)
		return -EINPROGRESS;
	if (len >= sizeof(buf) || memchr(in, '\0', len) != NULL || in[len - 1] != '\n')
		return -EINVAL;
	memcpy(buf, in, len);
	buf[len] = '\0';
	for (line = buf; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		sp = strchr(line, ' ');
		if (sp == NULL)
			return -EINVAL;
		*sp = '\0';
		if (strcmp(line, "sum") == 0) {
			errno = 0;
			sum = strtoul(sp + 1, &end, 16);
			if (errno != 0 || end == sp + 1 || *end != '\0' ||
			    sum != exitrec_sum(in, (size_t)(line - buf)))
				return -EINVAL;
			break;
		}
		for (k = 0; k < K_NKEYS; k++)
			if (strcmp(line, keys[k]) == 0)
				break;
		if (k == K_NKEYS)
			continue;
		if (seen & (1u << k))
			return -EINVAL;
		if (exitrec_int(sp + 1, lo[k], hi[k], &v[k]) < 0)
			return -EINVAL;
		seen |= 1u << k;
	}
	/* Exactly one of exit_code, signal and pending; a reservation says
	 * nothing more, a record all of started_ms .. maxrss_kb. */
	k = !!(seen & (1u << K_CODE)) + !!(seen & (1u << K_SIGNAL)) + !!(seen & (1u << K_PENDING));
	if (k != 1)
		return -EINVAL;
	if (seen & (1u << K_PENDING))
		return -EINPROGRESS;
	required = (1u << K_STARTED) | (1u << K_ENDED) | (1u << K_UTIME) | (1u << K_STIME) |
		   (1u << K_MAXRSS);
	if ((seen & required) != required)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	if (seen & (1u << K_CODE)) {
		r->has_code = 1;
		r->code = (int)v[K_CODE];
	} else {
		r->has_signal = 1;
		r->signal = (int)v[K_SIGNAL];
	}
	r->started_ms = v[K_STARTED];
	r->ended_ms = v[K_ENDED];
	r->utime_us = v[K_UTIME];
	r->stime_us = v[K_STIME];
	r->maxrss_kb = v[K_MAXRSS];
	r->stragglers = (int)v[K_STRAGGLERS];
	r->disk_full = (int)v[K_DISK_FULL];
	return 0;
}

int
exitrec_read(const char *run_dir, struct exit_record *r)
{
	char path[PATH_MAX], buf[EXITREC_MAX];
	size_t got = 0;
	ssize_t n;
	int fd, err, rc;

	snprintf(path, sizeof(path), "%s/exit", run_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err != ENOENT)
			log_error("open %s: %s", path, strerror(err));
		return -err;
	}
	while (got < sizeof(buf)) {
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			log_error("read %s: %s", path, strerror(err));
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	rc = exitrec_parse(buf, got, r);
	if (rc == -EINVAL)
		log_error("%s: malformed exit record", path);
	return rc;
}

int
exitrec_status_format(char buf[EXITREC_STATUS_MAX], const char *run_id, const struct exit_record *r,
		      int durable)
{
	int n;

	n = snprintf(buf, EXITREC_STATUS_MAX, "status 1\nrun %s\ndurable %d\n", run_id,
		     durable ? 1 : 0);
	if (r == NULL || n < 0 || (size_t)n + EXITREC_SIZE > EXITREC_STATUS_MAX ||
	    strchr(run_id, '\n') || exitrec_format(r, buf + n, EXITREC_STATUS_MAX - (size_t)n) < 0)
		return -1;
	return n + EXITREC_SIZE;
}

int
exitrec_status_parse(const char *buf, size_t len, char *run_id, size_t idlen, struct exit_record *r,
		     int *durable)
{
	static const char head[] = "status 1\nrun ";
	const char *id, *nl, *d;

	if (len <= sizeof(head) - 1 || memcmp(buf, head, sizeof(head) - 1) != 0)
		return -EINVAL;
	id = buf + sizeof(head) - 1;
	if ((nl = memchr(id, '\n', len - (size_t)(id - buf))) == NULL || nl == id ||
	    (size_t)(nl - id) >= idlen)
		return -EINVAL;
	d = nl + 1;
	if ((size_t)(buf + len - d) < sizeof("durable 0\n") - 1 ||
	    (memcmp(d, "durable 0\n", 10) != 0 && memcmp(d, "durable 1\n", 10) != 0))
		return -EINVAL;
	if (exitrec_parse(d + 10, len - (size_t)(d + 10 - buf), r) != 0)
		return -EINVAL;
	memcpy(run_id, id, (size_t)(nl - id));
	run_id[nl - id] = '\0';
	*durable = d[8] == '1';
	return 0;
}

int
exitrec_mark_started(const char *run_dir)
{
	char path[PATH_MAX], buf[32];
	int n;

	n = snprintf(path, sizeof(path), "%s/started", run_dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		log_error("%s: path too long", run_dir);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)clock_wall_ms());
	return file_write_atomic(path, buf, (size_t)n);
}

int
exitrec_started(const char *run_dir)
{
	char path[PATH_MAX];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "%s/started", run_dir);
	if (stat(path, &st) == 0)
		return 1;
	err = errno;
	if (err == ENOENT)
		return 0;
	log_error("stat %s: %s", path, strerror(err));
	return -err;
}
