/*
 * One reaper tick: scan -> facts -> reap_decide -> act (DESIGN §7).
 *
 * Every signal goes through ident_session_kill: the job's processes are the
 * members of its shim's session (the job leads a group of its own in it,
 * and so does every group it makes), signalled only while the shim's
 * identity still matches, each by its own identity; the shim itself is
 * spared, so that it records how the job ended. The reaper settles
 * only runs that never started; a run whose job was signalled is settled by
 * whoever checkpoints its exit (its supervisor, or recovery), and the
 * coordinator derives cancelled / timed_out from the recorded stop request.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "msg.h"
#include "reap_decide.h"
#include "reap_pass.h"
#include "rpc_pass.h"
#include "ring.h"
#include "states.h"
#include "util.h"

/* Retention scans are paged by settlement time (the scan verb has no row
 * limit): each window's width adapts so a reply stays near PAGE_TARGET,
 * far below RPC_MAX_MSG, and grows (twofold) only after a reply under a
 * quarter of it, so only a run density jump of more than thirtyfold from
 * one window to the next could bring a reply over the limit; PAGE_MAX_MS
 * caps the width so a quiet stretch of history does not widen it across a
 * burst. A hard bound would need a row limit in Scan (a protocol change). */
#define PAGE_TARGET   (RPC_MAX_MSG / 16)
#define PAGE_FIRST_MS (60 * 1000LL)
#define PAGE_MAX_MS   (86400 * 1000LL)
/* Windows per retention pass: a long backlog is worked off over several
 * ticks, the reaper's other duties in between. */
#define PAGES_PER_PASS 32

/* When this reaper sent SIGTERM to a run's group. */
struct reap_term {
	char run[48];
	int64_t sent_ms;
};

struct reap {
	struct reap_opts opts;
	struct rpc_pass rpc;
	struct reap_term *terms;
	int nterms;
	int seat_reap_missing;     /* the coordinator does not know seat_reap */
	int64_t next_retention_ms; /* monotonic: the next retention pass */
	/* Runs settled before this wall time have had their data removed or
	 * found absent: the next retention pass asks only for runs settled
	 * since. Persisted in <home>/reaper/retention (reap_mark.c) each time
	 * it advances and read back at start; 0 (no file) means from the
	 * beginning. */
	int64_t retained_to_ms;
	int64_t page_ms; /* width of the next retention scan window */
};

struct reap *
reap_new(const struct reap_opts *o, struct rpc_client *c)
{
	struct reap *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("reaper: out of memory");
		return NULL;
	}
	r->opts = *o;
	if (r->opts.rpc_timeout_ms <= 0)
		r->opts.rpc_timeout_ms = 10000;
	if (r->opts.window_ms <= 0)
		r->opts.window_ms = 10 * 60 * 1000;
	if (r->opts.window_ms < 4 * r->opts.grace_ms)
		r->opts.window_ms = 4 * r->opts.grace_ms;
	r->rpc.client = c;
	r->rpc.timeout_ms = r->opts.rpc_timeout_ms;
	r->page_ms = PAGE_FIRST_MS;
	r->retained_to_ms = reap_mark_load(o->home);
	if (r->retained_to_ms > 0)
		log_info("retention: resuming from the watermark %lld (runs settled before it "
			 "are done)",
			 (long long)r->retained_to_ms);
	return r;
}

void
reap_free(struct reap *r)
{
	if (r == NULL)
		return;
	free(r->terms);
	free(r);
}

int
reap_hello(struct reap *r)
{
	return rpc_pass_hello(&r->rpc);
}

static const struct reap_term *
term_find(const struct reap *r, const char *run)
{
	int i;

	for (i = 0; i < r->nterms; i++)
		if (strcmp(r->terms[i].run, run) == 0)
			return &r->terms[i];
	return NULL;
}

/* Signals the run's job: every process of its shim's session but the shim,
 * identity-checked (ident_session_kill), and with also_shim the shim itself
 * (a settled run's lingering shim). 0 signalled (or nothing left to
 * signal), -1 not. */
