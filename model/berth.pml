/*
 * berth's coordination protocol, for spin (DESIGN §1, §4, §6, §7, §10).
 * docs/VERIFICATION.md says what is checked, how, what is left out and why
 * leaving it out is sound. model/check.sh runs every check.
 *
 * One run is one attempt of a ticket. The coordinator is one process that
 * decides each request in one step over the run/ticket state, its guards
 * generated from proto/run_moves.def (the star topology decides races by
 * message order, which is interleaving order here). The supervisor,
 * recovery, the reaper and the operator are processes; every shim and its
 * job are steps of one more, the world. Every actor crashes and restarts as
 * a new instance where DESIGN §10 puts a failpoint; the coordinator crashes
 * before or after a commit (a request not decided, or decided with its
 * answer lost); a shim is SIGKILLed at any step; a gone identity is read as
 * alive (unreadable counts as alive); a job forges actor verbs (a same-user
 * process with BERTH_SOCKET).
 *
 * Properties: the PROP() assertions, each named by a P_* variable that pan
 * prints when it fails, and the LTL formula `settled`.
 *
 * Bounds (-D NAME=N): RPT runs per ticket (2 or 3), ATT attempts, SLOTS,
 * CRASHES: one budget for every crash and every lost coordinator answer
 * (C_SUP, C_RCV, C_SHIM, C_COORD = 0 keep one kind out), UNV
 * misread identities, FORGED forged requests, CANCELS operator cancels.
 * There are two tickets (NT): the supervisor's table, the operator and the
 * per-run alternatives are written out for them.
 *
 * Mutants (-D NAME, one at a time; check.sh expects spin to reject each):
 *   MUT_ABANDON_ANY     abandon of any unsettled run, from anyone (no guard)
 *   MUT_LEASE_TAKEOVER  recovery takes aftercare over once the lease lapsed,
 *                       though the owner lives (the coordinator lets it)
 *   MUT_SETTLE_ANY      settle of any unsettled run, from anyone, with the
 *                       outcome the caller names (no owner, no state guard)
 *   MUT_RX_ANY          record_exit from any unsettled state
 *   MUT_NO_CONFIRM      recovery abandons a claimed run at first sight
 *   MUT_MARKER_LATE     the shim writes `started` after it forks the job
 *   MUT_GO_EARLY        the shim runs the job without waiting for its go
 *   MUT_UNV_DEAD        an identity that cannot be read counts as dead
 *   MUT_READ_EARLY      recovery reads the exit record before it judges
 *                       the shim
 *   MUT_NO_TAKEOVER     recovery never settles an aftercare it does not own
 *   MUT_TRUST_LABEL     the coordinator takes a request's caller from the
 *                       actor name it claims (a job calling itself
 *                       "supervisor" is taken for the supervisor)
 */

#define NT 2
#ifndef RPT
#define RPT 3
#endif
#define NR (NT * RPT)	/* run slots: ticket t's k-th run is t * RPT + k */
#ifndef ATT
#define ATT 2
#endif
#ifndef SLOTS
#define SLOTS 2
#endif
#ifndef CRASHES
#define CRASHES 2
#endif
#ifndef UNV
#define UNV 1
#endif
#ifndef FORGED
#define FORGED 1
#endif
#ifndef CANCELS
#define CANCELS 1
#endif

/* X(i) for every run slot i. */
#if RPT == 2
#define EACH_RUN(X)	X(0) X(1) X(2) X(3)
#elif RPT == 3
#define EACH_RUN(X)	X(0) X(1) X(2) X(3) X(4) X(5)
#endif

/* Run states (proto/states.h); R_NONE: no such run. */
#define R_NONE		0
#define R_CLAIMED	1
#define R_RUNNING	2
#define R_AFTERCARE	3
#define R_SUCCEEDED	4
#define R_FAILED	5
#define R_ORPHANED	6
#define R_CANCELLED	7
#define R_ABORTED	8
#define R_TIMED_OUT	9	/* (timeouts are not modelled: a stop like cancel) */
#define R_OUTCOME	10	/* a move's to-state "the run's outcome" */
#define LIVE(s)		((s) >= R_CLAIMED && (s) <= R_AFTERCARE)
#define TERMINAL(s)	((s) >= R_SUCCEEDED && (s) <= R_TIMED_OUT)

#define T_READY		0
#define T_CLAIMED	1
#define T_SUCCEEDED	2
#define T_FAILED	3
#define T_CANCELLED	4

/* A job's end, and what an exit record (or its absence) says. */
#define X_NONE		0	/* no record */
#define X_OK		1	/* exit 0 */
#define X_FAIL		2	/* exit 1 */
#define X_SIG		3	/* killed by a signal */

/* The shim, as its process identity shows it. Its job lives exactly while
 * it is SH_LIVE: the job dies with its shim (PR_SET_PDEATHSIG). */
#define SH_NONE		0	/* not spawned */
#define SH_WAIT		1	/* waiting for its go, PR_SET_PDEATHSIG armed */
#define SH_LIVE		2	/* got its go, wrote `started`, forked the job */
#define SH_GONE		3
#define SHIM_UP(i)	(shim[i] == SH_WAIT || shim[i] == SH_LIVE)
#define JOB_UP(i)	(shim[i] == SH_LIVE)

/*
 * Callers (DESIGN §1). The class comes from the connection, never from the
 * name a request claims: JOB is any process that is not one of the group's
 * actors (a job holding BERTH_SOCKET). An actor's crash and restart makes a
 * new instance, and the old one's process identity is gone for good: every
 * record naming it then names a dead instance. Dead instances never act
 * and are never compared with each other (only with a live caller), so one
 * value per actor stands for all of them: a crash turns every LIVE
 * reference into DEAD (bury()). This keeps incarnation numbers out of the
 * state.
 */
