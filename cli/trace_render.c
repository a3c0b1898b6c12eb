/*
 * What `berth trace` prints: a timeline line, a JSON line, and the two
 * sequence diagrams (SVG drawn here, no external tools; Mermaid text).
 *
 * The diagrams share one layout: a lane per actor process (its instance),
 * because a restarted actor is a different process with its own view and
 * its own requests, and a race is between processes. The coordinator is one
 * lane in the middle, so arrows from both sides meet there. The CLI and
 * workers are many short-lived processes: all cli clients share a lane, as
 * do all workers and all shims (one per run). Rows are fixed height, so a
 * few hundred messages stay readable and the SVG simply grows downwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "trace.h"
#include "ring.h"
#include "util.h"

/* ------------------------------------------------------------ text */

/* later - earlier in ms, saturated: a trace line's times are what its
 * file says, and a damaged or hostile one may hold any 64-bit value. */
static int64_t
ms_between(int64_t earlier, int64_t later)
{
	if (earlier < 0 && later > INT64_MAX + earlier)
		return INT64_MAX;
	if (earlier > 0 && later < INT64_MIN + earlier)
		return INT64_MIN;
	return later - earlier;
}

void
trace_fmt_time(int64_t ts_ms, char *buf, size_t n)
{
	time_t t = (time_t)(ts_ms / 1000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL) {
		snprintf(buf, n, "%lld", (long long)ts_ms);
		return;
	}
	snprintf(buf, n, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ts_ms % 1000));
}

void
trace_fmt_latency(int64_t us, char *buf, size_t n)
{
	if (us < 0)
		snprintf(buf, n, "%s", "");
	else if (us < 1000)
		snprintf(buf, n, "%lldus", (long long)us);
	else if (us < 1000000)
		snprintf(buf, n, "%.1fms", (double)us / 1000.0);
	else
		snprintf(buf, n, "%.2fs", (double)us / 1e6);
}

static const char *
trace_color(const char *decision)
{
	if (strcmp(decision, "granted") == 0)
		return "\033[32m";
	if (strcmp(decision, "denied") == 0)
		return "\033[31m";
	if (strcmp(decision, "error") == 0)
		return "\033[35m";
	if (strcmp(decision, "replayed") == 0)
		return "\033[33m";
	return "";
}

/* "T3 5e2f01ab" from ticket and run (runs shown by their first 8 hex). */
static void
trace_fmt_target(const struct trace_ev *ev, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%.8s", ev->ticket,
		 ev->ticket[0] != '\0' && ev->run[0] != '\0' ? " " : "", ev->run);
}

static void
trace_fmt_who(const struct trace_ev *ev, char *buf, size_t n)
{
	/* Another host's actor is named with its host. */
	snprintf(buf, n, "%.12s%s%s%s%.8s", ev->remote ? ev->host : "", ev->remote ? "/" : "",
		 ev->from[0] != '\0' ? ev->from : "?", ev->instance[0] != '\0' ? " " : "",
		 ev->instance);
}

void
trace_fmt_reason(const char *verb, const char *reason, char *buf, size_t n)
{
	static const struct {
		const char *verb, *reason, *text;
	} t[] = {
		{ "record_exit", "already_claimed", "the exit was already recorded" },
		{ "renew", "lease_not_held",
		  "the lease is no longer held (expired or taken over)" },
		{ "readopt", "lease_not_held", "there is no lease to take over" },
		{ "start", "not_claimed", "the run is no longer claimed" },
		{ "abandon", "not_abandonable", "the run can no longer be abandoned" },
		{ "settle", "not_aftercare_owner", "its aftercare belongs to another actor" },
		{ NULL, "host_lost", "its host was declared lost" },
		{ NULL, "host_not_lost", "its host was not declared lost" },
		{ NULL, "store_unreachable",
		  "the store has not been reached for half the host TTL" },
		{ "host_lost", "lease_live", "that host's lease is live" },
		{ "host_lost", "epoch_moved", "that host was declared lost already" },
		{ NULL, "nothing_due", "nothing is due" },
		{ "claim", "placement", "this host may not take it (its --host or --on)" },
		{ NULL, "slots_full", "every slot is busy" },
		{ NULL, "paused", "the group is paused" },
		{ NULL, "seat_conflict", "its seat is held" },
		{ NULL, "tree_conflict", "its working tree is held" },
		{ NULL, "not_permitted", "not permitted for this caller" },
		{ NULL, "activation_not_queued", "nothing queued to run" },
	};
	size_t i, code;

	if (reason == NULL)
		reason = "";
	/* The code is the first word; what follows it is kept. */
	code = strcspn(reason, " ");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].reason) == code && strncmp(t[i].reason, reason, code) == 0 &&
		    (t[i].verb == NULL || (verb != NULL && strcmp(t[i].verb, verb) == 0))) {
			snprintf(buf, n, "%s%s", t[i].text, reason + code);
			return;
		}
	snprintf(buf, n, "%s", reason);
}

void
trace_fmt_verdict(const struct trace_ev *ev, char *buf, size_t n)
{
	int alive = strcmp(ev->text, "owner alive") == 0;

	buf[0] = '\0';
	if (!ev->ring || ev->kind != RING_STATE || strcmp(ev->from, "recovery") != 0 ||
	    (!alive && strcmp(ev->text, "owner gone") != 0))
		return;
	/* recovery/rcv_pass.c: decision the action, reason the shim's
	 * identity (ident_status_name), text the owner's. */
	snprintf(buf, n, "recovery: %s (job %s; its supervisor %s)", ev->decision,
		 strcmp(ev->reason, "matches") == 0        ? "alive"
		 : strcmp(ev->reason, "unverifiable") == 0 ? "unverifiable, taken as alive"
		 : ev->reason[0] != '\0'                   ? ev->reason
							   : "unknown",
		 alive ? "alive, lease ran out" : "gone");
}

/* "lease expired at 15:00:08.946, 20 ms before; its owner 7392204e last
 * renewed it at 15:00:07.946": the lease a decision found, when it says
 * one (renew: its new expiry). "" when none. */
void
trace_fmt_lease(const struct trace_ev *ev, char *buf, size_t n)
{
	char at[32], ren[32], ago[32];

	buf[0] = '\0';
	if (ev->ring || ev->lease_expires_ms <= 0)
		return;
	trace_fmt_time(ev->lease_expires_ms, at, sizeof(at));
	if (strcmp(ev->verb, "renew") == 0) {
		snprintf(buf, n, "lease until %s", at);
		return;
	}
	trace_fmt_time(ev->lease_renewed_ms, ren, sizeof(ren));
	if (ev->lease_expires_ms <= ev->ts_ms) {
		dur_format(ms_between(ev->lease_expires_ms, ev->ts_ms), ago, sizeof(ago));
		snprintf(buf, n,
			 "lease expired at %s, %s before; its owner %.8s last renewed it at %s", at,
			 ago, ev->lease_owner, ren);
	} else if (strcmp(ev->lease_owner, ev->instance) != 0) {
		/* Another's lease, still valid: its owner process is gone. */
		snprintf(buf, n, "the lease of %.8s was valid until %s", ev->lease_owner, at);
	}
}

/* s escaped (esc_text) into buf, for a printf argument. */
static const char *
tesc(char *buf, size_t n, const char *s)
{
	esc_text(buf, n, s);
	return buf;
}

/* Every field of a record may carry what a job or a user wrote (a reason,
 * a verb a forged request named), so each is escaped. */
