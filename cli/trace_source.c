/*
 * berth trace's sources (trace_source.h): trace/trace.jsonl streamed a line
 * at a time, remembering where the last whole line ended so a follower
 * sees a file rewritten in place; and the shared-memory ring, loaded whole
 * with the launcher's deaths and restarts and sorted by time, with an index
 * of the ring's sent/reply records so the ones whose decision the file has
 * can be left out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "trace_source.h"
#include "vec.h"
int
trace_push(struct trace_vec *v, const struct trace_ev *ev)
{
	if (vec_grow(&v->v, &v->cap, v->n + 1, sizeof(*v->v)) == -1)
		return -1;
	v->v[v->n++] = *ev;
	return 0;
}

int
trace_key_cmp(const void *a, const void *b)
{
	const struct trace_key *x = a, *y = b;
	int c = strcmp(x->instance, y->instance);

	if (c != 0)
		return c;
	return x->req_id < y->req_id ? -1 : x->req_id > y->req_id;
}

/* A ring record that only repeats what the trace line says. */
int
trace_ring_redundant(const struct trace_ev *ev)
{
	return ev->ring && (ev->kind == RING_SENT || ev->kind == RING_REPLY) && ev->req_id != 0;
}

void
trace_pids_learn(struct trace_pids *m, const struct trace_ev *ev)
{
	size_t i;

	if (ev->pid <= 0 || ev->instance[0] == '\0')
		return;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].instance, ev->instance) == 0)
			return;
	if (vec_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v)) == -1)
		return;
	snprintf(m->v[m->n].instance, sizeof(m->v[m->n].instance), "%s", ev->instance);
	m->v[m->n++].req_id = (uint64_t)ev->pid;
}

/* Decisions carry no pid; the ring's records of the same instance do. With
 * it a diagram draws one lane per process, however many rpc clients
 * (instances) the process used. */
void
trace_pids_apply(const struct trace_pids *m, struct trace_ev *ev)
{
	size_t i;

	if (ev->ring || ev->pid > 0)
		return;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].instance, ev->instance) == 0) {
			ev->pid = (int32_t)m->v[i].req_id;
			return;
		}
}

/* ------------------------------------------------------------ the file */

