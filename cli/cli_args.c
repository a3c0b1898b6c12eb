/* Argument parsers and option handling shared by every berth command. They
 * are strict on purpose: a typo in a duration or a time must be refused, not
 * read as something else, because a ticket queued at the wrong time is
 * worse than a command that says no. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth_limits.h"
#include "cli.h"
#include "labels.h"
#include "vec.h"
#include "util.h"

/* Reads between lo and hi digits at *p into *v and advances *p. */
static int
digits(const char **p, int lo, int hi, int *v)
{
	int n = 0, x = 0;

	while (n < hi && isdigit((unsigned char)(*p)[n])) {
		x = x * 10 + ((*p)[n] - '0');
		n++;
	}
	if (n < lo)
		return -1;
	*p += n;
	*v = x;
	return 0;
}

/* "HH:MM[:SS]" at p; the rest of the string must be empty or "Z". */
static int
parse_clock(const char **p, int *h, int *m, int *s)
{
	*s = 0;
	if (digits(p, 1, 2, h) < 0 || **p != ':')
		return -1;
	(*p)++;
	if (digits(p, 2, 2, m) < 0)
		return -1;
	if (**p == ':') {
		(*p)++;
		if (digits(p, 2, 2, s) < 0)
			return -1;
	}
	if (*h > 23 || *m > 59 || *s > 59)
		return -1;
	return 0;
}

static int
days_in_month(int y, int mon)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (mon == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[mon - 1];
}

int
cli_parse_at(const char *s, int64_t now_ms, int64_t *at_ms)
{
	const char *p = s;
	struct tm tm;
	time_t now = (time_t)(now_ms / 1000), t;
	int y, mon, d, h, m, sec, utc = 0;

	if (s == NULL || *s == '\0')
		return -1;
	if (strchr(s, '-') == NULL) {
		/* A time of day: today, or tomorrow once it has passed. */
		if (parse_clock(&p, &h, &m, &sec) < 0 || *p != '\0')
			return -1;
		if (localtime_r(&now, &tm) == NULL)
			return -1;
		tm.tm_hour = h;
		tm.tm_min = m;
		tm.tm_sec = sec;
		tm.tm_isdst = -1;
		if ((t = mktime(&tm)) == (time_t)-1)
			return -1;
		if ((int64_t)t * 1000 < now_ms) {
			/* Re-normalise from the wanted clock time, not t + 86400:
			 * a day with a DST change is not 24 hours long. */
			if (localtime_r(&now, &tm) == NULL)
				return -1;
			tm.tm_mday += 1;
			tm.tm_hour = h;
			tm.tm_min = m;
			tm.tm_sec = sec;
			tm.tm_isdst = -1;
			if ((t = mktime(&tm)) == (time_t)-1)
				return -1;
		}
		*at_ms = (int64_t)t * 1000;
		return 0;
	}

	/* A date and time: YYYY-MM-DD[T ]HH:MM[:SS][Z] */
	if (digits(&p, 4, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, 2, &mon) < 0 || *p++ != '-' ||
	    digits(&p, 2, 2, &d) < 0)
		return -1;
	if (*p != 'T' && *p != ' ')
		return -1;
	p++;
	if (parse_clock(&p, &h, &m, &sec) < 0)
		return -1;
	if (*p == 'Z') {
		utc = 1;
		p++;
	}
	if (*p != '\0')
		return -1;
	if (y < 1970 || mon < 1 || mon > 12 || d < 1 || d > days_in_month(y, mon))
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	t = utc ? timegm(&tm) : mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*at_ms = (int64_t)t * 1000;
	return 0;
}

