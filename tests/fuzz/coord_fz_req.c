/* The coordinator fuzz harness's requests (coord_fz.h): one request of a
 * random verb with random, sometimes missing, fields; the envelope; who it
 * comes from. Apart from coord_fz.c (the choices, the server's path and
 * the checks the sequence driver makes) so the generator reads alone; its
 * values are coord_fz_value.c's (coord_fz_int.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "coord_fz.h"
#include "coord_verbs.h"
#include "ident.h"
#include "rpc.h"
#include "coord_fz_int.h"

/* One request of a random verb with random (sometimes missing) fields. */
static void
any_verb(struct cfz *f, Berth__Request *q)
{
	const struct cfz_run *r = pick_run(f);

	if (r != NULL && cfz_rn(f, 2))
		q->token = cfz_str(f, cfz_rn(f, 4) ? r->token : pick_run(f)->token);
	else if (cfz_rn(f, 4) == 0)
		q->token = any_str(f);

	/* Now and then a well-formed next step of a known run, so runs get
	 * started, exit and settle (and tickets retry, repeat and finish). */
	if (r != NULL && cfz_rn(f, 4) == 0) {
		switch (cfz_rn(f, 4)) {
		case 0: {
			Berth__Start *m = cfz_alloc(f, sizeof *m);

			berth__start__init(m);
			m->run_id = cfz_str(f, r->id);
			m->shim = any_ident(f);
			q->verb_case = BERTH__REQUEST__VERB_START;
			q->start = m;
			return;
		}
		case 1: {
			Berth__RecordExit *m = cfz_alloc(f, sizeof *m);

			berth__record_exit__init(m);
			m->run_id = cfz_str(f, r->id);
			m->has_has_record = 1;
			m->has_record = cfz_rn(f, 4) != 0;
			m->has_exit_code = 1;
			m->exit_code = cfz_rn(f, 2) ? 0 : (int32_t)cfz_rn(f, 256);
			/* The fast path's fused settle (DESIGN §4), now and then
			 * naming the run itself, another, or a made-up outcome. */
			if (cfz_rn(f, 2)) {
				Berth__Settle *se = cfz_alloc(f, sizeof *se);

				berth__settle__init(se);
				if (cfz_rn(f, 4) == 0)
					se->run_id =
						cfz_str(f, cfz_rn(f, 2) ? r->id : pick_run(f)->id);
				if (cfz_rn(f, 4) == 0)
					se->outcome = any_str(f);
				se->has_capture_complete = cfz_rn(f, 2);
				se->capture_complete = cfz_rn(f, 2);
				m->settle = se;
			}
			q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
			q->record_exit = m;
			return;
		}
		case 2: {
			Berth__Settle *m = cfz_alloc(f, sizeof *m);

			berth__settle__init(m);
			m->run_id = cfz_str(f, r->id);
			q->verb_case = BERTH__REQUEST__VERB_SETTLE;
			q->settle = m;
			return;
		}
		default: {
			Berth__Claim *m = cfz_alloc(f, sizeof *m);

			berth__claim__init(m);
			/* The fused claim + start, with a waiting shim. */
			if (cfz_rn(f, 2))
				m->shim = any_ident(f);
			q->verb_case = BERTH__REQUEST__VERB_CLAIM;
			q->claim = m;
			return;
		}
		}
	}

	switch (cfz_rn(f, 32)) {
	case 0: {
		Berth__Claim *m = cfz_alloc(f, sizeof *m);

		berth__claim__init(m);
		if (cfz_rn(f, 2))
			m->ticket = any_str(f);
		m->has_lease_ms = cfz_rn(f, 2);
		m->lease_ms = any_u32(f);
		m->has_wait_ms = cfz_rn(f, 3) == 0;
		m->wait_ms = any_u32(f);
		if (cfz_rn(f, 3) == 0)
			m->shim = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_CLAIM;
		q->claim = m;
		break;
	}
	case 1: {
		Berth__Start *m = cfz_alloc(f, sizeof *m);

		berth__start__init(m);
		m->run_id = run_id_or_any(f);
		m->shim = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_START;
		q->start = m;
		break;
	}
	case 2:
	case 3: {
		Berth__Renew *m = cfz_alloc(f, sizeof *m);

		berth__renew__init(m);
		m->ticket = r && cfz_rn(f, 2) ? cfz_str(f, r->ticket) : any_str(f);
		m->run_id = run_id_or_any(f);
		m->has_lease_ms = cfz_rn(f, 2);
		m->lease_ms = any_u32(f);
		if (cfz_rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_RENEW;
			q->renew = m;
		} else {
			Berth__Readopt *o = cfz_alloc(f, sizeof *o);

			berth__readopt__init(o);
			o->ticket = m->ticket;
			o->run_id = m->run_id;
			o->has_lease_ms = m->has_lease_ms;
			o->lease_ms = m->lease_ms;
			if (cfz_rn(f, 2))
				o->new_owner = cfz_rn(f, 2) ? cfz_str(f, "fuzzsup") : any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_READOPT;
			q->readopt = o;
		}
		break;
	}
	case 4: {
		Berth__RecordExit *m = cfz_alloc(f, sizeof *m);

		berth__record_exit__init(m);
		m->run_id = run_id_or_any(f);
		m->has_has_record = cfz_rn(f, 2);
		m->has_record = cfz_rn(f, 2);
		m->has_exit_code = cfz_rn(f, 2);
		m->exit_code = (int32_t)any_i64(f);
		m->has_signal = cfz_rn(f, 2);
		m->signal = (int32_t)any_i64(f);
		m->has_ended_ms = cfz_rn(f, 2);
		m->ended_ms = any_i64(f);
		if (cfz_rn(f, 3) == 0) {
			Berth__Settle *se = cfz_alloc(f, sizeof *se);

			berth__settle__init(se);
			if (cfz_rn(f, 2))
				se->run_id = run_id_or_any(f);
			if (cfz_rn(f, 2))
				se->outcome = any_str(f);
			m->settle = se;
		}
		q->verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
		q->record_exit = m;
		break;
	}
	case 5: {
		Berth__Abandon *m = cfz_alloc(f, sizeof *m);

		berth__abandon__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2))
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_ABANDON;
		q->abandon = m;
		break;
	}
	case 6:
	case 7: {
		Berth__Settle *m = cfz_alloc(f, sizeof *m);

		berth__settle__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2))
			m->outcome = any_str(f);
		m->has_output_bytes = cfz_rn(f, 2);
		m->output_bytes = any_i64(f);
		m->has_capture_complete = cfz_rn(f, 2);
		m->capture_complete = cfz_rn(f, 2);
		if (cfz_rn(f, 3) == 0)
			m->reason = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SETTLE;
		q->settle = m;
		break;
	}
	case 8: {
		Berth__Hello *m = cfz_alloc(f, sizeof *m);

		berth__hello__init(m);
		m->ident = any_ident(f);
		m->has_slots = cfz_rn(f, 2);
		m->slots = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_HELLO;
		q->hello = m;
		break;
	}
	case 9: {
		Berth__Scan *m = cfz_alloc(f, sizeof *m);

		berth__scan__init(m);
		m->has_settled = cfz_rn(f, 2);
		m->settled = cfz_rn(f, 2);
		m->has_settled_since_ms = cfz_rn(f, 2);
		m->settled_since_ms = any_i64(f);
		m->has_settled_before_ms = cfz_rn(f, 2);
		m->settled_before_ms = any_i64(f);
		q->verb_case = BERTH__REQUEST__VERB_SCAN;
		q->scan = m;
		break;
	}
	case 10: {
		Berth__MarkStop *m = cfz_alloc(f, sizeof *m);

		berth__mark_stop__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 4))
			m->reason = cfz_rn(f, 2) ? cfz_str(f, "cancel") : any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_MARK_STOP;
		q->mark_stop = m;
		break;
	}
	case 11:
	case 12:
		q->verb_case = BERTH__REQUEST__VERB_ADD;
		q->add = any_add(f);
		break;
	case 13: {
		Berth__AddBatch *m = cfz_alloc(f, sizeof *m);
		size_t i;

		berth__add_batch__init(m);
		m->n_adds = cfz_rn(f, 5);
		m->adds = cfz_alloc(f, (m->n_adds ? m->n_adds : 1) * sizeof *m->adds);
		for (i = 0; i < m->n_adds; i++)
			m->adds[i] = any_add(f);
		q->verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
		q->add_batch = m;
		break;
	}
	case 14: {
		Berth__List *m = cfz_alloc(f, sizeof *m);

		berth__list__init(m);
		if (cfz_rn(f, 2))
			m->state = any_str(f);
		m->has_limit = cfz_rn(f, 2);
		m->limit = any_u32(f);
		q->verb_case = BERTH__REQUEST__VERB_LIST;
		q->list = m;
		break;
	}
	case 15: {
		Berth__Show *m = cfz_alloc(f, sizeof *m);

		berth__show__init(m);
		if (cfz_rn(f, 6))
			m->id = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SHOW;
		q->show = m;
		break;
	}
	case 16:
	case 17: {
		Berth__TicketRef *m = cfz_alloc(f, sizeof *m);

		berth__ticket_ref__init(m);
		if (cfz_rn(f, 6))
			m->id = any_str(f);
		switch (cfz_rn(f, 4)) {
		case 0:
			q->verb_case = BERTH__REQUEST__VERB_HOLD;
			q->hold = m;
			break;
		case 1:
			q->verb_case = BERTH__REQUEST__VERB_RELEASE;
			q->release = m;
			break;
		case 2:
			q->verb_case = BERTH__REQUEST__VERB_RETRY;
			q->retry = m;
			break;
		default:
			q->verb_case = BERTH__REQUEST__VERB_CANCEL;
			q->cancel = m;
			break;
		}
		break;
	}
	case 18: {
		Berth__Status *m = cfz_alloc(f, sizeof *m);

		berth__status__init(m);
		q->verb_case = BERTH__REQUEST__VERB_STATUS;
		q->status = m;
		break;
	}
	case 19:
	case 20: {
		Berth__WorkerRef *m = cfz_alloc(f, sizeof *m);

		berth__worker_ref__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 2)) {
			q->verb_case = BERTH__REQUEST__VERB_HEARTBEAT;
			q->heartbeat = m;
		} else {
			q->verb_case = BERTH__REQUEST__VERB_SHOULD_STOP;
			q->should_stop = m;
		}
		break;
	}
	case 21: {
		Berth__Progress *m = cfz_alloc(f, sizeof *m);

		berth__progress__init(m);
		m->run_id = run_id_or_any(f);
		m->has_index = cfz_rn(f, 2);
		m->index = any_i64(f);
		m->has_total = cfz_rn(f, 2);
		m->total = any_i64(f);
		if (cfz_rn(f, 2))
			m->label = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_PROGRESS;
		q->progress = m;
		break;
	}
	case 22: {
		Berth__Note *m = cfz_alloc(f, sizeof *m);

		berth__note__init(m);
		m->run_id = run_id_or_any(f);
		if (cfz_rn(f, 4))
			m->text = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_NOTE;
		q->note = m;
		break;
	}
	case 23:
	case 24: {
		Berth__SeatAcquire *m = cfz_alloc(f, sizeof *m);

		berth__seat_acquire__init(m);
		if (cfz_rn(f, 8))
			m->item =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (cfz_rn(f, 2))
			m->key = cfz_rn(f, 2) ? cfz_str(f, "k") : any_str(f);
		if (cfz_rn(f, 2))
			m->workdir = cfz_rn(f, 2) ? cfz_str(f, "/tmp/fz") : any_str(f);
		if (cfz_rn(f, 8))
			m->owner =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "o1" : "o2") : any_str(f);
		m->has_ttl_ms = cfz_rn(f, 2);
		m->ttl_ms = any_i64(f);
		m->owner_ident = any_ident(f);
		if (cfz_rn(f, 4) == 0)
			m->kind = any_str(f);
		if (cfz_rn(f, 4) == 0)
			m->state = any_str(f);
		m->has_task = cfz_rn(f, 2);
		m->task = cfz_rn(f, 4) == 0;
		m->has_in_flight = cfz_rn(f, 2);
		m->in_flight = cfz_rn(f, 2);
		m->has_in_flight_ttl_ms = cfz_rn(f, 4) == 0;
		m->in_flight_ttl_ms = any_i64(f);
		if (cfz_rn(f, 4) == 0)
			m->in_flight_ident = any_ident(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACQUIRE;
		q->seat_acquire = m;
		break;
	}
	case 25:
	case 26: {
		Berth__SeatRelease *m = cfz_alloc(f, sizeof *m);

		berth__seat_release__init(m);
		if (cfz_rn(f, 8))
			m->item =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "s1" : "s2") : any_str(f);
		if (cfz_rn(f, 4))
			m->owner =
				cfz_rn(f, 2) ? cfz_str(f, cfz_rn(f, 2) ? "o1" : "o2") : any_str(f);
		switch (cfz_rn(f, 5)) {
		case 0:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_RELEASE;
			q->seat_release = m;
			break;
		case 4:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_CLEAR;
			q->seat_clear = m;
			break;
		case 1:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE;
			q->seat_force_release = m;
			break;
		case 2:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_HEARTBEAT;
			q->seat_heartbeat = m;
			break;
		default:
			q->verb_case = BERTH__REQUEST__VERB_SEAT_SHOW;
			q->seat_show = m;
			break;
		}
		break;
	}
	case 27: {
		Berth__SeatStop *m = cfz_alloc(f, sizeof *m);
		Berth__SeatConfirm *c;

		if (cfz_rn(f, 2)) {
			c = cfz_alloc(f, sizeof *c);
			berth__seat_confirm__init(c);
			if (cfz_rn(f, 8))
				c->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
			if (cfz_rn(f, 4))
				c->owner = cfz_rn(f, 2) ? cfz_str(f, "o1") : any_str(f);
			if (cfz_rn(f, 4))
				c->state = any_str(f);
			q->verb_case = BERTH__REQUEST__VERB_SEAT_CONFIRM;
			q->seat_confirm = c;
			break;
		}
		berth__seat_stop__init(m);
		if (cfz_rn(f, 8))
			m->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
		if (cfz_rn(f, 2))
			m->reason = any_str(f);
		if (cfz_rn(f, 2))
			m->requester = any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_STOP;
		q->seat_stop = m;
		break;
	}
	case 28: {
		Berth__SeatActivity *m = cfz_alloc(f, sizeof *m);

		berth__seat_activity__init(m);
		if (cfz_rn(f, 8))
			m->item = cfz_rn(f, 2) ? cfz_str(f, "s1") : any_str(f);
		m->has_index = cfz_rn(f, 2);
		m->index = any_i64(f);
		m->has_total = cfz_rn(f, 2);
		m->total = any_i64(f);
		if (cfz_rn(f, 2))
			m->label = any_str(f);
		if (cfz_rn(f, 4))
			m->owner = cfz_rn(f, 2) ? cfz_str(f, "o1") : any_str(f);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_ACTIVITY;
		q->seat_activity = m;
		break;
	}
	case 29: {
		Berth__SeatList *m = cfz_alloc(f, sizeof *m);

		berth__seat_list__init(m);
		m->has_live_only = cfz_rn(f, 2);
		m->live_only = cfz_rn(f, 2);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_LIST;
		q->seat_list = m;
		break;
	}
	default: {
		Berth__SeatReap *m = cfz_alloc(f, sizeof *m);

		berth__seat_reap__init(m);
		q->verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
		q->seat_reap = m;
		break;
	}
	}
}

