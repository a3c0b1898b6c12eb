/* Hosts on one store: see coord_hosts.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_db.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_place.h"
#include "coord_reply.h"
#include "log.h"

static int
hosts_register(struct coord_db *db, struct coord_host *h)
{
	static const char q_up[] =
		"INSERT INTO hosts (host, boot_id, epoch, ttl_ms, renewed_ms, expires_ms, labels)"
		" VALUES (?1, ?2, 1, ?3, berth_now_ms(), berth_now_ms() + ?3, ?4)"
		" ON CONFLICT (host) DO UPDATE SET boot_id = excluded.boot_id,"
		" ttl_ms = excluded.ttl_ms, renewed_ms = excluded.renewed_ms,"
		" expires_ms = excluded.expires_ms, labels = excluded.labels RETURNING epoch";
	/* Runs and seats from before hosts were named (schema v9) are this
	 * home's, so its host's. A sqlite store is one machine's: whatever
	 * host id its runs were claimed under (a host name that changed, a
	 * copied home), they are this host's, so none is stranded where no
	 * scan looks. */
	static const char q_runs[] = "UPDATE runs SET host = ?1, epoch = ?2 WHERE host = ''";
	static const char q_seats[] = "UPDATE seats SET host = ?1 WHERE host = ''";
	static const char q_runs1[] = "UPDATE runs SET host = ?1, epoch = ?2 WHERE host != ?1";
	static const char q_seats1[] = "UPDATE seats SET host = ?1 WHERE host != ?1";
	static const char q_hosts1[] = "DELETE FROM hosts WHERE host != ?1";
	/* The line kept before its coordinator had a host (or another). */
	static const char q_tail1[] =
		"INSERT INTO trace_tails (host, seq, line) SELECT ?1, seq, line FROM trace_tail"
		" WHERE id = 1 ON CONFLICT (host) DO NOTHING";
	int one = coord_db_kind(db) == COORD_STORE_SQLITE;
	int64_t epoch = 0;

	if (coord_db_int(db, &epoch, q_up, "ttit", h->id, h->boot_id, h->ttl_ms, h->labels) != 1 ||
	    coord_db_exec(db, one ? q_runs1 : q_runs, "ti", h->id, epoch) < 0 ||
	    coord_db_exec(db, one ? q_seats1 : q_seats, "t", h->id) < 0 ||
	    (one && (coord_db_exec(db, q_hosts1, "t", h->id) < 0 ||
		     coord_db_exec(db, q_tail1, "t", h->id) < 0)))
		return -1;
	if (h->epoch != 0 && epoch != h->epoch)
		log_warn("host %s was declared lost while it could not renew its lease (epoch "
			 "%" PRId64 " -> %" PRId64 "): its runs of the old epoch are fenced",
			 h->id, h->epoch, epoch);
	h->epoch = epoch;
	return 0;
}

static int
hosts_renew(struct coord_db *db, struct coord_host *h)
{
	static const char q_renew[] =
		"UPDATE hosts SET renewed_ms = berth_now_ms(), expires_ms = berth_now_ms() + ttl_ms,"
		" boot_id = ?3 WHERE host = ?1 AND epoch = ?2";
	int rc;

	if ((rc = coord_db_exec(db, q_renew, "tit", h->id, h->epoch, h->boot_id)) < 0)
		return -1;
	/* Not renewed: another host declared this one lost meanwhile (or the
	 * row went). Take the epoch there is now. */
	return rc == 1 ? 0 : hosts_register(db, h);
}

/* The other hosts whose lease is live, into h->others (kept as it was
 * when the store cannot say): 0, or -1. A sqlite store is one host's. */
static int
hosts_count(struct coord_db *db, struct coord_host *h, int64_t mono_now)
{
	static const char q_others[] =
		"SELECT count(*) FROM hosts WHERE host != ? AND expires_ms >= berth_now_ms()";
	int64_t n = 0;

	if (coord_db_kind(db) == COORD_STORE_SQLITE)
		return 0;
	if (coord_db_int(db, &n, q_others, "t", h->id) != 1)
		return -1;
	h->others = n;
	h->counted_mono = mono_now;
	return 0;
}

