/*
 * Who is asking: the caller classes of DESIGN §1, derived from the socket a
 * request came on and the peer credentials of its connection (see
 * coord_caller.h for the rules). What is read of the peer: the executable
 * behind /proc/<pid>/exe, and from /proc/<pid>/stat its parent and its
 * start time. The pid is the one the kernel recorded when the peer
 * connected (SO_PEERCRED), so it names the process that opened the
 * connection; the verdict is kept for as long as the connection lasts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord_caller.h"
#include "log.h"

#define CC_CACHE     64 /* connections remembered; older ones are classified again */
#define CC_EXTRA_MAX 8

static const struct {
	const char *exe; /* basename in the coordinator's directory */
	const char *name;
	unsigned role;
} cc_actors[] = {
	{ "berth-supervisor", "supervisor", ROLE_SUPERVISOR },
	{ "berth-recovery", "recovery", ROLE_RECOVERY },
	{ "berth-reaper", "reaper", ROLE_REAPER },
};

struct cc_entry {
	uint32_t pipe;
	int worker;
	int used;
	uint64_t age;
	struct coord_caller caller;
};

struct coord_callers {
	char proc[PATH_MAX];
	char dir[PATH_MAX]; /* the coordinator's own directory */
	pid_t self;
	pid_t parent; /* who started the coordinator, when it was started */
	char *extra[CC_EXTRA_MAX];
	int nextra;
	uint64_t clock;
	struct cc_entry cache[CC_CACHE];
};

const char *
coord_class_name(enum coord_class c)
{
	switch (c) {
	case CALLER_ACTOR: return "actor";
	case CALLER_WORKER: return "worker";
	default: return "operator";
	}
}

unsigned
coord_role_of(const char *actor)
{
	size_t i;

	for (i = 0; actor != NULL && i < sizeof(cc_actors) / sizeof(cc_actors[0]); i++)
		if (strcmp(actor, cc_actors[i].name) == 0)
			return cc_actors[i].role;
	return 0;
}

/* readlink into buf, without the " (deleted)" the kernel appends to an
 * executable replaced on disk (a rebuild under a running group). */
static int
cc_readlink(const char *path, char *buf, size_t n)
{
	static const char deleted[] = " (deleted)";
	ssize_t len = readlink(path, buf, n - 1);
	size_t dl = sizeof(deleted) - 1;

	if (len < 0)
		return -errno;
	buf[len] = '\0';
	if ((size_t)len > dl && strcmp(buf + len - dl, deleted) == 0)
		buf[len - dl] = '\0';
	return 0;
}

/* The parent and the start time of pid, from its stat line (the command
 * may hold spaces and parentheses: fields are counted after the last ')').
 * 0, or -errno. */
