/*
 * Logging: one line per message on stderr,
 *   2026-11-30T06:30:51.123Z supervisor info claimed T3-r1
 * The launcher sends each actor's stderr to launch/<actor>.log, so a line
 * must be complete and unmixed: it is formatted in full, then written with a
 * single write(2). Timestamps are real UTC time, not the fake clock: logs are
 * read by people.
 *
 * A line is in the log whole or not at all: on a full disk a write may be
 * short, and what it wrote is cut off again (log_write), so the log loses
 * lines rather than tears them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static char log_actor[32] = "berth";
static atomic_int log_min = LOG_INFO;

static const char *const log_names[] = { "debug", "info", "warn", "error" };

void
log_init(const char *actor)
{
	const char *env;
	int i;

	if (actor != NULL)
		snprintf(log_actor, sizeof(log_actor), "%s", actor);
	env = getenv("BERTH_LOG_LEVEL");
	if (env == NULL || *env == '\0')
		return;
	for (i = LOG_DEBUG; i <= LOG_ERROR; i++) {
		if (strcasecmp(env, log_names[i]) == 0) {
			atomic_store(&log_min, i);
			return;
		}
	}
	log_warn("BERTH_LOG_LEVEL=%s is not debug, info, warn or error; ignored", env);
}

void
log_set_level(enum log_level min)
{
	atomic_store(&log_min, (int)min);
}

/*
 * One line onto stderr. When stderr is a file opened for appending (an
 * actor's log; a supervisor shares its with its shims), the file's size is
 * taken before the write and a short write (ENOSPC) is cut back to it. Size
 * and cut are taken under a POSIX record lock, which every berth process
 * writing the file takes too, so another's line appended meanwhile is never
 * cut instead. A lock that cannot be had soon (its holder stopped) is done
 * without: the line is then written as before, never held back.
 */
static void
log_write(const char *line, size_t len)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int fl, tries, locked = 0;
	ssize_t n;

	fl = fcntl(STDERR_FILENO, F_GETFL);
	if (fl == -1 || !(fl & O_APPEND) || fstat(STDERR_FILENO, &st) != 0 ||
	    !S_ISREG(st.st_mode)) {
		if (write(STDERR_FILENO, line, len) < 0) {
			/* Nowhere left to report it. */
		}
		return;
	}
	for (tries = 0; tries < 50 && !locked; tries++) {
		if (fcntl(STDERR_FILENO, F_SETLK, &lk) == 0)
			locked = 1;
		else if (errno == EACCES || errno == EAGAIN)
			nanosleep(&(struct timespec){ 0, 200 * 1000 }, NULL);
		else
			break;
	}
	if (locked && fstat(STDERR_FILENO, &st) != 0)
		st.st_size = -1;
	n = write(STDERR_FILENO, line, len);
	if (locked && n > 0 && (size_t)n < len && st.st_size >= 0 &&
	    ftruncate(STDERR_FILENO, st.st_size) != 0) {
		/* The torn line stays: nothing better can be done. */
	}
	if (locked) {
		lk.l_type = F_UNLCK;
		fcntl(STDERR_FILENO, F_SETLK, &lk);
	}
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[2048], line[2048 + 4 * sizeof(msg)];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	size_t len, start;
	int n, saved = errno;

	if ((int)level < atomic_load(&log_min) || (int)level > LOG_ERROR)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, 2048, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, log_actor, log_names[level]);
	if (n < 0)
		goto out;
	start = (size_t)n < 2048 ? (size_t)n : 2047;
	va_start(ap, fmt);
	errno = saved; /* so %m in fmt reports the caller's errno */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	/*
	 * A message is one line, and what it quotes (a job's command, a
	 * reason, a path) may hold anything: trailing newlines go, and every
	 * control character left is escaped as the CLI escapes text from a job
	 * (esc_text), so a log read on a terminal cannot be steered by it. A
	 * truncated message keeps its prefix.
	 */
	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		msg[--len] = '\0';
	esc_text(line + start, sizeof(line) - start - 1, msg);
	len = strlen(line);
	line[len++] = '\n';
	log_write(line, len);
out:
	errno = saved;
}