void
trace_print_line(FILE *f, const struct trace_ev *ev, int color)
{
	char when[32], who[48], target[96], lat[32], lease[192], why[384];
	char e_who[4 * sizeof(who)], e_target[4 * sizeof(target)], e_verb[4 * sizeof(ev->verb)],
		e_dec[4 * sizeof(ev->decision)], e_reason[4 * sizeof(why)],
		e_text[4 * sizeof(ev->text)], e_detail[4 * sizeof(ev->detail) + 4 * sizeof(lease)];
	const char *on = "", *off = "";

	trace_fmt_time(ev->ts_ms, when, sizeof(when));
	trace_fmt_who(ev, who, sizeof(who));
	trace_fmt_target(ev, target, sizeof(target));
	trace_fmt_latency(ev->latency_us, lat, sizeof(lat));
	tesc(e_who, sizeof(e_who), who);
	tesc(e_target, sizeof(e_target), target);
	tesc(e_verb, sizeof(e_verb), ev->verb);
	tesc(e_dec, sizeof(e_dec), ev->decision);
	tesc(e_text, sizeof(e_text), ev->text);
	if (!ev->ring) {
		/* The reason in words (the code stays in --json), then what the
		 * decision was about and the lease it found. */
		trace_fmt_reason(ev->verb, ev->reason, why, sizeof(why));
		tesc(e_reason, sizeof(e_reason), why);
		trace_fmt_lease(ev, lease, sizeof(lease));
		/* A fused verb was decided in its request's own transaction
		 * (DESIGN §4): it is no message of its own. */
		snprintf(why, sizeof(why), "%s%s%s%s%s%s", ev->fused[0] ? "fused with " : "",
			 ev->fused, ev->fused[0] && (ev->detail[0] || lease[0]) ? "; " : "",
			 ev->detail, ev->detail[0] && lease[0] ? "; " : "", lease);
		tesc(e_detail, sizeof(e_detail), why);
		if (color && (on = trace_color(ev->decision))[0] != '\0')
			off = "\033[0m";
		fprintf(f, "%s  %-19s -> coordinator  %-12s %-20s %s%s%s%s%s  %s%s%s\n", when,
			e_who, e_verb, e_target, on, e_dec, ev->reason[0] != '\0' ? ": " : "",
			e_reason, off, lat, e_detail[0] ? "  " : "", e_detail);
		return;
	}
	tesc(e_reason, sizeof(e_reason), ev->reason);
	if (color) {
		on = ev->kind == RING_FAILPOINT || ev->kind == RING_KILL ||
				     ev->kind == TRACE_KIND_DEATH
			     ? "\033[1;35m"
			     : "\033[2m";
		off = "\033[0m";
	}
	fprintf(f, "%s  %-19s %s[%s]", when, e_who, on, trace_kind_name(ev->kind));
	trace_fmt_verdict(ev, why, sizeof(why));
	if (why[0] != '\0') {
		tesc(e_text, sizeof(e_text), why);
		fprintf(f, " %s %s%s\n", e_target, e_text, off);
		return;
	}
	if (ev->verb[0] != '\0')
		fprintf(f, " %s", e_verb);
	if (target[0] != '\0')
		fprintf(f, " %s", e_target);
	if (ev->decision[0] != '\0')
		fprintf(f, " %s", e_dec);
	if (ev->reason[0] != '\0')
		fprintf(f, " (%s)", e_reason);
	if (ev->text[0] != '\0')
		fprintf(f, " %s", e_text);
	if (lat[0] != '\0')
		fprintf(f, "  %s", lat);
	fprintf(f, "%s\n", off);
}

void
trace_print_json(FILE *f, const struct trace_ev *ev)
{
	fprintf(f, "{\"seq\":%llu,\"ts_ms\":%lld,\"from\":", (unsigned long long)ev->seq,
		(long long)ev->ts_ms);
	json_str(f, ev->from);
	fputs(",\"instance\":", f);
	json_str(f, ev->instance);
	fprintf(f, ",\"req_id\":%llu,\"verb\":", (unsigned long long)ev->req_id);
	json_str(f, ev->verb);
	fputs(",\"ticket\":", f);
	json_str(f, ev->ticket);
	fputs(",\"run\":", f);
	json_str(f, ev->run);
	fputs(",\"decision\":", f);
	json_str(f, ev->decision);
	fputs(",\"reason\":", f);
	json_str(f, ev->reason);
	if (ev->latency_us >= 0)
		fprintf(f, ",\"latency_us\":%lld", (long long)ev->latency_us);
	else
		fputs(",\"latency_us\":null", f);
	if (ev->ring) {
		/* launcher: from launch/launcher.log; derived: made by berth
		 * trace from a decision (a lease that ran out). */
		fprintf(f, ",\"source\":\"%s\",\"event\":",
			ev->kind == TRACE_KIND_DEATH || ev->kind == TRACE_KIND_START ? "launcher"
			: ev->kind == TRACE_KIND_LEASE                               ? "derived"
										     : "ring");
		json_str(f, trace_kind_name(ev->kind));
		fprintf(f, ",\"pid\":%d,\"text\":", (int)ev->pid);
		json_str(f, ev->text);
	} else {
		fputs(",\"source\":\"coordinator\"", f);
		if (ev->fused[0] != '\0') {
			fputs(",\"fused\":", f);
			json_str(f, ev->fused);
		}
		if (ev->detail[0] != '\0') {
			fputs(",\"detail\":", f);
			json_str(f, ev->detail);
		}
		if (ev->lease_expires_ms > 0) {
			fprintf(f, ",\"lease_expires_ms\":%lld,\"lease_renewed_ms\":%lld",
				(long long)ev->lease_expires_ms, (long long)ev->lease_renewed_ms);
			fputs(",\"lease_owner\":", f);
			json_str(f, ev->lease_owner);
		}
	}
	/* A shared store's: where it was decided, and its group's place in
	 * the store's order of every host's decisions. */
	if (ev->host[0] != '\0') {
		fputs(",\"host\":", f);
		json_str(f, ev->host);
	}
	if (ev->gseq > 0)
		fprintf(f, ",\"gseq\":%lld", (long long)ev->gseq);
	fputs("}\n", f);
}

/* ------------------------------------------------------------ layout */

struct trace_lane {
	char actor[24];
	char host[65];     /* a shared store's: the host whose coordinator it talks to */
	char instance[40]; /* the first instance seen of this process */
	int32_t pid;       /* 0: unknown (no ring record names it) */
	int coord;
	int first_row;
	int last_row;
	int ended;  /* a later instance of the same actor exists: this one ended */
	int killed; /* its last record is its death (launcher.log): it was killed */
	int col;
};

struct trace_layout {
	struct trace_lane *lane;
	size_t nlanes;
	size_t *ev_lane;  /* per event */
	size_t *ev_coord; /* per event: its host's coordinator lane */
	size_t nhosts;    /* hosts with a lane (a shared store's trace: more than one) */
	int *ev_row;      /* per event: its first row */
	int64_t *ev_gap;  /* per event: ms since the one before, when a gap row precedes it */
	/* instance -> pid, learnt from ring records */
	const struct trace_ev **pm;
	size_t npm;
	int rows;
	size_t coord; /* the first host's coordinator lane */
};

static int
trace_shared_lane(const char *actor)
{
	return actor[0] == '\0' || strcmp(actor, "cli") == 0 || strcmp(actor, "worker") == 0 ||
	       strcmp(actor, "shim") == 0;
}

