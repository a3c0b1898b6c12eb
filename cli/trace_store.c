/* The global trace of a shared store, for berth trace: see trace_store.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "rpc.h"
#include "trace_store.h"

int
trace_store_home_shared(const char *home)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof path, "%s/store", home);
	return stat(path, &st) == 0;
}

static void
trace_store_drop(struct trace_store *S)
{
	size_t i;

	for (i = 0; i < S->n; i++)
		free(S->g[i].lines);
	free(S->g);
	S->g = NULL;
	S->n = S->next = 0;
}

/* One page: after S->after, or the newest last. 0, or -1. */
static int
trace_store_page(struct trace_store *S, uint32_t last, int quiet)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TraceRead m = BERTH__TRACE_READ__INIT;
	Berth__Reply *rep = NULL;
	const Berth__TraceLog *tl;
	size_t i;
	const char *p;

	trace_store_drop(S);
	m.has_after = S->after > 0;
	m.after = S->after;
	m.has_last = last > 0;
	m.last = last;
	req.verb_case = BERTH__REQUEST__VERB_TRACE;
	req.trace = &m;
	if (cli_call(S->c, &req, &rep, cli_timeout_ms(), quiet) != 0)
		return -1;
	if (rep->result_case != BERTH__REPLY__RESULT_GRANTED ||
	    rep->granted->payload_case != BERTH__GRANTED__PAYLOAD_TRACE) {
		/* A coordinator from before the global trace answers an
		 * unknown verb: there is none to read. */
		if (rep->result_case == BERTH__REPLY__RESULT_ERROR &&
		    rep->error->code == BERTH__ERROR_CODE__ERR_UNKNOWN_VERB) {
			S->shared = 0;
			berth__reply__free_unpacked(rep, NULL);
			return 0;
		}
		cli_check(rep, "trace");
		berth__reply__free_unpacked(rep, NULL);
		return -1;
	}
	tl = rep->granted->trace;
	S->shared = tl->shared;
	S->more = tl->more;
	snprintf(S->self, sizeof S->self, "%s", tl->host != NULL ? tl->host : "");
	if (tl->n_groups > 0 && (S->g = calloc(tl->n_groups, sizeof *S->g)) == NULL) {
		berth__reply__free_unpacked(rep, NULL);
		return cli_fail("trace: out of memory"), -1;
	}
	for (i = 0; i < tl->n_groups; i++) {
		const Berth__TraceGroup *tg = tl->groups[i];
		struct trace_group *g = &S->g[S->n];

		S->after = tg->id;
		if (tg->lines == NULL || tg->lines[0] == '\0')
			continue;
		if ((g->lines = strdup(tg->lines)) == NULL)
			break;
		g->id = tg->id;
		snprintf(g->host, sizeof g->host, "%s", tg->host != NULL ? tg->host : "");
		g->seq = tg->seq;
		g->ts_ms = tg->ts_ms;
		g->self = strcmp(g->host, S->self) == 0;
		for (p = g->lines; (p = strchr(p, '\n')) != NULL; p++)
			g->nlines++;
		S->n++;
	}
	berth__reply__free_unpacked(rep, NULL);
	if (i < tl->n_groups)
		return cli_fail("trace: out of memory"), -1;
	return 0;
}

int
trace_store_open(struct trace_store *S, uint32_t last, int quiet)
{
	struct stat st;

	memset(S, 0, sizeof *S);
	/* No socket: no coordinator to ask (cli_connect would say so). */
	if (quiet && stat(cli_sock_path(), &st) != 0)
		return -1;
	if ((S->c = cli_connect()) == NULL)
		return -1;
	if (trace_store_page(S, last, quiet) != 0) {
		trace_store_close(S);
		return -1;
	}
	return 0;
}

int
trace_store_next(struct trace_store *S, const struct trace_group **g)
{
	while (S->next == S->n) {
		if (!S->shared)
			return 0;
		if (trace_store_page(S, 0, 0) != 0)
			return -1;
		if (S->n == 0 && !S->more)
			return 0;
	}
	*g = &S->g[S->next++];
	return 1;
}

int
trace_store_line(const struct trace_group *g, size_t i, struct trace_ev *ev)
{
	const char *p = g->lines, *nl;

	for (; i > 0 && (nl = strchr(p, '\n')) != NULL; i--)
		p = nl + 1;
	if (i > 0 || (nl = strchr(p, '\n')) == NULL)
		return -1;
	if (trace_parse_line(p, (size_t)(nl - p), ev) != 0)
		return -1;
	snprintf(ev->host, sizeof ev->host, "%s", g->host);
	ev->gseq = g->id;
	ev->remote = !g->self;
	return 0;
}

void
trace_store_close(struct trace_store *S)
{
	trace_store_drop(S);
	if (S->c != NULL)
		rpc_client_close(S->c);
	S->c = NULL;
}
