/*
 * berth trace: what the coordinator decided, in the order it decided
 * (trace/trace.jsonl, the authoritative record), with the clients' own view
 * from the shared-memory ring merged in where it adds something: retries,
 * timeouts, failpoints, kills, state changes, and requests that never got a
 * decision. A ring "sent" or "reply" whose request has its line in the trace
 * says nothing new and is left out. Nothing here talks to the coordinator,
 * so the trace reads the same while it is down.
 *
 * The trace file grows by a line per request for as long as the group runs,
 * so it is streamed, never loaded: only the records a diagram or --limit
 * needs are kept. The ring holds at most RING_SLOTS records and is loaded
 * whole; a first pass over the file finds which of its sent/reply records
 * have a decision line, the second merges them by time into the file order.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "trace.h"
#include "ring.h"
#include "trace_source.h"
#include "trace_store.h"
#include "util.h"

static const char trace_usage[] =
	"usage: berth trace [--run R] [--ticket T] [--actor A] [--verb V] [--no-reads]\n"
	"                   [--quiet | --all] [--limit N] [--follow]\n"
	"                   [--json | --svg FILE | --mermaid] [--local]\n"
	"\n"
	"Show every request the coordinator decided, in the order it decided them,\n"
	"with the clients' side (retries, timeouts, failpoints, kills, state changes)\n"
	"from the shared-memory trace ring. Works while the coordinator is down.\n"
	"On a store shared by several hosts, every host's decisions are shown, in\n"
	"the order the store decided them (this host's from its own trace file).\n"
	"\n"
	"  --run R        a run id, a prefix of one, or an alias T3-r1\n"
	"  --ticket T     one ticket's records (T3)\n"
	"  --actor A      records from actor A (supervisor, cli, ...) or instance prefix A\n"
	"  --verb V       records of one verb (claim, record_exit, ...)\n"
	"  --no-reads     leave out read-only requests (list, show, status, scan, ...)\n"
	"  --quiet        leave out routine traffic: reads, granted renew, heartbeat,\n"
	"                 seat_heartbeat and seat_reap, parked claims, and run states that\n"
	"                 echo a granted decision (the default of --follow's timeline)\n"
	"  --all          with --follow: show routine traffic too\n"
	"  --limit N      only the last N records (with --follow: of the backlog, default 20)\n"
	"  -f, --follow   keep printing new records as they happen (Ctrl-C ends)\n"
	"  --json         one JSON object per line\n"
	"  --svg FILE     write an SVG sequence diagram to FILE (- for stdout)\n"
	"  --mermaid      print a Mermaid sequenceDiagram\n"
	"  --local        on a shared store: this host's trace file only\n";

/* How long a ring "sent" waits for its decision to show up in trace.jsonl
 * before it is shown as a request nobody decided. */
#define TRACE_PENDING_MS     2000
#define TRACE_POLL_MS        200
#define TRACE_FOLLOW_BACKLOG 20
#define TRACE_RECENT         1024
struct trace_opts {
	struct trace_filter filter;
	int json;
	int mermaid;
	int follow;
	int color;
	const char *svg;
	long long limit;
	/* where selected records go: printed, or kept (diagrams, --limit) */
	struct trace_vec keep;
	size_t keep_start; /* --limit: the oldest kept, keep used as a ring */
	size_t kept;
	size_t matched; /* records that passed the filter */
};

/* ------------------------------------------------------------ selection */

static void
trace_emit(const struct trace_opts *o, const struct trace_ev *ev)
{
	if (o->json)
		trace_print_json(stdout, ev);
	else
		trace_print_line(stdout, ev, o->color);
}

/* Every record, in order, goes through here: the filter learns (aliases,
 * processes) from all of them, and what passes is printed or kept. */
