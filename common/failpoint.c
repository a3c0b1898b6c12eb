/*
 * Failure injection (DESIGN §10).
 *
 * BERTH_FAILPOINTS="name=action[;name=action...]" arms named points; the
 * code calls fp_hit(name) at each point and obeys the result. Only names in
 * fp_names[] are accepted, so a misspelt point in a test is a startup error
 * instead of a point that silently never fires.
 *
 * Arming happens once at startup (fp_init); hits come from the actor's loop
 * thread. The hit counters are atomic so a stray hit from another thread
 * cannot make an "N*" point fire more than N times.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "failpoint.h"
#include "log.h"
#include "util.h"

/* Every point the code may hit. Add new points here, and only here. */
static const char *const fp_names[] = {
	"coordinator.before_commit",
	"coordinator.after_commit",
	"coordinator.before_reply",
	"supervisor.after_claim",
	"supervisor.after_spawn",
	"supervisor.before_start",
	"supervisor.after_start",
	"supervisor.before_handoff",
	"supervisor.before_record_exit",
	"supervisor.after_record_exit",
	"supervisor.before_settle",
	"shim.before_exec",
	"shim.before_exit_record",
	"shim.unshare",
	"shim.reserve_exit",
	"shim.after_exit_record",
	"recovery.before_record_exit",
	"recovery.before_readopt",
	"recovery.before_settle",
	"recovery.before_abandon",
	"reaper.before_kill",
	"reaper.after_kill",
	"reaper.before_settle",
	"rpc.before_send",
	"rpc.after_send",
};
#define FP_NNAMES (sizeof(fp_names) / sizeof(fp_names[0]))

enum fp_action { FPA_CRASH, FPA_EXIT, FPA_SLEEP, FPA_ERROR, FPA_DROP, FPA_PAUSE };

struct fp_entry {
	const char *name; /* points into fp_names[] */
	enum fp_action action;
	long arg;   /* exit code or sleep ms */
	long limit; /* fires only the first limit hits; 0 = every hit */
	atomic_long hits;
	char text[32]; /* the action as written, for the observer and logs */
};

#define FP_MAX 64
static struct fp_entry fp_entries[FP_MAX];
static atomic_int fp_count;
static char fp_home[PATH_MAX];
static fp_observer fp_obs;

void
fp_reset(void)
{
	atomic_store(&fp_count, 0);
	memset(fp_entries, 0, sizeof(fp_entries));
	fp_home[0] = '\0';
}

void
fp_set_observer(fp_observer obs)
{
	fp_obs = obs;
}

static const char *
fp_lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FP_NNAMES; i++)
		if (strlen(fp_names[i]) == len && strncmp(fp_names[i], name, len) == 0)
			return fp_names[i];
	return NULL;
}

