/* The envelope check (DESIGN §5): what every received message must be
 * before anything decides it. Like tmux's peer_check_version, a version
 * mismatch gets its own error, so a mismatched sender says "incompatible"
 * instead of misreading. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "coord_envelope.h"
#include "rpc.h"

/* A sender's actor and instance are short names (instances are 16 hex
 * digits): they key stored replies and land in every trace line and log
 * message about the request, so megabytes or control bytes there are
 * refused as malformed. */
#define ENVELOPE_NAME_MAX 64

int
coord_envelope_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= ENVELOPE_NAME_MAX)
			return 0;
		if (!isalnum((unsigned char)s[i]) && strchr("._:@-", s[i]) == NULL)
			return 0;
	}
	return 1;
}

/*
 * A request's parts (Request.then, DESIGN §4): a short list, each with
 * one verb and a request id of its own, unique among the parts and the
 * envelope's (each part's reply is stored under it), and nothing else: the
 * envelope's version, actor, instance and token are every part's, so a
 * part cannot speak for another sender, and a part has no parts.
 */
static int
envelope_parts(const Berth__Request *r, char *msg, size_t msglen)
{
	const Berth__Request *p;
	size_t i, j;

	if (r->n_then > COORD_ENVELOPE_PARTS_MAX) {
		snprintf(msg, msglen, "a request of %zu parts is over the limit of %d", r->n_then,
			 COORD_ENVELOPE_PARTS_MAX);
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	for (i = 0; i < r->n_then; i++) {
		p = r->then[i];
		if (p->has_version || p->actor != NULL || p->instance != NULL || p->token != NULL ||
		    p->n_then > 0) {
			snprintf(msg, msglen,
				 "part %zu brings an envelope of its own (a part has a verb and a "
				 "request id only)",
				 i + 1);
			return BERTH__ERROR_CODE__ERR_MALFORMED;
		}
		if (!p->has_req_id || p->req_id == 0 || p->req_id == r->req_id) {
			snprintf(msg, msglen, "part %zu carries no request id of its own", i + 1);
			return BERTH__ERROR_CODE__ERR_MALFORMED;
		}
		for (j = 0; j < i; j++) {
			if (r->then[j]->req_id == p->req_id) {
				snprintf(msg, msglen, "parts %zu and %zu carry the same request id",
					 j + 1, i + 1);
				return BERTH__ERROR_CODE__ERR_MALFORMED;
			}
		}
		if (p->verb_case == BERTH__REQUEST__VERB__NOT_SET) {
			snprintf(msg, msglen, "part %zu carries no verb this coordinator knows",
				 i + 1);
			return p->base.n_unknown_fields > 0 ? BERTH__ERROR_CODE__ERR_UNKNOWN_VERB
							    : BERTH__ERROR_CODE__ERR_MALFORMED;
		}
	}
	return 0;
}

int
coord_envelope_check(const uint8_t *data, size_t len, Berth__Request **out, char *msg,
		     size_t msglen)
{
	Berth__Request *r;

	*out = NULL;
	msg[0] = '\0';
	if (len > RPC_MAX_MSG) {
		snprintf(msg, msglen, "a request of %zu bytes is over the %d byte limit", len,
			 RPC_MAX_MSG);
		return BERTH__ERROR_CODE__ERR_TOO_LARGE;
	}
	if (len == 0) {
		snprintf(msg, msglen, "an empty message is not a request");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if ((r = berth__request__unpack(NULL, len, data)) == NULL) {
		snprintf(msg, msglen, "%zu bytes that do not decode as a request", len);
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	*out = r;
	if (!r->has_version) {
		snprintf(msg, msglen, "the request carries no protocol version");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if (r->version != BERTH_PROTOCOL_VERSION) {
		snprintf(msg, msglen,
			 "protocol version mismatch: the request speaks version %u, this "
			 "coordinator speaks version %d; use matching berth binaries",
			 r->version, BERTH_PROTOCOL_VERSION);
		return BERTH__ERROR_CODE__ERR_VERSION;
	}
	if (r->actor == NULL || r->actor[0] == '\0') {
		snprintf(msg, msglen, "the request names no sender actor");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if (r->instance == NULL || r->instance[0] == '\0') {
		snprintf(msg, msglen, "the request names no sender instance");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if (!coord_envelope_name_ok(r->actor) || !coord_envelope_name_ok(r->instance)) {
		snprintf(msg, msglen,
			 "the sender actor and instance are names of at most %d letters, digits"
			 " and ._:@-",
			 ENVELOPE_NAME_MAX);
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if (!r->has_req_id || r->req_id == 0) {
		snprintf(msg, msglen, "the request carries no request id");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	if (r->verb_case == BERTH__REQUEST__VERB__NOT_SET) {
		size_t i;

		/* A field we do not know where verbs live (10 and up): a verb
		 * from a newer sender. */
		for (i = 0; i < r->base.n_unknown_fields; i++) {
			if (r->base.unknown_fields[i].tag < 10)
				continue;
			snprintf(msg, msglen, "a verb this coordinator does not know (field %u)",
				 r->base.unknown_fields[i].tag);
			return BERTH__ERROR_CODE__ERR_UNKNOWN_VERB;
		}
		snprintf(msg, msglen, "the request carries no verb");
		return BERTH__ERROR_CODE__ERR_MALFORMED;
	}
	return envelope_parts(r, msg, msglen);
}
