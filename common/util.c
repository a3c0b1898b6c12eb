/*
 * Small things every part needs: durations, the home directory, hex digits,
 * and atomic file replacement.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
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
	case 's':
		return 1000;
	case 'm':
		return 60 * 1000;
	case 'h':
		return 3600 * 1000;
	case 'd':
		return 86400 * 1000;
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
opt_parse(const char *opt, const char *s, int64_t min, int64_t max, const char *what,
	  int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "%s: %s wants %s from %lld to %lld, not '%s'\n",
			program_invocation_short_name, opt, what, (long long)min, (long long)max, s);
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
	static const struct { int64_t ms; const char *name; } u[] = {
		{ 86400000, "d" }, { 3600000, "h" }, { 60000, "m" }, { 1000, "s" },
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

char *
home_default(void)
{
	const char *e, *home;
	struct passwd *pw;
	char *out = NULL;

	if ((e = getenv("BERTH_HOME")) != NULL && *e != '\0')
		return strdup(e);
	if ((e = getenv("XDG_STATE_HOME")) != NULL && *e == '/') {
		if (asprintf(&out, "%s/berth", e) < 0)
			return NULL;
		return out;
	}
	home = getenv("HOME");
	if (home == NULL || *home == '\0') {
		pw = getpwuid(getuid());
		if (pw == NULL || pw->pw_dir == NULL) {
			log_error("no BERTH_HOME and no home directory");
			return NULL;
		}
		home = pw->pw_dir;
	}
	if (asprintf(&out, "%s/.local/state/berth", home) < 0)
		return NULL;
	return out;
}

/*
 * mkdir -p: missing parents and the leaf are created 0700, and an existing
 * leaf is chmod'ed to 0700, because the home holds worker tokens' hashes and
 * the coordinator's socket (DESIGN §2).
 */
int
home_ensure(const char *home)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len;
	char *p;

	len = strlen(home);
	if (len == 0 || len >= sizeof(path)) {
		log_error("home directory \"%s\": bad length", home);
		return -1;
	}
	memcpy(path, home, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			log_error("mkdir %s: %s", path, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		log_error("mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	if (stat(path, &st) < 0) {
		log_error("stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_error("%s: not a directory", path);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0) {
		log_error("chmod 0700 %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
home_socket_url(const char *home, char *buf, size_t n)
{
	struct sockaddr_un sun;
	int len;

	len = snprintf(buf, n, "ipc://%s/coordinator.sock", home);
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