#define NOBODY		0
#define SUP_LIVE	1
#define SUP_DEAD	2
#define RCV_LIVE	3
#define RCV_DEAD	4
#define REAPER		5	/* never owns anything: one value for every instance */
#define JOB		6
#define OPER		7
#define IS_RCV(c)	((c) == RCV_LIVE || (c) == RCV_DEAD)
#define ACTOR(c)	((c) >= SUP_LIVE && (c) <= REAPER)
#define ALIVE(c)	((c) == SUP_LIVE || (c) == RCV_LIVE)

/*
 * The run state moves: proto/run_moves.def, turned into MOVE_<verb>_FROM,
 * _OK and _TO by model/gen_moves.awk (check.sh writes moves.pml next to a
 * copy of this file). What each of its roles means here:
 */
#define WHO_OWNER(c, r)		((c) == rowner[r])
#define WHO_RECOVERY(c, r)	IS_RCV(c)
#define WHO_STOP_REAPER(c, r)	((c) == REAPER && rstop[r])
#define WHO_CHECKPOINTER(c, r)	((c) == racown[r])
#ifdef MUT_LEASE_TAKEOVER
#define WHO_HEIR(c, r)		IS_RCV(c)	/* the owner is gone, or its lease lapsed */
#else
#define WHO_HEIR(c, r)		(IS_RCV(c) && !ALIVE(racown[r]))
#endif

#include "moves.pml"

/* ------------------------------------------------------------ the store */

byte tstate[NT];	/* ticket state */
byte tbad[NT];		/* attempts spent */
byte truns[NT];		/* runs created for the ticket */
byte nlive;		/* runs not settled */
byte rstate[NR];
byte rowner[NR];	/* the claiming (or readopting) actor */
byte racown[NR];	/* who owns aftercare: the record_exit winner */
byte rrec[NR];		/* the exit recorded at the checkpoint (X_*) */
bit rstop[NR];		/* a stop (cancel) was requested */

#define TICKET(r)	((r) / RPT)
#define CUR(t)		((t) * RPT + truns[t] - 1)	/* valid when truns[t] > 0 */

/* ------------------------------------------------------------ the world */

byte crashes;		/* spent of CRASHES */
byte unv;		/* spent of UNV */
byte forged;		/* spent of FORGED */
byte inflight;		/* run + 1 whose start a dead supervisor sent, not yet decided */
byte shim[NR];		/* SH_* */
bit marker[NR];		/* runs/<run>/started, fsync'ed */
byte exrec[NR];		/* runs/<run>/exit, fsync'ed: X_* */
bit rpend[NR];		/* recovery's memory: claimed, owner dead at the first look */

/* Ghosts: facts only the checker reads. */
bit executed[NR];	/* the job was forked */
byte rxg[NR];		/* record_exit grants */

/* Property names: always 0, printed by pan in the failing assertion. */
hidden byte P_ONCE;		/* a job executes at most once per run */
hidden byte P_ONE_RUN;		/* at most one run of a ticket executes at a time */
hidden byte P_RUNNING;		/* a job executes only once its run is running */
hidden byte P_ONE_EXIT;		/* at most one record_exit is granted per run */
hidden byte P_EXIT_OF_EXEC;	/* a run that executed settles through its checkpoint */
hidden byte P_CODE;		/* the settled exit is the job's own when a record exists */
hidden byte P_OWNER;		/* only aftercare's owner settles; recovery once it is dead */
hidden byte P_ABORTED;		/* an aborted run never executed */
hidden byte P_UNSTARTED;	/* a run settled from claimed never executed */
hidden byte P_LEASE;		/* a ticket has at most one unsettled run */

#define PROP(name, e)	assert((e) || name)

/*
 * Witnesses (-DWITNESSES): events the model must be able to reach, so that
 * a model that lost a behaviour (a guard too strong, a step never enabled)
 * fails its check instead of passing vacuously. Each is a ghost bit set
 * where the event happens and an LTL formula [] !bit, which check.sh
 * expects spin to violate. Without -DWITNESSES they cost nothing.
 */
#define W_SUCCEEDED	0	/* a run settles succeeded */
#define W_FAILED	1	/* ... failed */
#define W_ORPHANED	2	/* ... orphaned */
#define W_CANCELLED	3	/* ... cancelled */
#define W_ABORTED	4	/* ... aborted */
#define W_TICKET_FAILED	5	/* a ticket fails for good (its attempts spent) */
#define W_RETRY_RAN	6	/* a ticket's second or later run executes */
#define W_RCV_CHECKPOINT 7	/* recovery is granted a record_exit */
#define W_SUP_LOST	8	/* the supervisor's record_exit is denied (the race) */
#define W_READOPT	9	/* a readopt is granted */
#define W_ADOPTED	10	/* the supervisor watches a run recovery readopted */
#define W_HEIR		11	/* recovery settles an aftercare whose owner died */
#define W_RCV_ABANDON	12	/* recovery abandons a claimed run (confirmed) */
#define W_ABANDON_RUNNING 13	/* a running run whose job never executed is abandoned */
#define W_KILL		14	/* the reaper kills a stopped run's job */
#define W_REAP_SETTLE	15	/* the reaper settles a stopped claimed run */
#define W_CLAIM_LOST	16	/* the supervisor abandons a claim whose answer it lost */
#define W_START_DENIED	17	/* the supervisor's start is denied (kill, abandon) */
#define W_MISREAD	18	/* a gone shim is read as alive */
#define W_FORGED	19	/* a forged request is denied */
#define W_TWO_LIVE	20	/* both tickets have a job executing at once */
#define W_INFLIGHT	21	/* a dead supervisor's start is granted after its death */
#define NWIT		22
#ifdef WITNESSES
bit wit[NWIT];
#define SAW(n)		wit[n] = 1
#else
#define SAW(n)		skip
#endif
#define SAW_IF(e, n)	if :: (e) -> SAW(n) :: else -> skip fi