static int
signal_job(const Berth__Run *run, const struct ident *shim, int sig, const char *why, int also_shim)
{
	int rc, n;

	if (fp_skip("reaper.before_kill", "not signalled this tick"))
		return -1;
	n = rc = ident_session_kill(shim, sig);
	if (rc >= 0 && also_shim && (rc = ident_kill_group(shim, sig)) == 0)
		n++;
	ring_global_emit(RING_KILL, NULL, run->ticket, run->id, rc >= 0 ? "sent" : "refused",
			 sig == SIGKILL ? "SIGKILL" : "SIGTERM", 0, 0, why);
	if (rc >= 0)
		log_info("run %s: %s: SIG%s to %d process%s of shim %d's session", run->alias, why,
			 sig == SIGKILL ? "KILL" : "TERM", n, n == 1 ? "" : "es", (int)shim->pid);
	else if (rc == -ESRCH)
		log_info("run %s: %s: shim %d gone or reused, not signalled", run->alias, why,
			 (int)shim->pid);
	else
		log_warn("run %s: %s: shim %d unverifiable (%s): not signalled, next tick tries "
			 "again",
			 run->alias, why, (int)shim->pid, strerror(-rc));
	fp_hit("reaper.after_kill");
	return rc >= 0 ? 0 : -1;
}

static int
mark_stop(struct reap *r, const Berth__Run *run, const char *reason)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__MarkStop ms = BERTH__MARK_STOP__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc;

	ms.run_id = run->id;
	ms.reason = (char *)reason;
	req.verb_case = BERTH__REQUEST__VERB_MARK_STOP;
	req.mark_stop = &ms;
	if (rpc_pass_call(&r->rpc, &req, &rep, "mark_stop", run->alias) < 0)
		return -1;
	msg_describe(rep, desc, sizeof(desc));
	rc = msg_is_granted(rep) ? 0 : -1;
	log_info("run %s: past its timeout (%lldms): mark_stop timeout: %s", run->alias,
		 (long long)run->timeout_ms, desc);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

static int
settle_stopped(struct reap *r, const Berth__Run *run)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Settle s = BERTH__SETTLE__INIT;
	Berth__Reply *rep;
	char desc[256];
	int rc;

	if (fp_skip("reaper.before_settle", "not settled this tick"))
		return -1;
	s.run_id = run->id;
	s.outcome = ""; /* derived from the stop request */
	s.reason = "stop requested before the job started";
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &s;
	if (rpc_pass_call(&r->rpc, &req, &rep, "settle", run->alias) < 0)
		return -1;
	msg_describe(rep, desc, sizeof(desc));
	rc = msg_is_granted(rep) ? 0 : -1;
	log_info("run %s: stop requested (%s) before it started: settle: %s", run->alias,
		 run->stop_reason, desc);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}

static void
seat_reap(struct reap *r, struct reap_stats *st)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__SeatReap sr = BERTH__SEAT_REAP__INIT;
	Berth__Reply *rep;
	char desc[256];

	if (r->seat_reap_missing)
		return;
	req.verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
	req.seat_reap = &sr;
	if (rpc_pass_call(&r->rpc, &req, &rep, "seat_reap", "") < 0)
		return;
	if (rep->result_case == BERTH__REPLY__RESULT_ERROR && rep->error != NULL &&
	    (rep->error->code == BERTH__ERROR_CODE__ERR_UNKNOWN_VERB ||
	     rep->error->code == BERTH__ERROR_CODE__ERR_INVALID)) {
		/* An older coordinator: stale seats are then stolen on
		 * acquire, which is all the reaping they need. */
		log_debug("seat_reap: not known to the coordinator");
		r->seat_reap_missing = 1;
	} else if (msg_is_granted(rep) &&
		   rep->granted->payload_case == BERTH__GRANTED__PAYLOAD_SEAT) {
		if (rep->granted->seat->reaped > 0) {
			st->seats_reaped = rep->granted->seat->reaped;
			log_info("seats: %d stale seats removed", st->seats_reaped);
		}
	} else if (!msg_is_granted(rep)) {
		msg_describe(rep, desc, sizeof(desc));
		log_warn("seat_reap: %s", desc);
	}
	berth__reply__free_unpacked(rep, NULL);
}

/* Facts of one run beyond its row. */
static void
facts_of(const struct reap *r, const Berth__Run *run, const struct ident *leader, int has_leader,
	 struct reap_facts *f)
{
	const struct reap_term *t;