int
coord_hosts_tend(struct coord_db *db, int64_t mono_now, int force)
{
	struct coord_host *h = coord_db_host(db);
	int rc;

	if (h->id[0] == '\0')
		return 0;
	if (!force && (mono_now < h->retry_mono ||
		       (h->epoch != 0 && mono_now - h->renewed_mono < h->ttl_ms / 3))) {
		/* Between renewals, a host that came up is seen within a
		 * second (what it changes is how claims are decided). */
		if (h->epoch != 0 && mono_now - h->counted_mono >= 1000 && !coord_db_in_txn(db))
			(void)hosts_count(db, h, mono_now);
		return 0;
	}
	if (coord_db_in_txn(db))
		return 0; /* a group is being decided: at the next turn */
	rc = coord_db_begin(db, 1);
	if (rc == 0)
		rc = h->epoch == 0 ? hosts_register(db, h) : hosts_renew(db, h);
	if (rc == 0)
		rc = coord_db_commit(db);
	if (rc != 0) {
		coord_db_rollback(db);
		/* Tried again a tenth of the TTL later, said once. */
		h->retry_mono = mono_now + (h->ttl_ms / 10 > 0 ? h->ttl_ms / 10 : 1);
		return h->failing++ == 0 ? -1 : 0;
	}
	if (h->failing > 0)
		log_info("host %s: lease renewed again after %d failed attempts", h->id,
			 h->failing);
	h->failing = 0;
	h->renewed_mono = mono_now;
	(void)hosts_count(db, h, mono_now); /* after: it costs no renewal */
	return 0;
}

int64_t
coord_hosts_due_in(struct coord_db *db, int64_t mono_now)
{
	struct coord_host *h = coord_db_host(db);
	int64_t due;

	if (h->id[0] == '\0')
		return INT64_MAX;
	due = h->renewed_mono + h->ttl_ms / 3 - mono_now;
	if (h->retry_mono - mono_now > due)
		due = h->retry_mono - mono_now;
	return due > 0 ? due : 0;
}

int
coord_hosts_claiming(struct coord_db *db, int64_t mono_now, char *why, size_t n)
{
	struct coord_host *h = coord_db_host(db);

	if (h->id[0] == '\0')
		return 1;
	if (h->epoch != 0 && mono_now - h->renewed_mono <= h->ttl_ms / 2)
		return 1;
	if (h->epoch == 0)
		snprintf(why, n, "the host lease of %s is not held yet (the store was not reached)",
			 h->id);
	else
		snprintf(why, n,
			 "the store has not renewed the host lease of %s for %" PRId64
			 " ms (half its TTL is %" PRId64 " ms): not claiming",
			 h->id, mono_now - h->renewed_mono, h->ttl_ms / 2);
	return 0;
}