hidden byte h;		/* scratch inside atomic steps */
hidden byte hf;		/* the run a forged request names */
hidden byte ho;		/* the outcome finish() applies */

/* Which crashes the budget may be spent on (all, unless -D says). */
#ifndef C_SUP
#define C_SUP	1
#endif
#ifndef C_RCV
#define C_RCV	1
#endif
#ifndef C_SHIM
#define C_SHIM	1
#endif
#ifndef C_COORD
#define C_COORD	1
#endif
#define CRASH_OK(k)	((k) && crashes < CRASHES)

/* A settled run whose shim is gone can do nothing more: its facts are put
 * back to zero, so states that differ only in dead history are one. */
inline tidy(r)
{
	if
	:: TERMINAL(rstate[r]) && (shim[r] == SH_NONE || shim[r] == SH_GONE) ->
		rpend[r] = 0; rowner[r] = 0; racown[r] = 0; rrec[r] = 0;
		rstop[r] = 0; marker[r] = 0; exrec[r] = 0; rxg[r] = 0
	:: else -> skip
	fi
}

/* The live instance of an actor crashed: every record of it now names a
 * dead instance. A supervisor's shims still waiting for their go die with
 * it (PR_SET_PDEATHSIG, taken as immediate). */
inline bury(live, dead)
{
	h = 0;
	do
	:: h < NR ->
		if
		:: rowner[h] == live -> rowner[h] = dead
		:: else -> skip
		fi;
		if
		:: racown[h] == live -> racown[h] = dead
		:: else -> skip
		fi;
		if
		:: live == SUP_LIVE && shim[h] == SH_WAIT -> shim[h] = SH_GONE; tidy(h)
		:: else -> skip
		fi;
		h++
	:: else -> break
	od;
	h = 0
}

/* Unsettled runs of ticket t owned by c. */
#define OWNS(c, t)	(truns[t] > 0 && LIVE(rstate[CUR(t)]) && rowner[CUR(t)] == (c))
#define OWNED(c)	(OWNS(c, 0) + OWNS(c, 1))

/* ------------------------------------------------------------ the verbs */

/*
 * Each verb is one IMMEDIATE transaction, run inside the caller's atomic
 * step. res: 1 granted, 0 denied (claim: the run, or NR when denied).
 */

/* The ticket's next state after its run ended with outcome out (DESIGN §4;
 * a stop request wins, aborted spends no attempt). */
inline finish(r, out)
{
	ho = out;	/* once: out may be an expression of rstate[r] */
	rstate[r] = ho;
	SAW_IF(ho == R_SUCCEEDED, W_SUCCEEDED);
	SAW_IF(ho == R_FAILED, W_FAILED);
	SAW_IF(ho == R_ORPHANED, W_ORPHANED);
	SAW_IF(ho == R_CANCELLED, W_CANCELLED);
	SAW_IF(ho == R_ABORTED, W_ABORTED);
	nlive--;
	h = TICKET(r);
	if
	:: rstop[r] && ho != R_SUCCEEDED -> tstate[h] = T_CANCELLED
	:: else ->
		if
		:: ho == R_SUCCEEDED -> tstate[h] = T_SUCCEEDED
		:: ho == R_ABORTED -> tstate[h] = T_READY
		:: ho == R_CANCELLED -> tstate[h] = T_CANCELLED
		:: else ->
			tbad[h]++;
			if
			:: tbad[h] < ATT -> tstate[h] = T_READY
			:: else -> tstate[h] = T_FAILED; SAW(W_TICKET_FAILED)
			fi
		fi
	fi;
	if
	:: tstate[h] != T_READY -> tbad[h] = 0	/* final: the count is history */
	:: else -> skip
	fi;
	h = 0;
	ho = 0;
	tidy(r)
}

/* The outcome the coordinator derives (proto/states.c run_outcome). */
#define DERIVED(r)	(rstop[r] -> R_CANCELLED : \
			 (rstate[r] == R_CLAIMED -> R_ABORTED : \
			  (rrec[r] == X_NONE -> R_ORPHANED : \
			   (rrec[r] == X_OK -> R_SUCCEEDED : R_FAILED))))

inline c_claim(c, t, res)
{
	if
	:: ACTOR(c) && tstate[t] == T_READY && truns[t] < RPT && OWNED(c) < SLOTS ->
		PROP(P_LEASE, truns[t] == 0 || !LIVE(rstate[CUR(t)]));
		truns[t]++;
		res = CUR(t);
		nlive++;
		rstate[res] = R_CLAIMED;
		rowner[res] = c;
		tstate[t] = T_CLAIMED
	:: else -> res = NR
	fi
}

inline c_start(c, r, res)
{
	if
	:: ACTOR(c) && MOVE_start_OK(rstate[r], c, r) ->
		rstate[r] = MOVE_start_TO(rstate[r]);
		rpend[r] = 0;	/* recovery reads it for claimed runs only */
		heff = 1;
		res = 1
	:: else -> res = 0	/* not_claimed{state}, not_permitted */
	fi
}

inline c_record_exit(c, r, rec, res)
{
	if
#ifdef MUT_RX_ANY
	:: ACTOR(c) && LIVE(rstate[r]) ->
#else
	:: ACTOR(c) && MOVE_record_exit_OK(rstate[r], c, r) ->
#endif
		rstate[r] = MOVE_record_exit_TO(rstate[r]);
		racown[r] = c;
		SAW_IF(IS_RCV(c), W_RCV_CHECKPOINT);
		rrec[r] = rec;
		rxg[r]++;
		PROP(P_ONE_EXIT, rxg[r] == 1);
		heff = 1;
		res = 1
	:: else -> res = 0	/* already_claimed{state}, not_permitted */
	fi
}