static const char *const cfz_instances[8] = {
	"fuzzsup",     "fuzzcli",   "fuzzsup",       "fuzzcli",
	"fz-operator", "fz-worker", "fz-supervisor", "fz-recovery",
};

/* Who a request with this instance comes from: NULL (the coordinator's
 * own process, every role) for most; for an "fz-" instance, the caller a
 * connection of that class would be (an actor of this very process, so
 * a hello with its identity binds it). A function of the request's bytes,
 * so a retry comes from the same sender. */
const struct coord_caller *
cfz_caller(const Berth__Request *q, struct coord_caller *who)
{
	static struct ident self;
	static int have_self;

	if (q->instance == NULL || strncmp(q->instance, "fz-", 3) != 0)
		return NULL;
	if (!have_self)
		have_self = ident_self(&self) == 0;
	memset(who, 0, sizeof *who);
	who->pid = self.pid;
	who->start_time = self.start_time;
	who->uid = getuid();
	if (strcmp(q->instance, "fz-worker") == 0) {
		who->cls = CALLER_WORKER;
	} else if (strcmp(q->instance, "fz-supervisor") == 0) {
		who->cls = CALLER_ACTOR;
		who->roles = ROLE_SUPERVISOR;
		who->verified = 1;
	} else if (strcmp(q->instance, "fz-recovery") == 0) {
		who->cls = CALLER_ACTOR;
		who->roles = ROLE_RECOVERY;
		who->verified = 1;
	} else {
		who->cls = CALLER_OPERATOR;
	}
	snprintf(who->what, sizeof who->what, "%s", q->instance + 3);
	return who;
}

void
cfz_build(struct cfz *f, Berth__Request *q)
{
	q->has_version = cfz_rn(f, 100) != 0;
	q->version = cfz_rn(f, 100) ? BERTH_PROTOCOL_VERSION : (uint32_t)cfz_rnd(f);
	q->actor = cfz_rn(f, 100) ? cfz_str(f, cfz_rn(f, 2) ? "supervisor" : "cli") : any_str(f);
	/* Most requests come from the coordinator's own process (the
	 * whole protocol is reachable); the "fz-" instances come as a
	 * connection would present them (cfz_caller): every caller class. */
	q->instance = cfz_rn(f, 100) ? cfz_str(f, cfz_instances[cfz_rn(f, 8)]) : NULL;
	q->has_req_id = cfz_rn(f, 100) != 0;
	q->req_id = cfz_rn(f, 50) ? ++f->req_id : (cfz_rn(f, 2) ? 0 : cfz_rnd(f));
	if (cfz_rn(f, 60))
		any_verb(f, q);
}
