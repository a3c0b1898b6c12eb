#ifndef BERTH_SUP_INT_H
#define BERTH_SUP_INT_H
#include <sys/queue.h>
#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "aftercare.h"
#include "ident.h"
#include "rpc.h"
#include "sup_loop.h"
#include "sup_run.h"

/*
 * The supervisor's insides, by floor (docs/ARCHITECTURE.md):
 *
 *   sup_loop.c   the loop: poll, signals and reaping, the reconcile pass
 *   sup_claim.c  the long-poll claim on its own client, and spawning a claim
 *   sup_act.c    the actions of the run table, and the calls they make
 *   sup_ahead.c  shims spawned ahead of their claims, and a run's hand-off
 *   sup_runs.c   the list of runs this supervisor watches
 *   sup_run.c    the run table itself (state x event -> next, action)
 *
 * A file calls only files below it.
 */

/* How long one synchronous call may ride out an absent coordinator before
 * the loop moves on; an unanswered request is resent (same request id) on
 * the next reconcile pass. */
#define SUP_RPC_TIMEOUT_MS 3000
/* Descriptors an adopting supervisor leaves unused by pidfds: for its
 * sockets, spawning and reading run directories. */
#define SUP_FD_SPARE 64
/* A claim the coordinator holds longer than its wait plus this is resent. */
#define SUP_CLAIM_GRACE_MS 10000
/* Shims kept spawned ahead of their claims, at most (sup_ahead.c). */
#define SUP_AHEAD_MAX 2
/* How long a hand-off may take to be written to a waiting shim. */
#define SUP_HANDOFF_MS 5000

struct sup_run {
	TAILQ_ENTRY(sup_run) entry;
	char id[64];
	char ticket[32];
	char alias[48];
	enum sup_state state;
	pid_t pid;   /* our child, the shim; -1 once reaped or when adopted */
	int pidfd;   /* an adopted shim's pidfd; -1 when none */
	int adopted; /* handed to us by recovery: watched, not waited for */
	int go_fd;   /* write end of the shim's go pipe; -1 once used */
	int have_ident;
	struct ident shim;
	/* What the run left, read once when its shim was found gone (a gone
	 * shim writes nothing more): record_exit and settle are made of it,
	 * however often they must be resent. */
	struct aftercare after;
	/* The shim's own account of the end (its status message), used when
	 * the exit record cannot be read from the disk (aftercare_use_status). */
	int has_status;
	struct exit_record status;
	/* What the go writes to a shim spawned ahead (handoff.h), built
	 * from the claim; NULL: the go is one byte. */
	char *handoff;
	size_t handoff_len;
	/* The request still owed an answer, resent with the same id so the
	 * coordinator replays instead of deciding twice. */
	uint64_t req_id;
	int req_verb;
	/* The next run's claim, sent as a part of this run's record_exit
	 * (Request.then) and resent with it under this request id. */
	uint64_t then_req_id;
	char outcome[16]; /* settle: "" lets the coordinator derive it */
	char reason[PATH_MAX + 512];
};

TAILQ_HEAD(sup_runs, sup_run);

/* A shim spawned ahead of its claim, waiting on its go pipe (sup_ahead.c). */
struct sup_ahead {
	pid_t pid;
	int go_fd;
	struct ident id;
};

struct sup {
	const struct sup_opts *o;
	/*
	 * Two clients of one sender: every client of a process carries the
	 * process's instance and draws from one request-id counter (rpc.c), so
	 * hello, claims and everything else come from the one instance that
	 * owns our runs. The claim has a client of its own because it waits:
	 * a REQ client has one request in flight, and every synchronous call
	 * on a shared one would abandon the held claim, which would then
	 * have to be sent again at every reconcile pass.
	 */
	struct rpc_client *rpc;       /* synchronous calls (sup_act_call) */
	struct rpc_client *claim_rpc; /* the long-poll claim alone */
	const char *instance;
	char url[PATH_MAX + 16];
	char worker_url[PATH_MAX + 16]; /* jobs' BERTH_SOCKET: worker verbs only */
	char shim_path[PATH_MAX];
	const char *shim_failpoints;
	int sigfd;
	/* The status socket (SOCK_SEQPACKET): every shim gets the write end
	 * and sends its status on it when its job is over (exitrec.h); the
	 * kernel tells the sender's pid, so only our own shims are heard.
	 * One pair for all runs: a running job costs the supervisor no
	 * descriptor. */
	int status_rd;
	int status_wr; /* >= 10, see sup_spawn.c */
	/* Adopted shims are watched by pidfd while the descriptor limit leaves
	 * room (SUP_FD_SPARE kept free), else by polling their identity. */
	int pidfd_budget;
	int pidfds;
	int hello_done;
	int stopping;
	int broken;   /* the coordinator called one of our requests malformed */
	int answered; /* the last call got an answer: the coordinator is there */
	int claim_inflight;
	uint64_t claim_req_id;
	int64_t claim_sent_ms;
	int64_t claim_not_before;
	int64_t next_tick;
	/* Shims spawned ahead, one per free slot up to SUP_AHEAD_MAX: the
	 * claim names one (claim_shim) and, granted, its run is running with
	 * it already (DESIGN §4, §6). */
	struct sup_ahead ahead[SUP_AHEAD_MAX];
	int n_ahead;
	int64_t ahead_not_before;
	pid_t claim_shim; /* the shim the claim in flight names; 0: none */
	struct ident claim_shim_id;
	/* The claim sent as a part of a record_exit: the shim it names while
	 * it waits for an answer (no other claim goes out meanwhile), and the
	 * reply that answered it, for the claim's floor to take
	 * (sup_claim_then). */
	pid_t then_shim;
	struct ident then_shim_id;
	Berth__Reply *then_rep;
	/* The slots we fill: our --slots, until the coordinator says what
	 * `berth slots` gave the group (every claim and renew reply does). */
	int slots;
	struct sup_runs runs;
};