#ifdef MUT_ABANDON_ANY
#define ABANDON_OK(c, r)	(LIVE(rstate[r]))
#else
#define ABANDON_OK(c, r)	(ACTOR(c) && MOVE_abandon_OK(rstate[r], c, r))
#endif

inline c_abandon(c, r, res)
{
	if
	:: rstate[r] == R_ABORTED -> res = 1	/* idempotent */
	:: else ->
		if
		:: ABANDON_OK(c, r) ->
			PROP(P_ABORTED, !executed[r]);
			SAW_IF(IS_RCV(c) && rstate[r] == R_CLAIMED, W_RCV_ABANDON);
			SAW_IF(rstate[r] == R_RUNNING, W_ABANDON_RUNNING);
			finish(r, MOVE_abandon_TO(rstate[r]));
			heff = 1;
			res = 1
		:: else -> res = 0	/* not_abandonable{state}, not_permitted */
		fi
	fi
}

#ifdef MUT_SETTLE_ANY
#define SETTLE_OK(c, r)		(LIVE(rstate[r]))
#else
#define SETTLE_OK(c, r)		(ACTOR(c) && MOVE_settle_OK(rstate[r], c, r))
#endif

/* out: the outcome the caller names; 0 to have it derived (actors do). */
inline c_settle(c, r, out, res)
{
	if
	:: TERMINAL(rstate[r]) -> res = 1	/* applied=false */
	:: else ->
		if
		:: SETTLE_OK(c, r) ->
			PROP(P_OWNER, rstate[r] != R_AFTERCARE || (c) == racown[r] ||
			    (IS_RCV(c) && !ALIVE(racown[r])));
			PROP(P_UNSTARTED, rstate[r] != R_CLAIMED || !executed[r]);
			PROP(P_EXIT_OF_EXEC, !executed[r] || rxg[r] == 1);
			SAW_IF(rstate[r] == R_AFTERCARE && IS_RCV(c) && !ALIVE(racown[r]), W_HEIR);
			SAW_IF((c) == REAPER, W_REAP_SETTLE);
			PROP(P_CODE, exrec[r] == X_NONE || rrec[r] == exrec[r]);
#ifndef MUT_SETTLE_ANY
			assert(MOVE_settle_TO(rstate[r]) == R_OUTCOME);
#endif
			if
			:: out != 0 -> finish(r, out)
			:: else -> finish(r, DERIVED(r))
			fi;
			heff = 1;
			res = 1
		:: else -> res = 0	/* not_aftercare_owner, not_permitted */
		fi
	fi
}

inline c_readopt(c, r, owner, res)
{
	if
	/* a lease row for the run, not settled (it moves no state: not in
	 * run_moves.def) */
	:: ACTOR(c) && LIVE(rstate[r]) -> rowner[r] = owner; heff = 1; res = 1; SAW(W_READOPT)
	:: else -> res = 0	/* lease_not_held */
	fi
}

/* Operator verb: cancel records a stop request on the live run (the reaper
 * enforces it); a ready ticket is cancelled at once. */
inline c_cancel(t)
{
	if
	:: tstate[t] == T_READY -> tstate[t] = T_CANCELLED; tbad[t] = 0
	:: tstate[t] == T_CLAIMED -> rstop[CUR(t)] = 1
	:: else -> skip
	fi
}

/*
 * The coordinator: one process, one request at a time, each decided in one
 * step. A client's call is its send and its receive inside the client's
 * atomic step, so the decision and the client's reading of it are one
 * transition (a crash or delay between them is a separate alternative at
 * the client).
 */
#define V_CLAIM		1	/* r: the ticket */
#define V_START		2
#define V_RECORD_EXIT	3	/* a: the exit record (X_*) */
#define V_ABANDON	4
#define V_SETTLE	5	/* a: the outcome the caller names, 0 derive */
#define V_READOPT	6	/* a: the new owner */
#define V_CANCEL	7	/* r: the ticket */

chan req = [0] of { byte, byte, byte, byte };	/* verb, caller, run, arg */
chan rep = [0] of { byte };			/* res */

hidden byte hv, hc, hr, ha, hres;
hidden byte heff;	/* the decision changed something */

proctype Coordinator()
{
end_coord:
	do
	:: atomic {
		req?hv, hc, hr, ha ->
		heff = 0;
		if
		:: hv == V_CLAIM -> c_claim(hc, hr, hres)
		:: hv == V_START -> c_start(hc, hr, hres)
		:: hv == V_RECORD_EXIT -> c_record_exit(hc, hr, ha, hres)
		:: hv == V_ABANDON -> c_abandon(hc, hr, hres)
		:: hv == V_SETTLE -> c_settle(hc, hr, ha, hres)
		:: hv == V_READOPT -> c_readopt(hc, hr, ha, hres)
		:: hv == V_CANCEL -> c_cancel(hr); hres = 1
		fi;
		hv = 0; hc = 0; hr = 0; ha = 0;
		rep!hres }
	:: atomic {
		/* a start its sender died after sending, decided now */
		inflight != 0 ->
		c_start(SUP_DEAD, inflight - 1, hres);
		SAW_IF(hres, W_INFLIGHT);
		inflight = 0;
		heff = 0;
		hres = 0 }
	od
}

/* A request and its answer, from inside the caller's atomic step. */
#define CALL(v, c, r, a)	req!v, c, r, a; rep?res

