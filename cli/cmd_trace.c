/*
 * berth trace: what the coordinator decided, in the order it decided
 * (trace/trace.jsonl, the authoritative record), with the clients' own view
 * from the shared-memory ring merged in where it adds something: retries,
 * timeouts, failpoints, kills, state changes, and requests that never got a
 * decision. A ring "sent" or "reply" whose request has its line in the trace
 * says nothing new and is left out. Nothing here talks to the coordinator,
 * so the trace reads the same while it is down.
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
#include "tring.h"
#include "util.h"

static const char trace_usage[] =
	"usage: berth trace [--run R] [--ticket T] [--actor A] [--verb V] [--no-reads]\n"
	"                   [--limit N]\n"
	"                   [--follow] [--json | --svg FILE | --mermaid]\n"
	"\n"
	"Show every request the coordinator decided, in the order it decided them,\n"
	"with the clients' side (retries, timeouts, failpoints, kills) from the\n"
	"shared-memory trace ring. Works while the coordinator is down.\n"
	"\n"
	"  --run R        a run id, a prefix of one, or an alias T3-r1\n"
	"  --ticket T     one ticket's records (T3)\n"
	"  --actor A      records from actor A (supervisor, cli, ...) or instance prefix A\n"
	"  --verb V       records of one verb (claim, record_exit, ...)\n"
	"  --no-reads     leave out read-only requests (list, show, status, scan, ...)\n"
	"  --limit N      only the last N records (with --follow: of the backlog)\n"
	"  -f, --follow   keep printing new records as they happen\n"
	"  --json         one JSON object per line\n"
	"  --svg FILE     write an SVG sequence diagram to FILE (- for stdout)\n"
	"  --mermaid      print a Mermaid sequenceDiagram\n";

/* How long a ring "sent" waits for its decision to show up in trace.jsonl
 * before it is shown as a request nobody decided. */
#define TRACE_PENDING_MS 2000
#define TRACE_POLL_MS 200
#define TRACE_NOTES 5

struct trace_vec {
	struct trace_ev *v;
	size_t n;
	size_t cap;
};

struct trace_key {
	char instance[40];
	uint64_t req_id;
};

struct trace_opts {
	struct trace_filter filter;
	int json;
	int mermaid;
	int follow;
	int color;
	const char *svg;
	long long limit;
};

static int
trace_push(struct trace_vec *v, const struct trace_ev *ev)
{
	if (v->n == v->cap) {
		size_t cap = v->cap != 0 ? v->cap * 2 : 256;
		struct trace_ev *p = realloc(v->v, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = *ev;
	return 0;
}

static int
trace_key_cmp(const void *a, const void *b)
{
	const struct trace_key *x = a, *y = b;
	int c = strcmp(x->instance, y->instance);

	if (c != 0)
		return c;
	return x->req_id < y->req_id ? -1 : x->req_id > y->req_id;
}

/* A ring record that only repeats what the trace line says. */
static int
trace_ring_redundant(const struct trace_ev *ev)
{
	return ev->ring && (ev->kind == TRING_SENT || ev->kind == TRING_REPLY) && ev->req_id != 0;
}

/* Parses the lines in buf[0..len) into out; returns the bytes consumed (up
 * to the end of the last complete line, or everything with eof set and the
 * last line whole). *lineno counts lines for the notes on stderr. */
static size_t
trace_parse_buf(const char *path, const char *buf, size_t len, int eof, struct trace_vec *out,
		long *lineno, int *notes)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - buf) : len;
		struct trace_ev ev;
		int ok;

		if (nl == NULL && !eof)
			break; /* the writer has not finished this line yet */
		(*lineno)++;
		ok = trace_parse_line(buf + pos, end - pos, &ev) == 0;
		if (ok) {
			if (trace_push(out, &ev) == -1)
				return pos;
		} else if (end > pos) {
			if (*notes < TRACE_NOTES)
				fprintf(stderr, "berth trace: %s:%ld: %s, skipped\n", path, *lineno,
					nl == NULL ? "partial last line (still being written?)"
						   : "not a trace record");
			else if (*notes == TRACE_NOTES)
				fprintf(stderr, "berth trace: more unreadable lines skipped\n");
			(*notes)++;
		}
		pos = nl != NULL ? end + 1 : len;
	}
	return pos;
}

/* Reads path from *off; appends the complete records. -ENOENT when the file
 * does not exist. */
