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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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
ident_parse(const char *buf, struct ident_proc *out)
{
	const char *p;
	char *end;
	unsigned long long v;
	long long g;
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
			out->state = *p;
			while (*p != ' ' && *p != '\0')
				p++;
			continue;
		}
		errno = 0;
		if (tok >= 2 && tok <= 4) {
			/* ppid, pgrp, session: 0 for the kernel's own
			 * threads and a container's first process */
			g = strtoll(p, &end, 10);
			if (errno != 0 || end == p || g < 0 || g > INT_MAX)
				return -EINVAL;
			if (tok == 2)
				out->ppid = (pid_t)g;
			else if (tok == 3)
				out->pgid = (pid_t)g;
			else
				out->sid = (pid_t)g;
		} else if (tok == 20) {
			if (*p == '-')
				return -EINVAL;
			v = strtoull(p, &end, 10);
			if (errno != 0 || end == p)
				return -EINVAL;
			if (*end != ' ' && *end != '\n' && *end != '\0')
				return -EINVAL;
			out->start_time = v;
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
	struct ident_proc p;
	int r;

	if ((r = ident_parse(buf, &p)) < 0)
		return r;
	/* An identity names a process of a group (DESIGN §4). */
	if (p.pgid <= 0)
		return -EINVAL;
	*start_time = p.start_time;
	*pgid = p.pgid;
	return 0;
}

/* Reads pid's stat. -ESRCH when the pid does not exist (also when it exits
 * while being read), other -errno when it exists but cannot be read. */
static int
ident_probe(pid_t pid, struct ident_proc *out)
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
	memset(out, 0, sizeof(*out));
	out->pid = pid;
	r = ident_parse(buf, out);
	if (r < 0)
		log_warn("%s: cannot parse", path);
	return r;
}

