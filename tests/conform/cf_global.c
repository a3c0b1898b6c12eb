/*
 * A shared store's global trace (conform.h's conform_global, cf.h): the
 * rows of trace_log in id order, each one group of one host's lines, fed
 * to the replay as one trace. The decision lock orders the groups, and a
 * group's lines, its events and its row commit together, so every
 * committed decision of every host has its line here, in the order of the
 * events table: no line is lost and none is restored. The hosts' seqs are
 * their own: each goes forward, with gaps (their reads are in their files
 * alone).
 *
 * The hosts' fences (DESIGN §13, proto/run_moves.def's FENCE lines): a
 * run is its claimer's host's; a granted host_lost names a host (its
 * detail, coord_hosts.c: "host H lost: epoch E -> E+1") and fences every
 * run that host claimed before it, for as long as the run is live. A
 * claim by the host after it is of the next epoch: not fenced.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "vec.h"

/* The width coord_hosts.c gives the host in host_lost's detail. */
#define CF_LOST_NAME 40

/* ------------------------------------------------------------ hosts */

/* 1 + the index of host id, made when make (0: none, or out of memory). */
static size_t
cf_host_ix(struct cf *cf, const char *id, int make)
{
	size_t *i = cf_map_get(&cf->host_ix, id);
	struct cf_host *h;

	if (i != NULL)
		return *i + 1;
	if (!make)
		return 0;
	if (vec_grow(&cf->hosts, &cf->caphost, cf->nhosts + 1, sizeof *cf->hosts) != 0 ||
	    cf_map_put(&cf->host_ix, id, cf->nhosts) != 0) {
		cf->oom = 1;
		return 0;
	}
	h = &cf->hosts[cf->nhosts];
	memset(h, 0, sizeof *h);
	snprintf(h->id, sizeof h->id, "%s", id);
	return ++cf->nhosts;
}

/* The host a host_lost's detail names, as far as the detail's width
 * holds it: the host of that name, else the one host of the trace whose
 * id it begins when it was cut (a name the trace has no rows of has no
 * runs to fence). */
static size_t
cf_host_named(struct cf *cf, const char *name)
{
	size_t i, found = 0, n = strlen(name);

	if ((i = cf_host_ix(cf, name, 0)) != 0 || n < CF_LOST_NAME)
		return i != 0 ? i : cf_host_ix(cf, name, 1);
	for (i = 0; i < cf->nhosts; i++)
		if (strncmp(cf->hosts[i].id, name, n) == 0) {
			if (found != 0)
				return 0;
			found = i + 1;
		}
	return found != 0 ? found : cf_host_ix(cf, name, 1);
}

int
cf_fenced(const struct cf *cf, const struct cf_run *r)
{
	return r->host != 0 && cf_live(r->state) && cf->hosts[r->host - 1].lost > r->gen;
}

/* A granted host_lost: the host its detail names is fenced. */
void
cf_host_lost(struct cf *cf, const struct trace_ev *ev)
{
	static const char mid[] = " lost: epoch ";
	char name[sizeof cf->hosts->id];
	const char *p = ev->detail, *q;
	long long from, to;
	struct cf_host *h;
	size_t i, ix;
	int used = 0;

	if (strncmp(p, "host ", 5) != 0 || (q = strstr(p + 5, mid)) == NULL ||
	    (size_t)(q - p - 5) >= sizeof name || q == p + 5 ||
	    sscanf(q + sizeof mid - 1, "%lld -> %lld%n", &from, &to, &used) != 2 ||
	    q[sizeof mid - 1 + (size_t)used] != '\0') {
		cf_bad(cf, ev,
		       "a granted host_lost whose detail does not name the host and its "
		       "epochs (host H lost: epoch E -> E+1): '%s'",
		       ev->detail);
		return;
	}
	memcpy(name, p + 5, (size_t)(q - p - 5));
	name[q - p - 5] = '\0';
	if (to != from + 1)
		cf_bad(cf, ev, "host %s's epoch moved from %lld to %lld: a loss moves it by one",
		       name, from, to);
	if ((ix = cf_host_named(cf, name)) == 0) {
		if (!cf->oom)
			cf_bad(cf, ev,
			       "the lost host '%s' is cut short: more than one host of the "
			       "trace begins so",
			       name);
		return;
	}
	if (ix == cf->host)
		cf_bad(cf, ev, "a host declared itself lost (it renews its lease instead)");
	h = &cf->hosts[ix - 1];
	if (h->epoch != 0 && from != h->epoch)
		cf_bad(cf, ev,
		       "host %s was declared lost in epoch %lld, but its last loss moved it to "
		       "%" PRId64 " (granted once per epoch)",
		       h->id, from, h->epoch);
	h->lost++;
	h->epoch = to;
	for (i = 0; i < cf->nruns; i++)
		if (cf->runs[i].host == ix && cf->runs[i].gen + 1 == h->lost &&
		    cf_live(cf->runs[i].state))
			cf->st->fenced++;
}

