/*
 * The retention watermark on disk: <home>/reaper/retention holds one
 * decimal number, the wall time (ms) before which every settled run's data
 * has been removed or found absent. It only saves the reaper a rescan of
 * all history after a restart; losing it costs that scan and nothing more,
 * so a missing, empty, unreadable or garbled file means 0 ("from the
 * beginning") and never stops the reaper.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "reap_pass.h"
#include "util.h"

/* A file larger than this is not ours. */
#define MARK_MAX 64

int
reap_mark_path(const char *home, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s/reaper/retention", home);

	if (k < 0 || (size_t)k >= n) {
		log_error("retention watermark: path under %s too long", home);
		return -1;
	}
	return 0;
}

int64_t
reap_mark_load(const char *home)
{
	char path[4096], buf[MARK_MAX + 1], *end;
	ssize_t len = 0, k;
	long long v;
	int fd;

	if (reap_mark_path(home, path, sizeof(path)) < 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			log_warn("retention watermark %s: %s: starting from the beginning", path,
				 strerror(errno));
		return 0;
	}
	while (len < (ssize_t)sizeof(buf)) {
		k = read(fd, buf + len, sizeof(buf) - (size_t)len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			log_warn("retention watermark %s: %s: starting from the beginning", path,
				 strerror(errno));
			close(fd);
			return 0;
		}
		if (k == 0)
			break;
		len += k;
	}
	close(fd);
	if (len == 0)
		return 0; /* created, never written: nothing was recorded */
	if (len > MARK_MAX)
		goto garbage;
	buf[len] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		goto garbage;
	errno = 0;
	v = strtoll(buf, &end, 10);
	/* The digits, then at most one newline, then the end of the file. */
	if (errno != 0 || v < 0 || !(end == buf + len || (end == buf + len - 1 && *end == '\n')))
		goto garbage;
	return (int64_t)v;
garbage:
	log_warn("retention watermark %s: not a time in ms, ignored: starting from the beginning",
		 path);
	return 0;
}

int
reap_mark_save(const char *home, int64_t ms)
{
	char path[4096], dir[4096], text[32];
	int n, fd;

	if (reap_mark_path(home, path, sizeof(path)) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/reaper", home);
	if (mkdir(dir, 0700) == 0) {
		/* The new directory's entry in home must be durable too. */
		if ((fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(fd) < 0)
			log_warn("retention watermark: fsync %s: %s", home, strerror(errno));
		if (fd >= 0)
			close(fd);
	} else if (errno != EEXIST) {
		log_error("retention watermark: mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	n = snprintf(text, sizeof(text), "%lld\n", (long long)ms);
	/* Temp file, fsync, rename, fsync of reaper/: a crash leaves the old
	 * value or the new one, never a torn one. */
	return file_write_atomic(path, text, (size_t)n);
}