static int
trace_read_file(const char *path, off_t *off, int eof, struct trace_vec *out, long *lineno,
		int *notes)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, used;
	FILE *f;
	int r = 0;

	f = fopen(path, "r");
	if (f == NULL)
		return -errno;
	if (fstat(fileno(f), &st) == -1) {
		r = -errno;
		goto out;
	}
	if (st.st_size < *off) {
		fprintf(stderr, "berth trace: %s was truncated; reading it from the start\n", path);
		*off = 0;
		*lineno = 0;
	}
	if (st.st_size == *off)
		goto out;
	if (fseeko(f, *off, SEEK_SET) == -1) {
		r = -errno;
		goto out;
	}
	len = (size_t)(st.st_size - *off);
	buf = malloc(len + 1);
	if (buf == NULL) {
		r = -ENOMEM;
		goto out;
	}
	len = fread(buf, 1, len, f);
	used = trace_parse_buf(path, buf, len, eof, out, lineno, notes);
	*off += (off_t)used;
out:
	free(buf);
	fclose(f);
	return r;
}

static void
trace_emit(const struct trace_opts *o, const struct trace_ev *ev)
{
	if (o->json)
		trace_print_json(stdout, ev);
	else
		trace_print_line(stdout, ev, o->color);
}

/* Decisions carry no pid; the ring's records of the same instance do. With
 * it the diagram draws one lane per process, however many rpc clients
 * (instances) the process used. */
static void
trace_learn_pids(struct trace_vec *file, const struct trace_vec *ring)
{
	const struct trace_ev *known[256];
	size_t i, j, nk = 0;

	for (i = 0; i < ring->n && nk < sizeof(known) / sizeof(known[0]); i++) {
		if (ring->v[i].pid <= 0 || ring->v[i].instance[0] == '\0')
			continue;
		for (j = 0; j < nk; j++)
			if (strcmp(known[j]->instance, ring->v[i].instance) == 0)
				break;
		if (j == nk)
			known[nk++] = &ring->v[i];
	}
	for (i = 0; i < file->n; i++)
		for (j = 0; j < nk; j++)
			if (strcmp(known[j]->instance, file->v[i].instance) == 0) {
				file->v[i].pid = known[j]->pid;
				break;
			}
}

/* The ring's records (all still present) into out, without those the
 * trace already holds. Sorted by time, then merged into the file's order,
 * which stays untouched: it is the decision order. */
static int
trace_merge_ring(const char *home, struct trace_vec *file, struct trace_vec *merged,
		 uint64_t *cursor, struct tring **ringp)
{
	struct trace_vec ring = { 0 };
	struct trace_key *keys = NULL, k;
	struct tring_rec rec;
	struct trace_ev ev;
	uint64_t lost = 0;
	size_t i, j;
	int r = -1;

	*ringp = tring_open(home, 0);
	*cursor = 0;
	if (*ringp != NULL) {
		while (tring_read(*ringp, cursor, &rec, &lost) == 1) {
			trace_from_ring(&rec, &ev);
			if (trace_push(&ring, &ev) == -1)
				goto out;
		}
	}
	trace_learn_pids(file, &ring);
	keys = calloc(file->n + 1, sizeof(*keys));
	if (keys == NULL)
		goto out;
	for (i = 0; i < file->n; i++) {
		snprintf(keys[i].instance, sizeof(keys[i].instance), "%s", file->v[i].instance);
		keys[i].req_id = file->v[i].req_id;
	}
	qsort(keys, file->n, sizeof(*keys), trace_key_cmp);
	/* Stable by time: ring order is emit order, nearly time order. */
	for (i = 1; i < ring.n; i++) {
		ev = ring.v[i];
		for (j = i; j > 0 && ring.v[j - 1].ts_ms > ev.ts_ms; j--)
			ring.v[j] = ring.v[j - 1];
		ring.v[j] = ev;
	}
	for (i = 0, j = 0; i < file->n || j < ring.n;) {
		if (j < ring.n && trace_ring_redundant(&ring.v[j])) {
			snprintf(k.instance, sizeof(k.instance), "%s", ring.v[j].instance);
			k.req_id = ring.v[j].req_id;
			if (bsearch(&k, keys, file->n, sizeof(*keys), trace_key_cmp) != NULL) {
				j++;
				continue;
			}
		}
		if (j < ring.n && (i == file->n || ring.v[j].ts_ms < file->v[i].ts_ms)) {
			if (trace_push(merged, &ring.v[j++]) == -1)
				goto out;
		} else if (trace_push(merged, &file->v[i++]) == -1) {
			goto out;
		}
	}
	r = 0;
out:
	free(keys);
	free(ring.v);
	return r;
}

/* Filters in order (an alias learns its run as the events go by), then
 * keeps the last limit. */