/* ------------------------------------------------------------ the rows */

/* One row's lines: each a whole trace line, the first of seq row_seq and
 * each next one's seq the next, all past the host's last. */
static void
cf_group(struct cf *cf, int64_t id, const char *host, uint64_t row_seq, const char *lines)
{
	const char *p = lines, *nl;
	struct trace_ev ev;
	uint64_t want = row_seq;
	size_t n = 0;

	if ((cf->host = cf_host_ix(cf, host, 1)) == 0)
		return;
	for (; *p != '\0'; p = nl + 1, n++) {
		if ((nl = strchr(p, '\n')) == NULL) {
			cf_report(cf,
				  "trace_log #%" PRId64
				  " (host %s): a line without its newline: %.200s",
				  id, host, p);
			break;
		}
		if (trace_parse_line(p, (size_t)(nl - p), &ev) != 0) {
			cf_report(cf,
				  "trace_log #%" PRId64 " (host %s): not a trace record: %.200s",
				  id, host, p);
			continue;
		}
		if (ev.seq != want)
			cf_bad(cf, &ev,
			       "trace_log #%" PRId64 " holds the group of seq %" PRIu64
			       " on, and this "
			       "is its line %zu",
			       id, row_seq, n + 1);
		want = ev.seq + 1;
		if (ev.seq <= cf->hosts[cf->host - 1].prev_seq) {
			cf_bad(cf, &ev,
			       "after the host's seq %" PRIu64 ": its order of decisions goes back",
			       cf->hosts[cf->host - 1].prev_seq);
			continue;
		}
		cf->hosts[cf->host - 1].prev_seq = ev.seq;
		cf_line(cf, &ev, 0);
		if (cf->oom)
			break;
	}
	if (n == 0)
		cf_report(cf, "trace_log #%" PRId64 " (host %s, seq %" PRIu64 ") holds no line", id,
			  host, row_seq);
	cf->host = 0;
}

/* Feeds trace_log's rows in id order. 0, or -1 (said on stderr). */
static int
cf_rows(struct cf *cf)
{
	static const char q_log[] = "SELECT id, host, seq, lines FROM trace_log ORDER BY id";
	struct coord_st *q;
	int rc = 0;

	if ((q = coord_db_q(cf->db, q_log, "")) == NULL) {
		fprintf(stderr, "berth-conform: reading trace_log: %s\n", coord_db_errmsg(cf->db));
		return -1;
	}
	while (!cf->oom && (rc = coord_db_step(cf->db, q)) == 1) {
		cf->st->groups++;
		cf_group(cf, coord_db_i64(q, 0), coord_db_coltext(q, 1),
			 (uint64_t)coord_db_i64(q, 2), coord_db_coltext(q, 3));
	}
	coord_db_done(q);
	if (!cf->oom && rc < 0) {
		fprintf(stderr, "berth-conform: reading trace_log: %s\n", coord_db_errmsg(cf->db));
		return -1;
	}
	cf->st->hosts = cf->nhosts;
	return 0;
}

long
conform_global(const char *home, const struct conform_opts *o, struct conform_stats *stp)
{
	struct conform_stats st0;
	char store[4096];
	struct cf cf;
	int rc, ok = 0;

	if ((rc = cf_home_store(home, store, sizeof store)) <= 0) {
		if (rc == 0)
			fprintf(stderr, "berth-conform: %s has no store, so no global trace\n",
				home);
		return -1;
	}
	if (cf_begin(&cf, o, stp != NULL ? stp : &st0, store, home) != 0)
		goto out;
	if (coord_db_kind(cf.db) != COORD_STORE_POSTGRESQL) {
		fprintf(stderr,
			"berth-conform: %s is on sqlite, one host's store: it keeps no global trace "
			"(its trace file is the whole trace: berth-conform without --global)\n",
			home);
		goto out;
	}
	cf.global = 1;
	if (cf_rows(&cf) != 0)
		goto out;
	cf_end_check(&cf);
	ok = 1;
out:
	return cf_done(&cf, ok);
}
