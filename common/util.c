/*
 * Small things every part needs: durations, the home directory, hex digits,
 * escaping for the terminal, and atomic file replacement.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static int64_t
dur_unit(const char **p)
{
	const char *s = *p;

	if (s[0] == 'm' && s[1] == 's') {
		*p = s + 2;
		return 1;
	}
	*p = s + 1;
	switch (s[0]) {
	case 's': return 1000;
	case 'm': return 60 * 1000;
	case 'h': return 3600 * 1000;
	case 'd': return 86400 * 1000;
	}
	return -1;
}

/*
 * One or more terms "<digits><unit>" ("1h30m", "250ms"), or a bare number of
 * seconds. Signs, spaces, fractions and anything that overflows are refused
 * rather than read as something the user did not write.
 */
int
dur_parse(const char *s, int64_t *ms)
{
	const char *p = s;
	int64_t total = 0, v, unit;
	int terms = 0;

	if (s == NULL || *s == '\0')
		return -1;
	while (*p != '\0') {
		if (*p < '0' || *p > '9')
			return -1;
		for (v = 0; *p >= '0' && *p <= '9'; p++) {
			if (v > (INT64_MAX - (*p - '0')) / 10)
				return -1;
			v = v * 10 + (*p - '0');
		}
		if (*p == '\0') {
			if (terms > 0)
				return -1; /* "1m30": the unit is not guessed */
			unit = 1000;
		} else if ((unit = dur_unit(&p)) < 0)
			return -1;
		if (v > (INT64_MAX - total) / unit)
			return -1;
		total += v * unit;
		terms++;
	}
	*ms = total;
	return 0;
}

/* The number itself, shared by opt_parse_ms and opt_parse_int, which differ
 * only in what they call the number when refusing it. */
static int
opt_parse(const char *opt, const char *s, int64_t min, int64_t max, const char *what, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "%s: %s wants %s from %lld to %lld, not '%s'\n",
			program_invocation_short_name, opt, what, (long long)min, (long long)max,
			s);
		return -1;
	}
	*out = v;
	return 0;
}

int
opt_parse_ms(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
	return opt_parse(opt, s, min, max, "a number of milliseconds", out);
}

int
opt_parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	int64_t v;

	if (opt_parse(opt, s, min, max, "a whole number", &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

/* The largest unit and, when not zero, the next one: "2h5m", "3d4h". */
void
dur_format(int64_t ms, char *buf, size_t n)
{
	static const struct {
		int64_t ms;
		const char *name;
	} u[] = {
		{ 86400000, "d" },
		{ 3600000, "h" },
		{ 60000, "m" },
		{ 1000, "s" },
	};
	const char *sign = "";
	uint64_t v, a, b;
	size_t i;

	if (ms < 0) {
		sign = "-";
		v = (uint64_t)0 - (uint64_t)ms;
	} else
		v = (uint64_t)ms;
	if (v < 1000) {
		snprintf(buf, n, "%s%llums", sign, (unsigned long long)v);
		return;
	}
	for (i = 0; i < 3; i++)
		if (v >= (uint64_t)u[i].ms)
			break;
	a = v / (uint64_t)u[i].ms;
	b = i < 3 ? (v % (uint64_t)u[i].ms) / (uint64_t)u[i + 1].ms : 0;
	if (b > 0)
		snprintf(buf, n, "%s%llu%s%llu%s", sign, (unsigned long long)a, u[i].name,
			 (unsigned long long)b, u[i + 1].name);
	else
		snprintf(buf, n, "%s%llu%s", sign, (unsigned long long)a, u[i].name);
}

void
time_format(int64_t wall_ms, char *buf, size_t n)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL || strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, n, "@%lld", (long long)wall_ms);
}

/*
 * The home holds the database, the sockets and every run's output (DESIGN
 * §2), so whoever can write the directory can replace any of them: it must
 * be the caller's and writable by nobody else. It is checked, never
 * changed: a chmod would silently take over a shared directory (a 1777
 * /tmp/x given as --home) that other users rely on. Missing parents and
 * the leaf are created 0700; the leaf is checked after the mkdir, so a
 * directory someone else made first in between is refused like any other.
 */
