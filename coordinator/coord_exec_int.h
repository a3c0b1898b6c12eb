#ifndef BERTH_COORD_EXEC_INT_H
#define BERTH_COORD_EXEC_INT_H
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_exec.h"

/* Inside the transaction: what coord_exec.c, coord_stored.c and
 * coord_permit.c share. Not for any other file. */

struct coord_caller;
struct coord_ctx;
struct coord_db;
struct coord_verb;

/* coord_exec.c: the decision a reply says; one decision of res recorded. */
enum coord_decision exec_decision(const Berth__Reply *r);
struct coord_decided *exec_decided(struct coord_result *res, const Berth__Request *req,
				   const struct coord_caller *who, const char *verb,
				   enum coord_decision d, const char *reason, const char *ticket,
				   const char *run);

/* coord_stored.c: the stored reply of a repeat; the event row; the reply
 * packed, its event row and its stored copy; old stored replies dropped. */
int exec_replay(struct coord_ctx *c, const struct coord_verb *v, struct coord_result *res);
int exec_event(struct coord_ctx *c, const char *verb);
int exec_keep(struct coord_ctx *c, const struct coord_verb *v, int store, struct coord_result *res);
void exec_prune(struct coord_db *db, int64_t now);

/* coord_permit.c: who may ask what. */
int exec_permitted(struct coord_ctx *c, const struct coord_verb *v);

#endif