/* sup_runs.c: the runs this supervisor watches. */
const char *sup_runs_name(const struct sup_run *r); /* alias, else id */
struct sup_run *sup_runs_find_id(struct sup *s, const char *id);
struct sup_run *sup_runs_find_pid(struct sup *s, pid_t pid);
int sup_runs_busy(struct sup *s); /* runs counting against the slots */
struct sup_run *sup_runs_new(struct sup *s, const char *id, const char *ticket, const char *alias,
			     enum sup_state state);
void sup_runs_forget(struct sup *s, struct sup_run *r);
void sup_runs_free(struct sup *s);
/* What a claim or renew reply said of our slots (0: nothing said). */
void sup_runs_slots(struct sup *s, uint32_t slots);

/* sup_act.c: the one place a run changes state, and the calls it makes. */
enum { SUP_NOANSWER = -1, SUP_DENIED = 0, SUP_GRANTED = 1 };
/* One synchronous call on behalf of run r (may be NULL). SUP_GRANTED or
 * SUP_DENIED with *rep set, or SUP_NOANSWER (logged) when the call must be
 * tried again later. An error reply that retrying cannot cure counts as a
 * denial (logged loudly); one that calls the request malformed or of
 * another version is our bug: s->broken is set and the loop exits. */
int sup_act_call(struct sup *s, struct sup_run *r, Berth__Request *req, Berth__Reply **rep,
		 const char *verb);
void sup_act_reply_free(Berth__Reply *rep);
/* The table decides, the action runs, its outcome is the next event, until
 * an action leaves the run waiting for the world. */
void sup_act_fire(struct sup *s, struct sup_run *r, enum sup_event ev);
/* The shim is gone (or said its record did not reach the disk): read what
 * it left (once) and fire what that means. */
void sup_act_gone(struct sup *s, struct sup_run *r);
/* Renews run r's lease (re-arming it with readopt when it had lapsed);
 * nothing for a run in a terminal state. Moves nothing. */
void sup_act_renew(struct sup *s, struct sup_run *r);

/* sup_ahead.c: shims spawned ahead of their claims. */
/* Spawns what the free slots want (extra: runs about to free one, as a
 * gone shim's run does while its exit is checkpointed). */
void sup_ahead_fill(struct sup *s, int extra);
/* Whether the next claim may be fused with a shim spawned ahead: not with
 * --no-ahead, nor while a failpoint of the unfused windows is armed. */
int sup_ahead_fused(struct sup *s);
/* The shim a new claim may name, or NULL. */
const struct sup_ahead *sup_ahead_first(struct sup *s);
/* Takes the shim of pid out of the pool: 1 with *e, 0 when it is not there. */
int sup_ahead_take(struct sup *s, pid_t pid, struct sup_ahead *e);
/* A reaped child that was a waiting shim: 1 (dropped from the pool), else 0. */
int sup_ahead_reaped(struct sup *s, pid_t pid);
/* 1 when pid is a shim of the pool (waiting, or named by the claim). */
int sup_ahead_has(struct sup *s, pid_t pid);
void sup_ahead_free(struct sup *s);
struct sup_spawn_req;
/* The job's part of a spawn request for run r, granted as g: what a shim
 * spawned for its run is started with and a hand-off carries, one place. */
void sup_ahead_job_req(struct sup *s, const struct sup_run *r, const Berth__ClaimGranted *g,
		       struct sup_spawn_req *sr);
/* Builds run r's hand-off from its claim (into r->handoff). 0, or -errno
 * with the reason in r->reason. */
int sup_ahead_handoff(struct sup *s, struct sup_run *r, const Berth__ClaimGranted *g);

/* sup_claim.c: the long-poll claim. */
void sup_claim_send(struct sup *s);
/* Takes the claim's answer when one arrived (or gives up on one overdue). */
void sup_claim_recv(struct sup *s);
/* Takes the answer to a claim sent as a part of a record_exit, if one came. */
void sup_claim_then(struct sup *s);
/* When the loop must wake up for the claim (monotonic ms), or INT64_MAX. */
int64_t sup_claim_deadline(struct sup *s);
void sup_claim_withdraw(struct sup *s);

#endif