static void
trace_select(struct trace_opts *o, const struct trace_ev *ev, size_t limit)
{
	trace_filter_see(&o->filter, ev);
	if (!trace_filter_match(&o->filter, ev))
		return;
	o->matched++;
	if (limit == 0 && o->svg == NULL && !o->mermaid) {
		trace_emit(o, ev);
		return;
	}
	if (limit == 0 || o->keep.n < limit) {
		if (trace_push(&o->keep, ev) == -1)
			return;
		o->kept++;
		return;
	}
	/* --limit: keep the last ones, the vector used as a ring */
	o->keep.v[o->keep_start] = *ev;
	o->keep_start = (o->keep_start + 1) % limit;
	o->kept++;
}

/* Puts a --limit ring back into order. */
static void
trace_keep_order(struct trace_opts *o)
{
	struct trace_ev *v;
	size_t i, n = o->keep.n;

	if (o->keep_start == 0 || n == 0)
		return;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		v[i] = o->keep.v[(o->keep_start + i) % n];
	free(o->keep.v);
	o->keep.v = v;
	o->keep.cap = n;
	o->keep_start = 0;
}

/* ------------------------------------------------------------ follow */

struct trace_follow {
	struct trace_opts *o;
	struct trace_src *src;
	struct trace_ring *R;
	struct trace_pids *pids;
	struct trace_store *S; /* a shared store's other hosts; NULL: none */
	const char *home;
	uint64_t lost;
	/* ring sent/reply records waiting for their decision line */
	struct trace_vec pending;
	int64_t *pending_at;
	size_t pending_cap;
	/* keys of recent decision lines, for replies that come after them */
	struct trace_key recent[TRACE_RECENT];
	size_t recent_next;
	/* what one poll found, merged by time before it is shown */
	struct trace_vec dec;
	struct trace_vec ring;
};

static void
trace_follow_remember(struct trace_follow *F, const struct trace_ev *ev)
{
	struct trace_key *k = &F->recent[F->recent_next++ % TRACE_RECENT];

	snprintf(k->instance, sizeof(k->instance), "%s", ev->instance);
	k->req_id = ev->req_id;
}

static int
trace_follow_recent(const struct trace_follow *F, const struct trace_ev *ev)
{
	size_t i;

	for (i = 0; i < TRACE_RECENT; i++)
		if (F->recent[i].req_id == ev->req_id &&
		    strcmp(F->recent[i].instance, ev->instance) == 0)
			return 1;
	return 0;
}

static void
trace_follow_decision(struct trace_follow *F, struct trace_ev *ev)
{
	size_t i, n = 0;

	trace_follow_remember(F, ev);
	/* The decision makes its waiting "sent" redundant. */
	for (i = 0; i < F->pending.n; i++) {
		if (F->pending.v[i].req_id == ev->req_id &&
		    strcmp(F->pending.v[i].instance, ev->instance) == 0)
			continue;
		F->pending_at[n] = F->pending_at[i];
		F->pending.v[n++] = F->pending.v[i];
	}
	F->pending.n = n;
	trace_pids_apply(F->pids, ev);
	trace_push(&F->dec, ev);
}

static void trace_follow_hold(struct trace_follow *F, const struct trace_ev *ev, int64_t now);

static void
trace_follow_ring(struct trace_follow *F, const struct trace_ev *ev, int64_t now)
{
	trace_pids_learn(F->pids, ev);
	if (!trace_ring_redundant(ev)) {
		trace_push(&F->ring, ev);
		return;
	}
	if (trace_follow_recent(F, ev))
		return;
	trace_follow_hold(F, ev, now);
}

/* A ring sent/reply waits (up to TRACE_PENDING_MS) for its decision line. */
static void
trace_follow_hold(struct trace_follow *F, const struct trace_ev *ev, int64_t now)
{
	if (trace_push(&F->pending, ev) == -1)
		return;
	if (F->pending.cap > F->pending_cap) {
		int64_t *p = realloc(F->pending_at, F->pending.cap * sizeof(*p));

		if (p == NULL) {
			F->pending.n--;
			return;
		}
		F->pending_at = p;
		F->pending_cap = F->pending.cap;
	}
	F->pending_at[F->pending.n - 1] = now;
}

