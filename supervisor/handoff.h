#ifndef BERTH_HANDOFF_H
#define BERTH_HANDOFF_H
#include <stddef.h>

/*
 * The hand-off: what the supervisor writes on the go pipe of a shim it
 * spawned ahead of the claim (DESIGN §4 "One decision, fewer trips", §6),
 * once the fused claim has recorded the run running with that shim's
 * identity. It is the go and the run in one message; until it arrives the
 * shim knows no run, and a pipe that closes without it means no run.
 *
 *   "BHO1" | u32 length of the body (host order: one machine, one build)
 *   body: NUL-terminated strings
 *     run_id, workdir, isolate ("0"|"1"), argc, argv[0..argc),
 *     envc, env[0..envc)
 *
 * The body is bounded by what a ticket may carry (proto/berth_limits.h)
 * plus berth's own variables: HANDOFF_MAX.
 */

#define HANDOFF_MAGIC "BHO1"
#define HANDOFF_HDR   8
#define HANDOFF_MAX   (2 * 1024 * 1024)

struct handoff {
	char *run_id;
	char *workdir;
	int isolate;
	char **argv; /* NULL-terminated, pointing into buf */
	char **env;  /* NULL-terminated, pointing into buf */
	char *buf;   /* the body the strings live in */
};

/* The whole message (header and body) in *out (malloc'ed), its size in
 * *len. -1 with errno (EINVAL: nothing to run, E2BIG: over HANDOFF_MAX). */
int handoff_encode(const char *run_id, const char *workdir, int isolate, char *const *argv,
		   size_t argc, char *const *env, size_t envc, char **out, size_t *len);
/* Reads one message from fd (blocking). 1 with *h filled, 0 when the pipe
 * closed before a whole message (no run), -1 when what came is not one
 * (logged). */
int handoff_read(int fd, struct handoff *h);
/* Parses a body of len bytes (taking buf, malloc'ed, over): 0, or -1. */
int handoff_parse(char *buf, size_t len, struct handoff *h);
void handoff_free(struct handoff *h);

#endif
