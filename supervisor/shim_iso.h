#ifndef BERTH_SHIM_ISO_H
#define BERTH_SHIM_ISO_H
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * An isolated job (berth add --isolate, DESIGN §6): the namespace the
 * shim's child enters between fork and exec. What is learnt before the
 * fork (shim_iso_prepare, in the shim) is only read after it
 * (shim_iso_enter, in the child, which then execs the job or exits).
 */
struct shim_iso {
	char home[PATH_MAX]; /* realpath of the home: what the tmpfs covers */
	char cwd[PATH_MAX];  /* where the job starts without a workdir */
	uid_t uid;           /* mapped to itself in the new namespace */
	gid_t gid;
};

/* In the shim, before the fork: -1 with why (a sentence) when the home
 * cannot be resolved. */
int shim_iso_prepare(struct shim_iso *iso, const char *home, char *why, size_t n);
/*
 * In the job's child: a new user and mount namespace (the caller's uid and
 * gid mapped to themselves, setgroups denied, every mount private) in which
 * the home is an empty read-only tmpfs holding only worker.sock (bound from
 * the real home's, if it has one), /dev/shm is a fresh tmpfs, and the job
 * keeps no capability (the bounding and ambient sets are emptied), so it can
 * neither see the home nor take the mounts away. 0, or -1 with why; the
 * caller must not exec the job then. The failpoint shim.unshare=error makes
 * the unshare itself fail (EPERM), to test that path.
 */
int shim_iso_enter(const struct shim_iso *iso, char *why, size_t n);

#endif
