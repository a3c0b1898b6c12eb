/* Names, reply helpers and the fact <-> message conversions shared by every
 * process (see msg.h). */
#include <stdio.h>
#include <string.h>

#include "berth_limits.h"
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
	case BERTH__REPLY__RESULT_GRANTED: snprintf(buf, n, "granted"); break;
	case BERTH__REPLY__RESULT_DENIED:
		w = snprintf(buf, n, "denied: %s", msg_denied_reason(r));
		off = w < 0 ? 0 : (size_t)w;
		for (i = 0; r->denied != NULL && i < r->denied->n_facts && off < n; i++) {
			const Berth__Fact *f = r->denied->facts[i];

			w = snprintf(buf + off, n - off, "%s%s=%s", i == 0 ? " (" : ", ",
				     f->key != NULL ? f->key : "",
				     f->value != NULL ? f->value : "");
			off += w < 0 ? 0 : (size_t)w;
		}
		if (r->denied != NULL && r->denied->n_facts > 0 && off < n)
			snprintf(buf + off, n - off, ")");
		break;
	case BERTH__REPLY__RESULT_ERROR:
		snprintf(buf, n, "error %d: %s", r->error != NULL ? (int)r->error->code : 0,
			 r->error != NULL && r->error->message != NULL ? r->error->message : "");
		break;
	default: snprintf(buf, n, "empty reply"); break;
	}
}

void
msg_ident_to(const struct ident *id, Berth__Ident *m)
{
	m->boot_id = (char *)id->boot_id;
	m->has_pid = 1;
	m->pid = id->pid;
	m->has_start_time = 1;
	m->start_time = id->start_time;
	m->has_pgid = 1;
	m->pgid = id->pgid;
}

int
msg_ident_from(const Berth__Ident *m, struct ident *out)
{
	memset(out, 0, sizeof(*out));
	if (m == NULL || !m->has_pid || m->pid <= 0)
		return -1;
	if (m->boot_id != NULL)
		snprintf(out->boot_id, sizeof(out->boot_id), "%s", m->boot_id);
	out->pid = m->pid;
	out->start_time = m->start_time;
	out->pgid = m->has_pgid && m->pgid > 0 ? m->pgid : m->pid;
	return 0;
}

/* The capture facts of a RecordExit or a Settle: the output's size (when
 * the file is there) and capture_complete by aftercare.h's one rule. */
static void
msg_capture(const struct aftercare *a, protobuf_c_boolean *has_bytes, int64_t *bytes,
	    protobuf_c_boolean *has_complete, protobuf_c_boolean *complete)
{
	if (a->has_output) {
		*has_bytes = 1;
		*bytes = a->output_bytes;
	}
	*has_complete = 1;
	*complete = a->capture_complete;
}

void
msg_record_exit(Berth__RecordExit *re, char *run_id, const struct aftercare *a)
{
	re->run_id = run_id;
	re->has_has_record = 1;
	re->has_record = a->has_record;
	/* The capture facts ride with the checkpoint too, so a run whose
	 * settle is lost still has them. */
	msg_capture(a, &re->has_output_bytes, &re->output_bytes, &re->has_capture_complete,
		    &re->capture_complete);
	if (!a->has_record)
		return;
	if (a->rec.has_code) {
		re->has_exit_code = 1;
		re->exit_code = a->rec.code;
	}
	if (a->rec.has_signal) {
		re->has_signal = 1;
		re->signal = a->rec.signal;
	}
	re->has_ended_ms = 1;
	re->ended_ms = a->rec.ended_ms;
}

void
msg_settle_aftercare(Berth__Settle *se, const struct aftercare *a)
{
	msg_capture(a, &se->has_output_bytes, &se->output_bytes, &se->has_capture_complete,
		    &se->capture_complete);
	if (a->has_record) {
		se->has_stragglers = 1;
		se->stragglers = a->rec.stragglers;
		se->has_disk_full = 1;
		se->disk_full = a->rec.disk_full != 0;
	}
}

/* Bytes of strings v[0..n) with one NUL each; -1 when one is over
 * BERTH_ARG_MAX (its index in *bad). */
static long long
msg_strings(char *const *v, size_t n, size_t *bad)
{
	long long total = 0;
	size_t i, len;

	for (i = 0; i < n; i++) {
		len = v[i] != NULL ? strlen(v[i]) : 0;
		if (len > BERTH_ARG_MAX) {
			*bad = i;
			return -1;
		}
		total += (long long)len + 1;
	}
	return total;
}

int
msg_add_limits(const Berth__Add *a, char *buf, size_t n)
{
	long long argv, env;
	size_t bad = 0;

	if ((argv = msg_strings(a->argv, a->n_argv, &bad)) < 0) {
		snprintf(buf, n, "argument %zu is %zu bytes; one argument is at most %d", bad + 1,
			 strlen(a->argv[bad]), BERTH_ARG_MAX);
		return -1;
	}
	if ((env = msg_strings(a->env, a->n_env, &bad)) < 0) {
		snprintf(buf, n, "environment entry %zu is %zu bytes; one is at most %d", bad + 1,
			 strlen(a->env[bad]), BERTH_ARG_MAX);
		return -1;
	}
	if (argv + env > BERTH_ARGV_ENV_MAX) {
		snprintf(buf, n,
			 "the command and its environment are %lld bytes; together at most %d",
			 argv + env, BERTH_ARGV_ENV_MAX);
		return -1;
	}
	if (a->name != NULL && strlen(a->name) > BERTH_NAME_MAX) {
		snprintf(buf, n, "--name is %zu bytes; at most %d", strlen(a->name),
			 BERTH_NAME_MAX);
		return -1;
	}
	if (a->key != NULL && strlen(a->key) > BERTH_KEY_MAX) {
		snprintf(buf, n, "--key is %zu bytes; at most %d", strlen(a->key), BERTH_KEY_MAX);
		return -1;
	}
	if (a->workdir != NULL && strlen(a->workdir) > BERTH_WORKDIR_MAX) {
		snprintf(buf, n, "--workdir is %zu bytes; at most %d", strlen(a->workdir),
			 BERTH_WORKDIR_MAX);
		return -1;
	}
	if (a->n_after > BERTH_AFTER_MAX) {
		snprintf(buf, n, "--after names %zu tickets; at most %d", a->n_after,
			 BERTH_AFTER_MAX);
		return -1;
	}
	return 0;
}

int
msg_reply_is_bug(const Berth__Reply *r)
{
	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_ERROR || r->error == NULL)
		return 0;
	return r->error->code == BERTH__ERROR_CODE__ERR_MALFORMED ||
	       r->error->code == BERTH__ERROR_CODE__ERR_VERSION;
}
