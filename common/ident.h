#ifndef BERTH_IDENT_H
#define BERTH_IDENT_H
#include <stdint.h>
#include <sys/types.h>

/* Process identity (DESIGN §4): boot id, pid, start time (field 22 of
 * /proc/<pid>/stat, parsed after the last ')'), and process group. A pid alone
 * is never an identity: pids are reused. */
struct ident {
	char boot_id[40];
	pid_t pid;
	uint64_t start_time;
	pid_t pgid;
};

enum ident_status {
	IDENT_MATCHES,      /* the recorded process is alive */
	IDENT_GONE,         /* dead, reused pid, or another boot */
	IDENT_UNVERIFIABLE, /* exists but cannot be read: counts as alive */
};

/* One process as /proc/<pid>/stat shows it. */
struct ident_proc {
	pid_t pid;
	pid_t ppid;
	pid_t pgid;
	pid_t sid;
	char state; /* R S D Z X T ... */
	uint64_t start_time;
};

/* Tests point /proc and the boot id file elsewhere; NULL restores. */
void ident_set_proc_root(const char *root);
/* Reads /proc/sys/kernel/random/boot_id (without newline). */
int ident_boot_id(char out[40]);
/* Parses a /proc/<pid>/stat line: the comm may contain spaces and ')'. */
int ident_parse_stat(const char *buf, uint64_t *start_time, pid_t *pgid);
/* Reads a live process: 0, -ESRCH when it does not exist, other -errno when
 * it exists but cannot be read. */
int ident_read(pid_t pid, struct ident *out);
int ident_self(struct ident *out);
/* Compares a recorded identity with the world. A recorded empty boot_id
 * skips the boot comparison. A zombie (state Z or X) with the recorded start
 * time is GONE: it has ended, and under a pid 1 that does not reap orphans
 * it would otherwise look alive forever. */
enum ident_status ident_check(const struct ident *recorded);
/* Signals the group led by the recorded leader, only while the leader's
 * identity still matches: 0 signalled, -ESRCH gone/reused (not signalled),
 * -EPERM or other -errno on failure. An unverifiable leader is not signalled
 * (its read error is returned). A zombie leader with the recorded start time
 * still holds its pid, so its group is signalled. leader->pgid 0 means the
 * leader's pid; the live leader must still lead that group. pgid <= 1 is
 * refused with -EINVAL. */
int ident_kill_group(const struct ident *leader, int sig);
/* Every process of the system (the ident root's numbered entries), in
 * *out (malloc'd, *n of them). 0, or -errno when the walk cannot be made
 * whole (a stat that exists but cannot be read: no descriptors, ...): a
 * caller must never take an incomplete walk for an empty one. */
int ident_procs(struct ident_proc **out, size_t *n);
/* Signals one process listed by ident_procs, only while it is still that
 * process (its start time): through a pidfd, so the pid cannot change hands
 * in between (a plain kill right after the check when no pidfd can be had).
 * 0, -ESRCH when it is gone, other -errno. */
int ident_kill_proc(const struct ident_proc *p, int sig);
/* Signals every process of the session the recorded leader leads, except
 * the leader itself, only while the leader's identity matches and it still
 * leads its session (DESIGN §6: a shim leads its session; the job's group,
 * and every group the job makes without leaving the session, is in it).
 * Each process is signalled by its own identity (ident_kill_proc). How many processes were found (0: none left),
 * -ESRCH when the leader is gone or reused, other -errno when that cannot
 * be told (nothing signalled: treat as alive, try again later). */
int ident_session_kill(const struct ident *leader, int sig);
/* 1 when a process other than the leader is in its session, 0 when none
 * (or the leader is gone), -errno when that cannot be told. */
int ident_session_alive(const struct ident *leader);
/* 1 when any process is in group pgid (kill(-pgid, 0) succeeds). */
int ident_group_alive(pid_t pgid);
const char *ident_status_name(enum ident_status s);

#endif
