/* The verb table: see coord_verbs.h. The one dispatch of the coordinator
 * (coord_exec.c) goes through it. */
#include <stdio.h>
#include <string.h>

#include "coord_claim.h"
#include "coord_edit.h"
#include "coord_group.h"
#include "coord_hosts.h"
#include "coord_moves.h"
#include "coord_runs.h"
#include "coord_seats.h"
#include "coord_tickets.h"
#include "coord_trace_log.h"
#include "coord_verbs.h"
#include "coord_worker.h"

#define VERB(v)  BERTH__REQUEST__VERB_##v
#define R        COORD_VERB_READS
#define M        COORD_VERB_MUTATES
#define P        COORD_VERB_PARKS
#define ACTOR    CALLER_ACTOR
#define OPERATOR CALLER_OPERATOR
#define WORKER   CALLER_WORKER
#define SUP      ROLE_SUPERVISOR
#define RCV      ROLE_RECOVERY
#define REAP     ROLE_REAPER

static const struct coord_verb verbs[] = {
	/* verb, name, handler, flags, caller classes, actor roles */
	{ VERB(CLAIM), "claim", coord_claim, M | P, ACTOR, SUP },
	{ VERB(START), "start", coord_runs_start, M, ACTOR, SUP },
	{ VERB(RENEW), "renew", coord_runs_renew, M, ACTOR, SUP },
	/* Recovery hands a live run to a live supervisor; a supervisor
	 * re-arms its own lapsed lease (only a run it owns, for itself: the
	 * handler refuses the rest). */
	{ VERB(READOPT), "readopt", coord_runs_readopt, M, ACTOR, SUP | RCV },
	{ VERB(RECORD_EXIT), "record_exit", coord_runs_record_exit, M, ACTOR, SUP | RCV },
	{ VERB(ABANDON), "abandon", coord_runs_abandon, M, ACTOR, SUP | RCV },
	{ VERB(SETTLE), "settle", coord_runs_settle, M, ACTOR, SUP | RCV | REAP },
	{ VERB(HELLO), "hello", coord_runs_hello, M, ACTOR, SUP | RCV | REAP },
	{ VERB(SCAN), "scan", coord_runs_scan, R, ACTOR, SUP | RCV | REAP },
	{ VERB(MARK_STOP), "mark_stop", coord_runs_mark_stop, M, ACTOR, REAP },
	{ VERB(SEAT_REAP), "seat_reap", coord_seats_reap, M, ACTOR, REAP },
	/* many hosts on one store (DESIGN §13): any host's recovery fences a
	 * host whose lease lapsed, and ends its runs. */
	{ VERB(HOSTS), "hosts", coord_hosts_list, R, ACTOR, RCV | SUP | REAP },
	{ VERB(HOST_LOST), "host_lost", coord_hosts_lost, M, ACTOR, RCV },
	{ VERB(LOSE), "lose", coord_runs_lose, M, ACTOR, RCV },

	{ VERB(ADD), "add", coord_tickets_add, M, OPERATOR, 0 },
	{ VERB(ADD_BATCH), "add_batch", coord_tickets_add_batch, M, OPERATOR, 0 },
	/* The reaper reads `list` too: where the retained history starts. */
	{ VERB(LIST), "list", coord_tickets_list, R, OPERATOR | ACTOR, REAP },
	{ VERB(SHOW), "show", coord_tickets_show, R, OPERATOR, 0 },
	{ VERB(HOLD), "hold", coord_tickets_hold, M, OPERATOR, 0 },
	{ VERB(RELEASE), "release", coord_tickets_release, M, OPERATOR, 0 },
	{ VERB(RETRY), "retry", coord_tickets_retry, M, OPERATOR, 0 },
	{ VERB(CANCEL), "cancel", coord_tickets_cancel, M, OPERATOR, 0 },
	{ VERB(STATUS), "status", coord_tickets_status, R, OPERATOR, 0 },
	{ VERB(EDIT), "edit", coord_edit_ticket, M, OPERATOR, 0 },
	{ VERB(REMOVE), "remove", coord_edit_remove, M, OPERATOR, 0 },
	{ VERB(CLEAN), "clean", coord_edit_clean, M, OPERATOR, 0 },
	/* Any host's berth trace reads every host's (DESIGN §13). */
	{ VERB(TRACE), "trace", coord_trace_read, R, OPERATOR, 0 },
	/* The supervisors learn what these set from the claim and renew
	 * replies (coord_settings.h): no verb of theirs is needed. */
	{ VERB(SLOTS), "slots", coord_group_slots, M, OPERATOR, 0 },
	{ VERB(PAUSE), "pause", coord_group_pause, M, OPERATOR, 0 },
	{ VERB(RESUME), "resume", coord_group_resume, M, OPERATOR, 0 },
	{ VERB(SEAT_ACQUIRE), "seat_acquire", coord_seats_acquire, M, OPERATOR, 0 },
	{ VERB(SEAT_RELEASE), "seat_release", coord_seats_release, M, OPERATOR, 0 },
	{ VERB(SEAT_FORCE_RELEASE), "seat_force_release", coord_seats_force_release, M, OPERATOR,
	  0 },
	{ VERB(SEAT_HEARTBEAT), "seat_heartbeat", coord_seats_heartbeat, M, OPERATOR, 0 },
	{ VERB(SEAT_STOP), "seat_stop", coord_seats_stop, M, OPERATOR, 0 },
	{ VERB(SEAT_ACTIVITY), "seat_activity", coord_seats_activity, M, OPERATOR, 0 },
	{ VERB(SEAT_LIST), "seat_list", coord_seats_list, R, OPERATOR, 0 },
	{ VERB(SEAT_SHOW), "seat_show", coord_seats_show, R, OPERATOR, 0 },
	{ VERB(SEAT_CONFIRM), "seat_confirm", coord_seats_confirm, M, OPERATOR, 0 },
	{ VERB(SEAT_CLEAR), "seat_clear", coord_seats_clear, M, OPERATOR, 0 },

	{ VERB(HEARTBEAT), "heartbeat", coord_worker_heartbeat, M, WORKER | OPERATOR, 0 },
	{ VERB(PROGRESS), "progress", coord_worker_progress, M, WORKER | OPERATOR, 0 },
	{ VERB(NOTE), "note", coord_worker_note, M, WORKER | OPERATOR, 0 },
	{ VERB(SHOULD_STOP), "should_stop", coord_worker_should_stop, R, WORKER | OPERATOR, 0 },
};

