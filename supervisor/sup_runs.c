/*
 * The runs this supervisor watches: a list, looked up by run id (answers
 * from the coordinator) and by pid (reaped shims). What a run does is the
 * run table's business (sup_run.c, sup_act.c); this file only keeps them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sup_int.h"

const char *
sup_runs_name(const struct sup_run *r)
{
	return r->alias[0] ? r->alias : r->id;
}

struct sup_run *
sup_runs_find_id(struct sup *s, const char *id)
{
	struct sup_run *r;

	TAILQ_FOREACH(r, &s->runs, entry)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

struct sup_run *
sup_runs_find_pid(struct sup *s, pid_t pid)
{
	struct sup_run *r;

	TAILQ_FOREACH(r, &s->runs, entry)
		if (r->pid == pid)
			return r;
	return NULL;
}

int
sup_runs_busy(struct sup *s)
{
	struct sup_run *r;
	int n = 0;

	TAILQ_FOREACH(r, &s->runs, entry)
		n += sup_run_busy(r->state);
	return n;
}

struct sup_run *
sup_runs_new(struct sup *s, const char *id, const char *ticket, const char *alias,
	     enum sup_state state)
{
	struct sup_run *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("run %s: out of memory", id);
		return NULL;
	}
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->ticket, sizeof(r->ticket), "%s", ticket ? ticket : "");
	snprintf(r->alias, sizeof(r->alias), "%s", alias ? alias : "");
	r->state = state;
	r->pid = -1;
	r->pidfd = -1;
	r->go_fd = -1;
	TAILQ_INSERT_TAIL(&s->runs, r, entry);
	return r;
}

static void
sup_runs_release(struct sup_run *r)
{
	if (r->go_fd != -1)
		close(r->go_fd);
	if (r->pidfd != -1)
		close(r->pidfd);
	free(r->handoff);
	free(r);
}

void
sup_runs_forget(struct sup *s, struct sup_run *r)
{
	TAILQ_REMOVE(&s->runs, r, entry);
	if (r->pidfd != -1)
		s->pidfds--;
	sup_runs_release(r);
	/* A slot is free again; a coordinator that said slots_full may
	 * agree now. */
	s->claim_not_before = 0;
}

void
sup_runs_free(struct sup *s)
{
	struct sup_run *r;

	while ((r = TAILQ_FIRST(&s->runs)) != NULL) {
		TAILQ_REMOVE(&s->runs, r, entry);
		sup_runs_release(r);
	}
}

/*
 * `berth slots N` changes the slots of the running group (docs/CLI.md):
 * the coordinator keeps the number and enforces it in the claim guard, and
 * says it in every claim and renew reply. We follow, so a larger number is
 * used at once (a supervisor with every slot busy learns it from its
 * renewals), and a smaller one lets running jobs finish: nothing is
 * stopped, fewer are claimed.
 */
void
sup_runs_slots(struct sup *s, uint32_t slots)
{
	if (slots == 0 || (int)slots == s->slots)
		return;
	log_info("slots: %d -> %u (berth slots)", s->slots, slots);
	s->slots = (int)slots;
}
