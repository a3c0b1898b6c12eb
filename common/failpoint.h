#ifndef BERTH_FAILPOINT_H
#define BERTH_FAILPOINT_H
#include <stddef.h>

/* Failure injection (DESIGN §10). BERTH_FAILPOINTS="name=action[;...]",
 * actions: crash | exit(N) | sleep(MS) | error | drop | pause, optionally
 * prefixed "N*" (fires only the first N hits). Only names in the built-in
 * list (failpoint.c) are accepted: an unknown name or malformed action is a
 * startup error whose message names it. */

enum fp_result {
	FP_PASS = 0,  /* nothing armed, or the action already happened (sleep, pause) */
	FP_ERROR = 1, /* the caller fails the operation as if the system call had */
	FP_DROP = 2,  /* the caller loses the message */
};

/* Parses spec (may be NULL or empty). home is $BERTH_HOME, for pause files
 * ($home/failpoints/<name>.reached|.release). Returns 0, or -1 with a message
 * in err. */
int fp_init(const char *spec, const char *home, char *err, size_t errlen);
/* Convenience: fp_init(getenv("BERTH_FAILPOINTS"), home, ...) */
int fp_init_env(const char *home, char *err, size_t errlen);
/* Called at the point; crash and exit(N) do not return. */
enum fp_result fp_hit(const char *name);
/* For a point in front of an effect: 1 when the point fired error or drop,
 * so the effect (what, e.g. "start not sent") is not done now (logged), 0
 * to go on (nothing armed, or sleep and pause are over). */
int fp_skip(const char *name, const char *what);
/* 1 when the point is armed and has hits left: for code that has a path
 * without the window the point names, to take the path that has it. */
int fp_armed(const char *name);
/* Called after a fired failpoint to record it (e.g. in the trace ring). */
typedef void (*fp_observer)(const char *name, const char *action);
void fp_set_observer(fp_observer obs);
/* Disarms every point (the observer stays set). */
void fp_reset(void);
/* Notes: the observer is called before the action, so it also sees crash
 * and exit(N). A pause consumes its files when released: <name>.release and
 * <name>.reached are both removed, and the next hit pauses again. The same
 * name armed twice, a missing "=action", "0*" and a pause without home are
 * fp_init errors too. */

#endif