static void
trace_follow_expire(struct trace_follow *F, int64_t now)
{
	size_t i, n = 0;

	for (i = 0; i < F->pending.n; i++) {
		if (now - F->pending_at[i] >= TRACE_PENDING_MS) {
			trace_push(&F->ring, &F->pending.v[i]);
			continue;
		}
		F->pending_at[n] = F->pending_at[i];
		F->pending.v[n++] = F->pending.v[i];
	}
	F->pending.n = n;
}

/* The file was replaced (a new one at the path) or truncated: read the new
 * one from its start. */
/* 1 when the bytes before the read position are no longer what was read:
 * the file was truncated and written again between two polls. */
static int
trace_src_rewritten(const struct trace_src *s)
{
	char buf[sizeof(s->tail)];

	if (s->tail_len == 0)
		return 0;
	if (pread(fileno(s->f), buf, s->tail_len, s->off - (off_t)s->tail_len) !=
	    (ssize_t)s->tail_len)
		return 1;
	return memcmp(buf, s->tail, s->tail_len) != 0;
}

static void
trace_follow_check_file(struct trace_follow *F, int *said)
{
	struct trace_src *s = F->src;
	struct stat st;

	if (stat(s->path, &st) == -1) {
		if (s->f == NULL && !*said) {
			fprintf(stderr, "berth trace: no trace yet at %s; waiting for it\n",
				cli_esc(s->path));
			*said = 1;
		}
		return;
	}
	if (s->f != NULL && (st.st_ino != s->ino || st.st_dev != s->dev || st.st_size < s->off ||
			     trace_src_rewritten(s))) {
		fprintf(stderr,
			"berth trace: %s was replaced or truncated; reading it from the start\n",
			cli_esc(s->path));
		trace_src_close(s);
	}
	if (s->f == NULL)
		trace_src_open(s);
}

/* Where the ring lapped the follower: a line a person notices, or for
 * --json an object a program can tell from a record. */
static void
trace_follow_lost(const struct trace_opts *o, uint64_t n)
{
	if (o->json)
		printf("{\"source\":\"ring\",\"event\":\"lost\",\"lost\":%llu}\n",
		       (unsigned long long)n);
	else
		printf("-- %llu records lost (overwritten before read) --\n",
		       (unsigned long long)n);
}

/* Shows what one poll found: the decisions in their order, the ring's
 * records slotted in by time, as in the one-shot output. */
static void
trace_follow_flush(struct trace_follow *F)
{
	struct trace_ev ev;
	size_t i, j;

	for (i = 1; i < F->ring.n; i++) {
		ev = F->ring.v[i];
		for (j = i; j > 0 && F->ring.v[j - 1].ts_ms > ev.ts_ms; j--)
			F->ring.v[j] = F->ring.v[j - 1];
		F->ring.v[j] = ev;
	}
	for (i = 0, j = 0; i < F->dec.n || j < F->ring.n;) {
		if (j < F->ring.n && (i == F->dec.n || F->ring.v[j].ts_ms < F->dec.v[i].ts_ms))
			trace_select(F->o, &F->ring.v[j++], 0);
		else
			trace_select(F->o, &F->dec.v[i++], 0);
	}
	F->dec.n = 0;
	F->ring.n = 0;
}

/* Other hosts' groups the store decided since the last poll, after this
 * host's lines of the same poll (this host's own are in its file). */
static void
trace_follow_remote(struct trace_follow *F)
{
	const struct trace_group *g;
	struct trace_ev ev;
	size_t i;

	while (F->S != NULL && trace_store_next(F->S, &g) == 1)
		for (i = 0; !g->self && i < g->nlines; i++)
			if (trace_store_line(g, i, &ev) == 0)
				trace_push(&F->dec, &ev);
}

