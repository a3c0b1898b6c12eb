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
	/* The request still owed an answer, resent with the same id so the
	 * coordinator replays instead of deciding twice. */
	uint64_t req_id;
	int req_verb;
	char outcome[16]; /* settle: "" lets the coordinator derive it */
	char reason[PATH_MAX + 512];
};

TAILQ_HEAD(sup_runs, sup_run);

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

/* sup_claim.c: the long-poll claim. */
void sup_claim_send(struct sup *s);
/* Takes the claim's answer when one arrived (or gives up on one overdue). */
void sup_claim_recv(struct sup *s);
/* When the loop must wake up for the claim (monotonic ms), or INT64_MAX. */
int64_t sup_claim_deadline(struct sup *s);
void sup_claim_withdraw(struct sup *s);

#endif