int
home_check(const char *home, int create, char *err, size_t n)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len;
	char *p;

	len = home != NULL ? strlen(home) : 0;
	if (len == 0 || len >= sizeof(path)) {
		snprintf(err, n, "home directory \"%s\": bad length", home != NULL ? home : "");
		return -1;
	}
	memcpy(path, home, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (create) {
		for (p = path + 1; *p != '\0'; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			if (mkdir(path, 0700) < 0 && errno != EEXIST) {
				snprintf(err, n, "mkdir %s: %s", path, strerror(errno));
				return -1;
			}
			*p = '/';
		}
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			snprintf(err, n, "mkdir %s: %s", path, strerror(errno));
			return -1;
		}
	}
	if (stat(path, &st) < 0) {
		if (errno == ENOENT && !create)
			return 1;
		if (errno == EACCES)
			snprintf(err, n,
				 "%s: permission denied (a directory on the way belongs to "
				 "another user); refusing to use it as BERTH_HOME",
				 path);
		else
			snprintf(err, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, n, "%s: not a directory; refusing to use it as BERTH_HOME", path);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, n,
			 "%s belongs to uid %u, not to you (uid %u): permission denied; "
			 "refusing to use it as BERTH_HOME",
			 path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(err, n,
			 "%s is mode %o (group- or world-writable); refusing to use it "
			 "as BERTH_HOME",
			 path, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

int
home_ensure(const char *home)
{
	char err[PATH_MAX + 160];

	if (home_check(home, 1, err, sizeof(err)) == 0)
		return 0;
	log_error("%s", err);
	return -1;
}

/* "ipc://<home>/<name>", which must fit a unix socket's sun_path. */
static int
home_url(const char *home, const char *name, char *buf, size_t n)
{
	struct sockaddr_un sun;
	int len;

	len = snprintf(buf, n, "ipc://%s/%s", home, name);
	if (len < 0 || (size_t)len >= n) {
		log_error("socket path under %s too long", home);
		return -1;
	}
	/* A unix socket path must fit sun_path; failing here says why. */
	if ((size_t)len - strlen("ipc://") >= sizeof(sun.sun_path)) {
		log_error("socket path %s longer than %zu bytes", buf + 6,
			  sizeof(sun.sun_path) - 1);
		return -1;
	}
	return 0;
}

int
home_socket_url(const char *home, char *buf, size_t n)
{
	return home_url(home, "coordinator.sock", buf, n);
}

int
home_worker_url(const char *home, char *buf, size_t n)
{
	return home_url(home, "worker.sock", buf, n);
}

/* A run id names a directory: it must not climb out of runs/. */
int
home_run_dir(const char *home, const char *run_id, char *buf, size_t n)
{
	int len;

	if (run_id == NULL || run_id[0] == '\0' || run_id[0] == '.' ||
	    strchr(run_id, '/') != NULL) {
		log_error("bad run id \"%s\"", run_id != NULL ? run_id : "");
		return -1;
	}
	len = snprintf(buf, n, "%s/runs/%s", home, run_id);
	if (len < 0 || (size_t)len >= n) {
		log_error("run directory path under %s too long", home);
		return -1;
	}
	return 0;
}

int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t
utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (s[0] == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (s[0] == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (s[0] == 0xf0 && s[1] < 0x90)
			return 0; /* overlong */
		if (s[0] == 0xf4 && s[1] >= 0x90)
			return 0; /* above U+10FFFF */
		return 4;
	}
	return 0;
}

/* The escapes with a name of their own; NULL for any other byte. */
static const char *
esc_named(unsigned char c)
{
	switch (c) {
	case 0x1b: return "\\e";
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	case '\\': return "\\\\";
	}
	return NULL;
}

/*
 * One piece of esc_text's output for the text at *p: the bytes themselves
 * or an escape (*out points to either; a \xNN escape is written into tmp).
 * Advances *p past what it covers and returns the piece's length.
 */
static size_t
esc_piece(const unsigned char **p, char tmp[8], const char **out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = *p;
	size_t len, i;
	int c1;

	if ((*out = esc_named(s[0])) != NULL) {
		*p = s + 1;
		return 2;
	}
	len = utf8_len(s);
	/* A C1 control is two bytes in UTF-8 (C2 80..C2 9F), and a terminal
	 * may take U+009B for CSI: both bytes are escaped. Anything else that
	 * is not a printable character is escaped byte by byte. */
	c1 = len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
	if (!c1 && len > 0 && s[0] >= 0x20 && s[0] != 0x7f) {
		*out = (const char *)s;
		*p = s + len;
		return len;
	}
	if (!c1)
		len = 1;
	for (i = 0; i < len; i++) {
		tmp[4 * i] = '\\';
		tmp[4 * i + 1] = 'x';
		tmp[4 * i + 2] = hex[s[i] >> 4];
		tmp[4 * i + 3] = hex[s[i] & 15];
	}
	*out = tmp;
	*p = s + len;
	return 4 * len;
}

size_t
esc_text(char *buf, size_t n, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
	const char *piece;
	char tmp[8];
	size_t total = 0, used = 0, len;
	int full = 0;

	while (*p != '\0') {
		len = esc_piece(&p, tmp, &piece);
		if (!full && n > 0 && used + len < n) {
			memcpy(buf + used, piece, len);
			used += len;
		} else
			full = 1; /* nothing after a piece that did not fit */
		total += len;
	}
	if (n > 0)
		buf[used] = '\0';
	return total;
}

void
esc_fputs(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
	const char *piece;
	char tmp[8];
	size_t len;

	while (*p != '\0') {
		len = esc_piece(&p, tmp, &piece);
		fwrite(piece, 1, len, f);
	}
}

static int
file_fsync_dir(const char *path)
{
	char copy[PATH_MAX];
	int fd, r = 0;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		log_error("fsync directory of %s: %s", path, strerror(errno));
		r = -1;
	}
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * The temp file lives in the target's directory so rename() is atomic; the
 * data is fsync'ed before the rename and the directory after it, so after a
 * crash the path holds either the old content or all of the new.
 */
int
file_write_atomic(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX];
	const char *p = buf;
	size_t off = 0;
	ssize_t w;
	int fd, n, r = -1;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		log_error("%s: path too long", path);
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		log_error("create temp file for %s: %s", path, strerror(errno));
		return -1;
	}
	while (off < len) {
		w = write(fd, p + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			log_error("write %s: %s", tmp, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0) {
		log_error("fsync %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		log_error("close %s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		log_error("rename %s to %s: %s", tmp, path, strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	r = file_fsync_dir(path);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	return r;
}
