#ifndef BERTH_ACTOR_H
#define BERTH_ACTOR_H
#include <stdint.h>

/* What every actor's main shares (STYLE.md "Signals never run logic", "One
 * loop, one blocking point"): its failpoints armed from the environment,
 * SIGTERM and SIGINT (and any other signal it handles) read from a
 * signalfd, and, for the actors that work in passes (recovery, the
 * reaper), the loop of ticks itself. */

/* Arms BERTH_FAILPOINTS for home (a bad spec is logged) and blocks SIGTERM,
 * SIGINT and the signals of extra (0-terminated, may be NULL), returning a
 * nonblocking signalfd for them. SIGPIPE is ignored: a write to a closed
 * pipe fails with EPIPE instead of killing the actor. -1 on failure
 * (logged); the caller exits 2 for bad failpoints (*usage set), else 1. */
int actor_init(const char *home, const int *extra, int *usage);

/* Reads every signal pending on sigfd. Returns 1 when SIGTERM or SIGINT
 * was among them (logged once: the actor stops), else 0; *chld (may be
 * NULL) is set when SIGCHLD was. */
int actor_signals_read(int sigfd, int *chld);

/* One tick of a pass actor: the milliseconds until the next tick, or -1
 * when the actor cannot go on and must exit non-zero for the launcher to
 * restart it. */
typedef int64_t (*actor_tick_fn)(void *arg);

/* Runs tick at once and then whenever its delay has passed, beating the
 * status board after each, and sleeps in poll() on sigfd in between.
 * Returns 0 after SIGTERM or SIGINT (between ticks; a tick in progress is
 * ended early by rpc_stop_signal_pending), -1 when a tick returned -1 or
 * poll failed (logged). */
int actor_tick_loop(int sigfd, actor_tick_fn tick, void *arg);

#endif