/* A non-negative decimal number at *p, advancing past it. */
static int
fp_number(const char **p, long max, long *out)
{
	const char *s = *p;
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

static void
fp_skipws(const char **p)
{
	while (isspace((unsigned char)**p))
		(*p)++;
}

/* "name(N)" with the name already matched at *p; whitespace tolerated. */
static int
fp_call(const char **p, long max, long *arg)
{
	fp_skipws(p);
	if (**p != '(')
		return -1;
	(*p)++;
	fp_skipws(p);
	if (fp_number(p, max, arg) < 0)
		return -1;
	fp_skipws(p);
	if (**p != ')')
		return -1;
	(*p)++;
	return 0;
}

/* Parses an action, trimmed, into e; -1 when malformed. */
static int
fp_parse_action(const char *s, struct fp_entry *e)
{
	const char *p = s, *q;

	e->limit = 0;
	q = p;
	if (isdigit((unsigned char)*q)) {
		if (fp_number(&q, INT_MAX, &e->limit) < 0)
			return -1;
		fp_skipws(&q);
		if (*q == '*') {
			if (e->limit == 0)
				return -1;
			p = q + 1;
			fp_skipws(&p);
		} else
			return -1;
	}
	if (strncmp(p, "crash", 5) == 0) {
		e->action = FPA_CRASH;
		p += 5;
	} else if (strncmp(p, "error", 5) == 0) {
		e->action = FPA_ERROR;
		p += 5;
	} else if (strncmp(p, "drop", 4) == 0) {
		e->action = FPA_DROP;
		p += 4;
	} else if (strncmp(p, "pause", 5) == 0) {
		e->action = FPA_PAUSE;
		p += 5;
	} else if (strncmp(p, "exit", 4) == 0) {
		e->action = FPA_EXIT;
		p += 4;
		if (fp_call(&p, 255, &e->arg) < 0)
			return -1;
	} else if (strncmp(p, "sleep", 5) == 0) {
		e->action = FPA_SLEEP;
		p += 5;
		if (fp_call(&p, INT_MAX, &e->arg) < 0)
			return -1;
	} else
		return -1;
	fp_skipws(&p);
	if (*p != '\0')
		return -1;
	switch (e->action) {
	case FPA_EXIT: snprintf(e->text, sizeof(e->text), "exit(%ld)", e->arg); break;
	case FPA_SLEEP: snprintf(e->text, sizeof(e->text), "sleep(%ld)", e->arg); break;
	default:
		snprintf(e->text, sizeof(e->text), "%s",
			 e->action == FPA_CRASH   ? "crash"
			 : e->action == FPA_ERROR ? "error"
			 : e->action == FPA_DROP  ? "drop"
						  : "pause");
	}
	return 0;
}

/* Copies [a, b) with surrounding whitespace removed into buf. */
static void
fp_trim(const char *a, const char *b, char *buf, size_t n)
{
	size_t len;

	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	len = (size_t)(b - a);
	if (len >= n)
		len = n - 1;
	memcpy(buf, a, len);
	buf[len] = '\0';
}

int
fp_init(const char *spec, const char *home, char *err, size_t errlen)
{
	struct fp_entry parsed[FP_MAX];
	const char *p, *semi, *eq;
	char name[128], action[128];
	int n = 0, i;

	fp_reset();
	if (home != NULL)
		snprintf(fp_home, sizeof(fp_home), "%s", home);
	if (spec == NULL)
		return 0;
	memset(parsed, 0, sizeof(parsed));
	for (p = spec; *p != '\0'; p = *semi != '\0' ? semi + 1 : semi) {
		semi = strchr(p, ';');
		if (semi == NULL)
			semi = p + strlen(p);
		eq = memchr(p, '=', (size_t)(semi - p));
		fp_trim(p, eq != NULL ? eq : semi, name, sizeof(name));
		if (eq == NULL) {
			if (name[0] == '\0')
				continue; /* empty entry, e.g. a trailing ';' */
			snprintf(err, errlen, "failpoint \"%s\": missing \"=action\"", name);
			return -1;
		}
		if (name[0] == '\0') {
			snprintf(err, errlen, "failpoint entry without a name");
			return -1;
		}
		if (n == FP_MAX) {
			snprintf(err, errlen, "too many failpoints (at most %d)", FP_MAX);
			return -1;
		}
		parsed[n].name = fp_lookup(name, strlen(name));
		if (parsed[n].name == NULL) {
			snprintf(err, errlen, "unknown failpoint \"%s\"", name);
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (parsed[i].name == parsed[n].name) {
				snprintf(err, errlen, "failpoint %s armed twice", name);
				return -1;
			}
		}
		fp_trim(eq + 1, semi, action, sizeof(action));
		if (fp_parse_action(action, &parsed[n]) < 0) {
			snprintf(err, errlen, "failpoint %s: bad action \"%s\"", name, action);
			return -1;
		}
		if (parsed[n].action == FPA_PAUSE && fp_home[0] == '\0') {
			snprintf(err, errlen, "failpoint %s: pause needs a home directory", name);
			return -1;
		}
		n++;
	}
	memcpy(fp_entries, parsed, sizeof(parsed));
	atomic_store(&fp_count, n);
	return 0;
}

int
fp_init_env(const char *home, char *err, size_t errlen)
{
	return fp_init(getenv("BERTH_FAILPOINTS"), home, err, errlen);
}

static void
fp_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Announces the pause with <name>.reached and waits for <name>.release.
 * The release is consumed together with the announcement, so a point armed
 * to pause more than once blocks again at its next hit and a test can wait
 * for each hit in turn.
 */
static void
fp_pause(const char *name)
{
	char dir[PATH_MAX + 16], reached[PATH_MAX + 128], release[PATH_MAX + 128], pid[32];
	int fd, n;

	snprintf(dir, sizeof(dir), "%s/failpoints", fp_home);
	home_ensure(dir); /* logs; the create below reports what it means */
	snprintf(reached, sizeof(reached), "%s/%s.reached", dir, name);
	snprintf(release, sizeof(release), "%s/%s.release", dir, name);
	fd = open(reached, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("failpoint %s: create %s: %s", name, reached, strerror(errno));
	} else {
		n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (write(fd, pid, (size_t)n) < 0)
			log_warn("write %s: %s", reached, strerror(errno));
		close(fd);
	}
	while (access(release, F_OK) < 0)
		fp_sleep_ms(10);
	unlink(release);
	unlink(reached);
	log_warn("failpoint %s: released", name);
}

enum fp_result
fp_hit(const char *name)
{
	struct fp_entry *e = NULL;
	int i, n;
	long hit;

	n = atomic_load(&fp_count);
	if (n == 0)
		return FP_PASS;
	for (i = 0; i < n; i++) {
		if (strcmp(fp_entries[i].name, name) == 0) {
			e = &fp_entries[i];
			break;
		}
	}
	if (e == NULL) {
		if (fp_lookup(name, strlen(name)) == NULL)
			log_error("failpoint \"%s\" is not in the built-in list", name);
		return FP_PASS;
	}
	hit = atomic_fetch_add(&e->hits, 1) + 1;
	if (e->limit > 0 && hit > e->limit)
		return FP_PASS;

	/* Logged and observed before acting: crash and exit leave no later
	 * chance to say what happened. */
	log_warn("failpoint %s: %s (hit %ld)", e->name, e->text, hit);
	if (fp_obs != NULL)
		fp_obs(e->name, e->text);
	switch (e->action) {
	case FPA_CRASH: kill(getpid(), SIGKILL); _exit(128 + SIGKILL);
	case FPA_EXIT: _exit((int)e->arg);
	case FPA_SLEEP: fp_sleep_ms(e->arg); return FP_PASS;
	case FPA_ERROR: return FP_ERROR;
	case FPA_DROP: return FP_DROP;
	case FPA_PAUSE: fp_pause(e->name); return FP_PASS;
	}
	return FP_PASS;
}

int
fp_armed(const char *name)
{
	int i, n = atomic_load(&fp_count);

	for (i = 0; i < n; i++)
		if (strcmp(fp_entries[i].name, name) == 0)
			return fp_entries[i].limit == 0 ||
			       atomic_load(&fp_entries[i].hits) < fp_entries[i].limit;
	return 0;
}

int
fp_skip(const char *name, const char *what)
{
	if (fp_hit(name) == FP_PASS)
		return 0;
	log_warn("failpoint %s: %s", name, what);
	return 1;
}
