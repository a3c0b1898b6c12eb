/*
 * Recovery's rule table (DESIGN §7, docs/RECOVERY.md).
 *
 * A run is recovery's business only when its owner can no longer be trusted
 * to finish it: the owner's process identity is gone, or the lease the owner
 * should keep renewing has run out. Then the run's own process identity (its
 * shim, the leader of the job's group) decides what happened to the job.
 * Leases never decide liveness; they only make recovery look.
 */
#include "rcv_decide.h"
#include "states.h"

enum rcv_state
rcv_state_parse(const char *s)
{
	switch (run_state_parse(s)) {
	case RUN_CLAIMED: return RCV_ST_CLAIMED;
	case RUN_RUNNING: return RCV_ST_RUNNING;
	case RUN_AFTERCARE: return RCV_ST_AFTERCARE;
	default: return RCV_ST_OTHER;
	}
}

/* A run with no lease row is treated as one whose lease has run out: no one
 * is renewing it. */
static int
lease_expired(const struct rcv_facts *f, int64_t now_ms)
{
	return !f->has_lease || f->lease_expires_ms <= now_ms;
}

static enum rcv_action
decide_claimed(const struct rcv_facts *f, int owner_trusted)
{
	/* The marker is written only after `start` was granted, so a claimed
	 * run with a marker means the store lost that grant (a commit lost to
	 * power failure under synchronous=NORMAL). The job did execute: it
	 * must not run again for free. A young marker may instead belong to a
	 * start our scan just missed. */
	if (f->started) {
		if (f->started_age_ms < RCV_MARKER_SETTLE_MS)
			return RCV_WAIT;
		if (f->has_shim && f->shim != IDENT_GONE)
			return RCV_WAIT;
		return f->confirmed ? RCV_RECORD_EXIT : RCV_CONFIRM;
	}
	/* `abandon` is not guarded by state: abandoning while a live owner
	 * may still send `start` could let the job run while its ticket is
	 * ready again. A live owner either starts the run or abandons it
	 * itself; its shim cannot outlive it before the go. */
	if (owner_trusted)
		return RCV_WAIT;
	/* The owner is dead, but a `start` it sent just before dying may
	 * still commit after our scan: only a second pass that still sees
	 * the run claimed proves it never started. */
	return f->confirmed ? RCV_ABANDON : RCV_CONFIRM;
}

static enum rcv_action rcv_decide_facts(const struct rcv_facts *f, int64_t now_ms);

/*
 * Every action but waiting acts on what the run left in its directory: an
 * exit record that cannot be read now (no descriptor left, an I/O error)
 * must not be taken for none, which would settle a run orphaned, or abandon
 * one that ran. Out of descriptors, recovery waits; it never decides.
 */
enum rcv_action
rcv_decide(const struct rcv_facts *f, int64_t now_ms)
{
	enum rcv_action a = rcv_decide_facts(f, now_ms);

	if (f->unreadable && (a == RCV_ABANDON || a == RCV_RECORD_EXIT || a == RCV_SETTLE))
		return RCV_WAIT;
	return a;
}

static enum rcv_action
rcv_decide_facts(const struct rcv_facts *f, int64_t now_ms)
{
	int owner_trusted = f->owner_alive && !f->owner_is_self;
	int shim_alive;

	if (f->state == RCV_ST_OTHER)
		return RCV_NONE;
	/* Recovery considers a run only when the owner is gone or has let
	 * the lease run out. A run of our own instance in this table can only
	 * be one whose aftercare we lost (a reply that never came back). */
	if (owner_trusted && !lease_expired(f, now_ms))
		return RCV_NONE;

	switch (f->state) {
	case RCV_ST_CLAIMED: return decide_claimed(f, owner_trusted);
	case RCV_ST_RUNNING:
		/* An identity that exists but cannot be read counts as alive.
		 * A run recorded running without a shim identity cannot be
		 * watched by anyone: only its exit record can tell. */
		shim_alive = f->has_shim && f->shim != IDENT_GONE;
		if (shim_alive) {
			/* A live owner still watches its job (it may be
			 * stopped or slow; its renewals are statements of
			 * fact, not authority). */
			if (owner_trusted)
				return RCV_NONE;
			return f->have_supervisor ? RCV_READOPT : RCV_WAIT;
		}
		/* The shim died before its go: it writes the started marker
		 * before it forks the job, and being gone it never will. The
		 * job never executed, so the run is abandoned, spending no
		 * attempt (DESIGN §6). Without a recorded shim identity we
		 * cannot know the shim is gone, so that case is not taken. */
		if (f->has_shim && !f->started && !f->has_exit_record)
			return RCV_ABANDON;
		/* The job is gone (dead, reused pid, or another boot):
		 * checkpoint its exit. If the owner is alive but paused,
		 * the coordinator arbitrates our record_exit against its
		 * own and grants exactly one. */
		return RCV_RECORD_EXIT;
	case RCV_ST_AFTERCARE:
		/* The exit is checkpointed; only aftercare and settle are
		 * left, and they belong to whoever was granted the checkpoint
		 * (the owner judged here). Only its death hands them on: a
		 * paused or slow owner keeps them however long its lease has
		 * lapsed (DESIGN §4, §7), and the coordinator refuses our
		 * settle behind a live one. Our own lost reply is ours. */
		if (owner_trusted)
			return RCV_NONE;
		return RCV_SETTLE;
	case RCV_ST_OTHER: break;
	}
	return RCV_NONE;
}

const char *
rcv_action_name(enum rcv_action a)
{
	switch (a) {
	case RCV_NONE: return "none";
	case RCV_WAIT: return "wait";
	case RCV_CONFIRM: return "confirm";
	case RCV_ABANDON: return "abandon";
	case RCV_READOPT: return "readopt";
	case RCV_RECORD_EXIT: return "record_exit";
	case RCV_SETTLE: return "settle";
	}
	return "?";
}