/* The pid behind an instance, when a ring record of that instance said
 * (cmd_trace copies it onto the decisions of that instance too). */
static int32_t
trace_pid_of(const struct trace_layout *L, const char *instance)
{
	size_t i;

	for (i = 0; i < L->npm; i++)
		if (strcmp(L->pm[i]->instance, instance) == 0)
			return L->pm[i]->pid;
	return 0;
}

/* One lane per process: an actor may talk through several rpc clients,
 * each with its own instance (the supervisor's long-poll claim has one of
 * its own), and the ring's records tie those instances to one pid. Without
 * ring records an instance is its own lane. */
static size_t
trace_lane_new(struct trace_layout *L, const char *actor, const char *host, const char *inst)
{
	struct trace_lane *l = &L->lane[L->nlanes];

	memset(l, 0, sizeof(*l));
	snprintf(l->actor, sizeof(l->actor), "%s", actor);
	snprintf(l->host, sizeof(l->host), "%s", host);
	snprintf(l->instance, sizeof(l->instance), "%s", inst);
	l->first_row = -1;
	return L->nlanes++;
}

/* The coordinator lane of a host: each host's coordinator decides its own
 * actors' requests (DESIGN §13). */
static size_t
trace_coord_of(struct trace_layout *L, const char *host)
{
	size_t i;

	for (i = 0; i < L->nlanes; i++)
		if (L->lane[i].coord && strcmp(L->lane[i].host, host) == 0)
			return i;
	i = trace_lane_new(L, "coordinator", host, "");
	L->lane[i].coord = 1;
	L->nhosts++;
	return i;
}

static size_t
trace_lane_of(struct trace_layout *L, const struct trace_ev *ev)
{
	const char *actor = ev->from[0] != '\0' ? ev->from : "?";
	const char *inst = ev->instance;
	struct trace_lane *l;
	int32_t pid;
	size_t i;

	if (strcmp(actor, "coordinator") == 0)
		return trace_coord_of(L, ev->host);
	if (trace_shared_lane(ev->from))
		inst = "";
	pid = inst[0] != '\0' ? trace_pid_of(L, inst) : 0;
	for (i = 0; i < L->nlanes; i++) {
		l = &L->lane[i];
		if (l->coord || strcmp(l->actor, actor) != 0 || strcmp(l->host, ev->host) != 0)
			continue;
		if (pid != 0 ? l->pid == pid : strcmp(l->instance, inst) == 0)
			return i;
	}
	i = trace_lane_new(L, actor, ev->host, inst);
	L->lane[i].pid = pid;
	return i;
}

/* Columns: each host's lanes together, hosts in order of first
 * appearance; in each, half its actors left of its coordinator and half
 * right, in order of first appearance. */
static void
trace_columns(struct trace_layout *L)
{
	size_t h, i, k, left, nother;
	int col = 0;

	for (h = 0; h < L->nlanes; h++) {
		const struct trace_lane *c = &L->lane[h];

		if (!c->coord)
			continue;
		for (nother = 0, i = 0; i < L->nlanes; i++)
			nother += !L->lane[i].coord && strcmp(L->lane[i].host, c->host) == 0;
		left = (nother + 1) / 2;
		for (k = 0, i = 0; i < L->nlanes; i++) {
			if (L->lane[i].coord || strcmp(L->lane[i].host, c->host) != 0)
				continue;
			L->lane[i].col = col + (int)(k < left ? k : k + 1);
			k++;
		}
		L->lane[h].col = col + (int)left;
		col += (int)nother + 1;
	}
}

/* A pause between two events this long or longer is drawn as a gap row. */
#define TRACE_GAP_MS 250

/* Rows an event takes: a decision is a request and its reply. */
static int
trace_ev_rows(const struct trace_ev *ev)
{
	return ev->ring ? 1 : 2;
}

static int
trace_layout(struct trace_layout *L, const struct trace_ev *ev, size_t n)
{
	size_t i, j;
	int row = 0;

	memset(L, 0, sizeof(*L));
	/* A lane per event at most, and a coordinator's per host. */
	L->lane = calloc(2 * n + 1, sizeof(*L->lane));
	L->ev_lane = calloc(n + 1, sizeof(*L->ev_lane));
	L->ev_coord = calloc(n + 1, sizeof(*L->ev_coord));
	L->ev_row = calloc(n + 1, sizeof(*L->ev_row));
	L->ev_gap = calloc(n + 1, sizeof(*L->ev_gap));
	L->pm = calloc(n + 1, sizeof(*L->pm));
	if (L->lane == NULL || L->ev_lane == NULL || L->ev_coord == NULL || L->ev_row == NULL ||
	    L->ev_gap == NULL || L->pm == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (ev[i].pid > 0 && ev[i].instance[0] != '\0' && !trace_shared_lane(ev[i].from) &&
		    trace_pid_of(L, ev[i].instance) == 0)
			L->pm[L->npm++] = &ev[i];
	L->coord = trace_coord_of(L, n > 0 ? ev[0].host : "");
	for (i = 0; i < n; i++) {
		struct trace_lane *l;

		L->ev_coord[i] = trace_coord_of(L, ev[i].host);
		L->ev_lane[i] = trace_lane_of(L, &ev[i]);
		/* Rows are not to scale: a long quiet stretch (a job running,
		 * a lease running out, a process held at a failpoint) gets a
		 * row of its own that says how long it was. */
		if (i > 0 && ms_between(ev[i - 1].ts_ms, ev[i].ts_ms) >= TRACE_GAP_MS) {
			L->ev_gap[i] = ms_between(ev[i - 1].ts_ms, ev[i].ts_ms);
			row++;
		}
		L->ev_row[i] = row;
		l = &L->lane[L->ev_lane[i]];
		if (l->first_row < 0)
			l->first_row = row;
		row += trace_ev_rows(&ev[i]);
		l->last_row = row - 1;
	}
	L->rows = row;
	/* A lane whose process died (the launcher saw it) ends there. */
	for (i = 0; i < n; i++)
		if (ev[i].ring && ev[i].kind == TRACE_KIND_DEATH)
			L->lane[L->ev_lane[i]].killed = 1;
	/* A later instance of the same actor means the earlier one ended. */
	for (i = 0; i < L->nlanes; i++)
		for (j = i + 1; j < L->nlanes; j++)
			if (!L->lane[i].coord && strcmp(L->lane[i].actor, L->lane[j].actor) == 0 &&
			    strcmp(L->lane[i].host, L->lane[j].host) == 0 &&
			    L->lane[j].first_row > L->lane[i].last_row)
				L->lane[i].ended = 1;
	trace_columns(L);
	return 0;
}

static void
trace_layout_free(struct trace_layout *L)
{
	free(L->lane);
	free(L->ev_lane);
	free(L->ev_coord);
	free(L->ev_row);
	free(L->ev_gap);
	free(L->pm);
}

/* ------------------------------------------------------------ SVG */

#define SVG_LEFT     112 /* time labels */
#define SVG_COLW     210
#define SVG_TITLE_Y  20 /* the title's baseline */
#define SVG_LEGEND_Y 40 /* the first of the legend's two rows */
#define SVG_HEAD_Y   92 /* below the legend's three rows */
#define SVG_HEAD_H   36
#define SVG_TOP      156 /* first row */
#define SVG_ROWH     22
#define SVG_BOTTOM   20
#define SVG_NOTEW    330 /* room right of the last lane for marks' text */
/* A white outline under label text keeps it readable where it crosses a
 * lifeline or another arrow. */
#define SVG_HALO " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\""

/* s as the terminal would show it (esc_text: control characters and bytes
 * that are not valid UTF-8 spelled out as \e, \n, \xNN), in a buffer the
 * caller frees; NULL when out of memory. The diagram shows what the
 * timeline shows, and holds no control byte. */
static char *
svg_esc(const char *s)
{
	size_t n = esc_text(NULL, 0, s) + 1;
	char *e = malloc(n);

	if (e != NULL)
		esc_text(e, n, s);
	return e;
}

/* Writes s as XML character data: escaped for the terminal first (svg_esc),
 * then the five XML special characters as entities, so the file stays
 * well-formed whatever a record holds. max bytes of the escaped text at
 * most (0: all), never half a character, with an ellipsis when cut. */
static void
svg_text(FILE *f, const char *s, size_t max)
{
	char *e = svg_esc(s);
	const unsigned char *p;
	size_t used = 0;

	if (e == NULL) {
		fputc('?', f);
		return;
	}
	for (p = (const unsigned char *)e; *p != '\0'; p++, used++) {
		if (max > 0 && used >= max && (*p & 0xc0) != 0x80) {
			fputs("\xe2\x80\xa6", f); /* U+2026 */
			break;
		}
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*p, f);
		}
	}
	free(e);
}

