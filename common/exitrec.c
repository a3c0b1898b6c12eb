/*
 * The shim's exit record and started marker (runs/<run>/exit, .../started).
 *
 * Both are written with file_write_atomic (temp file, fsync, rename, fsync of
 * the directory), so after any crash a record is either absent or whole. A
 * record that is present but not whole is therefore someone else's doing and
 * is reported as malformed, never guessed at.
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

int
exitrec_format(const struct exit_record *r, char *buf, size_t len)
{
	int n, m;

	if (r->has_code == r->has_signal)
		return -1;
	if (r->has_code)
		n = snprintf(buf, len, "exit_code %d\n", r->code);
	else
		n = snprintf(buf, len, "signal %d\n", r->signal);
	if (n < 0 || (size_t)n >= len)
		return -1;
	m = snprintf(buf + n, len - (size_t)n,
	    "started_ms %lld\nended_ms %lld\nutime_us %lld\nstime_us %lld\nmaxrss_kb %lld\n",
	    (long long)r->started_ms, (long long)r->ended_ms, (long long)r->utime_us,
	    (long long)r->stime_us, (long long)r->maxrss_kb);
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return -1;
	return n + m;
}

int
exitrec_write(const char *run_dir, const struct exit_record *r)
{
	char path[PATH_MAX], buf[512];
	int n;

	if (r->has_code == r->has_signal) {
		log_error("exit record for %s: needs exactly one of code and signal", run_dir);
		return -1;
	}
	n = snprintf(path, sizeof(path), "%s/exit", run_dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		log_error("%s: path too long", run_dir);
		return -1;
	}
	if ((n = exitrec_format(r, buf, sizeof(buf))) < 0) {
		log_error("exit record for %s: does not fit %zu bytes", run_dir, sizeof(buf));
		return -1;
	}
	return file_write_atomic(path, buf, (size_t)n);
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

/* Reads "key value" lines. Every known key must appear exactly once and the
 * last line must be complete; unknown keys are ignored so the record may
 * grow. */
static int
exitrec_lines(char *buf, struct exit_record *r)
{
	static const char *const keys[] = {
		"exit_code", "signal", "started_ms", "ended_ms", "utime_us", "stime_us",
		"maxrss_kb",
	};
	int64_t v[7];
	unsigned seen = 0;
	char *line, *next, *sp;
	size_t len = strlen(buf);
	int k;

	if (len == 0 || buf[len - 1] != '\n')
		return -EINVAL;
	for (line = buf; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		sp = strchr(line, ' ');
		if (sp == NULL)
			return -EINVAL;
		*sp = '\0';
		for (k = 0; k < 7; k++)
			if (strcmp(line, keys[k]) == 0)
				break;
		if (k == 7)
			continue;
		if (seen & (1u << k))
			return -EINVAL;
		if (exitrec_int(sp + 1, k < 2 ? 0 : INT64_MIN, k < 2 ? 255 : INT64_MAX, &v[k]) < 0)
			return -EINVAL;
		seen |= 1u << k;
	}
	/* Exactly one of exit_code and signal, and all of the rest. */
	if ((seen & 3) == 0 || (seen & 3) == 3 || (seen & 0x7c) != 0x7c)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	if (seen & 1) {
		r->has_code = 1;
		r->code = (int)v[0];
	} else {
		r->has_signal = 1;
		r->signal = (int)v[1];
	}
	r->started_ms = v[2];
	r->ended_ms = v[3];
	r->utime_us = v[4];
	r->stime_us = v[5];
	r->maxrss_kb = v[6];
	return 0;
}

int
exitrec_parse(const char *text, size_t len, struct exit_record *r)
{
	char buf[EXITREC_MAX];

	/* A NUL inside, or more than a page, is not a record the shim wrote. */
	if (len >= sizeof(buf) || memchr(text, '\0', len) != NULL)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return exitrec_lines(buf, r) < 0 ? -EINVAL : 0;
}

int
exitrec_read(const char *run_dir, struct exit_record *r)
{
	char path[PATH_MAX], buf[EXITREC_MAX];
	size_t got = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/exit", run_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err != ENOENT)
			log_error("open %s: %s", path, strerror(err));
		return -err;
	}
	/* One byte more than a record may have, so an oversized file is
	 * told apart from one that fits exactly. */
	for (;;) {
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			log_error("read %s: %s", path, strerror(err));
			close(fd);
			return -err;
		}
		got += (size_t)n;
		if (n == 0 || got == sizeof(buf))
			break;
	}
	close(fd);
	if (exitrec_parse(buf, got, r) < 0) {
		log_error("%s: malformed exit record", path);
		return -EINVAL;
	}
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
