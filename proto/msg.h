#ifndef BERTH_MSG_H
#define BERTH_MSG_H
#include <stddef.h>
#include "berth.pb-c.h"

/* What every process needs to read berth's messages (DESIGN §5): the names
 * of verbs and error codes, and the questions asked of a reply. */

/* The verb's name as the trace spells it ("claim", "record_exit", ...):
 * the name of the Request oneof field; "none" when no verb is set. */
const char *msg_verb_name(const Berth__Request *req);
/* An error code's short name ("malformed", "version", "storage", ...), as
 * the trace's reason carries it; "error" for a code without one. */
const char *msg_error_name(int code);

int msg_is_granted(const Berth__Reply *r);
const char *msg_denied_reason(const Berth__Reply *r); /* NULL unless denied */
const char *msg_fact(const Berth__Reply *r, const char *key); /* a denial fact */
/* "granted", "denied: not_ready (state=claimed)", "error 3: ..." into buf. */
void msg_describe(const Berth__Reply *r, char *buf, size_t n);

#endif