int
cli_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
cli_parse_frac(const char *s, int64_t *index, int64_t *total)
{
	const char *slash;
	char head[32];
	long long i, n;

	if (s == NULL || (slash = strchr(s, '/')) == NULL)
		return -1;
	if ((size_t)(slash - s) >= sizeof head || slash == s)
		return -1;
	memcpy(head, s, (size_t)(slash - s));
	head[slash - s] = '\0';
	if (!isdigit((unsigned char)head[0]) || !isdigit((unsigned char)slash[1]))
		return -1;
	if (cli_parse_int(head, 0, INT64_MAX, &i) < 0 ||
	    cli_parse_int(slash + 1, 1, INT64_MAX, &n) < 0 || i > n)
		return -1;
	*index = i;
	*total = n;
	return 0;
}

int
cli_parse_dur(const char *s, int64_t min_ms, int64_t *ms)
{
	int64_t v;

	if (s == NULL || *s == '\0' || *s == '-' || isspace((unsigned char)*s))
		return -1;
	if (dur_parse(s, &v) < 0 || v < min_ms)
		return -1;
	*ms = v;
	return 0;
}

int
cli_parse_env(const char *s)
{
	const char *eq = strchr(s, '=');
	const char *p;

	if (eq == NULL || eq == s || isdigit((unsigned char)*s))
		return -1;
	for (p = s; p < eq; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return -1;
	return 0;
}

int
cli_split_list(const char *s, char ***items, size_t *n)
{
	char **v = NULL, **nv;
	size_t cnt = 0;
	const char *p = s, *comma;

	for (;;) {
		size_t len;

		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0)
			goto fail;
		if ((nv = realloc(v, (cnt + 2) * sizeof *v)) == NULL)
			goto fail;
		v = nv;
		if ((v[cnt] = strndup(p, len)) == NULL)
			goto fail;
		v[++cnt] = NULL;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	*items = v;
	*n = cnt;
	return 0;
fail:
	if (v != NULL)
		v[cnt] = NULL;
	vec_free_str(v);
	return -1;
}

void
cli_batch_free(struct cli_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->lines[i]);
	free(b->lines);
	free(b->lineno);
	b->lines = NULL;
	b->lineno = NULL;
	b->n = 0;
}

int
cli_batch_read(FILE *f, struct cli_batch *b, char *err, size_t errlen)
{
	char *line = NULL, *p, *e, **nl;
	size_t cap = 0, room = 0;
	ssize_t len;
	long lineno = 0, *nn;
	int rc = -1;

	b->lines = NULL;
	b->lineno = NULL;
	b->n = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (memchr(line, '\0', (size_t)len) != NULL) {
			snprintf(err, errlen, "line %ld contains a NUL byte", lineno);
			goto out;
		}
		for (p = line; isspace((unsigned char)*p); p++)
			;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			e--;
		*e = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		/* The line is the argument of sh -c: one exec string. */
		if ((size_t)(e - p) > BERTH_ARG_MAX) {
			snprintf(err, errlen, "line %ld is %zu bytes; a line is at most %d", lineno,
				 (size_t)(e - p), BERTH_ARG_MAX);
			goto out;
		}
		if (b->n == room) {
			room = room ? 2 * room : 64;
			if ((nl = realloc(b->lines, room * sizeof *nl)) == NULL)
				goto nomem;
			b->lines = nl;
			if ((nn = realloc(b->lineno, room * sizeof *nn)) == NULL)
				goto nomem;
			b->lineno = nn;
		}
		if ((b->lines[b->n] = strdup(p)) == NULL)
			goto nomem;
		b->lineno[b->n] = lineno;
		b->n++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error after line %ld: %s", lineno, strerror(errno));
		goto out;
	}
	if (b->n == 0) {
		snprintf(err, errlen, "no commands (only blank lines and comments)");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory at line %ld", lineno);
out:
	free(line);
	if (rc < 0)
		cli_batch_free(b);
	return rc;
}

/* The message of cli_fail or cli_usage_error, escaped: what it quotes (a
 * ticket name, a path, a denial's facts, the user's own argument) may hold
 * anything, and stderr is a terminal too. */
static void
vputs_escaped(const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("(out of memory)", stderr);
		return;
	}
	esc_fputs(stderr, msg);
	free(msg);
}

