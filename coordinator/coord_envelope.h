#ifndef BERTH_COORD_ENVELOPE_H
#define BERTH_COORD_ENVELOPE_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"

/* How many parts (Request.then) one request may carry. */
#define COORD_ENVELOPE_PARTS_MAX 8

/* Envelope check of one received message (DESIGN §5), its parts too
 * (Request.then: each a verb and a request id of its own): 0 with *req decoded
 * (free with berth__request__free_unpacked), or an error code
 * (BERTH__ERROR_CODE__ERR_MALFORMED, _ERR_VERSION, _ERR_TOO_LARGE,
 * _ERR_UNKNOWN_VERB) with a message in msg; *req is then set when the bytes
 * decoded, so the error reply can carry its req_id. */
int coord_envelope_check(const uint8_t *data, size_t len, Berth__Request **req, char *msg,
			 size_t msglen);
/* 1 when s is a sender name the envelope accepts (actor, instance): at
 * most 64 letters, digits and ._:@- ; such names key stored replies and
 * land in trace lines and logs. */
int coord_envelope_name_ok(const char *s);

#endif