	memset(f, 0, sizeof(*f));
	f->settled = run->settled_ms > 0;
	f->claimed = run_state_parse(run->state) == RUN_CLAIMED;
	f->running = run_state_parse(run->state) == RUN_RUNNING;
	f->stop_requested = run->stop_reason != NULL && run->stop_reason[0] != '\0';
	f->has_shim = has_leader;
	if (has_leader) {
		f->shim = ident_check(leader);
		/* Unverifiable counts as alive: the kill itself checks again
		 * and signals nothing it cannot verify. */
		f->job_alive = f->shim == IDENT_MATCHES && ident_session_alive(leader) != 0;
	}
	f->claimed_ms = run->claimed_ms;
	f->started_ms = run->started_ms;
	f->timeout_ms = run->timeout_ms;
	f->settled_ms = run->settled_ms;
	t = term_find(r, run->id);
	f->term_sent_ms = t != NULL ? t->sent_ms : 0;
}

/* Scans the coordinator: unsettled runs, plus settled ones with
 * since <= settled_ms (< before when before is not 0). */
static Berth__Reply *
scan(struct reap *r, int64_t since, int64_t before)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Scan sc = BERTH__SCAN__INIT;
	Berth__Reply *rep;
	char desc[256];

	sc.has_settled = 1;
	sc.settled = 1;
	sc.has_settled_since_ms = 1;
	sc.settled_since_ms = since;
	sc.has_settled_before_ms = 1;
	sc.settled_before_ms = before;
	req.verb_case = BERTH__REQUEST__VERB_SCAN;
	req.scan = &sc;
	if (rpc_pass_call(&r->rpc, &req, &rep, "scan", "") < 0)
		return NULL;
	if (!msg_is_granted(rep) || rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_SCAN) {
		msg_describe(rep, desc, sizeof(desc));
		log_error("scan: unexpected reply: %s", desc);
		berth__reply__free_unpacked(rep, NULL);
		return NULL;
	}
	return rep;
}

/* The settlement time from which history has to be looked at when no
 * watermark is known: the oldest ticket's creation (List orders by ticket
 * number, and a run settles after its ticket was created), so the first
 * window need not cover all history. cutoff when there is no ticket; 0
 * with *ok set when the oldest ticket carries no time; *ok 0 when the
 * coordinator did not answer. */
static int64_t
history_start(struct reap *r, int64_t cutoff, int *ok)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List l = BERTH__LIST__INIT;
	Berth__Reply *rep;
	const Berth__TicketList *tl;
	char desc[256];
	int64_t start = cutoff;

	*ok = 0;
	l.has_limit = 1;
	l.limit = 1;
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &l;
	if (rpc_pass_call(&r->rpc, &req, &rep, "list", "") < 0)
		return 0;
	if (!msg_is_granted(rep) || rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_LIST) {
		msg_describe(rep, desc, sizeof(desc));
		log_error("list: unexpected reply: %s", desc);
		berth__reply__free_unpacked(rep, NULL);
		return 0;
	}
	tl = rep->granted->list;
	if (tl->n_tickets > 0) {
		const Berth__Ticket *t = tl->tickets[0];

		start = t->has_created_ms && t->created_ms > 0 ? t->created_ms : 0;
		if (start > cutoff)
			start = cutoff;
	}
	berth__reply__free_unpacked(rep, NULL);
	*ok = 1;
	return start;
}

/* Looks at the runs of one retention window's reply and removes their
 * data. Returns the watermark the window reached: hi when every run's data
 * is gone, else the earliest settlement whose data could not be removed. */
static int64_t
retention_window(struct reap *r, const Berth__ScanReply *sr, int64_t wall, int64_t hi,
		 struct reap_stats *st)
{
	struct reap_params p;
	int64_t reached = hi;
	size_t i;

	/* Judged by the same clock as the window, so every run in it is past
	 * the retention and none is passed over for good. */
	p.now_ms = wall;
	p.grace_ms = r->opts.grace_ms;
	p.retention_ms = r->opts.retention_ms;
	for (i = 0; i < sr->n_runs; i++) {
		const Berth__Run *run = sr->runs[i];
		struct reap_facts f;
		char dir[4096];
		struct stat sb;

		if (run->id == NULL || !run->has_settled_ms || run->settled_ms <= 0 ||
		    run->settled_ms >= hi)
			continue;
		memset(&f, 0, sizeof(f));
		f.settled = 1;
		f.settled_ms = run->settled_ms;
		f.data_present = home_run_dir(r->opts.home, run->id, dir, sizeof(dir)) == 0 &&
				 stat(dir, &sb) == 0;
		if (reap_decide(&f, &p) != REAP_REMOVE_DATA)
			continue;
		if (reap_data_remove(r->opts.home, run->id) == 0) {
			log_info("run %s: data removed (settled longer ago than retention)",
				 run->alias != NULL ? run->alias : run->id);
			st->removed++;
		} else if (run->settled_ms < reached)
			reached = run->settled_ms;
	}
	return reached;
}