/* How many characters svg_text(s, max) writes, to size the white box
 * under a label (the font is monospace: a character is 0.6 em). */
static int
svg_text_cols(const char *s, size_t max)
{
	char *e = svg_esc(s);
	const unsigned char *p;
	size_t used = 0;
	int cols = 0;

	if (e == NULL)
		return 1;
	for (p = (const unsigned char *)e; *p != '\0'; p++, used++) {
		if (max > 0 && used >= max && (*p & 0xc0) != 0x80) {
			cols++;
			break;
		}
		if ((*p & 0xc0) != 0x80)
			cols++;
	}
	free(e);
	return cols;
}

/* A white box under a label of cols characters whose baseline is at y,
 * from x (or centred on x): it hides the lifelines the label crosses,
 * spaces included, which a text halo alone does not. */
static void
svg_label_box(FILE *f, int x, int y, int cols, int centred)
{
	int w = (cols * 66 + 9) / 10 + 6;

	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"13\" fill=\"#ffffff\" "
		"fill-opacity=\"0.9\"/>\n",
		centred ? x - w / 2 : x - 3, y - 10, w);
}

static const char *
svg_decision_color(const char *d)
{
	if (strcmp(d, "granted") == 0)
		return "#2e7d32";
	if (strcmp(d, "denied") == 0)
		return "#d32f2f";
	if (strcmp(d, "error") == 0)
		return "#c000c0";
	if (strcmp(d, "replayed") == 0)
		return "#c9a400";
	return "#777777";
}

/* The class naming a reply's decision: one of the known words, else
 * "other" (a record's text never lands in an attribute unescaped). */
static const char *
svg_decision_class(const char *d)
{
	static const char *known[] = { "granted", "denied", "error", "replayed" };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(d, known[i]) == 0)
			return known[i];
	return "other";
}

static int
svg_x(const struct trace_layout *L, size_t lane)
{
	return SVG_LEFT + L->lane[lane].col * SVG_COLW + SVG_COLW / 2;
}

static int
svg_y(int row)
{
	return SVG_TOP + row * SVG_ROWH;
}

static void
svg_defs(FILE *f)
{
	static const struct {
		const char *id, *color;
	} m[] = {
		{ "req", "#333333" },    { "granted", "#2e7d32" },  { "denied", "#d32f2f" },
		{ "error", "#c000c0" },  { "replayed", "#c9a400" }, { "other", "#777777" },
		{ "client", "#888888" },
	};
	size_t i;

	fputs("<defs>\n", f);
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		fprintf(f,
			"<marker id=\"ah-%s\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
			"markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\">"
			"<path d=\"M0,0 L10,5 L0,10 z\" fill=\"%s\"/></marker>\n",
			m[i].id, m[i].color);
	fputs("</defs>\n", f);
}

static void
svg_lane(FILE *f, const struct trace_layout *L, size_t i, int height)
{
	const struct trace_lane *l = &L->lane[i];
	int x = svg_x(L, i), y0 = SVG_HEAD_Y + SVG_HEAD_H, bottom = height - SVG_BOTTOM;
	int a = l->first_row >= 0 ? svg_y(l->first_row) - SVG_ROWH / 2 : y0;
	int b = l->first_row >= 0 ? svg_y(l->last_row) + SVG_ROWH / 2 : y0;

	fputs("<g class=\"lifeline\" data-actor=\"", f);
	svg_text(f, l->actor, 0);
	fputs("\" data-instance=\"", f);
	svg_text(f, l->instance, 0);
	fputs("\">\n", f);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"5\" fill=\"%s\" "
		"stroke=\"#455a64\"/>\n",
		x - SVG_COLW / 2 + 12, SVG_HEAD_Y, SVG_COLW - 24, SVG_HEAD_H,
		l->coord ? "#e3f2fd" : "#f5f5f5");
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">", x,
		SVG_HEAD_Y + (l->instance[0] != '\0' || l->host[0] != '\0' || !l->coord ? 15 : 23));
	svg_text(f, l->actor, 0);
	fputs("</text>\n", f);
	if (l->coord && l->host[0] != '\0') {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">", x,
			SVG_HEAD_Y + 29);
		svg_text(f, l->host, 24);
		fputs("</text>\n", f);
	}
	if (!l->coord) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">", x,
			SVG_HEAD_Y + 29);
		if (l->instance[0] != '\0') {
			svg_text(f, l->instance, 4);
		} else {
			fputs("(all clients)", f);
		}
		fputs("</text>\n", f);
	}
	if (l->coord || l->first_row < 0) {
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#455a64\" "
			"stroke-width=\"%s\"/>\n",
			x, y0, x, bottom, l->coord ? "2" : "1");
	} else {
		/* Solid while the instance was active, dotted before and after. */
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbbbbb\" "
			"stroke-dasharray=\"2 4\"/>\n",
			x, y0, x, a);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#455a64\"/>\n",
			x, a, x, b);
		if (l->killed) {
			/* A death: the lifeline stops at it (the X is the death
			 * record's own mark); nothing of this process follows. */
		} else if (l->ended) {
			fprintf(f,
				"<path class=\"end\" d=\"M%d,%d L%d,%d M%d,%d L%d,%d\" "
				"stroke=\"#455a64\" stroke-width=\"2\"/>\n",
				x - 6, b - 6, x + 6, b + 6, x + 6, b - 6, x - 6, b + 6);
		} else {
			fprintf(f,
				"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbbbbb\" "
				"stroke-dasharray=\"2 4\"/>\n",
				x, b, x, bottom);
		}
	}
	fputs("</g>\n", f);
}

/* A shared store's trace: each host's lanes in a box of their own, named
 * by the host, so a person sees which coordinator decided what. */