static int
trace_follow(struct trace_follow *F)
{
	struct ring_rec rec;
	struct trace_ev ev;
	int said = 0;

	for (;;) {
		int64_t now = clock_mono_ms();
		uint64_t lost = F->lost;

		trace_follow_check_file(F, &said);
		while (F->src->f != NULL && trace_src_next(F->src, 0, &ev) == 1) {
			if (F->S != NULL)
				snprintf(ev.host, sizeof ev.host, "%s", F->S->self);
			trace_follow_decision(F, &ev);
		}
		trace_follow_remote(F);
		if (F->R->t == NULL && (F->R->t = ring_open(F->home, 0)) != NULL)
			F->R->cursor = 0;
		while (F->R->t != NULL && ring_read(F->R->t, &F->R->cursor, &rec, &F->lost) == 1) {
			if (F->lost != lost) {
				trace_follow_lost(F->o, F->lost - lost);
				lost = F->lost;
			}
			trace_from_ring(&rec, &ev);
			if (F->S != NULL)
				snprintf(ev.host, sizeof ev.host, "%s", F->S->self);
			trace_follow_ring(F, &ev, now);
		}
		if (F->lost != lost)
			trace_follow_lost(F->o, F->lost - lost);
		trace_follow_expire(F, now);
		trace_follow_flush(F);
		if (fflush(stdout) == EOF || ferror(stdout))
			return CLI_FAIL;
		poll(NULL, 0, TRACE_POLL_MS);
	}
}

/* ------------------------------------------------------------ command */

/* A ring record of the one-shot read (or of --follow's backlog). A request
 * sent moments ago may have its decision still to come: --follow waits for
 * it like for any new record. */
static void
trace_backlog_ring(struct trace_opts *o, struct trace_follow *F, struct trace_ring *R, size_t j,
		   size_t limit)
{
	const struct trace_ev *ev = &R->v.v[j];

	if (R->decided[j])
		return;
	if (o->follow && trace_ring_redundant(ev) &&
	    clock_wall_ms() - ev->ts_ms < TRACE_PENDING_MS) {
		trace_follow_hold(F, ev, clock_mono_ms());
		return;
	}
	trace_select(o, ev, limit);
}

/* The second pass: this host's trace file in its order, the ring's records
 * merged by time, and on a shared store the other hosts' groups where the
 * store decided them. A group of this host's says how far its file has
 * come by then; a read (in no group) shows before its host's next group. */
struct trace_pass {
	struct trace_opts *o;
	struct trace_follow *F;
	struct trace_ring *R;
	struct trace_pids *pids;
	struct trace_src *src;
	struct trace_store *S; /* NULL: the file alone */
	size_t j, limit;
	int records;
	int have; /* ev is read ahead */
	struct trace_ev ev;
};

/* This host's lines up to seq upto, those from seq in on in group gseq. */
static void
trace_pass_local(struct trace_pass *P, uint64_t upto, uint64_t in, int64_t gseq)
{
	struct trace_ev *ev = &P->ev;

	for (;;) {
		if (!P->have &&
		    (P->src->f == NULL || trace_src_next(P->src, !P->o->follow, &P->ev) != 1))
			return;
		P->have = 1;
		if (ev->seq > upto)
			return;
		P->have = 0;
		P->records++;
		if (P->S != NULL) {
			snprintf(ev->host, sizeof ev->host, "%s", P->S->self);
			ev->gseq = ev->seq >= in ? gseq : 0;
		}
		trace_pids_apply(P->pids, ev);
		for (; P->j < P->R->v.n && P->R->v.v[P->j].ts_ms < ev->ts_ms; P->j++)
			trace_backlog_ring(P->o, P->F, P->R, P->j, P->limit);
		trace_select(P->o, ev, P->limit);
		if (P->o->follow)
			trace_follow_remember(P->F, ev);
	}
}

static void
trace_pass(struct trace_pass *P)
{
	const struct trace_group *g;
	struct trace_ev ev;
	size_t i;

	while (P->S != NULL && trace_store_next(P->S, &g) == 1) {
		if (g->self) {
			trace_pass_local(P, g->seq + g->nlines - 1, g->seq, g->id);
			continue;
		}
		for (i = 0; i < g->nlines; i++) {
			if (trace_store_line(g, i, &ev) != 0)
				continue;
			P->records++;
			trace_select(P->o, &ev, P->limit);
		}
	}
	trace_pass_local(P, UINT64_MAX, UINT64_MAX, 0);
	for (; P->j < P->R->v.n; P->j++)
		trace_backlog_ring(P->o, P->F, P->R, P->j, P->limit);
}