/* The next window's width from the size of the last reply: halved (or
 * less) above PAGE_TARGET, doubled below a quarter of it. */
static void
page_adapt(struct reap *r, size_t size)
{
	if (size > PAGE_TARGET) {
		int64_t w = (int64_t)((double)r->page_ms * PAGE_TARGET / (double)size / 2);

		r->page_ms = w > 0 ? w : 1;
	} else if (size < PAGE_TARGET / 4 && r->page_ms < PAGE_MAX_MS) {
		r->page_ms *= 2;
		if (r->page_ms > PAGE_MAX_MS)
			r->page_ms = PAGE_MAX_MS;
	}
}

/* Run data past retention: scans of its own, since the settled runs it
 * needs are the old ones, not the recent ones the straggler check needs.
 *
 * Run rows are never deleted, so asking for every run settled before the
 * cutoff would grow with all history until the reply no longer fits in a
 * message. Each pass asks only for [retained_to_ms, cutoff), in windows
 * [lo, hi) of adaptive width: the coordinator's bounds are settled_ms >=
 * since and settled_ms < before, so consecutive windows tile the time line
 * without a gap. A run settles at the coordinator's now, which is never
 * before this cutoff (now minus a retention), so no run can later appear
 * in a window already passed. A run whose data could not be removed holds
 * the watermark at its settlement time, and the pass stops there, so the
 * next pass tries it again. The watermark is persisted each time it
 * advances, so a restarted reaper resumes there instead of rescanning all
 * history. 1 when the pass stopped short of the cutoff with more to do, 0
 * when it reached it, -1 when the coordinator did not answer. */
static int
retention_pass(struct reap *r, struct reap_stats *st)
{
	Berth__Reply *rep;
	int64_t wall = clock_wall_ms();
	int64_t cutoff = wall - r->opts.retention_ms;
	int64_t lo, base, hi, reached;
	int pages, ok;

	/* A wall clock set back, or a retention longer than the epoch:
	 * nothing new has passed the retention. before = 0 would mean no
	 * bound at all. A watermark beyond the cutoff (a clock set back, a
	 * longer retention than before) comes back to it, so runs settling
	 * from now on are not passed over. */
	if (cutoff <= 0)
		return 0;
	if (r->retained_to_ms > cutoff) {
		log_warn("retention: watermark %lld is past the cutoff %lld (clock set back, or "
			 "a longer retention): resuming from the cutoff",
			 (long long)r->retained_to_ms, (long long)cutoff);
		r->retained_to_ms = cutoff;
	}
	if (cutoff == r->retained_to_ms)
		return 0;
	for (pages = 0; pages < PAGES_PER_PASS && r->retained_to_ms < cutoff; pages++) {
		lo = r->retained_to_ms;
		base = lo;
		if (lo == 0) {
			/* No watermark: history starts at the oldest ticket,
			 * and the first window [0, start + width) covers
			 * whatever settled before it too (a clock set back). */
			base = history_start(r, cutoff, &ok);
			if (!ok)
				return -1;
			if (base <= 0)
				base = cutoff; /* no time to start from: one window */
		}
		hi = base >= cutoff - r->page_ms ? cutoff : base + r->page_ms;
		if ((rep = scan(r, lo, hi)) == NULL)
			return -1;
		page_adapt(r, berth__reply__get_packed_size(rep));
		reached = retention_window(r, rep->granted->scan, wall, hi, st);
		berth__reply__free_unpacked(rep, NULL);
		if (reached > r->retained_to_ms) {
			r->retained_to_ms = reached;
			reap_mark_save(r->opts.home, reached);
		}
		if (reached < hi)
			return 0; /* held by a run whose data stays: next pass */
	}
	return r->retained_to_ms < cutoff ? 1 : 0;
}