int
ident_read(pid_t pid, struct ident *out)
{
	struct ident_proc p;
	struct ident id;
	int r;

	memset(&id, 0, sizeof(id));
	id.pid = pid;
	r = ident_probe(pid, &p);
	if (r < 0)
		return r;
	if (p.pgid <= 0)
		return -EINVAL;
	id.start_time = p.start_time;
	id.pgid = p.pgid;
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
ident_locate(const struct ident *rec, struct ident_proc *live, int *err)
{
	char boot[40];
	int r;

	*err = -ESRCH;
	memset(live, 0, sizeof(*live));
	if (rec->pid <= 0)
		return IDENT_GONE;
	if ((r = ident_boot_id(boot)) < 0) {
		*err = r;
		return IDENT_UNVERIFIABLE;
	}
	if (rec->boot_id[0] != '\0' && strcmp(rec->boot_id, boot) != 0)
		return IDENT_GONE;
	r = ident_probe(rec->pid, live);
	if (r == -ESRCH)
		return IDENT_GONE;
	if (r < 0) {
		*err = r;
		return IDENT_UNVERIFIABLE;
	}
	if (live->start_time != rec->start_time)
		return IDENT_GONE;
	return IDENT_MATCHES;
}

/* A zombie has ended (only its exit status remains to be collected), so it
 * is GONE; this matters where nobody reaps orphans, e.g. under a container's
 * pid 1 that does not wait for them. */
enum ident_status
ident_check(const struct ident *recorded)
{
	struct ident_proc live;
	enum ident_status s;
	int err;

	s = ident_locate(recorded, &live, &err);
	if (s == IDENT_MATCHES && (live.state == 'Z' || live.state == 'X'))
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
	struct ident_proc live;
	enum ident_status s;
	pid_t pgid, live_pgid;
	int err;

	pgid = leader->pgid > 0 ? leader->pgid : leader->pid;
	if (pgid <= 1) {
		log_error("refusing to signal process group %d", (int)pgid);
		return -EINVAL;
	}
	s = ident_locate(leader, &live, &err);
	live_pgid = live.pgid;
	if (s == IDENT_GONE)
		return -ESRCH;
	if (s == IDENT_UNVERIFIABLE) {
		log_warn("pid %d: identity unverifiable (%s), group %d not signalled",
			 (int)leader->pid, strerror(-err), (int)pgid);
		return err;
	}
	if (live_pgid != pgid) {
		log_warn("pid %d now leads group %d, not %d: not signalled", (int)leader->pid,
			 (int)live_pgid, (int)pgid);
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
ident_procs(struct ident_proc **out, size_t *n)
{
	struct ident_proc *v = NULL, *nv, p;
	char path[PATH_MAX + 16];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int err;

	*out = NULL;
	*n = 0;
	if ((d = opendir(ident_root)) == NULL) {
		err = errno;
		log_warn("opendir %s: %s", ident_root, strerror(err));
		return -err;
	}
	while ((de = readdir(d)) != NULL) {
		pid_t pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)strtol(de->d_name, NULL, 10);
		/* A process that ends while we look is simply not listed; one
		 * we cannot read is a failure of the whole walk: whoever asked
		 * must not take it for absent. */
		if ((err = ident_probe(pid, &p)) == -ESRCH)
			continue;
		if (err < 0) {
			snprintf(path, sizeof(path), "%s/%d/stat", ident_root, (int)pid);
			log_warn("%s: %s", path, strerror(-err));
			goto fail;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				err = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		v[(*n)++] = p;
	}
	closedir(d);
	*out = v;
	return 0;
fail:
	closedir(d);
	free(v);
	*n = 0;
	return err;
}

int
ident_kill_proc(const struct ident_proc *p, int sig)
{
	struct ident_proc now;
	int fd, rc, err;

	if (p->pid <= 1)
		return -EINVAL;
	/* With a pidfd held, the pid cannot change hands between the check
	 * and the signal. Without one (no descriptor left, an old kernel) the
	 * check is as close to the kill as it can be. */
	fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (fd == -1 && errno == ESRCH)
		return -ESRCH;
	rc = ident_probe(p->pid, &now);
	if (rc == 0 && now.start_time != p->start_time)
		rc = -ESRCH;
	if (rc == 0) {
		if (fd != -1)
			rc = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
		else
			rc = kill(p->pid, sig);
		rc = rc == -1 ? -errno : 0;
	}
	err = errno;
	if (fd != -1)
		close(fd);
	errno = err;
	return rc;
}

/* The live session leader: the recorded process, alive, leading its own
 * session. 0, -ESRCH (gone, or no longer a session leader), other -errno
 * (unverifiable). */
static int
ident_session_leader(const struct ident *leader)
{
	struct ident_proc live;
	enum ident_status s;
	int err;

	s = ident_locate(leader, &live, &err);
	if (s == IDENT_GONE)
		return -ESRCH;
	if (s == IDENT_UNVERIFIABLE)
		return err;
	if (live.sid != leader->pid)
		return -ESRCH;
	return 0;
}

int
ident_session_kill(const struct ident *leader, int sig)
{
	struct ident_proc *v;
	size_t n, i;
	int rc, found = 0;

	if (leader->pid <= 1) {
		log_error("refusing to signal the session of pid %d", (int)leader->pid);
		return -EINVAL;
	}
	if ((rc = ident_session_leader(leader)) < 0)
		return rc;
	if ((rc = ident_procs(&v, &n)) < 0)
		return rc;
	/*
	 * A session id is the pid of its leader, and the kernel does not hand
	 * out a pid while a session still uses it as its id: with the leader
	 * alive (checked above) every process listed with this sid is in the
	 * leader's session. Each is signalled by its own identity (the start
	 * time just read, ident_kill_proc), never the leader; one forked
	 * after the walk is found by the next call.
	 */
	for (i = 0; i < n; i++) {
		if (v[i].sid != leader->pid || v[i].pid == leader->pid || v[i].state == 'Z' ||
		    v[i].state == 'X')
			continue;
		found++;
		if ((rc = ident_kill_proc(&v[i], sig)) < 0 && rc != -ESRCH)
			log_warn("kill(%d, %d): %s", (int)v[i].pid, sig, strerror(-rc));
	}
	free(v);
	return found;
}

int
ident_session_alive(const struct ident *leader)
{
	struct ident_proc *v;
	size_t n, i;
	int rc, found = 0;

	if ((rc = ident_session_leader(leader)) < 0)
		return rc == -ESRCH ? 0 : rc;
	if ((rc = ident_procs(&v, &n)) < 0)
		return rc;
	for (i = 0; i < n && !found; i++)
		found = v[i].sid == leader->pid && v[i].pid != leader->pid && v[i].state != 'Z' &&
			v[i].state != 'X';
	free(v);
	return found;
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
	case IDENT_MATCHES: return "matches";
	case IDENT_GONE: return "gone";
	case IDENT_UNVERIFIABLE: return "unverifiable";
	}
	return "unknown";
}
