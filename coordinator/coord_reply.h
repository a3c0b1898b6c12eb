#ifndef BERTH_COORD_REPLY_H
#define BERTH_COORD_REPLY_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_ctx.h"

/* The three answers a handler gives (DESIGN §4-5): granted with its
 * payload, denied with a reason and the facts behind it, or an error.
 * Each replaces whatever the handler built before. */

/* A granted reply with no payload yet (the caller sets payload_case). */
Berth__Granted *coord_reply_granted(struct coord_ctx *c);
/* Denies with reason and key/value fact pairs, ended by NULL. */
void coord_reply_deny(struct coord_ctx *c, const char *reason, ...) __attribute__((sentinel));
void coord_reply_fail(struct coord_ctx *c, Berth__ErrorCode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One key=value fact (a denial's, a status count). */
Berth__Fact *coord_reply_fact(const char *key, const char *value);

/* Stamps the envelope every reply carries: req's id and the protocol
 * version. */
void coord_reply_seal(Berth__Reply *r, const Berth__Request *req);
/* The packed bytes of r (malloc'd): 0, or -1 out of memory (logged). */
int coord_reply_pack(const Berth__Reply *r, uint8_t **buf, size_t *len);
/* Appends part (a packed message) to the packed message *buf as one more
 * element of its repeated message field number field (Reply.then): 0, or
 * -1 out of memory (logged; *buf unchanged). */
int coord_reply_append(uint8_t **buf, size_t *len, unsigned field, const uint8_t *part,
		       size_t partlen);

#endif