int
trace_src_open(struct trace_src *s)
{
	struct stat st;

	s->f = fopen(s->path, "r");
	if (s->f == NULL)
		return -errno;
	if (fstat(fileno(s->f), &st) == 0) {
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	s->off = 0;
	s->tail_len = 0;
	s->lineno = 0;
	return 0;
}

void
trace_src_close(struct trace_src *s)
{
	if (s->f != NULL)
		fclose(s->f);
	s->f = NULL;
}

static void
trace_src_note(struct trace_src *s, const char *what)
{
	if (s->quiet)
		return;
	if (s->notes < TRACE_NOTES)
		fprintf(stderr, "berth trace: %s:%ld: %s, skipped\n", cli_esc(s->path), s->lineno,
			cli_esc(what));
	else if (s->notes == TRACE_NOTES)
		fprintf(stderr, "berth trace: more unreadable lines skipped\n");
	s->notes++;
}

/* The next record: 1 with ev, 0 at the end. A last line without its
 * newline is being written: it is left for later, unless partial is set
 * (a one-shot read), where it is taken if whole and noted if torn. */
int
trace_src_next(struct trace_src *s, int partial, struct trace_ev *ev)
{
	ssize_t n;

	for (;;) {
		n = getline(&s->line, &s->cap, s->f);
		if (n <= 0) {
			clearerr(s->f);
			return 0;
		}
		if (s->line[n - 1] != '\n' && !partial) {
			/* Read it again once the writer has finished it. */
			clearerr(s->f);
			fseeko(s->f, s->off, SEEK_SET);
			return 0;
		}
		s->lineno++;
		s->off += n;
		s->tail_len = (size_t)n < sizeof(s->tail) ? (size_t)n : sizeof(s->tail);
		memcpy(s->tail, s->line + n - (ssize_t)s->tail_len, s->tail_len);
		if (trace_parse_line(s->line, s->line[n - 1] == '\n' ? (size_t)n - 1 : (size_t)n,
				     ev) == 0)
			return 1;
		if (n > 1 || s->line[0] != '\n')
			trace_src_note(s, s->line[n - 1] != '\n'
						  ? "partial last line (still being written?)"
						  : "not a trace record");
	}
}

/* ------------------------------------------------------------ the ring */

/* The launcher's word on the actors' lives (launch/launcher.log): each
 * death, and each start that follows one (a restart), as records of the
 * process's pid, tied to its instance by the ring's records. What the
 * launcher logged for processes the ring never saw is left out. */
static int
trace_launcher_load(struct trace_vec *v, const char *home, const struct trace_pids *pids)
{
	char path[4096], *line = NULL, died[8][24];
	struct trace_ev ev;
	size_t cap = 0, i, ndied = 0;
	FILE *f;
	int rc = 0, restart;

	snprintf(path, sizeof(path), "%s/launch/launcher.log", home);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		if (trace_parse_launcher(line, &ev) != 1)
			continue;
		for (restart = 0, i = 0; i < ndied; i++)
			restart |= strcmp(died[i], ev.from) == 0;
		if (ev.kind == TRACE_KIND_DEATH && ndied < sizeof(died) / sizeof(died[0]) &&
		    !restart)
			snprintf(died[ndied++], sizeof(died[0]), "%s", ev.from);
		if (ev.kind == TRACE_KIND_START && !restart)
			continue; /* a first start says nothing */
		if (ev.kind == TRACE_KIND_START)
			snprintf(ev.text, sizeof(ev.text), "restarted by the launcher");
		for (i = 0; i < pids->n; i++)
			if ((int32_t)pids->v[i].req_id == ev.pid)
				snprintf(ev.instance, sizeof(ev.instance), "%s",
					 pids->v[i].instance);
		if (ev.instance[0] == '\0')
			continue;
		if (trace_push(v, &ev) == -1)
			rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}

int
trace_ring_load(struct trace_ring *R, const char *home, struct trace_pids *pids)
{
	struct ring_rec rec;
	struct trace_ev ev;
	uint64_t lost = 0;
	size_t i, j;

	R->t = ring_open(home, 0);
	R->cursor = 0;
	while (R->t != NULL && ring_read(R->t, &R->cursor, &rec, &lost) == 1) {
		trace_from_ring(&rec, &ev);
		trace_pids_learn(pids, &ev);
		if (trace_push(&R->v, &ev) == -1)
			return -1;
	}
	if (trace_launcher_load(&R->v, home, pids) == -1)
		return -1;
	/* Stable by time: ring order is emit order, nearly time order. */
	for (i = 1; i < R->v.n; i++) {
		ev = R->v.v[i];
		for (j = i; j > 0 && R->v.v[j - 1].ts_ms > ev.ts_ms; j--)
			R->v.v[j] = R->v.v[j - 1];
		R->v.v[j] = ev;
	}
	R->keys = calloc(R->v.n + 1, sizeof(*R->keys));
	R->decided = calloc(R->v.n + 1, 1);
	if (R->keys == NULL || R->decided == NULL)
		return -1;
	for (i = 0; i < R->v.n; i++) {
		if (!trace_ring_redundant(&R->v.v[i]))
			continue;
		snprintf(R->keys[R->nkeys].instance, sizeof(R->keys[0].instance), "%s",
			 R->v.v[i].instance);
		R->keys[R->nkeys].req_id = R->v.v[i].req_id;
		R->keys[R->nkeys++].idx = i;
	}
	qsort(R->keys, R->nkeys, sizeof(*R->keys), trace_key_cmp);
	return 0;
}

/* Marks the ring records (a sent and its reply) of a decided request. */
void
trace_ring_decided(struct trace_ring *R, const struct trace_ev *ev)
{
	struct trace_key k, *p;

	if (R->nkeys == 0)
		return;
	snprintf(k.instance, sizeof(k.instance), "%s", ev->instance);
	k.req_id = ev->req_id;
	p = bsearch(&k, R->keys, R->nkeys, sizeof(*R->keys), trace_key_cmp);
	if (p == NULL)
		return;
	while (p > R->keys && trace_key_cmp(p - 1, &k) == 0)
		p--;
	for (; p < R->keys + R->nkeys && trace_key_cmp(p, &k) == 0; p++)
		R->decided[p->idx] = 1;
}

void
trace_ring_free(struct trace_ring *R)
{
	free(R->v.v);
	free(R->keys);
	free(R->decided);
}