#define NVERBS (sizeof verbs / sizeof verbs[0])

const struct coord_verb *
coord_verb_find(Berth__Request__VerbCase verb)
{
	size_t i;

	for (i = 0; i < NVERBS; i++)
		if (verbs[i].verb == verb)
			return &verbs[i];
	return NULL;
}

const struct coord_verb *
coord_verb_row(size_t i)
{
	return i < NVERBS ? &verbs[i] : NULL;
}

const char *
coord_verb_name(const Berth__Request *req)
{
	const struct coord_verb *v;

	if (req == NULL || req->verb_case == BERTH__REQUEST__VERB__NOT_SET)
		return "none";
	return (v = coord_verb_find(req->verb_case)) != NULL ? v->name : "unknown";
}

/* Claim is the verb that parks, and only a claim for the next eligible
 * ticket waits: its nothing_due decided nothing, so it can be executed
 * again later (a claim of a named ticket is decided, and stored, at once). */
int64_t
coord_verb_wait_ms(const Berth__Request *req)
{
	const struct coord_verb *v = coord_verb_find(req->verb_case);
	const Berth__Claim *cl;

	if (v == NULL || !(v->flags & COORD_VERB_PARKS) || v->verb != VERB(CLAIM) ||
	    req->n_then > 0)
		return 0;
	cl = req->claim;
	if (cl == NULL || (cl->ticket != NULL && cl->ticket[0] != '\0'))
		return 0;
	return (int64_t)cl->wait_ms;
}