int
cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "berth %s: ", cli_esc(cmd));
	va_start(ap, fmt);
	vputs_escaped(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'berth %s --help'.\n", cli_esc(cmd));
	return CLI_USAGE;
}

int
cli_fail(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	fputs("berth: ", stderr);
	va_start(ap, fmt);
	errno = saved; /* %m in fmt */
	vputs_escaped(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_FAIL;
}

/* 1 when "name=..." names a long option (or a unique abbreviation of one,
 * as getopt_long accepts) that takes no value. */
static int
long_flag(const struct option *lo, const char *name)
{
	size_t len = strcspn(name, "="), i, hits = 0, flag = 0;

	for (i = 0; lo != NULL && lo[i].name != NULL; i++) {
		if (strncmp(lo[i].name, name, len) != 0)
			continue;
		if (strlen(lo[i].name) == len)
			return lo[i].has_arg == no_argument;
		hits++;
		flag = lo[i].has_arg == no_argument;
	}
	return hits == 1 && flag;
}

int
cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	char os[64];
	int c;

	/* Leading ':' (after an optional '+') makes getopt report a missing
	 * value as ':' so the message can say which option wanted it. */
	if (optstring[0] == '+')
		snprintf(os, sizeof os, "+:%s", optstring + 1);
	else
		snprintf(os, sizeof os, ":%s", optstring);
	opterr = 0;
	c = getopt_long(argc, argv, os, longopts, NULL);
	if (c == '?') {
		const char *arg = argv[optind - 1];

		/* getopt reports "--json=yes" for a flag like an unknown -j
		 * (optopt is the flag's value): name what was typed. */
		if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') != NULL &&
		    long_flag(longopts, arg + 2))
			cli_usage_error(argv[0], "option %.*s takes no value (got '%s')",
					(int)(strchr(arg, '=') - arg), arg, arg);
		else if (strncmp(arg, "--", 2) == 0)
			cli_usage_error(argv[0], "unknown option %s", arg);
		else if (optopt != 0)
			cli_usage_error(argv[0], "unknown option -%c", optopt);
		else
			cli_usage_error(argv[0], "unknown option %s", arg);
		return '?';
	}
	if (c == ':') {
		if (optopt != 0 && strncmp(argv[optind - 1], "--", 2) != 0)
			cli_usage_error(argv[0], "option -%c needs a value", optopt);
		else
			cli_usage_error(argv[0], "option %s needs a value", argv[optind - 1]);
		return '?';
	}
	return c;
}

/* How a range reads in a message: "from 0 to 1000000", "at least 1". */
static void
range_text(long long min, long long max, char *buf, size_t n)
{
	if (max == LLONG_MAX || (max == INT64_MAX && min > INT64_MIN))
		snprintf(buf, n, "at least %lld", min);
	else
		snprintf(buf, n, "from %lld to %lld", min, max);
}

int
cli_opt_int(const char *cmd, const char *opt, const char *s, long long min, long long max,
	    long long *out)
{
	char range[96];

	if (cli_parse_int(s, min, max, out) == 0)
		return CLI_OK;
	range_text(min, max, range, sizeof range);
	return cli_usage_error(cmd, "%s: bad number '%s' (a whole number %s)", opt, s, range);
}