static int
cc_stat(const struct coord_callers *cc, pid_t pid, pid_t *ppid, uint64_t *start)
{
	char path[PATH_MAX + 32], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "%s/%d/stat", cc->proc, (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -EINVAL;
	p++;
	/* Field 3 (state) follows the ')'; ppid is field 4, start time 22. */
	for (field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (field == 4)
			*ppid = (pid_t)strtol(p, &end, 10);
		else if (field == 22)
			*start = strtoull(p, &end, 10);
		else
			end = strchr(p, ' ');
		if (end == NULL || end == p)
			return -EINVAL;
		p = end;
	}
	return 0;
}

struct coord_callers *
coord_callers_new(const char *proc_root, const char *const *extra, int nextra)
{
	struct coord_callers *cc;
	char path[PATH_MAX + 16], *slash;
	int i;

	if ((cc = calloc(1, sizeof(*cc))) == NULL) {
		log_error("coord_caller: out of memory");
		return NULL;
	}
	snprintf(cc->proc, sizeof(cc->proc), "%s", proc_root != NULL ? proc_root : "/proc");
	cc->self = getpid();
	cc->parent = getppid();
	snprintf(path, sizeof(path), "%s/self/exe", cc->proc);
	if (cc_readlink(path, cc->dir, sizeof(cc->dir)) != 0 ||
	    (slash = strrchr(cc->dir, '/')) == NULL) {
		log_warn("coord_caller: cannot read %s: no process will be taken for an actor "
			 "by its executable",
			 path);
		cc->dir[0] = '\0';
	} else {
		*slash = '\0';
	}
	for (i = 0; extra != NULL && i < nextra && i < CC_EXTRA_MAX; i++) {
		if ((cc->extra[i] = strdup(extra[i])) == NULL) {
			coord_callers_free(cc);
			return NULL;
		}
		cc->nextra++;
	}
	return cc;
}

void
coord_callers_free(struct coord_callers *cc)
{
	int i;

	if (cc == NULL)
		return;
	for (i = 0; i < cc->nextra; i++)
		free(cc->extra[i]);
	free(cc);
}

/* The roles the executable exe gives its process, 0 for none; name gets
 * what the caller is taken for. */
static unsigned
cc_exe_roles(const struct coord_callers *cc, const char *exe, char *name, size_t n)
{
	const char *base = strrchr(exe, '/');
	size_t dl = strlen(cc->dir), i;
	int k;

	for (k = 0; k < cc->nextra; k++) {
		if (strcmp(exe, cc->extra[k]) == 0) {
			snprintf(name, n, "harness");
			return ROLE_ANY;
		}
	}
	if (base == NULL || dl == 0 || (size_t)(base - exe) != dl || strncmp(exe, cc->dir, dl) != 0)
		return 0;
	for (i = 0; i < sizeof(cc_actors) / sizeof(cc_actors[0]); i++) {
		if (strcmp(base + 1, cc_actors[i].exe) == 0) {
			snprintf(name, n, "%s", cc_actors[i].name);
			return cc_actors[i].role;
		}
	}
	return 0;
}

/* What the peer is, read from the world. */
static void
cc_read(const struct coord_callers *cc, const struct rpc_peer *peer, struct coord_caller *out)
{
	char path[PATH_MAX + 32], exe[PATH_MAX];
	pid_t ppid = 0;
	uint64_t start = 0;
	unsigned roles;

	out->cls = CALLER_OPERATOR;
	snprintf(out->what, sizeof(out->what), "operator");
	if (!peer->known || peer->pid <= 0)
		return;
	out->pid = peer->pid;
	out->uid = peer->uid;
	/* The start time names the process for its stored replies even when
	 * it is no actor; a process gone by now keeps 0. */
	if (cc_stat(cc, peer->pid, &ppid, &start) == 0)
		out->start_time = start;
	/* A user's own CLI, root's, or anything else is an operator; only
	 * a process of our own user can be one of the group's actors. */
	if (peer->uid != geteuid())
		return;
	if (peer->pid == cc->self) {
		out->cls = CALLER_ACTOR;
		out->roles = ROLE_ANY;
		out->verified = 1;
		snprintf(out->what, sizeof(out->what), "coordinator");
		return;
	}
	snprintf(path, sizeof(path), "%s/%d/exe", cc->proc, (int)peer->pid);
	if (cc_readlink(path, exe, sizeof(exe)) != 0)
		return;
	if ((roles = cc_exe_roles(cc, exe, out->what, sizeof(out->what))) == 0) {
		snprintf(out->what, sizeof(out->what), "operator");
		return;
	}
	/* The right executable; now the right parent. A coordinator whose
	 * starter is gone (reparented to init or a subreaper) knows of no
	 * siblings: every orphan shares that parent. */
	if (start == 0 || ppid != cc->parent || cc->parent <= 1 || getppid() != cc->parent) {
		log_warn("a %s process (pid %d) that the launcher did not start asked as an actor; "
			 "taken for an operator",
			 out->what, (int)peer->pid);
		snprintf(out->what, sizeof(out->what), "operator");
		return;
	}
	out->cls = CALLER_ACTOR;
	out->roles = roles;
	out->verified = 1;
}

void
coord_callers_classify(struct coord_callers *cc, int worker, const struct rpc_peer *peer,
		       uint32_t pipe, struct coord_caller *out)
{
	struct cc_entry *e, *victim = &cc->cache[0];
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < CC_CACHE; i++) {
		e = &cc->cache[i];
		if (e->used && e->pipe == pipe && e->worker == worker) {
			e->age = ++cc->clock;
			*out = e->caller;
			return;
		}
		if (!e->used || e->age < victim->age)
			victim = e;
	}
	if (worker) {
		pid_t ppid;
		uint64_t start = 0;

		out->cls = CALLER_WORKER;
		out->pid = peer->known ? peer->pid : 0;
		out->uid = peer->uid;
		if (out->pid > 0 && cc_stat(cc, out->pid, &ppid, &start) == 0)
			out->start_time = start;
		snprintf(out->what, sizeof(out->what), "worker");
	} else {
		cc_read(cc, peer, out);
	}
	victim->used = 1;
	victim->pipe = pipe;
	victim->worker = worker;
	victim->age = ++cc->clock;
	victim->caller = *out;
}

void
coord_caller_sender(const struct coord_caller *c, char *buf, size_t n)
{
	if (c == NULL)
		snprintf(buf, n, "self");
	else
		snprintf(buf, n, "%s:%d:%llu", coord_class_name(c->cls), (int)c->pid,
			 (unsigned long long)c->start_time);
}