int
coord_verb_reads(const Berth__Request *req)
{
	const struct coord_verb *v = coord_verb_find(req->verb_case);

	return v != NULL && (v->flags & COORD_VERB_READS) && req->n_then == 0;
}

/* claim + Claim.shim: start the run the claim created, with that shim. */
static int
fuse_claim_start(const Berth__Request *head, const Berth__Reply *granted,
		 struct coord_verb_fusion *fz, char *err, size_t errlen)
{
	const Berth__Claim *cl = head->claim;

	if (cl == NULL || cl->shim == NULL)
		return 0;
	if (granted->granted == NULL ||
	    granted->granted->payload_case != BERTH__GRANTED__PAYLOAD_CLAIM ||
	    granted->granted->claim == NULL || granted->granted->claim->run_id == NULL) {
		snprintf(err, errlen, "the claim's grant names no run");
		return -1;
	}
	berth__start__init(&fz->start);
	fz->start.run_id = granted->granted->claim->run_id;
	fz->start.shim = cl->shim;
	fz->req.verb_case = VERB(START);
	fz->req.start = &fz->start;
	return 1;
}

/* record_exit + RecordExit.settle: settle the run whose exit it checkpointed. */
static int
fuse_exit_settle(const Berth__Request *head, const Berth__Reply *granted,
		 struct coord_verb_fusion *fz, char *err, size_t errlen)
{
	const Berth__RecordExit *re = head->record_exit;

	(void)granted;
	if (re == NULL || re->settle == NULL)
		return 0;
	fz->settle = *re->settle;
	fz->req.verb_case = VERB(SETTLE);
	fz->req.settle = &fz->settle;
	if (fz->settle.run_id != NULL && fz->settle.run_id[0] != '\0' &&
	    (re->run_id == NULL || strcmp(fz->settle.run_id, re->run_id) != 0)) {
		snprintf(err, errlen,
			 "the fused settle names run '%.40s', not the run of its record_exit",
			 fz->settle.run_id);
		return -1;
	}
	fz->settle.run_id = re->run_id;
	return 1;
}

/* One maker per FUSE line of proto/run_moves.def. */
static const struct {
	Berth__Request__VerbCase verb, then;
	int (*make)(const Berth__Request *, const Berth__Reply *, struct coord_verb_fusion *,
		    char *, size_t);
} fusions[] = {
	{ VERB(CLAIM), VERB(START), fuse_claim_start },
	{ VERB(RECORD_EXIT), VERB(SETTLE), fuse_exit_settle },
};

int
coord_verb_fuses(Berth__Request__VerbCase verb, Berth__Request__VerbCase then)
{
	size_t i;

	for (i = 0; i < sizeof fusions / sizeof fusions[0]; i++)
		if (fusions[i].verb == verb && fusions[i].then == then)
			return 1;
	return 0;
}

int
coord_verb_fused(const Berth__Request *head, const Berth__Reply *granted,
		 struct coord_verb_fusion *fz, char *err, size_t errlen)
{
	const struct coord_fuse *f = coord_moves_fuse(head->verb_case);
	size_t i;

	if (f == NULL || granted == NULL || granted->result_case != BERTH__REPLY__RESULT_GRANTED)
		return 0;
	for (i = 0; i < sizeof fusions / sizeof fusions[0]; i++) {
		if (fusions[i].verb != f->verb || fusions[i].then != f->then)
			continue;
		/* The sender's next request: its envelope, its request id
		 * (the fused verb has no stored reply of its own). */
		berth__request__init(&fz->req);
		fz->req.has_version = head->has_version;
		fz->req.version = head->version;
		fz->req.actor = head->actor;
		fz->req.instance = head->instance;
		fz->req.has_req_id = head->has_req_id;
		fz->req.req_id = head->req_id;
		fz->req.token = head->token;
		return fusions[i].make(head, granted, fz, err, errlen);
	}
	return 0;
}