static void
svg_hosts(FILE *f, const struct trace_layout *L, int height)
{
	size_t h, i;
	int lo, hi;

	for (h = 0; h < L->nlanes; h++) {
		const struct trace_lane *c = &L->lane[h];

		if (!c->coord || c->host[0] == '\0')
			continue;
		lo = hi = c->col;
		for (i = 0; i < L->nlanes; i++) {
			if (strcmp(L->lane[i].host, c->host) != 0)
				continue;
			lo = L->lane[i].col < lo ? L->lane[i].col : lo;
			hi = L->lane[i].col > hi ? L->lane[i].col : hi;
		}
		fputs("<g class=\"host\" data-host=\"", f);
		svg_text(f, c->host, 0);
		fprintf(f,
			"\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"8\" "
			"fill=\"#fafcff\" stroke=\"#90a4ae\" stroke-dasharray=\"6 3\"/>\n",
			SVG_LEFT + lo * SVG_COLW + 4, SVG_HEAD_Y - 13, (hi - lo + 1) * SVG_COLW - 8,
			height - SVG_BOTTOM - SVG_HEAD_Y + 17);
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#37474f\" font-weight=\"bold\">host ",
			SVG_LEFT + lo * SVG_COLW + 12, SVG_HEAD_Y - 3);
		svg_text(f, c->host, 40);
		fputs("</text>\n</g>\n", f);
	}
}

/* An arrow from x1 to x2 with its label centred on xl, above it. */
static void
svg_arrow(FILE *f, const char *cls, const char *decision, const struct trace_ev *ev, int x1, int x2,
	  int xl, int y, const char *color, const char *marker, const char *dash,
	  const char *label1, const char *label2)
{
	int two = label2 != NULL && label2[0] != '\0';

	fprintf(f, "<g class=\"%s\" data-seq=\"%llu\" data-verb=\"", cls,
		(unsigned long long)ev->seq);
	svg_text(f, ev->verb, 0);
	fprintf(f, "\" data-decision=\"%s\">\n", decision);
	fprintf(f,
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
		"stroke-width=\"1.6\"%s%s%s "
		"marker-end=\"url(#ah-%s)\"/>\n",
		x1, y, x2 + (x2 > x1 ? -2 : 2), y, color,
		dash != NULL ? " stroke-dasharray=\"" : "", dash != NULL ? dash : "",
		dash != NULL ? "\"" : "", marker);
	svg_label_box(f, xl, y - 4,
		      svg_text_cols(label1, 48) + (two ? 1 + svg_text_cols(label2, 64) : 0), 1);
	/* A reply that was refused is the point of most pictures: bold. */
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\"%s%s>", xl, y - 4,
		color,
		strstr(cls, "rep") != NULL &&
				(strcmp(decision, "denied") == 0 || strcmp(decision, "error") == 0)
			? " font-weight=\"bold\""
			: "",
		SVG_HALO);
	svg_text(f, label1, 48);
	if (two) {
		fputs(" ", f);
		svg_text(f, label2, 64);
	}
	fputs("</text>\n</g>\n", f);
}

/* cross: 1 an X, 2 a clock (a deadline that passed), 3 a new
 * lifeline's start (a filled circle); 0 a box. */
static void
svg_mark(FILE *f, const char *cls, const struct trace_ev *ev, int x, int y, const char *color,
	 int cross, const char *label)
{
	fprintf(f, "<g class=\"mark %s\" data-seq=\"%llu\">\n", cls, (unsigned long long)ev->seq);
	if (cross == 1)
		fprintf(f,
			"<path d=\"M%d,%d L%d,%d M%d,%d L%d,%d\" stroke=\"%s\" stroke-width=\"3\"/>\n",
			x - 7, y - 7, x + 7, y + 7, x + 7, y - 7, x - 7, y + 7, color);
	else if (cross == 2)
		fprintf(f,
			"<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"#fff3e0\" stroke=\"%s\" "
			"stroke-width=\"1.5\"/><path d=\"M%d,%d L%d,%d L%d,%d\" fill=\"none\" "
			"stroke=\"%s\" stroke-width=\"1.5\"/>\n",
			x, y, color, x, y - 4, x, y, x + 3, y, color);
	else if (cross == 3)
		fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"%s\"/>\n", x, y, color);
	else
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#fff8e1\" "
			"stroke=\"%s\"/>\n",
			x - 6, y - 6, color);
	svg_label_box(f, x + 12, y + 4, svg_text_cols(label, 90), 0);
	fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\" font-weight=\"%s\"%s>", x + 12, y + 4,
		color, cross ? "bold" : "normal", SVG_HALO);
	svg_text(f, label, 90);
	fputs("</text>\n</g>\n", f);
}

/* one: the whole picture is about one ticket and at most one run, which
 * the title names, so labels leave them out. */
static void
svg_event(FILE *f, const struct trace_layout *L, size_t i, const struct trace_ev *ev, int one)
{
	char target[96], lat[32], l1[512], l2[320], cls[32];
	int xa = svg_x(L, L->ev_lane[i]), xc = svg_x(L, L->ev_coord[i]), y = svg_y(L->ev_row[i]);
	/* Labels sit in the column next to the coordinator, where no other
	 * lifeline crosses the arrow. */
	int xl = xa < xc ? xc - SVG_COLW / 2 : xc + SVG_COLW / 2;
	const char *d, *color;

	if (one)
		target[0] = '\0';
	else
		trace_fmt_target(ev, target, sizeof(target));
	trace_fmt_latency(ev->latency_us, lat, sizeof(lat));
	if (!ev->ring) {
		char why[64] = "", why2[192];

		d = svg_decision_class(ev->decision);
		color = svg_decision_color(ev->decision);
		/* Why an actor acted on another's run: the lease had run out. */
		if (ev->lease_expires_ms > 0 && ev->lease_expires_ms <= ev->ts_ms &&
		    strcmp(ev->lease_owner, ev->instance) != 0) {
			char ago[32];

			dur_format(ms_between(ev->lease_expires_ms, ev->ts_ms), ago, sizeof(ago));
			snprintf(why, sizeof(why), " (lease expired %s before)", ago);
		}
		snprintf(l1, sizeof(l1), "%s%s%s%s%s%s%s", ev->verb, target[0] != '\0' ? " " : "",
			 target, why, ev->fused[0] ? " (fused with " : "", ev->fused,
			 ev->fused[0] ? ")" : "");
		svg_arrow(f, "msg req", d, ev, xa, xc, xl, y, "#333333", "req", NULL, l1, NULL);
		snprintf(l1, sizeof(l1), "%s", ev->decision);
		trace_fmt_reason(ev->verb, ev->reason, why2, sizeof(why2));
		snprintf(l2, sizeof(l2), "%s%s%s%s%s", why2,
			 ev->reason[0] != '\0' && ev->detail[0] != '\0' ? ": " : "", ev->detail,
			 (ev->reason[0] != '\0' || ev->detail[0] != '\0') && lat[0] != '\0' ? " "
											    : "",
			 lat);
		snprintf(cls, sizeof(cls), "msg rep %s", d);
		svg_arrow(f, cls, d, ev, xc, xa, xl, y + SVG_ROWH, color, d,
			  strcmp(d, "denied") == 0  ? "7 4"
			  : strcmp(d, "error") == 0 ? "2 3"
						    : NULL,
			  l1, l2);
		return;
	}
	switch (ev->kind) {
	case RING_SENT:
	case RING_RETRY:
		snprintf(l1, sizeof(l1), "%s%s%s%s", ev->kind == RING_RETRY ? "retry " : "",
			 ev->verb, target[0] != '\0' ? " " : "", target);
		svg_arrow(f, "client req", "", ev, xa, xc, xl, y, "#888888", "client", "3 3", l1,
			  ev->kind == RING_SENT ? "(no decision traced)" : NULL);
		break;
	case RING_REPLY:
		d = svg_decision_class(ev->decision);
		snprintf(l1, sizeof(l1), "%s %s (client)", ev->decision, ev->reason);
		svg_arrow(f, "client rep", d, ev, xc, xa, xl, y, svg_decision_color(ev->decision),
			  d, "3 3", l1, lat);
		break;
	case RING_FAILPOINT:
		snprintf(l1, sizeof(l1), "failpoint %s", ev->text);
		svg_mark(f, "failpoint", ev, xa, y, "#6a1b9a", 1, l1);
		break;
	case RING_KILL:
		/* The reaper's kills: reason is the signal, decision whether
		 * it was sent or refused (identity check), text why. */
		snprintf(l1, sizeof(l1), "kill %s%s%s%s%s%s%s", target,
			 target[0] != '\0' ? " " : "", ev->reason, ev->reason[0] != '\0' ? " " : "",
			 ev->decision, ev->decision[0] != '\0' ? " " : "", ev->text);
		svg_mark(f, "kill", ev, xa, y, "#b71c1c", 1, l1);
		break;
	case RING_TIMEOUT:
		snprintf(l1, sizeof(l1), "timeout %s %s %s", ev->verb, target, lat);
		svg_mark(f, "timeout", ev, xa, y, "#e65100", 1, l1);
		break;
	case TRACE_KIND_LEASE:
		snprintf(l1, sizeof(l1), "lease%s%s expired: %s", target[0] != '\0' ? " of " : "",
			 target, ev->text);
		svg_mark(f, "lease", ev, xa, y, "#ef6c00", 2, l1);
		break;
	case TRACE_KIND_DEATH:
		snprintf(l1, sizeof(l1), "died: %s", ev->text);
		svg_mark(f, "death", ev, xa, y, "#b71c1c", 1, l1);
		break;
	case TRACE_KIND_START:
		snprintf(l1, sizeof(l1), "%s", ev->text);
		svg_mark(f, "restart", ev, xa, y, "#1565c0", 3, l1);
		break;
	default:
		trace_fmt_verdict(ev, l1, sizeof(l1));
		if (l1[0] != '\0') {
			svg_mark(f, "state", ev, xa, y, "#795548", 0, l1);
			break;
		}
		snprintf(l1, sizeof(l1), "%s%s%s%s%s%s%s%s%s",
			 ev->kind == RING_STATE ? "state " : "", target,
			 target[0] != '\0' ? " " : "", ev->decision,
			 ev->reason[0] != '\0' ? " (" : "", ev->reason,
			 ev->reason[0] != '\0' ? ")" : "",
			 ev->decision[0] != '\0' || ev->reason[0] != '\0' ? " " : "", ev->text);
		svg_mark(f, ev->kind == RING_STATE ? "state" : "note", ev, xa, y, "#795548", 0, l1);
		break;
	}
}