/* ------------------------------------------------------------ shim, job */

/* The shim takes its go: it clears its death signal, writes `started`
 * (fsync) and forks the job. */
inline fork_job(r)
{
	PROP(P_ONCE, !executed[r]);
	PROP(P_RUNNING, rstate[r] == R_RUNNING);
	h = TICKET(r) * RPT;
	do
	:: h < TICKET(r) * RPT + RPT && h != r && JOB_UP(h) -> PROP(P_ONE_RUN, false); h++
	:: h < TICKET(r) * RPT + RPT && !(h != r && JOB_UP(h)) -> h++
	:: else -> break
	od;
	h = 0;
	executed[r] = 1;
	shim[r] = SH_LIVE;
	SAW_IF(r % RPT != 0, W_RETRY_RAN);
	SAW_IF(truns[0] > 0 && truns[1] > 0 && JOB_UP(CUR(0)) && JOB_UP(CUR(1)), W_TWO_LIVE)
}

/* The go reaches a shim that waits for it. A SIGKILL can fall between its
 * marker and the fork (one before the marker is the same as one before the
 * go: the world's first alternative). */
inline go(r)
{
	if
	:: shim[r] == SH_WAIT ->
		if
#ifdef MUT_MARKER_LATE
		:: true -> fork_job(r); marker[r] = 1
		:: CRASH_OK(C_SHIM) -> crashes++; fork_job(r); shim[r] = SH_GONE
#else
		:: true -> marker[r] = 1; fork_job(r)
		:: CRASH_OK(C_SHIM) -> crashes++; marker[r] = 1; shim[r] = SH_GONE
#endif
		fi
	:: else -> skip	/* it is gone: the write fails, the reaping tells */
	fi
}

/* The job ended with x and the shim wrote its exit record durably. */
inline job_end(r, x)
{
	/* No one checkpoints an exit before its record exists. */
	PROP(P_CODE, rstate[r] == R_RUNNING);
	exrec[r] = x;
	shim[r] = SH_GONE;
	tidy(r)
}

/* A job's forged request: any actor verb, for any run. */
#define FORGE_RUN(i)	:: LIVE(rstate[i]) -> hf = i	/* a settled or absent run: a no-op in every variant */
inline forge()
{
	if
	EACH_RUN(FORGE_RUN)
	fi;
	if
	:: hv = V_ABANDON; ha = 0
	:: hv = V_SETTLE; ha = R_SUCCEEDED
	:: hv = V_RECORD_EXIT; ha = X_OK
	:: hv = V_START; ha = 0
	:: hv = V_READOPT; ha = JOB
	fi;
#ifdef MUT_TRUST_LABEL
	req!hv, SUP_LIVE, hf, ha;	/* taken for who it says it is */
#else
	req!hv, JOB, hf, ha;
#endif
	rep?hres;
	/* Only one that changed something spends the budget: the job may
	 * send any number of denied ones (a denial changes nothing, so they
	 * cost no state). */
	if
	:: heff -> forged++
	:: else -> SAW(W_FORGED)
	fi;
	heff = 0;
	hf = 0
}

/*
 * The steps no actor makes, for every run's shim and job (one process: they
 * share no local state, and fewer processes keep the fairness construction
 * small):
 *   a SIGKILL of the waiting shim (no started marker);
 *   the job's end and its exit record (one step: nothing reads the record
 *   before the shim is gone);
 *   a SIGKILL of the shim while the job runs or before the record (the job
 *   dies with it; no record);
 *   a forged request from the job;
 *   the reaper's kill of a stopped run's job: a stop was requested and the
 *   run is running (its scan row), the kill is identity-checked (only while
 *   the job's group leader lives), and the job dies of it, its record
 *   written. Nothing between its scan and the job's death can be told from
 *   it happening before the scan or after the death, so this is one step;
 *   a reaper crash before the kill (before_kill) is a kill not made yet (the
 *   restarted reaper scans again), so it is not an alternative of its own.
 * The supervisor spawns the shim (SH_WAIT) and gives it its go (go()).
 */
#define W_EN(i)		(JOB_UP(i) || (shim[i] == SH_WAIT && CRASH_OK(C_SHIM)))
#define W_ANY(i)	W_EN(i) ||
#define W_SEL(i)	:: W_EN(i) -> hw = i
#define STOPPABLE(i)	(rstop[i] && rstate[i] == R_RUNNING && JOB_UP(i))

hidden byte hw;		/* the run the world step is about */

proctype World()
{
end_world:
	do
	:: atomic { (EACH_RUN(W_ANY) false) ->
		if
		EACH_RUN(W_SEL)
		fi;
		if
		:: shim[hw] == SH_WAIT && CRASH_OK(C_SHIM) ->
			crashes++; shim[hw] = SH_GONE; tidy(hw)
		:: JOB_UP(hw) -> job_end(hw, X_OK)
		:: JOB_UP(hw) -> job_end(hw, X_FAIL)
		:: JOB_UP(hw) && CRASH_OK(C_SHIM) -> crashes++; shim[hw] = SH_GONE; tidy(hw)
		:: JOB_UP(hw) && forged < FORGED && nlive > 0 -> forge()
		:: STOPPABLE(hw) -> job_end(hw, X_SIG); SAW(W_KILL)	/* the reaper */
		fi;
		hw = 0 }
	od
}

/* ------------------------------------------------------------ supervisor */

/* Its run table (supervisor/sup_run.c), one row per ticket: a ticket has
 * at most one unsettled run, and the coordinator's slot guard counts. */
#define S_FREE		0
#define S_SPAWNED	1	/* claimed; its shim waits for the go */
#define S_STARTED	2	/* start granted and go sent, or adopted: watching */
#define S_CHECKED	3	/* the exit checkpoint is ours: settle */

