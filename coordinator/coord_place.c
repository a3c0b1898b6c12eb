/* Placement: see coord_place.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_db.h"
#include "coord_mem.h"
#include "coord_place.h"
#include "coord_reply.h"
#include "labels.h"

int
coord_place_check(struct coord_ctx *c, const char *host, char *const *labels, size_t n,
		  char *joined, size_t len)
{
	char why[200];

	/* The CLI checks these before it sends; any other sender is held
	 * to them here (common/labels.h). */
	if (host != NULL && host[0] != '\0' && !labels_name_ok(host)) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID,
				 "--host takes 1 to %d letters, digits, '.', '_' or '-'",
				 LABELS_NAME_MAX);
		return 1;
	}
	if (labels_check(labels, n, "--on", why, sizeof why) != 0 ||
	    labels_join(labels, n, joined, len) != 0) {
		coord_reply_fail(c, BERTH__ERROR_CODE__ERR_INVALID, "%s", why);
		return 1;
	}
	return 0;
}

int
coord_place_here(struct coord_ctx *c, int64_t n)
{
	static const char sql[] = "SELECT host_wanted, labels FROM tickets WHERE n = ?";
	const struct coord_host *h = coord_db_host(c->db);
	char host[LABELS_NAME_MAX + 1] = "", labels[LABELS_JOINED_MAX] = "";
	struct coord_st *st;
	int rc;

	if ((st = coord_db_q(c->db, sql, "i", n)) == NULL)
		return -1;
	if ((rc = coord_db_step(c->db, st)) == 1) {
		snprintf(host, sizeof host, "%s", coord_db_coltext(st, 0));
		snprintf(labels, sizeof labels, "%s", coord_db_coltext(st, 1));
	}
	coord_db_done(st);
	if (rc < 0)
		return -1;
	if ((host[0] == '\0' || strcmp(host, h->id) == 0) && labels_cover(h->labels, labels))
		return 1;
	coord_reply_deny(c, "placement", "host_wanted", host, "labels", labels, "host", h->id,
			 "host_labels", h->labels, NULL);
	return 0;
}

int
coord_place_waiting(struct coord_db *db, const char *host, const char *labels, char *buf,
		    size_t len)
{
	/* A live host: its lease has not lapsed by the store's clock (a host
	 * declared lost has lapsed, or renewed since and is back). */
	static const char sql[] = "SELECT count(*) FROM hosts WHERE expires_ms >= berth_now_ms()"
				  " AND (?1 = '' OR host = ?1) AND berth_labels_ok(?2, labels) = 1";
	int64_t live = 0;
	int many;

	if (host[0] == '\0' && labels[0] == '\0')
		return 0;
	if (coord_db_int(db, &live, sql, "tt", host, labels) != 1)
		return -1;
	if (live > 0)
		return 0;
	many = strchr(labels, ',') != NULL;
	if (host[0] != '\0' && labels[0] != '\0')
		snprintf(buf, len, "no live host %s offering label%s %s", host, many ? "s" : "",
			 labels);
	else if (host[0] != '\0')
		snprintf(buf, len, "host %s is not live", host);
	else
		snprintf(buf, len, "no live host offers label%s %s", many ? "s" : "", labels);
	return 1;
}

void
coord_place_split(const char *joined, char ***v, size_t *n)
{
	const char *p = joined;
	size_t cap = 0, l;

	*v = NULL;
	*n = 0;
	while (p != NULL && *p != '\0') {
		l = strcspn(p, ",");
		coord_mem_grow(v, *n, &cap, sizeof **v, 4);
		(*v)[*n] = coord_mem_alloc(l + 1);
		memcpy((*v)[(*n)++], p, l);
		p = p[l] == ',' ? p + l + 1 : NULL;
	}
}