/* "883 ms", "1.20 s", "2m5s". */
static void
svg_fmt_span(int64_t ms, char *buf, size_t n)
{
	if (ms < 1000)
		snprintf(buf, n, "%lld ms", (long long)ms);
	else if (ms < 60000)
		snprintf(buf, n, "%.2f s", (double)ms / 1000.0);
	else
		dur_format(ms, buf, n);
}

/* Two rows at the top, so a long picture explains itself before it
 * starts: the arrows, then the marks. */
static void
svg_legend(FILE *f)
{
	static const struct {
		const char *name, *color, *dash;
	} k[] = {
		{ "request", "#333333", NULL },  { "granted", "#2e7d32", NULL },
		{ "denied", "#d32f2f", "7 4" },  { "error", "#c000c0", "2 3" },
		{ "replayed", "#c9a400", NULL }, { "sent, no decision traced", "#888888", "3 3" },
	};
	static const struct {
		const char *name, *color;
		int shape; /* 0 cross, 1 box, 2 bar, 3 band */
	} m[] = {
		{ "failpoint", "#6a1b9a", 0 },
		{ "kill", "#b71c1c", 0 },
		{ "timeout", "#e65100", 0 },
		{ "state change / note", "#795548", 1 },
		{ "held at a failpoint", "#6a1b9a", 2 },
		{ "time passes (not to scale)", "#607d8b", 3 },
		{ "a lease ran out (not renewed)", "#ef6c00", 4 },
		{ "an actor died (its lifeline ends)", "#b71c1c", 0 },
		{ "it ended: a newer one of the actor followed", "#455a64", 0 },
		{ "restarted by the launcher (a new lifeline)", "#1565c0", 5 },
	};
	size_t i;
	int x = SVG_LEFT, y = SVG_LEGEND_Y;

	fputs("<g class=\"legend\">\n", f);
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"1.6\"%s%s%s marker-end=\"url(#ah-%s)\"/>\n",
			x, y, x + 34, y, k[i].color,
			k[i].dash != NULL ? " stroke-dasharray=\"" : "",
			k[i].dash != NULL ? k[i].dash : "", k[i].dash != NULL ? "\"" : "",
			i == 0   ? "req"
			: i == 5 ? "client"
				 : k[i].name);
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", x + 42, y + 4,
			k[i].color, k[i].name);
		x += 42 + (int)strlen(k[i].name) * 7 + 24;
	}
	x = SVG_LEFT;
	y += 18;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		switch (m[i].shape) {
		case 0:
			fprintf(f,
				"<path d=\"M%d,%d L%d,%d M%d,%d L%d,%d\" stroke=\"%s\" "
				"stroke-width=\"3\"/>\n",
				x + 11, y - 6, x + 23, y + 6, x + 23, y - 6, x + 11, y + 6,
				m[i].color);
			break;
		case 1:
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#fff8e1\" "
				"stroke=\"%s\"/>\n",
				x + 11, y - 6, m[i].color);
			break;
		case 2:
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"14\" fill=\"#e1bee7\" "
				"stroke=\"%s\"/>\n",
				x + 13, y - 7, m[i].color);
			break;
		case 4:
			fprintf(f,
				"<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"#fff3e0\" "
				"stroke=\"%s\" stroke-width=\"1.5\"/><path d=\"M%d,%d L%d,%d "
				"L%d,%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
				x + 17, y, m[i].color, x + 17, y - 4, x + 17, y, x + 20, y,
				m[i].color);
			break;
		case 5:
			fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"%s\"/>\n", x + 17, y,
				m[i].color);
			break;
		default:
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"34\" height=\"14\" "
				"fill=\"#eceff1\"/>\n",
				x, y - 7);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", x + 42, y + 4,
			m[i].color, m[i].name);
		x += 42 + (int)strlen(m[i].name) * 7 + 24;
		/* The marks take two rows: the first six, then the rest. */
		if (i == 5) {
			x = SVG_LEFT;
			y += 18;
		}
	}
	fputs("</g>\n", f);
}

/* The one ticket and the one run every record that names one names, or ""
 * when there are several (or none). 1 when the picture is about a single
 * ticket and at most one run of it. */
static int
svg_subject(const struct trace_ev *ev, size_t n, char *ticket, size_t tn, char *run, size_t rn)
{
	int tmany = 0, rmany = 0;
	size_t i;

	ticket[0] = run[0] = '\0';
	for (i = 0; i < n; i++) {
		if (ev[i].ticket[0] != '\0') {
			if (ticket[0] == '\0')
				snprintf(ticket, tn, "%s", ev[i].ticket);
			else if (strcmp(ticket, ev[i].ticket) != 0)
				tmany = 1;
		}
		if (ev[i].run[0] != '\0') {
			if (run[0] == '\0')
				snprintf(run, rn, "%s", ev[i].run);
			else if (strcmp(run, ev[i].run) != 0)
				rmany = 1;
		}
	}
	if (tmany)
		ticket[0] = '\0';
	if (rmany || tmany)
		run[0] = '\0';
	return ticket[0] != '\0' && !rmany;
}

