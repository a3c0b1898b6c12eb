/*
 * Process identity: (boot id, pid, start time, process group).
 *
 * A pid alone names nothing durable: pids are reused, and a pid recorded
 * before a reboot names a stranger after it. So a recorded process is alive
 * only when the boot id is the current one and the pid's start time (field
 * 22 of /proc/<pid>/stat, in clock ticks since boot) is the recorded one.
 * A process group is signalled only under that same check, because a group
 * id is a pid and is reused with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ident.h"
#include "log.h"

static char ident_root[PATH_MAX] = "/proc";

void
ident_set_proc_root(const char *root)
{
	snprintf(ident_root, sizeof(ident_root), "%s", root != NULL ? root : "/proc");
}

/* Reads a small file whole. Returns its length or -errno. */
static ssize_t
ident_slurp(const char *path, char *buf, size_t n)
{
	ssize_t r;
	size_t got = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < n - 1) {
		r = read(fd, buf + got, n - 1 - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			return -err;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

int
ident_boot_id(char out[40])
{
	char path[PATH_MAX + 32], buf[128];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", ident_root);
	n = ident_slurp(path, buf, sizeof(buf));
	if (n < 0) {
		log_warn("read %s: %s", path, strerror((int)-n));
		return (int)n;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (n == 0 || n >= 40) {
		log_warn("%s: not a boot id", path);
		return -EINVAL;
	}
	memcpy(out, buf, (size_t)n + 1);
	return 0;
}

/* Fields after the comm, counted from field 3 (state) as token 1: the comm
 * is in parentheses and may itself hold spaces and ')', so parsing starts
 * after the last ')' on the line. */
static int
ident_parse(const char *buf, char *state, uint64_t *start_time, pid_t *pgid)
{
	const char *p;
	char *end;
	unsigned long long v;
	long long g = 0;
	int tok;

	p = strrchr(buf, ')');
	if (p == NULL)
		return -EINVAL;
	p++;
	for (tok = 1; tok <= 20; tok++) {
		if (*p != ' ')
			return -EINVAL;
		while (*p == ' ')
			p++;
		if (*p == '\0' || *p == '\n')
			return -EINVAL;
		if (tok == 1) {
			if (state != NULL)
				*state = *p;
			while (*p != ' ' && *p != '\0')
				p++;
			continue;
		}
		errno = 0;
		if (tok == 3) {
			g = strtoll(p, &end, 10);
			if (errno != 0 || end == p || g <= 0 || g > INT_MAX)
				return -EINVAL;
		} else if (tok == 20) {
			if (*p == '-')
				return -EINVAL;
			v = strtoull(p, &end, 10);
			if (errno != 0 || end == p)
				return -EINVAL;
			if (*end != ' ' && *end != '\n' && *end != '\0')
				return -EINVAL;
			*start_time = v;
			*pgid = (pid_t)g;
			return 0;
		} else {
			/* Other fields are skipped but must be numbers. */
			strtoll(p, &end, 10);
			if (end == p)
				return -EINVAL;
		}
		p = end;
	}
	return -EINVAL;
}

int
ident_parse_stat(const char *buf, uint64_t *start_time, pid_t *pgid)
{
	return ident_parse(buf, NULL, start_time, pgid);
}

/* Reads pid's stat. -ESRCH when the pid does not exist (also when it exits
 * while being read), other -errno when it exists but cannot be read. */
static int
ident_probe(pid_t pid, char *state, uint64_t *start_time, pid_t *pgid)
{
	char path[PATH_MAX + 32], buf[4096];
	ssize_t n;
	int r;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "%s/%d/stat", ident_root, (int)pid);
	n = ident_slurp(path, buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH)
		return -ESRCH;
	if (n < 0)
		return (int)n;
	r = ident_parse(buf, state, start_time, pgid);
	if (r < 0)
		log_warn("%s: cannot parse", path);
	return r;
}

int
ident_read(pid_t pid, struct ident *out)
{
	struct ident id;
	int r;

	memset(&id, 0, sizeof(id));
	id.pid = pid;
	r = ident_probe(pid, NULL, &id.start_time, &id.pgid);
	if (r < 0)
		return r;
	r = ident_boot_id(id.boot_id);
	if (r < 0)
		return r;
	*out = id;
	return 0;
}

int
ident_self(struct ident *out)
{
	return ident_read(getpid(), out);
}

/*
 * Where the recorded process stands. The boot id is compared first: after a
 * reboot the pid may exist again with any start time, and it is never the
 * recorded process. On IDENT_MATCHES the live state and group are returned.
 */
static enum ident_status
ident_locate(const struct ident *rec, char *state, pid_t *live_pgid, int *err)
{
	char boot[40];
	uint64_t st;
	int r;

	*err = -ESRCH;
	if (rec->pid <= 0)
		return IDENT_GONE;
	if ((r = ident_boot_id(boot)) < 0) {
		*err = r;
		return IDENT_UNVERIFIABLE;
	}
	if (rec->boot_id[0] != '\0' && strcmp(rec->boot_id, boot) != 0)
		return IDENT_GONE;
	r = ident_probe(rec->pid, state, &st, live_pgid);
	if (r == -ESRCH)
		return IDENT_GONE;
	if (r < 0) {
		*err = r;
		return IDENT_UNVERIFIABLE;
	}
	if (st != rec->start_time)
		return IDENT_GONE;
	return IDENT_MATCHES;
}

/* A zombie has ended (only its exit status remains to be collected), so it
 * is GONE; this matters where nobody reaps orphans, e.g. under a container's
 * pid 1 that does not wait for them. */
enum ident_status
ident_check(const struct ident *recorded)
{
	enum ident_status s;
	char state = '?';
	pid_t pg;
	int err;

	s = ident_locate(recorded, &state, &pg, &err);
	if (s == IDENT_MATCHES && (state == 'Z' || state == 'X'))
		return IDENT_GONE;
	return s;
}

/*
 * Signals -pgid only while the leader's identity matches. A zombie leader
 * still holds its pid, so its group id cannot have been reused and the
 * stragglers left in the group may still be signalled. The group signalled
 * is the recorded one, and only while the live leader still leads it.
 */
int
ident_kill_group(const struct ident *leader, int sig)
{
	enum ident_status s;
	pid_t pgid, live_pgid = 0;
	char state;
	int err;

	pgid = leader->pgid > 0 ? leader->pgid : leader->pid;
	if (pgid <= 1) {
		log_error("refusing to signal process group %d", (int)pgid);
		return -EINVAL;
	}
	s = ident_locate(leader, &state, &live_pgid, &err);
	if (s == IDENT_GONE)
		return -ESRCH;
	if (s == IDENT_UNVERIFIABLE) {
		log_warn("pid %d: identity unverifiable (%s), group %d not signalled",
		    (int)leader->pid, strerror(-err), (int)pgid);
		return err;
	}
	if (live_pgid != pgid) {
		log_warn("pid %d now leads group %d, not %d: not signalled",
		    (int)leader->pid, (int)live_pgid, (int)pgid);
		return -ESRCH;
	}
	if (kill(-pgid, sig) < 0) {
		err = errno;
		if (err != ESRCH)
			log_warn("kill(-%d, %d): %s", (int)pgid, sig, strerror(err));
		return -err;
	}
	return 0;
}

int
ident_group_alive(pid_t pgid)
{
	if (pgid <= 1)
		return 0;
	if (kill(-pgid, 0) == 0)
		return 1;
	return errno == EPERM;
}

const char *
ident_status_name(enum ident_status s)
{
	switch (s) {
	case IDENT_MATCHES:
		return "matches";
	case IDENT_GONE:
		return "gone";
	case IDENT_UNVERIFIABLE:
		return "unverifiable";
	}
	return "unknown";
}
