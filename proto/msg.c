/* Facts <-> messages (msg.h). */
#include <stdio.h>
#include <string.h>

#include "msg.h"

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

void
msg_record_exit(Berth__RecordExit *re, char *run_id, const struct aftercare *a)
{
	re->run_id = run_id;
	re->has_has_record = 1;
	re->has_record = a->has_record;
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
	if (a->has_output) {
		se->has_output_bytes = 1;
		se->output_bytes = a->output_bytes;
	}
	se->has_capture_complete = 1;
	se->capture_complete = a->capture_complete;
}

int
msg_reply_is_bug(const Berth__Reply *r)
{
	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_ERROR || r->error == NULL)
		return 0;
	return r->error->code == BERTH__ERROR_CODE__ERR_MALFORMED ||
	       r->error->code == BERTH__ERROR_CODE__ERR_VERSION;
}
