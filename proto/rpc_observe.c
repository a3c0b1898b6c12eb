/*
 * The rpc layer's observer: the client-side half of the trace. The
 * coordinator's trace.jsonl says what was decided and in which order; these
 * ring records say what each client saw of it (sent, retried, timed out,
 * answered), which is where a lost message or a slow coordinator shows.
 */
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "observe.h"
#include "rpc.h"
#include "rpc_observe.h"
#include "ring.h"

/* The string field called name of msg, or NULL. The verbs name their run
 * and ticket fields consistently (run_id, ticket), so the trace finds them
 * without a table per verb. */
static const char *
rpc_observe_field(const ProtobufCMessage *msg, const char *name)
{
	const ProtobufCFieldDescriptor *f;
	const char *s;

	if (msg == NULL)
		return NULL;
	f = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
	if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
		return NULL;
	memcpy(&s, (const char *)msg + f->offset, sizeof(s));
	return s;
}

/* The message inside a oneof whose case is the field number. */
static const ProtobufCMessage *
rpc_observe_oneof(const ProtobufCMessage *msg, unsigned number)
{
	const ProtobufCFieldDescriptor *f;
	const ProtobufCMessage *sub;

	if (msg == NULL || number == 0)
		return NULL;
	f = protobuf_c_message_descriptor_get_field(msg->descriptor, number);
	if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return NULL;
	memcpy(&sub, (const char *)msg + f->offset, sizeof(sub));
	return sub;
}

static void
rpc_observe_copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

static void
rpc_observe_ids(const Berth__Request *req, const Berth__Reply *rep, const char **ticket,
		const char **run)
{
	const ProtobufCMessage *v, *g = NULL;
	const char *s;

	v = rpc_observe_oneof(&req->base, (unsigned)req->verb_case);
	*ticket = rpc_observe_field(v, "ticket");
	*run = rpc_observe_field(v, "run_id");
	/* show/hold/cancel/... take one id: a ticket (T3), or a run or alias. */
	if (*ticket == NULL && *run == NULL && (s = rpc_observe_field(v, "id")) != NULL) {
		if (s[0] == 'T' && strchr(s, '-') == NULL)
			*ticket = s;
		else
			*run = s;
	}
	/* A granted claim or add names what it produced. */
	if (rep != NULL && rep->result_case == BERTH__REPLY__RESULT_GRANTED && rep->granted != NULL)
		g = rpc_observe_oneof(&rep->granted->base, (unsigned)rep->granted->payload_case);
	if (g != NULL) {
		if ((s = rpc_observe_field(g, "ticket")) != NULL && s[0] != '\0')
			*ticket = s;
		if ((s = rpc_observe_field(g, "run_id")) != NULL && s[0] != '\0')
			*run = s;
	}
}

static void
rpc_observe_event(const char *event, const Berth__Request *req, const Berth__Reply *rep,
		  int64_t latency_us)
{
	const char *ticket, *run, *decision = NULL, *reason = NULL, *text = NULL;
	struct ring_rec r;
	uint32_t kind;

	rpc_observe_ids(req, rep, &ticket, &run);
	if (strcmp(event, "sent") == 0) {
		kind = RING_SENT;
		observe_count(BOARD_SENT);
	} else if (strcmp(event, "retry") == 0) {
		kind = RING_RETRY;
	} else if (strcmp(event, "timeout") == 0) {
		kind = RING_TIMEOUT;
		observe_count(BOARD_TIMEOUTS);
	} else if (strcmp(event, "reply") == 0 && rep != NULL) {
		kind = RING_REPLY;
		switch (rep->result_case) {
		case BERTH__REPLY__RESULT_GRANTED:
			decision = "granted";
			observe_count(BOARD_GRANTED);
			break;
		case BERTH__REPLY__RESULT_DENIED:
			decision = "denied";
			reason = rep->denied != NULL ? rep->denied->reason : NULL;
			observe_count(BOARD_DENIED);
			break;
		default:
			decision = "error";
			reason = rep->error != NULL ? rep->error->message : NULL;
			observe_count(BOARD_ERRORS);
			break;
		}
		if (rep->has_replayed && rep->replayed)
			text = "replayed";
	} else {
		return;
	}
	memset(&r, 0, sizeof(r));
	r.kind = kind;
	rpc_observe_copy(r.instance, sizeof(r.instance), req->instance);
	rpc_observe_copy(r.verb, sizeof(r.verb), msg_verb_name(req));
	rpc_observe_copy(r.ticket, sizeof(r.ticket), ticket);
	rpc_observe_copy(r.run, sizeof(r.run), run);
	rpc_observe_copy(r.decision, sizeof(r.decision), decision);
	rpc_observe_copy(r.reason, sizeof(r.reason), reason);
	rpc_observe_copy(r.text, sizeof(r.text), text);
	r.req_id = req->has_req_id ? req->req_id : 0;
	r.latency_us = latency_us;
	ring_global_emit_rec(&r);
}

void
rpc_observe_install(void)
{
	rpc_set_observer(rpc_observe_event);
}