int
cli_opt_dur(const char *cmd, const char *opt, const char *s, int64_t min_ms, int64_t max_ms,
	    int64_t *ms)
{
	char lo[32], hi[32], range[96];
	int64_t v;

	if (s != NULL && *s != '-' && dur_parse(s, &v) == 0 && v >= min_ms && v <= max_ms) {
		*ms = v;
		return CLI_OK;
	}
	dur_format(min_ms, lo, sizeof lo);
	dur_format(max_ms, hi, sizeof hi);
	if (max_ms == INT64_MAX)
		snprintf(range, sizeof range, "%s or more", min_ms == 0 ? "0" : lo);
	else
		snprintf(range, sizeof range, "from %s to %s", min_ms == 0 ? "0" : lo, hi);
	/* A well-formed duration out of range is told its bound. */
	if (s != NULL && *s != '-' && dur_parse(s, &v) == 0 && v < min_ms)
		return cli_usage_error(cmd, "%s: %s is too short (at least %s)", opt, s, lo);
	if (s != NULL && *s != '-' && dur_parse(s, &v) == 0)
		return cli_usage_error(cmd, "%s: %s is too long (at most %s)", opt, s, hi);
	return cli_usage_error(cmd,
			       "%s: bad duration '%s' (use e.g. 500ms, 5s, 2m, 1h30m; a bare "
			       "number is seconds; %s)",
			       opt, s ? s : "", range);
}

/* Digits at s up to end (or the string's end): a number from 1 up. */
static int
id_number(const char *s, const char *end, long long max, long long *v)
{
	char num[24];
	size_t len = end ? (size_t)(end - s) : strlen(s);

	if (len == 0 || len >= sizeof num || strspn(s, "0123456789") < len)
		return -1;
	memcpy(num, s, len);
	num[len] = '\0';
	return cli_parse_int(num, 1, max, v);
}

int
cli_parse_id(const char *s, char *buf, size_t n)
{
	const char *dash;
	long long v, k;
	size_t len, i;
	int w;

	if (s == NULL || *s == '\0')
		return -1;
	len = strlen(s);
	if (strcmp(s, "last") == 0)
		return (size_t)snprintf(buf, n, "last") < n ? CLI_ID_LAST : -1;
	/* A number is a ticket: 7 is T7, as tsp and nq number their jobs.
	 * (So a run-id prefix made only of digits reads as a ticket.) */
	if (strspn(s, "0123456789") == len) {
		if (id_number(s, NULL, INT64_MAX, &v) < 0)
			return -1;
		w = snprintf(buf, n, "T%lld", v);
		return w > 0 && (size_t)w < n ? CLI_ID_TICKET : -1;
	}
	/* A run id, or a unique prefix of one (8 hex digits, as trace
	 * prints it). */
	for (i = 0; i < len && isxdigit((unsigned char)s[i]); i++)
		;
	if (i == len && len >= 8 && len <= 32) {
		if (len >= n)
			return -1;
		for (i = 0; i <= len; i++)
			buf[i] = (char)tolower((unsigned char)s[i]);
		return CLI_ID_RUN;
	}
	if (*s != 'T' && *s != 't')
		return -1;
	s++;
	if ((dash = strchr(s, '-')) == NULL) {
		if (id_number(s, NULL, INT64_MAX, &v) < 0)
			return -1;
		w = snprintf(buf, n, "T%lld", v);
		return w > 0 && (size_t)w < n ? CLI_ID_TICKET : -1;
	}
	/* An alias T<n>-r<attempt>. */
	if (id_number(s, dash, INT64_MAX, &v) < 0 || (dash[1] != 'r' && dash[1] != 'R') ||
	    id_number(dash + 2, NULL, UINT32_MAX, &k) < 0)
		return -1;
	w = snprintf(buf, n, "T%lld-r%lld", v, k);
	return w > 0 && (size_t)w < n ? CLI_ID_ALIAS : -1;
}

int
cli_opt_place(const char *cmd, int host, char *arg, char **hostp, char ***labels, size_t *n)
{
	char why[200];

	if (host && strchr(arg, ',') != NULL)
		return cli_usage_error(cmd, "--host takes one host id, not a list ('%s')", arg);
	if (labels_check_list(arg, host ? "--host" : "--on", why, sizeof why) != 0)
		return cli_usage_error(cmd, "%s", why);
	if (host) {
		*hostp = arg;
		return CLI_OK;
	}
	vec_free_str(*labels);
	*labels = NULL;
	*n = 0;
	return cli_split_list(arg, labels, n) == 0 ? CLI_OK : cli_fail("out of memory");
}
