/*
 * The replay's state (cf.h): strings to indexes, the runs the trace
 * created and the tickets it named, and the end of a run's live states.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "coord_rows.h"
#include "vec.h"

/* ------------------------------------------------------------ the map */

static size_t
cf_hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

size_t *
cf_map_get(const struct cf_map *m, const char *key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = cf_hash(key) & (m->cap - 1); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1))
		if (strcmp(m->keys[i], key) == 0)
			return &m->vals[i];
	return NULL;
}

/* Puts key (a copy) -> val, replacing an earlier val. 0, or -1 out of
 * memory. */
int
cf_map_put(struct cf_map *m, const char *key, size_t val)
{
	size_t *v = cf_map_get(m, key), i, j;

	if (v != NULL) {
		*v = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap) {
		struct cf_map g = { NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };

		if ((g.keys = calloc(g.cap, sizeof *g.keys)) == NULL ||
		    (g.vals = calloc(g.cap, sizeof *g.vals)) == NULL) {
			free(g.keys);
			return -1;
		}
		for (j = 0; j < m->cap; j++) {
			if (m->keys[j] == NULL)
				continue;
			for (i = cf_hash(m->keys[j]) & (g.cap - 1); g.keys[i] != NULL;
			     i = (i + 1) & (g.cap - 1))
				;
			g.keys[i] = m->keys[j];
			g.vals[i] = m->vals[j];
			g.n++;
		}
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (i = cf_hash(key) & (m->cap - 1); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1))
		;
	if ((m->keys[i] = strdup(key)) == NULL)
		return -1;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void
cf_map_free(struct cf_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
}

/* ------------------------------------------------------------ runs, tickets */

struct cf_run *
cf_run(struct cf *cf, const char *id)
{
	size_t *i = id[0] != '\0' ? cf_map_get(&cf->run_ix, id) : NULL;

	return i != NULL ? &cf->runs[*i] : NULL;
}

struct cf_ticket *
cf_ticket(struct cf *cf, int64_t n, int make)
{
	char key[32];
	size_t *i;

	snprintf(key, sizeof key, "%" PRId64, n);
	if ((i = cf_map_get(&cf->ticket_ix, key)) != NULL)
		return &cf->tickets[*i];
	if (!make)
		return NULL;
	if (vec_grow(&cf->tickets, &cf->capticket, cf->ntickets + 1, sizeof *cf->tickets) != 0 ||
	    cf_map_put(&cf->ticket_ix, key, cf->ntickets) != 0) {
		cf->oom = 1;
		return NULL;
	}
	memset(&cf->tickets[cf->ntickets], 0, sizeof *cf->tickets);
	cf->tickets[cf->ntickets].n = n;
	return &cf->tickets[cf->ntickets++];
}

/* The ticket a line names ("T<n>"), NULL for none. */
struct cf_ticket *
cf_ticket_of(struct cf *cf, const char *name, int make)
{
	int64_t n;

	if (name[0] == '\0' || coord_rows_ticket_parse(name, &n) != 0)
		return NULL;
	return cf_ticket(cf, n, make);
}

int
cf_live(enum run_state s)
{
	return run_state_live(s);
}

/* The run leaves the live states: its ticket has no unsettled run. */
void
cf_end(struct cf *cf, struct cf_run *r, enum run_state to, int64_t now)
{
	struct cf_ticket *t = cf_ticket(cf, r->ticket, 0);

	r->state = to;
	r->settled_ms = now;
	if (t != NULL && t->live == (size_t)(r - cf->runs) + 1)
		t->live = 0;
}

const char *
cf_state_name(enum run_state s)
{
	return s == CF_SETTLED ? "settled" : run_state_name(s);
}
