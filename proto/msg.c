/* Names and reply helpers shared by every process (see msg.h). */
#include <stdio.h>
#include <string.h>

#include "msg.h"

const char *
msg_verb_name(const Berth__Request *req)
{
	const ProtobufCFieldDescriptor *f;

	if (req == NULL || req->verb_case == BERTH__REQUEST__VERB__NOT_SET)
		return "none";
	/* The oneof's field names are the verb names of the trace. */
	f = protobuf_c_message_descriptor_get_field(&berth__request__descriptor,
						    (unsigned)req->verb_case);
	return f != NULL ? f->name : "unknown";
}

/* One table for the error codes' names: the trace's reason for an error and
 * the CLI's messages both read it. */
static const char *const error_names[] = {
	[BERTH__ERROR_CODE__ERR_NONE] = "error",
	[BERTH__ERROR_CODE__ERR_MALFORMED] = "malformed",
	[BERTH__ERROR_CODE__ERR_VERSION] = "version",
	[BERTH__ERROR_CODE__ERR_STORAGE] = "storage",
	[BERTH__ERROR_CODE__ERR_NOT_FOUND] = "not_found",
	[BERTH__ERROR_CODE__ERR_INVALID] = "invalid",
	[BERTH__ERROR_CODE__ERR_AUTH] = "auth",
	[BERTH__ERROR_CODE__ERR_TOO_LARGE] = "too_large",
	[BERTH__ERROR_CODE__ERR_UNKNOWN_VERB] = "unknown_verb",
	[BERTH__ERROR_CODE__ERR_BUSY] = "busy",
};

const char *
msg_error_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(error_names) / sizeof(error_names[0]) ||
	    error_names[code] == NULL)
		return "error";
	return error_names[code];
}

int
msg_is_granted(const Berth__Reply *r)
{
	return r != NULL && r->result_case == BERTH__REPLY__RESULT_GRANTED;
}

const char *
msg_denied_reason(const Berth__Reply *r)
{
	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_DENIED || r->denied == NULL)
		return NULL;
	return r->denied->reason != NULL ? r->denied->reason : "";
}

const char *
msg_fact(const Berth__Reply *r, const char *key)
{
	size_t i;

	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_DENIED || r->denied == NULL)
		return NULL;
	for (i = 0; i < r->denied->n_facts; i++) {
		const Berth__Fact *f = r->denied->facts[i];

		if (f->key != NULL && strcmp(f->key, key) == 0)
			return f->value != NULL ? f->value : "";
	}
	return NULL;
}

void
msg_describe(const Berth__Reply *r, char *buf, size_t n)
{
	size_t i, off;
	int w;

	if (n == 0)
		return;
	buf[0] = '\0';
	if (r == NULL) {
		snprintf(buf, n, "no reply");
		return;
	}
	switch (r->result_case) {
	case BERTH__REPLY__RESULT_GRANTED:
		snprintf(buf, n, "granted");
		break;
	case BERTH__REPLY__RESULT_DENIED:
		w = snprintf(buf, n, "denied: %s", msg_denied_reason(r));
		off = w < 0 ? 0 : (size_t)w;
		for (i = 0; r->denied != NULL && i < r->denied->n_facts && off < n; i++) {
			const Berth__Fact *f = r->denied->facts[i];

			w = snprintf(buf + off, n - off, "%s%s=%s", i == 0 ? " (" : ", ",
				     f->key != NULL ? f->key : "", f->value != NULL ? f->value : "");
			off += w < 0 ? 0 : (size_t)w;
		}
		if (r->denied != NULL && r->denied->n_facts > 0 && off < n)
			snprintf(buf + off, n - off, ")");
		break;
	case BERTH__REPLY__RESULT_ERROR:
		snprintf(buf, n, "error %d: %s", r->error != NULL ? (int)r->error->code : 0,
			 r->error != NULL && r->error->message != NULL ? r->error->message : "");
		break;
	default:
		snprintf(buf, n, "empty reply");
		break;
	}
}