/* The act of one verdict; returns 1 when it changed something. f's
 * term_sent_ms is set when a SIGTERM went out now. */
static int
reap_act(struct reap *r, const Berth__Run *run, const struct ident *leader, enum reap_action a,
	 struct reap_facts *f, int64_t now_ms)
{
	const char *timeout = stop_reason_name(STOP_TIMEOUT);

	switch (a) {
	case REAP_NONE:
	case REAP_REMOVE_DATA: /* only the retention pass removes data */ return 0;
	case REAP_SETTLE_STOPPED: return settle_stopped(r, run) == 0;
	case REAP_MARK_TIMEOUT:
		/* The stop is recorded before any signal, so the outcome is
		 * timed_out whoever settles the run. */
		if (mark_stop(r, run, timeout) < 0)
			return 0;
		/* FALLTHROUGH */
	case REAP_TERM:
		f->term_sent_ms = now_ms;
		return signal_job(run, leader, SIGTERM,
				  a == REAP_MARK_TIMEOUT ? timeout : run->stop_reason, 0) == 0;
	case REAP_KILL: return signal_job(run, leader, SIGKILL, "grace period over", 0) == 0;
	case REAP_STRAGGLER:
		return signal_job(run, leader, SIGKILL, "shim of a settled run still there", 1) ==
		       0;
	}
	return 0;
}

/* Retention is coarse: looked at most every retention/10, at least every
 * minute; a backlog larger than one pass is worked off at the next tick. */
static void
retention_maybe(struct reap *r, struct reap_stats *st)
{
	int64_t every = r->opts.retention_ms / 10;

	if (clock_mono_ms() < r->next_retention_ms)
		return;
	if (every > 60000)
		every = 60000;
	if (retention_pass(r, st) > 0)
		every = 0;
	r->next_retention_ms = clock_mono_ms() + every;
}

int
reap_pass(struct reap *r, struct reap_stats *st)
{
	Berth__Reply *rep = NULL;
	const Berth__ScanReply *scan_reply;
	struct reap_params p;
	struct reap_term *next = NULL;
	int nnext = 0, rc = -1;
	int64_t wall = clock_wall_ms();
	size_t i;

	memset(st, 0, sizeof(*st));
	r->rpc.unreachable = 0;
	/* Unsettled runs and those settled recently (stragglers). */
	if ((rep = scan(r, wall - r->opts.window_ms, 0)) == NULL)
		return r->rpc.broken ? -2 : -1;
	scan_reply = rep->granted->scan;
	p.now_ms = scan_reply->has_now_ms ? scan_reply->now_ms : wall;
	p.grace_ms = r->opts.grace_ms;
	p.retention_ms = r->opts.retention_ms;
	if (scan_reply->n_runs > 0 && (next = calloc(scan_reply->n_runs, sizeof(*next))) == NULL) {
		log_error("reaper: out of memory");
		goto out;
	}
	for (i = 0; i < scan_reply->n_runs; i++) {
		const Berth__Run *run = scan_reply->runs[i];
		const struct reap_term *t;
		struct reap_facts f;
		struct ident leader;
		enum reap_action a;
		int changed;

		if (run->id == NULL || run->alias == NULL)
			continue;
		st->scanned++;
		facts_of(r, run, &leader, msg_ident_from(run->shim, &leader) == 0, &f);
		a = reap_decide(&f, &p);
		if (a != REAP_NONE)
			log_debug("run %s: %s: %s", run->alias, run->state, reap_action_name(a));
		changed = reap_act(r, run, &leader, a, &f, p.now_ms);
		if (a == REAP_SETTLE_STOPPED)
			st->settled += changed;
		else
			st->signalled += changed;
		/* Remember SIGTERMs of runs still unsettled: the grace period
		 * runs from the first one. */
		if (!f.settled && f.term_sent_ms > 0) {
			t = term_find(r, run->id);
			snprintf(next[nnext].run, sizeof(next[nnext].run), "%s", run->id);
			next[nnext].sent_ms = t != NULL ? t->sent_ms : f.term_sent_ms;
			nnext++;
		}
	}
	free(r->terms);
	r->terms = next;
	r->nterms = nnext;
	next = NULL;
	retention_maybe(r, st);
	seat_reap(r, st);
	rc = r->rpc.broken ? -2 : 0;
out:
	free(next);
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}