static void
trace_select(struct trace_opts *o, struct trace_vec *v)
{
	size_t i, n = 0;

	for (i = 0; i < v->n; i++) {
		trace_filter_see(&o->filter, &v->v[i]);
		if (trace_filter_match(&o->filter, &v->v[i]))
			v->v[n++] = v->v[i];
	}
	v->n = n;
	if (o->limit > 0 && v->n > (size_t)o->limit) {
		memmove(v->v, v->v + (v->n - (size_t)o->limit), (size_t)o->limit * sizeof(*v->v));
		v->n = (size_t)o->limit;
	}
}

static int
trace_write_diagram(const struct trace_opts *o, const struct trace_vec *v)
{
	FILE *f = stdout;
	int r;

	if (o->mermaid)
		return trace_mermaid(stdout, v->v, v->n) == 0 ? CLI_OK : cli_fail("trace: write error");
	if (strcmp(o->svg, "-") != 0 && (f = fopen(o->svg, "w")) == NULL)
		return cli_fail("trace: %s: %s", o->svg, strerror(errno));
	r = trace_svg(f, v->v, v->n);
	if (f != stdout && fclose(f) != 0)
		r = -1;
	if (r == -1)
		return cli_fail("trace: writing %s failed", o->svg);
	if (f != stdout)
		fprintf(stderr, "berth trace: wrote %s (%zu records)\n", o->svg, v->n);
	return CLI_OK;
}

/* ------------------------------------------------------------ follow */

struct trace_follow {
	struct trace_opts *o;
	const char *home;
	const char *path;
	struct tring *ring;
	uint64_t cursor;
	uint64_t lost;
	off_t off;
	long lineno;
	int notes;
	/* ring sent/reply records waiting for their decision line */
	struct trace_vec pending;
	int64_t *pending_at;
	size_t pending_cap;
	/* keys of recent decision lines, for replies that come after them */
	struct trace_key recent[1024];
	size_t recent_next;
};

static void
trace_follow_show(struct trace_follow *F, const struct trace_ev *ev)
{
	trace_filter_see(&F->o->filter, ev);
	if (trace_filter_match(&F->o->filter, ev))
		trace_emit(F->o, ev);
}

static int
trace_follow_recent(const struct trace_follow *F, const struct trace_ev *ev)
{
	size_t i;

	for (i = 0; i < sizeof(F->recent) / sizeof(F->recent[0]); i++)
		if (F->recent[i].req_id == ev->req_id && strcmp(F->recent[i].instance, ev->instance) == 0)
			return 1;
	return 0;
}

static void
trace_follow_decision(struct trace_follow *F, const struct trace_ev *ev)
{
	struct trace_key *k = &F->recent[F->recent_next++ % (sizeof(F->recent) / sizeof(F->recent[0]))];
	size_t i, n = 0;

	snprintf(k->instance, sizeof(k->instance), "%s", ev->instance);
	k->req_id = ev->req_id;
	/* The decision makes its waiting "sent" redundant. */
	for (i = 0; i < F->pending.n; i++) {
		if (F->pending.v[i].req_id == ev->req_id &&
		    strcmp(F->pending.v[i].instance, ev->instance) == 0)
			continue;
		F->pending_at[n] = F->pending_at[i];
		F->pending.v[n++] = F->pending.v[i];
	}
	F->pending.n = n;
	trace_follow_show(F, ev);
}

static void
trace_follow_ring(struct trace_follow *F, const struct trace_ev *ev, int64_t now)
{
	if (!trace_ring_redundant(ev)) {
		trace_follow_show(F, ev);
		return;
	}
	if (trace_follow_recent(F, ev))
		return;
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
			trace_follow_show(F, &F->pending.v[i]);
			continue;
		}
		F->pending_at[n] = F->pending_at[i];
		F->pending.v[n++] = F->pending.v[i];
	}
	F->pending.n = n;
}

static int
trace_follow(struct trace_follow *F)
{
	struct trace_vec fresh = { 0 };
	struct tring_rec rec;
	struct trace_ev ev;
	int waiting_said = 0, r;
	size_t i;

	for (;;) {
		int64_t now = clock_mono_ms();
		uint64_t lost = F->lost;

		fresh.n = 0;
		r = trace_read_file(F->path, &F->off, 0, &fresh, &F->lineno, &F->notes);
		if (r == -ENOENT && !waiting_said) {
			fprintf(stderr, "berth trace: no trace yet at %s; waiting for it\n", F->path);
			waiting_said = 1;
		}
		for (i = 0; i < fresh.n; i++)
			trace_follow_decision(F, &fresh.v[i]);
		if (F->ring == NULL && (F->ring = tring_open(F->home, 0)) != NULL)
			F->cursor = 0;
		while (F->ring != NULL && tring_read(F->ring, &F->cursor, &rec, &F->lost) == 1) {
			if (F->lost != lost) {
				printf("-- %llu records lost (overwritten before read) --\n",
				       (unsigned long long)(F->lost - lost));
				lost = F->lost;
			}
			trace_from_ring(&rec, &ev);
			trace_follow_ring(F, &ev, now);
		}
		if (F->lost != lost)
			printf("-- %llu records lost (overwritten before read) --\n",
			       (unsigned long long)(F->lost - lost));
		trace_follow_expire(F, now);
		if (fflush(stdout) == EOF || ferror(stdout))
			break;
		poll(NULL, 0, TRACE_POLL_MS);
	}
	free(fresh.v);
	return CLI_OK;
}