/* A run of ours the coordinator knows and we do not watch: recovery
 * readopted it for us (running), or our claim's answer was lost (claimed). */
#define ADOPTABLE(t)	(truns[t] > 0 && rowner[CUR(t)] == SUP_LIVE && \
			 (rstate[CUR(t)] == R_RUNNING || rstate[CUR(t)] == R_CLAIMED))

#define SUP_EN(t)	((st[t] == S_FREE && tstate[t] == T_READY && truns[t] < RPT) || \
			 (st[t] == S_FREE && ADOPTABLE(t)) || \
			 st[t] == S_SPAWNED || \
			 (st[t] == S_STARTED && shim[sr[t]] == SH_GONE) || \
			 st[t] == S_CHECKED)

/* The crash: a new instance with an empty table. */
inline sup_crash()
{
	crashes++;
	bury(SUP_LIVE, SUP_DEAD);
	st[0] = S_FREE; st[1] = S_FREE;
	sr[0] = 0; sr[1] = 0
}

/* Start denied or unanswered: the job must not run. Kill the waiting shim
 * (our child: identity-checked) and abandon. */
inline kill_abandon(t)
{
	if
	:: SHIM_UP(r) -> shim[r] = SH_GONE; tidy(r)
	:: else -> skip
	fi;
	CALL(V_ABANDON, SUP_LIVE, r, 0);
	st[t] = S_FREE
}

/*
 * One step of row t. Steps that commute with everything that could watch
 * them in between are one: the claim and the spawn; the start and the go
 * (the crash windows between them are alternatives of the step: after_claim,
 * after_start); the reaping, the reading of the shim's evidence and its
 * record_exit (or abandon); a denied start, the kill and the abandon.
 */
inline sup_step(t)
{
	r = sr[t];
	if
	:: st[t] == S_FREE && tstate[t] == T_READY && truns[t] < RPT ->
		if
		:: true -> CALL(V_CLAIM, SUP_LIVE, t, 0);
			if
			:: res < NR ->
				/* posix_spawn: the shim sets up, waits for its go */
				sr[t] = res;
				shim[res] = SH_WAIT;
#ifdef MUT_GO_EARLY
				r = res;
				go(r);
#endif
				st[t] = S_SPAWNED
			:: else -> skip
			fi
		:: CRASH_OK(C_COORD) ->
			/* coordinator.after_commit (or a claim held past the
			 * supervisor's timeout): granted, the answer lost */
			crashes++;
			CALL(V_CLAIM, SUP_LIVE, t, 0)
		:: CRASH_OK(C_SUP) -> CALL(V_CLAIM, SUP_LIVE, t, 0); sup_crash()	/* after_claim */
		fi
	:: st[t] == S_FREE && ADOPTABLE(t) ->
		if
		:: rstate[CUR(t)] == R_RUNNING -> sr[t] = CUR(t); st[t] = S_STARTED; SAW(W_ADOPTED)
		:: else -> r = CUR(t); CALL(V_ABANDON, SUP_LIVE, r, 0); SAW(W_CLAIM_LOST)
			/* "claim answer lost" */
		fi
	:: st[t] == S_SPAWNED && !SHIM_UP(r) -> CALL(V_ABANDON, SUP_LIVE, r, 0); st[t] = S_FREE
	:: st[t] == S_SPAWNED && SHIM_UP(r) ->
		if
		:: true -> CALL(V_START, SUP_LIVE, r, 0);
			if
			:: res -> go(r); st[t] = S_STARTED
			:: else -> kill_abandon(t); SAW(W_START_DENIED)
			fi
		:: CRASH_OK(C_SUP) -> CALL(V_START, SUP_LIVE, r, 0); sup_crash()	/* after_start */
		:: CRASH_OK(C_COORD) -> crashes++; kill_abandon(t)	/* before_commit */
		:: CRASH_OK(C_COORD) -> crashes++; CALL(V_START, SUP_LIVE, r, 0); kill_abandon(t)
			/* after_commit: granted, the answer lost */
		fi
	:: st[t] == S_STARTED && shim[r] == SH_GONE ->
		/* reaped (adopted: its identity gone). A record or a started
		 * marker means the job executed. */
		if
		:: marker[r] || exrec[r] != X_NONE ->
			CALL(V_RECORD_EXIT, SUP_LIVE, r, exrec[r]);
			if
			:: res -> st[t] = S_CHECKED
			:: else -> st[t] = S_FREE; SAW(W_SUP_LOST)	/* someone else won: nothing more */
			fi
		:: else -> CALL(V_ABANDON, SUP_LIVE, r, 0); st[t] = S_FREE
		fi
	:: st[t] == S_CHECKED -> CALL(V_SETTLE, SUP_LIVE, r, 0); st[t] = S_FREE
	fi;
	if
	:: st[t] == S_FREE -> sr[t] = 0
	:: else -> skip
	fi;
	r = 0;
	res = 0
}

/*
 * Besides the crashes inside a step (after_claim, after_start), one can
 * come between any two steps: after_spawn (S_SPAWNED), before_record_exit
 * (S_STARTED, shim gone), before_settle (S_CHECKED).
 */
proctype Supervisor()
{
	byte st[NT], sr[NT], t, r, res;

end_sup:
	do
	:: atomic {
		if
		:: SUP_EN(0) -> t = 0
		:: SUP_EN(1) -> t = 1
		fi;
		sup_step(t);
		t = 0 }
	:: atomic { CRASH_OK(C_SUP) -> sup_crash() }
	/* after_spawn, with its start sent: the coordinator may still decide
	 * it after the death (nng delivered it; the reply finds no one) */
	:: atomic { CRASH_OK(C_SUP) && st[0] == S_SPAWNED && inflight == 0 ->
		inflight = sr[0] + 1; sup_crash() }
	:: atomic { CRASH_OK(C_SUP) && st[1] == S_SPAWNED && inflight == 0 ->
		inflight = sr[1] + 1; sup_crash() }
	od
}

