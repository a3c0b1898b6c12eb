/*
 * Logging: one line per message on stderr,
 *   2026-11-30T06:30:51.123Z supervisor info claimed T3-r1
 * The launcher sends each actor's stderr to launch/<actor>.log, so a line
 * must be complete and unmixed: it is formatted in full, then written with a
 * single write(2). Timestamps are real UTC time, not the fake clock: logs are
 * read by people.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

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

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	size_t len, i, start;
	int n, saved = errno;

	if ((int)level < atomic_load(&log_min) || (int)level > LOG_ERROR)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ts.tv_nsec / 1000000, log_actor, log_names[level]);
	if (n < 0)
		goto out;
	start = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	va_start(ap, fmt);
	errno = saved; /* so %m in fmt reports the caller's errno */
	vsnprintf(line + start, sizeof(line) - start, fmt, ap);
	va_end(ap);

	/* A message is one line: trailing newlines go, inner ones become
	 * spaces. A truncated message keeps its prefix. */
	len = strlen(line);
	while (len > start && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	for (i = start; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	if (len >= sizeof(line) - 1)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	if (write(STDERR_FILENO, line, len) < 0) {
		/* Nowhere left to report it. */
	}
out:
	errno = saved;
}
