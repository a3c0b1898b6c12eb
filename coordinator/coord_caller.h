#ifndef BERTH_COORD_CALLER_H
#define BERTH_COORD_CALLER_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpc.h"

/*
 * Who is asking (DESIGN §1 "Who may ask what"). The coordinator decides a
 * request's caller class from the connection it came on and from the
 * peer's credentials the kernel recorded for that connection, never from
 * the `actor` name the request claims:
 *
 *	worker.sock                             -> worker   (worker verbs only)
 *	coordinator.sock, a group actor         -> actor    (its own role)
 *	coordinator.sock, anything else         -> operator
 *
 * A group actor is a process running one of the group's actor executables
 * (berth-supervisor, berth-recovery, berth-reaper, found in the
 * coordinator's own directory) whose parent is the process that started the
 * coordinator (the launcher's monitor, or a test harness). A job is never
 * that: its parent is its shim, or the shim's subreaper chain. Two more
 * callers count as actors of every role: the coordinator's own process (a
 * test that runs the server in-process) and an executable named with
 * --allow-actor-exe, run by the same parent (benchmarks that play the
 * actors; only whoever starts the coordinator can name one).
 */

enum coord_class {
	CALLER_OPERATOR = 1 << 0,
	CALLER_WORKER = 1 << 1,
	CALLER_ACTOR = 1 << 2,
};

enum coord_role {
	ROLE_SUPERVISOR = 1 << 0,
	ROLE_RECOVERY = 1 << 1,
	ROLE_REAPER = 1 << 2,
	ROLE_ANY = ROLE_SUPERVISOR | ROLE_RECOVERY | ROLE_REAPER,
};

struct coord_caller {
	enum coord_class cls;
	unsigned roles;      /* for actors: the roles it may act in */
	int verified;        /* the peer's process was read and matched */
	pid_t pid;           /* 0 when the transport reported no peer */
	uint64_t start_time; /* field 22 of /proc/<pid>/stat, 0 unknown */
	uid_t uid;
	char what[48]; /* "supervisor", "operator", "worker", ...: for denials */
};

struct coord_callers;

/* proc_root is /proc (tests point it elsewhere); the executables named in
 * extra (may be NULL) count as actors of every role when their parent is
 * the coordinator's. NULL on failure (logged). */
struct coord_callers *coord_callers_new(const char *proc_root, const char *const *extra,
					int nextra);
void coord_callers_free(struct coord_callers *cc);

/* Classifies the sender of a request that came through a worker listener
 * (worker != 0) or the operator/actor one, on connection pipe. The answer
 * is kept per connection: a connection's peer never changes. */
void coord_callers_classify(struct coord_callers *cc, int worker, const struct rpc_peer *peer,
			    uint32_t pipe, struct coord_caller *out);

/* The sender a stored reply belongs to (DESIGN §5): the caller's class and
 * its process (pid and start time), "self" for the coordinator's own
 * process (c NULL: a request executed in-process). A replay is answered
 * only to the same sender; a process's restart is another. */
#define COORD_SENDER_MAX 64
void coord_caller_sender(const struct coord_caller *c, char *buf, size_t n);

/* "actor", "operator" or "worker". */
const char *coord_class_name(enum coord_class c);
/* The role an actor's name stands for ("supervisor" -> ROLE_SUPERVISOR),
 * 0 for any other name. */
unsigned coord_role_of(const char *actor);

#endif
