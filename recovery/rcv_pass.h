#ifndef BERTH_RCV_PASS_H
#define BERTH_RCV_PASS_H
#include <stdint.h>
#include "ident.h"
#include "rpc.h"

/* One recovery pass (DESIGN §7): scan, judge every run by identity
 * (rcv_decide), and act through the coordinator. The pass keeps only a
 * little memory between calls: which runs wait for a confirming second look. */

struct rcv;

struct rcv_opts {
	const char *home;
	uint32_t lease_ms;  /* lease for readopt; 0: the coordinator's default */
	int rpc_timeout_ms; /* per request, retried inside rpc_call */
	int64_t confirm_ms; /* a verdict needing confirmation must hold this long */
};

struct rcv_stats {
	int scanned; /* nonterminal runs seen */
	int acted;   /* requests that changed something */
	int pending; /* runs waiting for a confirming pass */
	int waiting; /* runs that are ours but cannot be finished yet */
};

struct rcv *rcv_new(const struct rcv_opts *o, struct rpc_client *c);
void rcv_free(struct rcv *r);
/* Says hello with this process's identity: the coordinator keeps it so
 * others (and our own later passes) can tell whether we are alive. */
int rcv_hello(struct rcv *r);
/* One pass. 0; -1 when the scan itself failed (logged; the next pass tries
 * again); -2 when the coordinator refused one of our requests as malformed
 * (rpc_pass.h: our bug, the actor exits for the launcher to restart it). */
int rcv_pass(struct rcv *r, struct rcv_stats *st);

/* The instance of the supervisor that most recently said hello and whose
 * identity still matches, or NULL. check judges an identity (ident_check
 * outside tests). */
typedef enum ident_status (*rcv_check_fn)(const struct ident *id);
const char *rcv_live_supervisor(const Berth__ScanReply *scan, rcv_check_fn check);
/* 1 when the actor row of instance exists and its identity is not gone. */
int rcv_instance_alive(const Berth__ScanReply *scan, const char *instance, rcv_check_fn check);

#endif
