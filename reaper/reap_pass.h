#ifndef BERTH_REAP_PASS_H
#define BERTH_REAP_PASS_H
#include <stddef.h>
#include <stdint.h>
#include "rpc.h"

/* One reaper tick (DESIGN §7): scan, then stop requests, timeouts,
 * straggler groups, run data past retention, and stale seats. The reaper
 * remembers only when it sent SIGTERM to which run (for the grace period);
 * after a restart it simply starts the grace period again. */

struct reap;

struct reap_opts {
	const char *home;
	int64_t grace_ms;     /* SIGTERM -> SIGKILL */
	int64_t retention_ms; /* run data kept this long after settlement */
	int64_t window_ms;    /* settled runs looked at for stragglers */
	int rpc_timeout_ms;
};

struct reap_stats {
	int scanned;
	int signalled;
	int settled;
	int removed;
	int seats_reaped;
};

struct reap *reap_new(const struct reap_opts *o, struct rpc_client *c);
void reap_free(struct reap *r);
int reap_hello(struct reap *r);
/* 0; -1 when the scan failed (logged; the next tick tries again); -2 when
 * the coordinator refused one of our requests as malformed (rpc_pass.h: our
 * bug, the actor exits for the launcher to restart it). */
int reap_pass(struct reap *r, struct reap_stats *st);

/* Removes runs/<run>/ of home and the files in it. 0 when it is gone (or
 * never existed), -1 on failure (logged). run must be a plain id. */
int reap_data_remove(const char *home, const char *run);
/* 1 when s looks like a run id: hex digits only, 1..64 of them. */
int reap_run_id_valid(const char *s);

/* The retention watermark on disk, <home>/reaper/retention (reap_mark.c).
 * load: the persisted wall time, or 0 ("from the beginning") when the file
 * is missing, empty, unreadable or garbled (the last two logged). save:
 * written atomically (temp file, fsync, rename, directory fsync); 0 or -1
 * (logged). */
int reap_mark_path(const char *home, char *buf, size_t n);
int64_t reap_mark_load(const char *home);
int reap_mark_save(const char *home, int64_t ms);

#endif
