/*
 * Isolation of a job from berth's own state (DESIGN §6, docs/THREATS.md).
 *
 * A job runs as the user who queued it, so without isolation it can open
 * $BERTH_HOME directly: read every run's output, edit berth.db, talk to
 * coordinator.sock as an operator. Here the job gets its own view of the
 * file system in which the home is an empty directory holding only
 * worker.sock, through which its worker verbs (progress, note, ...) still
 * reach the coordinator with its own token.
 *
 * Why each step is there:
 *  - CLONE_NEWUSER makes the rest possible without privilege; the uid and
 *    gid are mapped to themselves, so files keep their owners and the job
 *    its identity.
 *  - CLONE_NEWNS with every mount made private: what we mount here never
 *    propagates back to the user's namespace.
 *  - A tmpfs over the home's realpath (every spelling of the path leads to
 *    it), remounted read-only once worker.sock is bound in.
 *  - A fresh /dev/shm: the group's status board and trace ring live there.
 *  - No capabilities: the process that made the namespaces has all of
 *    them in it until exec, and a job running as root in it would keep
 *    them across exec and could unmount the tmpfs; emptying the bounding
 *    and ambient sets leaves it none. A namespace the job makes for itself
 *    later copies our mounts locked together: it cannot take them apart
 *    either.
 *  - Processes outside are not reachable through /proc/<pid>/root or
 *    ptrace: both need capabilities in the outer namespace, which the job
 *    never has. Signals still reach them (same uid): see docs/THREATS.md.
 * Every step that fails fails the whole: the job is never run with less
 * isolation than it asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "failpoint.h"
#include "shim_iso.h"

int
shim_iso_prepare(struct shim_iso *iso, const char *home, char *why, size_t n)
{
	if (realpath(home, iso->home) == NULL) {
		snprintf(why, n, "isolation: realpath %s: %s; the job was not run", home,
			 strerror(errno));
		return -1;
	}
	if (getcwd(iso->cwd, sizeof(iso->cwd)) == NULL)
		snprintf(iso->cwd, sizeof(iso->cwd), "/");
	iso->uid = geteuid();
	iso->gid = getegid();
	return 0;
}

/* Writes s to a /proc file of this process; -1 with errno. */
static int
iso_write(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd, err;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write(fd, s, len) != (ssize_t)len) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return close(fd);
}

/* One line of the sysctl at path, or "" when it cannot be read. */
static void
iso_sysctl(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)n, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Why unprivileged user namespaces are missing, as far as we can tell. */
static const char *
iso_hint(void)
{
	char v[32];

	iso_sysctl("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v));
	if (strcmp(v, "0") == 0)
		return "kernel.unprivileged_userns_clone is 0";
	iso_sysctl("/proc/sys/user/max_user_namespaces", v, sizeof(v));
	if (strcmp(v, "0") == 0)
		return "user.max_user_namespaces is 0";
	iso_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof(v));
	if (strcmp(v, "1") == 0)
		return "kernel.apparmor_restrict_unprivileged_userns is 1";
	return "the kernel, a seccomp profile or a security module refuses them";
}

/* The message for a failed step; always -1. */
static int
iso_fail(char *why, size_t n, const char *step, const char *arg, int err, int userns)
{
	snprintf(why, n, "isolation: %s%s%s: %s%s%s%s; the job was not run", step, arg ? " " : "",
		 arg ? arg : "", strerror(err),
		 userns ? " (unprivileged user namespaces are not "
			  "available here: "
			: "",
		 userns ? iso_hint() : "", userns ? ")" : "");
	return -1;
}

/* Empties the bounding and ambient capability sets (see the top). */
static int
iso_drop_caps(void)
{
	char v[16];
	int cap, last = 63;

	iso_sysctl("/proc/sys/kernel/cap_last_cap", v, sizeof(v));
	if (v[0] != '\0')
		last = atoi(v);
	for (cap = 0; cap <= last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 && errno != EINVAL)
			return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		return -1;
	return 0;
}

int
shim_iso_enter(const struct shim_iso *iso, char *why, size_t n)
{
	char map[64], sock[PATH_MAX + 16], src[64];
	const unsigned long ro =
		MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	struct stat st;
	int fd;

	if (fp_hit("shim.unshare") == FP_ERROR)
		return iso_fail(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS)", "(failpoint)", EPERM,
				1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		return iso_fail(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS)", NULL, errno, 1);
	/* Unprivileged, a namespace may map only the creator's own ids, and
	 * its gid only once setgroups is denied. */
	if (iso_write("/proc/self/setgroups", "deny") == -1 && errno != ENOENT)
		return iso_fail(why, n, "write", "/proc/self/setgroups", errno, 1);
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)iso->uid, (unsigned)iso->uid);
	if (iso_write("/proc/self/uid_map", map) == -1)
		return iso_fail(why, n, "write", "/proc/self/uid_map", errno, 1);
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)iso->gid, (unsigned)iso->gid);
	if (iso_write("/proc/self/gid_map", map) == -1)
		return iso_fail(why, n, "write", "/proc/self/gid_map", errno, 1);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return iso_fail(why, n, "mount --make-rprivate", "/", errno, 1);

	/* The real worker.sock, taken while it is still in view: a bind's
	 * source must be a path of this namespace, so it is opened here. Only
	 * a socket itself is bound: a symlink or a file planted under that
	 * name (by a job that was not isolated) would show the job whatever
	 * it points to. */
	snprintf(sock, sizeof(sock), "%s/worker.sock", iso->home);
	fd = open(sock, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	if (mount("tmpfs", iso->home, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700,size=16k,nr_inodes=16") == -1)
		return iso_fail(why, n, "mount tmpfs on", iso->home, errno, 1);
	if (fd != -1) {
		int t = open(sock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (t == -1)
			return iso_fail(why, n, "create", sock, errno, 0);
		close(t);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
		if (mount(src, sock, NULL, MS_BIND, NULL) == -1)
			return iso_fail(why, n, "bind worker.sock on", sock, errno, 0);
		close(fd);
	}
	if (mount(NULL, iso->home, NULL, ro, NULL) == -1)
		return iso_fail(why, n, "remount read-only", iso->home, errno, 0);
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == -1)
		return iso_fail(why, n, "mount tmpfs on", "/dev/shm", errno, 0);
	if (iso_drop_caps() == -1)
		return iso_fail(why, n, "drop capabilities", NULL, errno, 0);
	/* The cwd may be a directory the mounts now hide: enter it again by
	 * its path (the workdir, if any, is entered after this). */
	if (chdir(iso->cwd) == -1)
		return iso_fail(why, n, "chdir", iso->cwd, errno, 0);
	return 0;
}