static void
svg_title(FILE *f, const struct trace_ev *ev, size_t n, const char *ticket, const char *run)
{
	char a[32], b[32], span[32];
	size_t i, nd = 0, nl = 0;

	/* A lease mark is drawn from a decision, not a record of its own. */
	for (i = 0; i < n; i++) {
		nd += !ev[i].ring;
		nl += ev[i].ring && ev[i].kind == TRACE_KIND_LEASE;
	}
	fprintf(f,
		"<text class=\"title\" x=\"8\" y=\"%d\" font-size=\"13\">"
		"<tspan font-weight=\"bold\">berth trace</tspan>",
		SVG_TITLE_Y);
	if (ticket[0] != '\0') {
		fputs("  ticket ", f);
		svg_text(f, ticket, 0);
		if (run[0] != '\0') {
			fputs(" run ", f);
			svg_text(f, run, 8);
		}
	}
	if (n > 0) {
		trace_fmt_time(ev[0].ts_ms, a, sizeof(a));
		trace_fmt_time(ev[n - 1].ts_ms, b, sizeof(b));
		svg_fmt_span(ms_between(ev[0].ts_ms, ev[n - 1].ts_ms), span, sizeof(span));
		fprintf(f, "  \xc2\xb7  %s \xe2\x80\x93 %s (%s)", a, b, span);
	}
	fprintf(f, "  \xc2\xb7  %zu decision%s, %zu client-side record%s</text>\n", nd,
		nd == 1 ? "" : "s", n - nd - nl, n - nd - nl == 1 ? "" : "s");
}

/* A quiet stretch: a light band across the picture, its length in the
 * time column. */
static void
svg_gap(FILE *f, int y, int width, int64_t ms)
{
	char span[32];

	svg_fmt_span(ms, span, sizeof(span));
	fprintf(f,
		"<g class=\"gap\"><rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"#eceff1\"/>\n<text x=\"8\" y=\"%d\" fill=\"#607d8b\" "
		"font-style=\"italic\">\xe2\x80\xa6 %s later</text></g>\n",
		y - SVG_ROWH / 2 + 3, width, SVG_ROWH - 6, y + 4, span);
}

/* A process held at a failpoint (pause, or sleep) does nothing until its
 * next record: a bar on its lifeline from the firing to that record, or to
 * the end when it never moved again, with how long. */
static void
svg_holds(FILE *f, const struct trace_layout *L, const struct trace_ev *ev, size_t n)
{
	char span[32];
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		const char *t = ev[i].text;
		size_t tl = strlen(t);
		int y0, y1, ly;

		if (!ev[i].ring || ev[i].kind != RING_FAILPOINT)
			continue;
		if (!(tl >= 6 && strcmp(t + tl - 6, " pause") == 0) && strstr(t, " sleep(") == NULL)
			continue;
		/* The next thing the process did itself (a lease running out
		 * meanwhile is not its doing). */
		for (j = i + 1; j < n && (L->ev_lane[j] != L->ev_lane[i] ||
					  (ev[j].ring && ev[j].kind == TRACE_KIND_LEASE));
		     j++)
			;
		y0 = svg_y(L->ev_row[i]) + 9;
		y1 = j < n ? svg_y(L->ev_row[j]) - 4 : svg_y(L->rows) - SVG_ROWH / 2;
		if (y1 <= y0)
			continue;
		/* The label where nothing else is drawn: the first gap row
		 * inside the hold, else its middle. */
		ly = (y0 + y1) / 2;
		for (k = i + 1; k < j && k < n; k++)
			if (L->ev_gap[k] > 0) {
				ly = svg_y(L->ev_row[k] - 1);
				break;
			}
		if (j < n)
			svg_fmt_span(ms_between(ev[i].ts_ms, ev[j].ts_ms), span, sizeof(span));
		else
			snprintf(span, sizeof(span), "to the end");
		fprintf(f,
			"<g class=\"hold\" data-seq=\"%llu\"><rect x=\"%d\" y=\"%d\" width=\"8\" "
			"height=\"%d\" fill=\"#e1bee7\" stroke=\"#6a1b9a\"/>\n"
			"<text x=\"%d\" y=\"%d\" fill=\"#6a1b9a\" font-style=\"italic\"%s>"
			"held %s</text></g>\n",
			(unsigned long long)ev[i].seq, svg_x(L, L->ev_lane[i]) - 4, y0, y1 - y0,
			svg_x(L, L->ev_lane[i]) + 10, ly + 4, SVG_HALO, span);
	}
}

/* A decision found a run's lease run out (its owner had not renewed it):
 * the moment it expired, as a record on the owner's lifeline. */
static int
lease_ran_out(const struct trace_ev *ev)
{
	return !ev->ring && ev->lease_expires_ms > 0 && ev->lease_expires_ms <= ev->ts_ms &&
	       ev->lease_owner[0] != '\0' && strcmp(ev->verb, "renew") != 0;
}

/* ev with a TRACE_KIND_LEASE record added, in time order, for every lease
 * a decision found expired (once per run and expiry): the diagram shows
 * when it ran out, on the lifeline of the owner that did not renew it.
 * *out (malloc'd) holds *nout records; -1 when out of memory. */
int
trace_add_leases(const struct trace_ev *ev, size_t n, struct trace_ev **out, size_t *nout)
{
	struct trace_ev *v, lease;
	size_t i, j, k, m = 0, extra = 0;
	char ren[32];

	for (i = 0; i < n; i++)
		extra += lease_ran_out(&ev[i]);
	if ((v = calloc(n + extra + 1, sizeof(*v))) == NULL)
		return -1;
	memcpy(v, ev, n * sizeof(*v));
	m = n;
	for (i = 0; i < n; i++) {
		int seen = 0;

		if (!lease_ran_out(&ev[i]))
			continue;
		for (j = 0; j < m && !seen; j++)
			seen = v[j].ring && v[j].kind == TRACE_KIND_LEASE &&
			       strcmp(v[j].run, ev[i].run) == 0 &&
			       v[j].ts_ms == ev[i].lease_expires_ms;
		if (seen)
			continue;
		memset(&lease, 0, sizeof(lease));
		lease.ring = 1;
		lease.kind = TRACE_KIND_LEASE;
		lease.latency_us = -1;
		lease.ts_ms = ev[i].lease_expires_ms;
		snprintf(lease.instance, sizeof(lease.instance), "%s", ev[i].lease_owner);
		snprintf(lease.from, sizeof(lease.from), "supervisor");
		snprintf(lease.ticket, sizeof(lease.ticket), "%s", ev[i].ticket);
		snprintf(lease.run, sizeof(lease.run), "%s", ev[i].run);
		/* The owner is of the run's host, whose coordinator decided. */
		snprintf(lease.host, sizeof(lease.host), "%s", ev[i].host);
		lease.remote = ev[i].remote;
		/* The owner's lane: whatever else that instance sent. */
		for (j = 0; j < n; j++)
			if (strcmp(ev[j].instance, lease.instance) == 0) {
				snprintf(lease.from, sizeof(lease.from), "%s", ev[j].from);
				if (ev[j].pid > 0)
					lease.pid = ev[j].pid;
			}
		trace_fmt_time(ev[i].lease_renewed_ms, ren, sizeof(ren));
		snprintf(lease.text, sizeof(lease.text), "%.8s did not renew it after %s",
			 ev[i].lease_owner, ren);
		/* After every record of its time or earlier. */
		for (k = 0; k < m && v[k].ts_ms <= lease.ts_ms; k++)
			;
		memmove(&v[k + 1], &v[k], (m - k) * sizeof(*v));
		v[k] = lease;
		m++;
	}
	*out = v;
	*nout = m;
	return 0;
}