/* ------------------------------------------------------------ recovery */

#define A_NONE		0
#define A_LOOK		1	/* a claimed row was scanned: judge its owner next */
#define A_LOOKRUN	2	/* (MUT_READ_EARLY) a running row: judge its shim next */
#define A_ABANDON	3
#define A_READOPT	4
#define A_RECORD	5
#define A_SETTLE	6

/*
 * A misread: an identity that exists but cannot be read counts as alive.
 * Most misreads only make recovery wait, which is the same as looking
 * later (it picks its runs freely): those are not alternatives here. The
 * one that makes it act is a gone shim read as alive while its owner is
 * dead: recovery then readopts a run whose job has ended.
 */
#define MISREAD(x)	if :: !(x) && unv < UNV -> unv++; x = 1; SAW(W_MISREAD) :: true -> skip fi

/*
 * recovery/rcv_decide.c as DESIGN §7 states it. A lease can lapse at any
 * moment (time is not modelled: a paused owner stops renewing whenever), so
 * every unsettled run is a candidate; what recovery does with it is decided
 * by process identity alone. Recovery picks a run it has something to do
 * for (a look that decides nothing changes nothing). The scan row and the
 * identity checks are one step, except for a claimed row whose owner lives
 * while a supervisor crash can still come: then the owner is judged a step
 * later, as the real scan can be stale by the time it is judged (a dead
 * owner stays dead, and without crashes left a live one stays alive, so
 * then a later judgement would be the same).
 */
#ifdef MUT_LEASE_TAKEOVER
#define RCV_AFTERCARE(i)	(rstate[i] == R_AFTERCARE)	/* owner dead, or lease lapsed */
#elif defined(MUT_NO_TAKEOVER)
#define RCV_AFTERCARE(i)	(rstate[i] == R_AFTERCARE && racown[i] == RCV_LIVE)
#else
#define RCV_AFTERCARE(i)	(rstate[i] == R_AFTERCARE && \
				 (!ALIVE(racown[i]) || racown[i] == RCV_LIVE))
#endif
#if defined(MUT_UNV_DEAD) || defined(MUT_READ_EARLY)
#define RCV_RUNNING(i)		(rstate[i] == R_RUNNING)
#else
#define RCV_RUNNING(i)		(rstate[i] == R_RUNNING && (!SHIM_UP(i) || !ALIVE(rowner[i])))
#endif
#define RCV_CLAIMED(i)		(rstate[i] == R_CLAIMED && (CRASH_OK(C_SUP) || !ALIVE(rowner[i])))
#define RCV_WANTS(i)		(ri == NR && (RCV_CLAIMED(i) || RCV_RUNNING(i) || RCV_AFTERCARE(i)))

/* The claimed row's owner, judged now. */
inline rcv_judge_claimed()
{
	oalive = ALIVE(rowner[ri]);
	if
	:: TERMINAL(rstate[ri]) -> act = A_NONE	/* settled since the scan: not ours */
	:: !TERMINAL(rstate[ri]) && oalive -> act = A_NONE; rpend[ri] = 0
		/* its owner starts or abandons it */
	:: !TERMINAL(rstate[ri]) && !oalive ->
#ifdef MUT_NO_CONFIRM
		act = A_ABANDON
#else
		/* a start sent before the owner died may be decided after our
		 * scan: only a second look proves it never started */
		if
		:: rpend[ri] -> act = A_ABANDON; rpend[ri] = 0
		:: else -> act = A_NONE; rpend[ri] = 1
		fi
#endif
	fi;
	oalive = 0
}

/* A running row: its shim judged now, then (read after it: a gone shim
 * writes no more) its marker and exit record. */
inline rcv_judge_running()
{
	oalive = ALIVE(rowner[ri]);
	salive = SHIM_UP(ri);
	if
	:: !oalive -> MISREAD(salive)
	:: else -> skip
	fi;
#ifdef MUT_UNV_DEAD
	if :: salive && unv < UNV -> unv++; salive = 0 :: true -> skip fi;
#endif
#ifndef MUT_READ_EARLY
	rec = exrec[ri];
#endif
	if
	:: salive && oalive -> act = A_NONE	/* the owner watches its job */
	:: salive && !oalive -> act = A_READOPT	/* for the live supervisor */
	:: !salive && !marker[ri] && rec == X_NONE -> act = A_ABANDON
		/* the shim died before its go: never executed */
	:: else -> act = A_RECORD
	fi;
	oalive = 0;
	salive = 0
}

inline rcv_look()
{
	if
	:: rstate[ri] == R_CLAIMED && ALIVE(rowner[ri]) && CRASH_OK(C_SUP) -> act = A_LOOK
	:: rstate[ri] == R_CLAIMED && !(ALIVE(rowner[ri]) && CRASH_OK(C_SUP)) -> rcv_judge_claimed()
	:: rstate[ri] == R_RUNNING ->
#ifdef MUT_READ_EARLY
		rec = exrec[ri]; act = A_LOOKRUN
#else
		rcv_judge_running()
#endif
	:: rstate[ri] == R_AFTERCARE ->
		oalive = ALIVE(racown[ri]);
#ifdef MUT_LEASE_TAKEOVER
		act = A_SETTLE
#else
		if
		:: !oalive || racown[ri] == RCV_LIVE -> act = A_SETTLE
		:: else -> act = A_NONE
		fi
#endif
		oalive = 0
	fi
}

