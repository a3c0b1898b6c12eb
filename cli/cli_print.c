/* How berth shows tickets, runs and seats: the JSON objects of DESIGN §12
 * (stable keys; null for "unknown" or "none", never a made-up 0), the
 * small human formats (relative times, progress bars, quoted commands), and
 * the escaping of everything a job or a user wrote before it reaches the
 * terminal. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "states.h"
#include "util.h"

/* One JSON object under construction: n counts the members written so far,
 * so each member knows whether it needs a comma. */
struct jobj {
	FILE *f;
	int n;
};

static void
jkey(struct jobj *o, const char *k)
{
	if (o->n++ > 0)
		fputc(',', o->f);
	json_str(o->f, k);
	fputc(':', o->f);
}

/* A string member; NULL (absent in the message) is written as null. */
static void
jstr(struct jobj *o, const char *k, const char *v)
{
	jkey(o, k);
	if (v != NULL)
		json_str(o->f, v);
	else
		fputs("null", o->f);
}

/* A string member where an empty string means "none". */
static void
jopt(struct jobj *o, const char *k, const char *v)
{
	jstr(o, k, v != NULL && *v != '\0' ? v : NULL);
}

static void
jint(struct jobj *o, const char *k, int64_t v)
{
	jkey(o, k);
	fprintf(o->f, "%lld", (long long)v);
}

static void
jintn(struct jobj *o, const char *k, int has, int64_t v)
{
	if (has)
		jint(o, k, v);
	else
		jstr(o, k, NULL);
}

/* A time member: 0 means "never happened" and is written as null. */
static void
jms(struct jobj *o, const char *k, int64_t v)
{
	jintn(o, k, v != 0, v);
}

static void
jbool(struct jobj *o, const char *k, int v)
{
	jkey(o, k);
	fputs(v ? "true" : "false", o->f);
}

void
cli_env_name(const char *kv, char *buf, size_t n)
{
	size_t len = strcspn(kv ? kv : "", "=");

	if (len >= n)
		len = n - 1;
	memcpy(buf, kv ? kv : "", len);
	buf[len] = '\0';
}

static void
jstrv(struct jobj *o, const char *k, char *const *v, size_t n)
{
	size_t i;

	jkey(o, k);
	fputc('[', o->f);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputc(',', o->f);
		json_str(o->f, v[i] ? v[i] : "");
	}
	fputc(']', o->f);
}

const char *
cli_esc(const char *s)
{
	static char *buf[CLI_ESC_SLOTS];
	static size_t cap[CLI_ESC_SLOTS];
	static unsigned next;
	unsigned i = next++ % CLI_ESC_SLOTS;
	size_t need = esc_text(NULL, 0, s) + 1;
	char *nb;

	if (need > cap[i]) {
		/* Out of memory: a marker, never the raw text. */
		if ((nb = realloc(buf[i], need)) == NULL)
			return "?";
		buf[i] = nb;
		cap[i] = need;
	}
	esc_text(buf[i], cap[i], s);
	return buf[i];
}

int
cli_run_terminal(const char *state)
{
	return run_state_terminal(run_state_parse(state));
}

/* Run.exit_code_known says whether exit_code means anything; a sender that
 * leaves it out but sets exit_code itself is believed too. */
int
cli_run_exit_known(const Berth__Run *r)
{
	return r->has_exit_code_known ? r->exit_code_known : r->has_exit_code;
}

int
cli_run_signal_known(const Berth__Run *r)
{
	return r->has_signal_known ? r->signal_known : r->has_signal && r->signal != 0;
}

int
cli_ticket_settled(const char *state)
{
	return ticket_state_final(ticket_state_parse(state));
}

int
cli_run_exit_status(const Berth__Run *r)
{
	if (r == NULL)
		return 1;
	if (run_state_parse(r->state) == RUN_SUCCEEDED)
		return 0;
	/* A run that did not succeed never reads as 0, even when its job
	 * said 0 on its way out of a cancel. */
	if (cli_run_exit_known(r) && r->exit_code != 0)
		return r->exit_code & 0xff ? r->exit_code & 0xff : 1;
	if (cli_run_signal_known(r) && r->signal > 0)
		return 128 + r->signal;
	return 1;
}

int
cli_ticket_exit_status(const Berth__Ticket *t)
{
	if (ticket_state_parse(t->state) == TICKET_SUCCEEDED)
		return 0;
	return t->n_runs > 0 ? cli_run_exit_status(t->runs[t->n_runs - 1]) : 1;
}