int
trace_svg(FILE *f, const struct trace_ev *in, size_t nin)
{
	struct trace_layout L;
	char when[32], prev[32] = "", ticket[32], run[48];
	struct trace_ev *ev;
	size_t i, n;
	int width, height, one;

	if (trace_add_leases(in, nin, &ev, &n) == -1)
		return -1;
	if (trace_layout(&L, ev, n) == -1) {
		trace_layout_free(&L);
		free(ev);
		return -1;
	}
	one = svg_subject(ev, n, ticket, sizeof(ticket), run, sizeof(run));
	width = SVG_LEFT + (int)L.nlanes * SVG_COLW + SVG_NOTEW;
	if (width < 1000)
		width = 1000; /* the legend's rows */
	height = SVG_TOP + L.rows * SVG_ROWH + SVG_BOTTOM;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" "
		"font-size=\"11\">\n",
		width, height, width, height);
	fputs("<title>berth trace</title>\n", f);
	svg_defs(f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width,
		height);
	svg_title(f, ev, n, ticket, run);
	svg_legend(f);
	for (i = 0; i < n; i++)
		if (L.ev_gap[i] > 0)
			svg_gap(f, svg_y(L.ev_row[i] - 1), width, L.ev_gap[i]);
	svg_hosts(f, &L, height);
	for (i = 0; i < L.nlanes; i++)
		svg_lane(f, &L, i, height);
	svg_holds(f, &L, ev, n);
	for (i = 0; i < n; i++) {
		/* A time label on the left for each event whose time differs
		 * from the one above it. */
		trace_fmt_time(ev[i].ts_ms, when, sizeof(when));
		if (strcmp(when, prev) != 0) {
			fprintf(f,
				"<text class=\"time\" x=\"8\" y=\"%d\" fill=\"#607d8b\">%s</text>\n",
				svg_y(L.ev_row[i]) + 4, when);
			snprintf(prev, sizeof(prev), "%s", when);
		}
		svg_event(f, &L, i, &ev[i], one);
	}
	fputs("</svg>\n", f);
	trace_layout_free(&L);
	free(ev);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------ Mermaid */

/* Mermaid message text: escaped for the terminal (esc_text: no newline,
 * no control byte), and ';' and '#' (statement separator and entity
 * escape) replaced. */
static void
mmd_text(FILE *f, const char *s)
{
	char *e = svg_esc(s);
	const char *p;

	if (e == NULL) {
		fputc('?', f);
		return;
	}
	for (p = e; *p != '\0'; p++) {
		if (*p == ';')
			fputc(',', f);
		else if (*p != '#')
			fputc(*p, f);
	}
	free(e);
}

static void
mmd_name(FILE *f, const struct trace_layout *L, size_t lane)
{
	if (lane == L->coord)
		fputs("C", f);
	else if (L->lane[lane].coord)
		fprintf(f, "C%zu", lane);
	else
		fprintf(f, "P%zu", lane);
}

int
trace_mermaid(FILE *f, const struct trace_ev *ev, size_t n)
{
	struct trace_layout L;
	size_t i, c, order[1024];
	char target[96], lat[32];

	if (trace_layout(&L, ev, n) == -1) {
		trace_layout_free(&L);
		return -1;
	}
	fputs("sequenceDiagram\n", f);
	/* Participants in column order, the coordinator in the middle. */
	for (i = 0; i < L.nlanes && i < sizeof(order) / sizeof(order[0]); i++)
		order[L.lane[i].col] = i;
	for (c = 0; c < L.nlanes && c < sizeof(order) / sizeof(order[0]); c++) {
		const struct trace_lane *l = &L.lane[order[c]];

		fputs("    participant ", f);
		mmd_name(f, &L, order[c]);
		fputs(" as ", f);
		mmd_text(f, l->actor);
		if (L.nhosts > 1 && l->coord) {
			fputs(" on ", f);
			mmd_text(f, l->host);
		}
		if (l->instance[0] != '\0') {
			char inst[5];

			memcpy(inst, l->instance, 4);
			inst[4] = '\0';
			fputs(" ", f);
			mmd_text(f, inst);
		}
		fputs("\n", f);
	}
	for (i = 0; i < n; i++) {
		const struct trace_ev *e = &ev[i];
		size_t a = L.ev_lane[i];

		trace_fmt_target(e, target, sizeof(target));
		trace_fmt_latency(e->latency_us, lat, sizeof(lat));
		if (!e->ring || e->kind == RING_SENT || e->kind == RING_RETRY) {
			fputs("    ", f);
			mmd_name(f, &L, a);
			fputs(e->ring ? "-)" : "->>", f);
			mmd_name(f, &L, L.ev_coord[i]);
			fputs(": ", f);
			if (e->kind == RING_RETRY)
				fputs("retry ", f);
			mmd_text(f, e->verb);
			if (target[0] != '\0') {
				fputs(" ", f);
				mmd_text(f, target);
			}
			if (e->ring && e->kind == RING_SENT)
				fputs(" (no decision traced)", f);
			fputs("\n", f);
		}
		if (!e->ring || e->kind == RING_REPLY) {
			int bad = strcmp(e->decision, "denied") == 0 ||
				  strcmp(e->decision, "error") == 0;

			fputs("    ", f);
			mmd_name(f, &L, L.ev_coord[i]);
			fputs(bad ? "--x" : "-->>", f);
			mmd_name(f, &L, a);
			fputs(": ", f);
			mmd_text(f, e->decision);
			if (e->reason[0] != '\0') {
				fputs(" ", f);
				char why[192];

				trace_fmt_reason(e->verb, e->reason, why, sizeof(why));
				mmd_text(f, why);
			}
			if (e->detail[0] != '\0') {
				fputs(", ", f);
				mmd_text(f, e->detail);
			}
			if (lat[0] != '\0')
				fprintf(f, " %s", lat);
			fputs("\n", f);
			continue;
		}
		if (e->kind == RING_SENT || e->kind == RING_RETRY)
			continue;
		fputs("    Note over ", f);
		mmd_name(f, &L, a);
		fputs(": ", f);
		mmd_text(f, trace_kind_name(e->kind));
		if (e->verb[0] != '\0') {
			fputs(" ", f);
			mmd_text(f, e->verb);
		}
		if (target[0] != '\0') {
			fputs(" ", f);
			mmd_text(f, target);
		}
		if (e->reason[0] != '\0') {
			fputs(" ", f);
			mmd_text(f, e->reason);
		}
		if (e->decision[0] != '\0') {
			fputs(" ", f);
			mmd_text(f, e->decision);
		}
		if (e->text[0] != '\0') {
			fputs(" ", f);
			mmd_text(f, e->text);
		}
		fputs("\n", f);
	}
	trace_layout_free(&L);
	return ferror(f) ? -1 : 0;
}
