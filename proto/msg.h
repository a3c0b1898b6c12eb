#ifndef BERTH_MSG_H
#define BERTH_MSG_H
#include <stddef.h>
#include "aftercare.h"
#include "berth.pb-c.h"
#include "ident.h"

/* What every process needs to read and write berth's messages (DESIGN §5):
 * the names of verbs and error codes, the questions asked of a reply, and
 * the conversions between berth's own facts and their messages — a process
 * identity and its Ident, what a run left behind and the RecordExit and
 * Settle fields that carry it. Each is written once, so every actor sends
 * and reads them alike. */

/* The verb's name as the trace spells it ("claim", "record_exit", ...):
 * the name of the Request oneof field; "none" when no verb is set. */
const char *msg_verb_name(const Berth__Request *req);
/* An error code's short name ("malformed", "version", "storage", ...), as
 * the trace's reason carries it; "error" for a code without one. */
const char *msg_error_name(int code);

int msg_is_granted(const Berth__Reply *r);
const char *msg_denied_reason(const Berth__Reply *r);         /* NULL unless denied */
const char *msg_fact(const Berth__Reply *r, const char *key); /* a denial fact */
/* "granted", "denied: not_ready (state=claimed)", "error 3: ..." into buf. */
void msg_describe(const Berth__Reply *r, char *buf, size_t n);

/* id as an Ident: m points into id (boot_id), which must outlive it. */
void msg_ident_to(const struct ident *id, Berth__Ident *m);
/* An Ident as an identity: 0, or -1 (out zeroed) when none was recorded
 * (no message, no pid or pid <= 0). The one pgid rule: a missing or
 * non-positive pgid is the pid's own group (an actor and a shim lead their
 * groups; ident_kill_group checks the leader still does). */
int msg_ident_from(const Berth__Ident *m, struct ident *out);

/* The exit checkpoint of run_id from what it left: the record's code or
 * signal and end, or has_record false (the run is then orphaned), and the
 * capture facts (as msg_settle_aftercare gives them). */
void msg_record_exit(Berth__RecordExit *re, char *run_id, const struct aftercare *a);
/* The aftercare facts of a Settle: the output's size (when the file is
 * there), capture_complete by aftercare.h's one rule, and from the exit
 * record the stragglers the shim ended and whether the disk was full. */
void msg_settle_aftercare(Berth__Settle *se, const struct aftercare *a);

/* Whether an Add stays within proto/berth_limits.h: 0, or -1 with why (a
 * sentence naming the limit) in buf. */
int msg_add_limits(const Berth__Add *a, char *buf, size_t n);

/* 1 when r is an error reply saying our request itself is wrong (malformed,
 * or another protocol version). From the coordinator to an actor that is
 * a bug in the actor, not input: the actor exits for the launcher to
 * restart it (trust is asymmetric, STYLE.md). */
int msg_reply_is_bug(const Berth__Reply *r);

#endif
