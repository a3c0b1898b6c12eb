/* How berth seat shows a seat and says a refusal (cmd_seat.c asks): a
 * holder described from a denial's facts, the advice that fits a refused
 * acquire, a seat in full, the seat table, and a seat verb's outcome in
 * words. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "seat_show.h"
#include "util.h"

static void __attribute__((format(printf, 4, 5)))
appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*len >= n)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len += (size_t)w;
}

/* "alice@host (seat repo, key repo, workdir /src/app, held 3m, heartbeat
 * 12s ago)" from a denial's facts; unknown facts are appended as k=v. */
void
seat_describe_holder(const Berth__Denied *d, char *buf, size_t n)
{
	static const char *const known[] = { "owner",
					     "holder",
					     "key",
					     "workdir",
					     "age_ms",
					     "heartbeat_age_ms",
					     "in_flight_age_ms",
					     "in_flight_pid",
					     NULL };
	const char *owner = cli_fact(d, "owner"), *item = cli_fact(d, "holder"), *v;
	char dur[32];
	long long ms;
	size_t i, k, len;
	int w;

	w = snprintf(buf, n, "%s (seat %s", owner ? owner : "another owner", item ? item : "?");
	len = w > 0 ? (size_t)w : 0;
	if ((v = cli_fact(d, "key")) && *v)
		appendf(buf, n, &len, ", key %s", v);
	if ((v = cli_fact(d, "workdir")) && *v)
		appendf(buf, n, &len, ", workdir %s", v);
	if ((v = cli_fact(d, "age_ms")) && cli_parse_int(v, 0, INT64_MAX, &ms) == 0) {
		dur_format(ms, dur, sizeof dur);
		appendf(buf, n, &len, ", held %s", dur);
	}
	if ((v = cli_fact(d, "heartbeat_age_ms")) && cli_parse_int(v, 0, INT64_MAX, &ms) == 0) {
		dur_format(ms, dur, sizeof dur);
		appendf(buf, n, &len, ", heartbeat %s ago", dur);
	}
	if ((v = cli_fact(d, "in_flight_age_ms")) && cli_parse_int(v, 0, INT64_MAX, &ms) == 0) {
		dur_format(ms, dur, sizeof dur);
		appendf(buf, n, &len, ", in flight for %s", dur);
	}
	if ((v = cli_fact(d, "in_flight_pid")) && *v)
		appendf(buf, n, &len, ", pid %s", v);
	for (i = 0; i < d->n_facts; i++) {
		const char *key = d->facts[i]->key ? d->facts[i]->key : "";

		for (k = 0; known[k] != NULL; k++)
			if (strcmp(key, known[k]) == 0)
				break;
		if (known[k] == NULL)
			appendf(buf, n, &len, ", %s=%s", key,
				d->facts[i]->value ? d->facts[i]->value : "");
	}
	appendf(buf, n, &len, ")");
}

static int
is_tree_conflict(const char *reason)
{
	return reason != NULL && strstr(reason, "tree") != NULL;
}

/* The refusal of an acquire, with the advice that fits it (key conflict:
 * wait or ask the holder; tree conflict: another working tree). */
int
seat_acquire_refused(const char *item, const char *reason, const char *holder,
		     const char *holder_item)
{
	if (reason != NULL && strcmp(reason, "in_flight") == 0)
		fprintf(stderr,
			"berth: seat %s: in_flight: a transition is already in flight: %s\n"
			"berth: end it first: berth seat confirm %s STATE, or berth seat clear %s\n",
			cli_esc(item), cli_esc(holder), cli_esc(item), cli_esc(item));
	else if (is_tree_conflict(reason))
		fprintf(stderr,
			"berth: seat %s: tree_conflict: the working tree is held by %s\n"
			"berth: use another working tree (e.g. git worktree add) for this work\n",
			cli_esc(item), cli_esc(holder));
	else
		fprintf(stderr,
			"berth: seat %s: conflict: held by %s\n"
			"berth: wait until it is released, or ask the holder to stop: berth seat "
			"stop %s --reason ...\n",
			cli_esc(item), cli_esc(holder), cli_esc(holder_item ? holder_item : item));
	return CLI_FAIL;
}