#define RCV_RESET	ri = NR; rec = 0; act = A_NONE; res = 0
#define RCV_CRASH	atomic { CRASH_OK(C_RCV) -> crashes++; goto crash }
#define RCV_ANY(i)	RCV_WANTS(i) ||
#define RCV_SEL(i)	:: RCV_WANTS(i) -> ri = i

/*
 * One look, then the verb it calls for, each verb behind the failpoint that
 * precedes it: a crash can come at every step of the loop (before_abandon,
 * before_readopt, before_record_exit, before_settle).
 */
proctype Recovery()
{
	byte ri, rec, act, res;
	bit oalive, salive;

restart:
	atomic {
		RCV_RESET;
		h = 0;
		do
		:: h < NR -> rpend[h] = 0; h++
		:: else -> break
		od;
		h = 0 }
end_rcv:
	do
	:: RCV_CRASH
	:: atomic { (EACH_RUN(RCV_ANY) false) ->
		if
		EACH_RUN(RCV_SEL)
		fi;
		rcv_look();
		if
		:: act == A_NONE -> RCV_RESET
		:: else -> skip
		fi }
	:: atomic { act == A_LOOK && (!ALIVE(rowner[ri]) || rstate[ri] != R_CLAIMED) ->
		/* (judged once it can matter: judging a claimed row whose owner
		 * still lives decides nothing, the same as judging it later) */
		rcv_judge_claimed();
		if
		:: act == A_NONE -> RCV_RESET
		:: else -> skip
		fi }
	:: atomic { act == A_LOOKRUN ->
		rcv_judge_running();
		if
		:: act == A_NONE -> RCV_RESET
		:: else -> skip
		fi }
	:: atomic { act == A_ABANDON -> CALL(V_ABANDON, RCV_LIVE, ri, 0); RCV_RESET }
	:: atomic { act == A_READOPT -> CALL(V_READOPT, RCV_LIVE, ri, SUP_LIVE); RCV_RESET }
	:: atomic { act == A_RECORD -> CALL(V_RECORD_EXIT, RCV_LIVE, ri, rec);
		if
		:: res -> act = A_SETTLE; res = 0	/* the aftercare is ours */
		:: else -> RCV_RESET	/* denied: the winner settles */
		fi }
	:: atomic { act == A_SETTLE -> CALL(V_SETTLE, RCV_LIVE, ri, 0); RCV_RESET }
	od;
crash:
	atomic { bury(RCV_LIVE, RCV_DEAD) };
	goto restart
}

/* ------------------------------------------------------------ reaper */

/*
 * The reaper's kill of a stopped run's job is a step of the world (above).
 * Here, its settle of a stopped run that never started (claimed longer
 * than the grace period: the outcome is derived, cancelled): a scan row,
 * then the settle a step later, by when the scan can be stale (the owner
 * may have started the run: then the settle is denied). A reaper crash
 * only forgets what it was about to do, the same as not doing it yet, so
 * it is not an alternative.
 */
#define REAP_PICK(i)	:: atomic { kr == 0 && rstop[i] && rstate[i] == R_CLAIMED -> kr = i + 1 }

proctype Reaper()
{
	byte kr, res;	/* kr: the run to settle, + 1; 0 none */

end_reap:
	do
	EACH_RUN(REAP_PICK)
	:: atomic { kr != 0 -> CALL(V_SETTLE, REAPER, kr - 1, 0); kr = 0; res = 0 }
	od
}

/* ------------------------------------------------------------ operator */

/* One cancel of ticket 0 at any moment (the tickets are symmetric, so
 * ticket 1 adds nothing). */
proctype Operator()
{
	atomic { req!V_CANCEL, OPER, 0, 0; rep?hres }
}

/* ------------------------------------------------------------ */

init
{
	atomic {
		run Coordinator();
		run Supervisor();
		run Recovery();
		run World();
		if
		:: CANCELS > 0 -> run Operator(); run Reaper()
		:: else -> skip
		fi
	}
}

/* Every claimed run is eventually settled (the crash budget is finite, so
 * crashes stop): under weak fairness, infinitely often nothing is unsettled. */
ltl settled { [] <> (nlive == 0) }

#ifdef WITNESSES
ltl w_succeeded { [] !wit[W_SUCCEEDED] }
ltl w_failed { [] !wit[W_FAILED] }
ltl w_orphaned { [] !wit[W_ORPHANED] }
ltl w_cancelled { [] !wit[W_CANCELLED] }
ltl w_aborted { [] !wit[W_ABORTED] }
ltl w_ticket_failed { [] !wit[W_TICKET_FAILED] }
ltl w_retry_ran { [] !wit[W_RETRY_RAN] }
ltl w_rcv_checkpoint { [] !wit[W_RCV_CHECKPOINT] }
ltl w_sup_lost { [] !wit[W_SUP_LOST] }
ltl w_readopt { [] !wit[W_READOPT] }
ltl w_adopted { [] !wit[W_ADOPTED] }
ltl w_heir { [] !wit[W_HEIR] }
ltl w_rcv_abandon { [] !wit[W_RCV_ABANDON] }
ltl w_abandon_running { [] !wit[W_ABANDON_RUNNING] }
ltl w_kill { [] !wit[W_KILL] }
ltl w_reap_settle { [] !wit[W_REAP_SETTLE] }
ltl w_claim_lost { [] !wit[W_CLAIM_LOST] }
ltl w_start_denied { [] !wit[W_START_DENIED] }
ltl w_misread { [] !wit[W_MISREAD] }
ltl w_forged { [] !wit[W_FORGED] }
ltl w_two_live { [] !wit[W_TWO_LIVE] }
ltl w_inflight { [] !wit[W_INFLIGHT] }
#endif