void
cli_json_run(FILE *f, const Berth__Run *r)
{
	struct jobj o = { f, 0 };
	int terminal = cli_run_terminal(r->state);

	fputc('{', f);
	jstr(&o, "id", r->id);
	jopt(&o, "alias", r->alias);
	jopt(&o, "ticket", r->ticket);
	jint(&o, "attempt", r->attempt);
	jstr(&o, "state", r->state);
	jstr(&o, "outcome", terminal ? r->state : NULL);
	jintn(&o, "exit_code", cli_run_exit_known(r), r->exit_code);
	jintn(&o, "signal", cli_run_signal_known(r), r->signal);
	jopt(&o, "reason", r->reason);
	jopt(&o, "owner", r->owner);
	jintn(&o, "pid", r->shim != NULL && r->shim->pid > 0, r->shim ? r->shim->pid : 0);
	jintn(&o, "pgid", r->shim != NULL && r->shim->pgid > 0, r->shim ? r->shim->pgid : 0);
	jms(&o, "claimed_ms", r->claimed_ms);
	jms(&o, "started_ms", r->started_ms);
	jms(&o, "ended_ms", r->ended_ms);
	jms(&o, "settled_ms", r->settled_ms);
	jintn(&o, "lease_expires_ms", r->has_lease && r->lease_expires_ms != 0,
	      r->lease_expires_ms);
	jms(&o, "heartbeat_ms", r->heartbeat_ms);
	jms(&o, "timeout_ms", r->timeout_ms);
	jkey(&o, "progress");
	if (r->progress_total > 0 || (r->progress_label && *r->progress_label)) {
		struct jobj p = { f, 0 };

		fputc('{', f);
		jint(&p, "index", r->progress_index);
		jint(&p, "total", r->progress_total);
		jopt(&p, "label", r->progress_label);
		jms(&p, "at_ms", r->progress_ms);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	jopt(&o, "stop_reason", r->stop_reason);
	jms(&o, "stop_ms", r->stop_ms);
	jstrv(&o, "notes", r->notes, r->n_notes);
	jopt(&o, "host", r->host);
	jintn(&o, "output_bytes", r->has_output_bytes, r->output_bytes);
	jbool(&o, "capture_complete", r->capture_complete);
	/* What the shim recorded of the end (null before it settled, or for
	 * runs settled by an older berth). */
	jintn(&o, "stragglers", r->has_stragglers, r->stragglers);
	jkey(&o, "disk_full");
	fputs(!r->has_disk_full ? "null" : r->disk_full ? "true" : "false", f);
	fputc('}', f);
}

void
cli_json_ticket(FILE *f, const Berth__Ticket *t, int with_runs)
{
	struct jobj o = { f, 0 };
	size_t i;

	fputc('{', f);
	jstr(&o, "id", t->id);
	jopt(&o, "name", t->name);
	jstr(&o, "state", t->state);
	jint(&o, "attempts", t->attempts);
	jint(&o, "max_attempts", t->max_attempts);
	jint(&o, "priority", t->priority);
	jstrv(&o, "argv", t->argv, t->n_argv);
	jopt(&o, "workdir", t->workdir);
	jopt(&o, "key", t->key);
	/* The names only: values (tokens, passwords) stay in the database
	 * and reach nobody but the job. */
	jkey(&o, "env");
	fputc('[', o.f);
	for (i = 0; i < t->n_env; i++) {
		char name[256];

		cli_env_name(t->env[i], name, sizeof name);
		if (i > 0)
			fputc(',', o.f);
		json_str(o.f, name);
	}
	fputc(']', o.f);
	jms(&o, "timeout_ms", t->timeout_ms);
	jms(&o, "every_ms", t->every_ms);
	jstrv(&o, "after", t->after, t->n_after);
	jbool(&o, "after_any", t->after_any);
	jopt(&o, "dependency", t->dependency);
	jms(&o, "created_ms", t->created_ms);
	jms(&o, "updated_ms", t->updated_ms);
	jms(&o, "next_due_ms", t->next_due_ms);
	jopt(&o, "waiting", t->waiting);
	jbool(&o, "isolate", t->isolate);
	/* Placement: the host it asks for and the labels a host must offer
	 * (where a run ran is each run's "host"). */
	jopt(&o, "host_wanted", t->host_wanted);
	jstrv(&o, "labels", t->labels, t->n_labels);
	if (with_runs) {
		jkey(&o, "runs");
		fputc('[', f);
		for (i = 0; i < t->n_runs; i++) {
			if (i > 0)
				fputc(',', f);
			cli_json_run(f, t->runs[i]);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

void
cli_json_seat(FILE *f, const Berth__Seat *s, int64_t now_ms)
{
	struct jobj o = { f, 0 };
	int live = !s->stale;

	fputc('{', f);
	jstr(&o, "item", s->item);
	jopt(&o, "key", s->key);
	jopt(&o, "workdir", s->workdir);
	jopt(&o, "owner", s->owner);
	jintn(&o, "owner_pid", s->owner_ident != NULL && s->owner_ident->pid > 0,
	      s->owner_ident ? s->owner_ident->pid : 0);
	jopt(&o, "kind", s->kind);
	jopt(&o, "state", s->state);
	jbool(&o, "task", s->task);
	jms(&o, "acquired_ms", s->acquired_ms);
	jms(&o, "heartbeat_ms", s->heartbeat_ms);
	jintn(&o, "heartbeat_age_ms", s->heartbeat_ms != 0 && now_ms != 0,
	      now_ms - s->heartbeat_ms);
	jint(&o, "ttl_ms", s->ttl_ms);
	jbool(&o, "stale", s->stale);
	/* The in-flight mark: in_flight while it is effective; a mark that
	 * healed (TTL, or its process gone) is in_flight_healed. */
	jbool(&o, "in_flight", s->in_flight);
	jbool(&o, "in_flight_healed", s->in_flight_healed);
	jms(&o, "in_flight_ms", s->has_in_flight_ms ? s->in_flight_ms : 0);
	jintn(&o, "in_flight_age_ms", s->has_in_flight_ms && now_ms != 0, now_ms - s->in_flight_ms);
	jintn(&o, "in_flight_ttl_ms", s->has_in_flight_ttl_ms, s->in_flight_ttl_ms);
	jintn(&o, "in_flight_pid", s->in_flight_ident != NULL && s->in_flight_ident->pid > 0,
	      s->in_flight_ident ? s->in_flight_ident->pid : 0);
	jopt(&o, "stop_reason", s->stop_reason);
	jopt(&o, "stop_by", s->stop_by);
	jms(&o, "stop_ms", s->has_stop_ms ? s->stop_ms : 0);
	jkey(&o, "activity");
	/* Activity is only meaningful while the holder lives (DESIGN §8),
	 * and the coordinator sends it only then. */
	if (live && (s->activity_total > 0 || (s->activity_label && *s->activity_label))) {
		struct jobj a = { f, 0 };

		fputc('{', f);
		jint(&a, "index", s->activity_index);
		jint(&a, "total", s->activity_total);
		jopt(&a, "label", s->activity_label);
		jms(&a, "at_ms", s->has_activity_ms ? s->activity_ms : 0);
		jintn(&a, "age_ms", s->has_activity_ms && now_ms != 0, now_ms - s->activity_ms);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	jopt(&o, "run_id", s->run_id);
	fputc('}', f);
}

void
cli_fmt_rel(int64_t ms, int64_t now_ms, char *buf, size_t n)
{
	char d[32];

	if (ms == 0) {
		snprintf(buf, n, "-");
		return;
	}
	if (ms > now_ms) {
		dur_format(ms - now_ms, d, sizeof d);
		snprintf(buf, n, "in %s", d);
	} else if (now_ms - ms < 1000) {
		snprintf(buf, n, "now");
	} else {
		dur_format(now_ms - ms, d, sizeof d);
		snprintf(buf, n, "%s ago", d);
	}
}

void
cli_fmt_when(int64_t ms, int64_t now_ms, char *buf, size_t n)
{
	char t[40], r[40];

	if (ms == 0) {
		snprintf(buf, n, "-");
		return;
	}
	time_format(ms, t, sizeof t);
	cli_fmt_rel(ms, now_ms, r, sizeof r);
	snprintf(buf, n, "%s (%s)", t, r);
}

void
cli_fmt_bar(int64_t index, int64_t total, char *buf, size_t n)
{
	char bar[16];
	int i, fill = 0;

	if (total > 0) {
		int64_t x = index > total ? total : index;

		fill = (int)((x * 10) / total);
	}
	for (i = 0; i < 10; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[10] = '\0';
	snprintf(buf, n, "[%s]", bar);
}

/* 1 when s can be shown to a shell as-is. */
static int
shell_plain(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-./=:,+@%",
			    *s))
			return 0;
	return 1;
}

void
cli_fmt_argv(char *const *argv, size_t argc, char *buf, size_t n)
{
	size_t i, len = 0;
	const char *p;

	if (n == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < argc && len + 1 < n; i++) {
		if (i > 0)
			buf[len++] = ' ';
		if (shell_plain(argv[i])) {
			for (p = argv[i]; *p && len + 1 < n; p++)
				buf[len++] = *p;
			continue;
		}
		buf[len++] = '\'';
		for (p = argv[i]; *p && len + 5 < n; p++) {
			if (*p == '\'') {
				memcpy(buf + len, "'\\''", 4);
				len += 4;
			} else {
				buf[len++] = *p;
			}
		}
		if (len + 1 < n)
			buf[len++] = '\'';
	}
	buf[len < n ? len : n - 1] = '\0';
}