/* ------------------------------------------------------------ command */

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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run = NULL, *ticket = NULL, *actor = NULL, *verb = NULL;
	int no_reads = 0;
	struct trace_opts o = { .limit = 0 };
	struct trace_vec file = { 0 }, all = { 0 };
	struct trace_follow F = { 0 };
	char path[4096];
	char *home = NULL;
	off_t off = 0;
	long lineno = 0;
	int notes = 0, c, r, rc = CLI_FAIL;
	size_t i;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "r:t:a:v:n:fjs:mh", longopts)) != -1) {
		switch (c) {
		case 'r':
			run = optarg;
			break;
		case 't':
			ticket = optarg;
			break;
		case 'a':
			actor = optarg;
			break;
		case 'v':
			verb = optarg;
			break;
		case 'n':
			if (cli_parse_int(optarg, 1, 1000000000LL, &o.limit) == -1)
				return cli_usage_error(argv[0], "--limit wants a positive number, not %s",
						       optarg);
			break;
		case 'f':
			o.follow = 1;
			break;
		case 'j':
			o.json = 1;
			break;
		case 's':
			o.svg = optarg;
			break;
		case 'm':
			o.mermaid = 1;
			break;
		case 'R':
			no_reads = 1;
			break;
		case 'h':
			fputs(trace_usage, stdout);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(argv[0], "unexpected argument %s", argv[optind]);
	if (o.json + o.mermaid + (o.svg != NULL) > 1)
		return cli_usage_error(argv[0], "--json, --svg and --mermaid exclude each other");
	if (o.follow && (o.svg != NULL || o.mermaid))
		return cli_usage_error(argv[0], "--follow prints a timeline or JSON, not a diagram");
	trace_filter_init(&o.filter, run, ticket, actor, verb);
	o.filter.no_reads = no_reads;
	o.color = !o.json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;

	home = home_default();
	if (home == NULL)
		return cli_fail("trace: no home directory (set BERTH_HOME or --home)");
	snprintf(path, sizeof(path), "%s/trace/trace.jsonl", home);
	r = trace_read_file(path, &off, !o.follow, &file, &lineno, &notes);
	if (r == -ENOENT && !o.follow) {
		cli_fail("trace: no trace yet at %s", path);
		goto out;
	}
	if (r < 0 && r != -ENOENT) {
		cli_fail("trace: %s: %s", path, strerror(-r));
		goto out;
	}
	if (r == 0 && file.n == 0 && !o.follow)
		fprintf(stderr, "berth trace: trace is empty (%s)\n", path);
	if (trace_merge_ring(home, &file, &all, &F.cursor, &F.ring) == -1) {
		cli_fail("trace: out of memory");
		goto out;
	}
	if (o.follow) {
		/* The alias must see everything, the limit only cuts output. */
		struct trace_vec shown = { 0 };

		for (i = 0; i < all.n; i++)
			if (trace_push(&shown, &all.v[i]) == -1)
				break;
		trace_select(&o, &shown);
		for (i = 0; i < shown.n; i++)
			trace_emit(&o, &shown.v[i]);
		free(shown.v);
		/* Decisions already shown make their later ring replies
		 * redundant too. */
		for (i = 0; i < file.n; i++) {
			struct trace_key *k = &F.recent[F.recent_next++ % (sizeof(F.recent) /
									    sizeof(F.recent[0]))];

			snprintf(k->instance, sizeof(k->instance), "%s", file.v[i].instance);
			k->req_id = file.v[i].req_id;
		}
		fflush(stdout);
		F.o = &o;
		F.home = home;
		F.path = path;
		F.off = off;
		F.lineno = lineno;
		F.notes = notes;
		rc = trace_follow(&F);
		free(F.pending.v);
		free(F.pending_at);
		goto out;
	}
	trace_select(&o, &all);
	if (o.svg != NULL || o.mermaid) {
		rc = trace_write_diagram(&o, &all);
		goto out;
	}
	for (i = 0; i < all.n; i++)
		trace_emit(&o, &all.v[i]);
	rc = fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
out:
	tring_close(F.ring);
	free(file.v);
	free(all.v);
	free(home);
	return rc;
}
