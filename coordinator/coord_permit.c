/*
 * The authority check of the transaction (DESIGN §1): may this caller send
 * this verb, in this role, as this instance. Apart from coord_exec.c so
 * who may ask what reads in one place; on the same floor and called only
 * by it (coord_exec_int.h).
 */
#include <string.h>

#include "coord_caller.h"
#include "coord_ctx.h"
#include "coord_db.h"
#include "coord_exec_int.h"
#include "coord_reply.h"
#include "coord_verbs.h"
#include "log.h"

/* An actor's instance is its process's: the one it said hello with. 1 the
 * caller's process said hello as req's instance (for hello itself: the
 * identity it gives is its own), 0 not, -1 on error. */
static int
exec_bound(struct coord_ctx *c)
{
	static const char sql[] = "SELECT pid, start_time FROM actors WHERE instance = ?";
	const struct coord_caller *who = c->caller;
	const Berth__Ident *id;
	struct coord_st *st;
	int64_t pid = 0, start = 0;
	int rc;

	if (c->req->verb_case == BERTH__REQUEST__VERB_HELLO) {
		id = c->req->hello != NULL ? c->req->hello->ident : NULL;
		return id != NULL && id->pid == who->pid && id->start_time == who->start_time;
	}
	if ((st = coord_db_q(c->db, sql, "t", c->req->instance)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		pid = coord_db_i64(st, 0);
		start = coord_db_i64(st, 1);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	return rc == 1 && pid == who->pid && (uint64_t)start == who->start_time;
}

/*
 * Who may ask what (DESIGN §1): the verb's row names the caller classes
 * and actor roles that may send it. A verified actor acts in its own role,
 * under the name of that role and the instance it said hello with; the
 * coordinator's own process and a harness (every role) act in the role
 * their actor name gives, or in every role for another name. A fused verb
 * is judged by its own row, as if sent alone. 1 permitted (c->roles set),
 * 0 denied not_permitted (c->reply set: traced, never stored, nothing
 * changed), -1 on error.
 */
int
exec_permitted(struct coord_ctx *c, const struct coord_verb *v)
{
	const struct coord_caller *who = c->caller;
	unsigned named = coord_role_of(c->req->actor);
	const char *why = NULL;
	int rc;

	if (who == NULL || (who->cls == CALLER_ACTOR && who->roles == ROLE_ANY)) {
		/* Trusted with every verb; in the role its name gives, the
		 * verb's row still applies (so in-process tests keep the
		 * rules), another name acts in every role. */
		c->roles = named != 0 ? named : ROLE_ANY;
		if (named == 0 || (v->roles & named) != 0 || (v->callers & CALLER_ACTOR) == 0)
			return 1;
		why = "role";
		goto deny;
	}
	c->roles = who->cls == CALLER_ACTOR ? who->roles : 0;
	if ((v->callers & who->cls) == 0)
		why = "class";
	else if (who->cls == CALLER_ACTOR && (v->roles & who->roles) == 0)
		why = "role";
	else if (who->cls == CALLER_ACTOR && named != who->roles)
		why = "name";
	else if (who->cls == CALLER_ACTOR) {
		if ((rc = exec_bound(c)) < 0)
			return -1;
		if (rc == 0)
			why = "instance";
	}
	if (why == NULL)
		return 1;
deny:
	log_warn("not permitted: %s from %s pid %d (as %s %s): %s", v->name,
		 who != NULL ? who->what : "coordinator", who != NULL ? (int)who->pid : 0,
		 c->req->actor, c->req->instance,
		 strcmp(why, "class") == 0  ? "not a verb of its class"
		 : strcmp(why, "role") == 0 ? "not a verb of its role"
		 : strcmp(why, "name") == 0 ? "it names another actor"
					    : "not the instance its process said hello with");
	coord_reply_deny(c, "not_permitted", "verb", v->name, "caller",
			 who != NULL ? who->what : "coordinator", "why", why, NULL);
	return 0;
}