int
coord_hosts_claim_guard(struct coord_ctx *c)
{
	static const char sql[] =
		"SELECT epoch, expires_ms >= berth_now_ms() FROM hosts WHERE host = ?";
	struct coord_host *h = coord_db_host(c->db);
	struct coord_st *st;
	int64_t epoch = 0, live = 0;
	char why[200], buf[24];
	int rc;

	if (h->id[0] == '\0')
		return 1;
	if (!coord_hosts_claiming(c->db, clock_mono_ms(), why, sizeof why)) {
		coord_reply_deny(c, "store_unreachable", "host", h->id, NULL);
		snprintf(c->detail, sizeof c->detail, "%.95s", why);
		return 0;
	}
	if ((st = coord_db_q(c->db, sql, "t", h->id)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		epoch = coord_db_i64(st, 0);
		live = coord_db_i64(st, 1);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	if (rc == 1 && epoch == h->epoch && live)
		return 1;
	/* Lost (its epoch moved on) or lapsed: the next turn's renewal takes
	 * it up; no run is claimed under an epoch the store no longer holds. */
	h->renewed_mono = 0;
	h->retry_mono = 0;
	snprintf(buf, sizeof buf, "%" PRId64, epoch);
	coord_reply_deny(c, rc == 1 && epoch != h->epoch ? "host_lost" : "host_lease_lapsed",
			 "host", h->id, "epoch", buf, NULL);
	return 0;
}

int
coord_hosts_rows(struct coord_db *db, Berth__Host ***out, size_t *n)
{
	static const char q_hosts[] =
		"SELECT host, boot_id, epoch, ttl_ms, renewed_ms, expires_ms,"
		" expires_ms < berth_now_ms(), lost_ms, labels FROM hosts ORDER BY host";
	static const char q_stale[] =
		"SELECT r.id FROM runs r JOIN hosts h ON h.host = r.host WHERE r.host = ?"
		" AND r.settled_ms IS NULL AND r.epoch < h.epoch ORDER BY r.claimed_ms";
	const char *self = coord_db_host(db)->id;
	Berth__Host **v = NULL;
	struct coord_st *st, *sr;
	size_t cap = 0, scap;
	int rc, rs;

	*out = NULL;
	*n = 0;
	if ((st = coord_db_q(db, q_hosts, "")) == NULL)
		return -1;
	while ((rc = coord_db_step(db, st)) == 1) {
		Berth__Host *h = coord_mem_alloc(sizeof *h);

		berth__host__init(h);
		h->host = coord_db_col(st, 0);
		h->boot_id = coord_db_col(st, 1);
		h->has_epoch = h->has_ttl_ms = h->has_renewed_ms = h->has_expires_ms = 1;
		h->epoch = coord_db_i64(st, 2);
		h->ttl_ms = coord_db_i64(st, 3);
		h->renewed_ms = coord_db_i64(st, 4);
		h->expires_ms = coord_db_i64(st, 5);
		h->has_lapsed = 1;
		h->lapsed = coord_db_i64(st, 6) != 0;
		h->has_lost_ms = coord_db_colint(st, 7, &h->lost_ms);
		h->has_self = 1;
		h->self = strcmp(h->host, self) == 0;
		coord_place_split(coord_db_coltext(st, 8), &h->labels, &h->n_labels);
		coord_mem_grow(&v, *n, &cap, sizeof *v, 4);
		v[(*n)++] = h;
	}
	coord_db_done(st);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		if ((sr = coord_db_q(db, q_stale, "t", v[i]->host)) == NULL) {
			rc = -1;
			break;
		}
		scap = 0;
		while ((rs = coord_db_step(db, sr)) == 1) {
			coord_mem_grow(&v[i]->stale_runs, v[i]->n_stale_runs, &scap,
				       sizeof *v[i]->stale_runs, 8);
			v[i]->stale_runs[v[i]->n_stale_runs++] = coord_db_col(sr, 0);
		}
		coord_db_done(sr);
		if (rs < 0)
			rc = -1;
	}
	if (rc < 0) {
		for (size_t i = 0; i < *n; i++)
			berth__host__free_unpacked(v[i], NULL);
		free(v);
		*n = 0;
		return -1;
	}
	*out = v;
	return 0;
}

int
coord_hosts_list(struct coord_ctx *c)
{
	static const char q_now[] = "SELECT berth_now_ms()";
	Berth__HostsReply *hr;
	Berth__Granted *g;
	int64_t now = 0;

	hr = coord_mem_alloc(sizeof *hr);
	berth__hosts_reply__init(hr);
	if (coord_hosts_rows(c->db, &hr->hosts, &hr->n_hosts) != 0 ||
	    coord_db_int(c->db, &now, q_now, "") != 1) {
		berth__hosts_reply__free_unpacked(hr, NULL);
		return -1;
	}
	hr->has_now_ms = 1;
	hr->now_ms = now;
	g = coord_reply_granted(c);
	g->payload_case = BERTH__GRANTED__PAYLOAD_HOSTS;
	g->hosts = hr;
	return 0;
}

int
coord_hosts_lost(struct coord_ctx *c)
{
	static const char q_lose[] =
		"UPDATE hosts SET epoch = epoch + 1, lost_ms = berth_now_ms()"
		" WHERE host = ?1 AND epoch = ?2 AND expires_ms < berth_now_ms()"
		" AND (lost_ms IS NULL OR lost_ms < renewed_ms)";
	static const char q_row[] =
		"SELECT epoch, lost_ms IS NOT NULL AND lost_ms >= renewed_ms FROM hosts WHERE host = ?";
	const Berth__HostLost *m = c->req->host_lost;
	const char *host = m != NULL && m->host != NULL ? m->host : "";
	struct coord_st *st;
	int64_t epoch = 0, lost = 0;
	char buf[24];
	int rc;

	snprintf(c->detail, sizeof c->detail, "host %.64s", host);
	if (host[0] == '\0' || m == NULL || !m->has_epoch) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "host_lost names no host and epoch");
		return 0;
	}
	/* A host does not declare itself lost: it renews its lease. */
	if (strcmp(host, coord_db_host(c->db)->id) == 0) {
		coord_reply_deny(c, "own_host", "host", host, NULL);
		return 0;
	}
	if ((rc = coord_db_exec(c->db, q_lose, "ti", host, m->epoch)) < 0)
		return -1;
	if (rc == 1) {
		snprintf(c->detail, sizeof c->detail,
			 "host %.40s lost: epoch %" PRId64 " -> %" PRId64, host, m->epoch,
			 m->epoch + 1);
		coord_reply_granted(c);
		return 0;
	}
	if ((st = coord_db_q(c->db, q_row, "t", host)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		epoch = coord_db_i64(st, 0);
		lost = coord_db_i64(st, 1);
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	snprintf(buf, sizeof buf, "%" PRId64, epoch);
	if (rc == 0)
		coord_reply_deny(c, "no_host", "host", host, NULL);
	else if (epoch != m->epoch || lost)
		coord_reply_deny(c, "epoch_moved", "host", host, "epoch", buf, NULL);
	else
		coord_reply_deny(c, "lease_live", "host", host, "epoch", buf, NULL);
	return 0;
}