static int
trace_write_diagram(const struct trace_opts *o)
{
	FILE *f = stdout;
	int r;

	if (o->mermaid)
		return trace_mermaid(stdout, o->keep.v, o->keep.n) == 0 && fflush(stdout) == 0
			       ? CLI_OK
			       : cli_fail("trace: write error");
	if (strcmp(o->svg, "-") != 0 && (f = fopen(o->svg, "w")) == NULL)
		return cli_fail("trace: %s: %s", o->svg, strerror(errno));
	r = trace_svg(f, o->keep.v, o->keep.n);
	if (f != stdout ? fclose(f) != 0 : fflush(f) != 0)
		r = -1;
	if (r == -1)
		return cli_fail("trace: writing %s failed", o->svg);
	if (f != stdout)
		fprintf(stderr, "berth trace: wrote %s (%zu records)\n", cli_esc(o->svg),
			o->keep.n);
	return CLI_OK;
}

int
cmd_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "ticket", required_argument, NULL, 't' },
		{ "actor", required_argument, NULL, 'a' },
		{ "verb", required_argument, NULL, 'v' },
		{ "limit", required_argument, NULL, 'n' },
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "mermaid", no_argument, NULL, 'm' },
		{ "no-reads", no_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "all", no_argument, NULL, 'A' },
		{ "local", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run = NULL, *ticket = NULL, *actor = NULL, *verb = NULL;
	struct trace_opts o = { .limit = 0 };
	struct trace_src src = { 0 };
	struct trace_ring R = { 0 };
	struct trace_pids pids = { 0 };
	struct trace_follow F = { 0 };
	struct trace_store S = { 0 };
	struct trace_pass P = { 0 };
	struct trace_ev ev;
	char path[4096], ticket_id[CLI_ID_MAX], run_id[CLI_ID_MAX];
	char *home = NULL;
	size_t i, limit;
	int no_reads = 0, quiet = -1, local = 0, c, r, rc = CLI_FAIL;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "r:t:a:v:n:fjs:mh", longopts)) != -1) {
		switch (c) {
		case 'r': run = optarg; break;
		case 't': ticket = optarg; break;
		case 'a': actor = optarg; break;
		case 'v': verb = optarg; break;
		case 'n':
			if (cli_opt_int(argv[0], "--limit", optarg, 1, 1000000000LL, &o.limit) !=
			    CLI_OK)
				return CLI_USAGE;
			break;
		case 'f': o.follow = 1; break;
		case 'j': o.json = 1; break;
		case 's': o.svg = optarg; break;
		case 'm': o.mermaid = 1; break;
		case 'R': no_reads = 1; break;
		case 'q': quiet = 1; break;
		case 'A': quiet = 0; break;
		case 'L': local = 1; break;
		case 'h': fputs(trace_usage, stdout); return CLI_OK;
		default: return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument %s", argv[optind]);
	/* A malformed id is a usage error, not a filter that matches
	 * nothing; a bare number is a ticket, as everywhere. */
	if (ticket != NULL) {
		if (cli_parse_id(ticket, ticket_id, sizeof ticket_id) != CLI_ID_TICKET)
			return cli_usage_error(argv[0], "--ticket: bad ticket '%s' (use T3, or 3)",
					       ticket);
		ticket = ticket_id;
	}
	if (run != NULL && cli_parse_id(run, run_id, sizeof run_id) != CLI_ID_ALIAS &&
	    !(run[0] != '\0' && strspn(run, "0123456789abcdefABCDEF") == strlen(run) &&
	      strlen(run) <= 32))
		return cli_usage_error(argv[0],
				       "--run: bad run '%s' (a run id, a prefix of one, or an "
				       "alias T3-r1)",
				       run);
	if (o.json + o.mermaid + (o.svg != NULL) > 1)
		return cli_usage_error(argv[0], "--json, --svg and --mermaid exclude each other");
	if (o.follow && (o.svg != NULL || o.mermaid))
		return cli_usage_error(argv[0],
				       "--follow prints a timeline or JSON, not a diagram");
	trace_filter_init(&o.filter, run, ticket, actor, verb);
	o.filter.no_reads = no_reads;
	/* Left open in a terminal, the timeline shows what happens, not the
	 * group's steady polling; --json stays complete for programs. */
	o.filter.quiet = quiet >= 0 ? quiet : o.follow && !o.json;
	o.color = !o.json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	limit = o.limit > 0 ? (size_t)o.limit : o.follow ? TRACE_FOLLOW_BACKLOG : 0;

	if ((home = strdup(cli_home())) == NULL)
		return cli_fail("trace: out of memory");
	snprintf(path, sizeof(path), "%s/trace/trace.jsonl", home);
	src.path = path;
	r = trace_src_open(&src);
	if (r == -ENOENT && !o.follow) {
		cli_fail("trace: no trace yet at %s", path);
		goto out;
	}
	if (r < 0 && r != -ENOENT) {
		cli_fail("trace: %s: %s", path, strerror(-r));
		goto out;
	}
	if (trace_ring_load(&R, home, &pids) == -1) {
		cli_fail("trace: out of memory");
		goto out;
	}
	/* Pass 1: which ring records have their decision in the file. */
	if (src.f != NULL && R.nkeys > 0) {
		src.quiet = 1;
		while (trace_src_next(&src, !o.follow, &ev) == 1)
			trace_ring_decided(&R, &ev);
		trace_src_close(&src);
		trace_src_open(&src);
		src.quiet = 0;
	}
	/* A shared store: the other hosts' decisions too, from the store
	 * (a follower's backlog from its newest groups). With the
	 * coordinator down, this host's file is what there is. */
	if (!local && trace_store_home_shared(home)) {
		if (trace_store_open(&S, o.follow ? (uint32_t)limit : 0, 1) != 0)
			fprintf(stderr, "berth trace: the coordinator does not answer: this host's "
					"trace only (--local)\n");
		else if (S.shared)
			P.S = &S;
	}
	/* The ring is this host's clients' side. */
	for (i = 0; P.S != NULL && i < R.v.n; i++)
		snprintf(R.v.v[i].host, sizeof R.v.v[i].host, "%s", S.self);
	/* Pass 2: the file in its order, the ring's records merged by time. */
	P.o = &o;
	P.F = &F;
	P.R = &R;
	P.pids = &pids;
	P.src = &src;
	P.limit = limit;
	trace_pass(&P);
	if (src.f != NULL && P.records == 0 && !o.follow)
		fprintf(stderr, "berth trace: trace is empty (%s)\n", cli_esc(path));
	trace_keep_order(&o);
	/* Asked about one ticket or run and found none of it: say so (a
	 * mistyped id must not look like a quiet one). */
	if (!o.follow && o.matched == 0 && P.records > 0 && (ticket || run)) {
		cli_fail("trace: no records of %s %s (is the id right? 'berth list' shows the "
			 "tickets)",
			 ticket ? "ticket" : "run", ticket ? ticket : run);
		goto out;
	}

	if (o.svg != NULL || o.mermaid) {
		rc = trace_write_diagram(&o);
		goto out;
	}
	for (i = 0; i < o.keep.n; i++)
		trace_emit(&o, &o.keep.v[i]);
	if (!o.follow) {
		rc = fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
		goto out;
	}
	fflush(stdout);
	F.o = &o;
	F.src = &src;
	F.R = &R;
	F.pids = &pids;
	F.S = P.S;
	F.home = home;
	rc = trace_follow(&F);
	free(F.pending.v);
	free(F.pending_at);
	free(F.dec.v);
	free(F.ring.v);
out:
	trace_store_close(&S);
	trace_src_close(&src);
	free(src.line);
	ring_close(R.t);
	trace_ring_free(&R);
	free(pids.v);
	free(o.keep.v);
	free(home);
	return rc;
}