void
seat_human(const Berth__Seat *s, int64_t now)
{
	char a[96], b[32];

	printf("%s\n", cli_esc(s->item ? s->item : "?"));
	printf("  owner:     %s", cli_esc(s->owner ? s->owner : "?"));
	if (s->owner_ident && s->owner_ident->pid > 0)
		printf(" (pid %d)", s->owner_ident->pid);
	putchar('\n');
	printf("  key:       %s\n", cli_esc(s->key && *s->key ? s->key : s->item ? s->item : "-"));
	printf("  workdir:   %s\n", cli_esc(s->workdir && *s->workdir ? s->workdir : "-"));
	if (s->kind && *s->kind)
		printf("  kind:      %s\n", cli_esc(s->kind));
	if (s->state && *s->state)
		printf("  state:     %s\n", cli_esc(s->state));
	if (s->task)
		printf("  task:      yes (blocks nobody, blocked by nobody)\n");
	cli_fmt_when(s->acquired_ms, now, a, sizeof a);
	printf("  acquired:  %s\n", a);
	cli_fmt_rel(s->heartbeat_ms, now, a, sizeof a);
	dur_format(s->ttl_ms, b, sizeof b);
	printf("  heartbeat: %s (ttl %s)%s\n", a, b, s->stale ? ", STALE" : "");
	if (s->run_id && *s->run_id)
		printf("  run:       %s\n", cli_esc(s->run_id));
	if (s->has_in_flight_ms && (s->in_flight || s->in_flight_healed)) {
		cli_fmt_rel(s->in_flight_ms, now, a, sizeof a);
		dur_format(s->in_flight_ttl_ms, b, sizeof b);
		printf("  in flight: %s since %s (ttl %s", s->in_flight ? "yes" : "healed", a, b);
		if (s->in_flight_ident && s->in_flight_ident->pid > 0)
			printf(", pid %d", s->in_flight_ident->pid);
		printf(")\n");
	}
	if (s->stop_reason && *s->stop_reason) {
		printf("  stop:      requested");
		if (s->stop_by && *s->stop_by)
			printf(" by %s", cli_esc(s->stop_by));
		if (s->has_stop_ms) {
			cli_fmt_rel(s->stop_ms, now, a, sizeof a);
			printf(" %s", a);
		}
		printf(": %s\n", cli_esc(s->stop_reason));
	}
	if (!s->stale && (s->activity_total > 0 || (s->activity_label && *s->activity_label))) {
		cli_fmt_bar(s->activity_index, s->activity_total, b, sizeof b);
		printf("  activity:  %s %lld/%lld %s", b, (long long)s->activity_index,
		       (long long)s->activity_total, cli_esc(s->activity_label));
		if (s->has_activity_ms) {
			cli_fmt_rel(s->activity_ms, now, a, sizeof a);
			printf(" (%s)", a);
		}
		putchar('\n');
	}
}

void
seat_table(const Berth__SeatListReply *l)
{
	char age[32], hb[32];
	size_t i;

	if (l->n_seats == 0) {
		printf("no seats\n");
		return;
	}
	printf("%-20s %-24s %-7s %-9s %-16s %-30s %s\n", "ITEM", "OWNER", "AGE", "HEARTBEAT", "KEY",
	       "WORKDIR", "NOTE");
	for (i = 0; i < l->n_seats; i++) {
		const Berth__Seat *s = l->seats[i];

		dur_format(s->acquired_ms ? l->now_ms - s->acquired_ms : 0, age, sizeof age);
		dur_format(s->heartbeat_ms ? l->now_ms - s->heartbeat_ms : 0, hb, sizeof hb);
		printf("%-20s %-24s %-7s %-9s %-16s %-30s", cli_esc(s->item ? s->item : "?"),
		       cli_esc(s->owner ? s->owner : "?"), age, hb,
		       cli_esc(s->key && *s->key ? s->key
			       : s->item         ? s->item
						 : "-"),
		       cli_esc(s->workdir && *s->workdir ? s->workdir : "-"));
		if (s->stale)
			printf(" stale");
		if (s->task)
			printf(" task");
		if (s->in_flight) {
			dur_format(l->now_ms - s->in_flight_ms, age, sizeof age);
			printf(" in flight %s", age);
		}
		if (s->state && *s->state)
			printf(" state: %s", cli_esc(s->state));
		if (s->stop_reason && *s->stop_reason)
			printf(" stop: %s", cli_esc(s->stop_reason));
		if (!s->stale &&
		    (s->activity_total > 0 || (s->activity_label && *s->activity_label))) {
			printf(" %lld/%lld %s", (long long)s->activity_index,
			       (long long)s->activity_total, cli_esc(s->activity_label));
			if (s->has_activity_ms) {
				dur_format(l->now_ms - s->activity_ms, age, sizeof age);
				printf(" (%s ago)", age);
			}
		}
		putchar('\n');
	}
}

void
seat_json_list(const Berth__SeatListReply *l)
{
	size_t i;

	fputc('[', stdout);
	for (i = 0; i < l->n_seats; i++) {
		if (i > 0)
			fputc(',', stdout);
		cli_json_seat(stdout, l->seats[i], l->now_ms);
	}
	fputs("]\n", stdout);
}

/* A seat verb's refusal as a person says it (the code stays in --json
 * and the trace): "not yours", not not_owner. */
const char *
seat_words(const char *outcome)
{
	static const struct {
		const char *code, *words;
	} w[] = {
		{ "not_owner", "not yours" },
		{ "absent", "no such seat" },
		{ "not_found", "no such seat" },
		{ "stale", "its holder is gone (stale)" },
	};
	size_t i;

	for (i = 0; i < sizeof w / sizeof w[0]; i++)
		if (strcmp(w[i].code, outcome) == 0)
			return w[i].words;
	return cli_esc(outcome);
}
