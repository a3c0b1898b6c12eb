#ifndef BERTH_COORD_PLACE_H
#define BERTH_COORD_PLACE_H
#include <stddef.h>
#include <stdint.h>
#include "coord_ctx.h"

/*
 * Placement (docs/MANY-HOSTS.md "Placement"): a ticket may name the one
 * host that may claim it (tickets.host_wanted, '' for any) and labels a
 * host must offer to claim it (tickets.labels, joined by commas, '' for
 * none); a host offers labels at launch (berth-coordinator --labels, kept
 * in coord_host and in its hosts row). The claim passes over a ticket this
 * host may not take; everything else about the claim is as before.
 */

/* The claim's filter, for ticket alias t, with the SQL parameters that
 * carry this host's id and its labels. A ticket that names neither is
 * judged by its two empty columns alone. */
#define COORD_PLACE_SQL(t, host, labels)                                \
	" AND (" t ".host_wanted = '' OR " t ".host_wanted = " host ")" \
	" AND (" t ".labels = '' OR berth_labels_ok(" t ".labels, " labels ") = 1)"

/* Checks an add's (or an edit's) placement from any sender and joins its
 * labels into joined: 0 fine, 1 refused (the error reply set). A NULL or
 * empty host is any host. */
int coord_place_check(struct coord_ctx *c, const char *host, char *const *labels, size_t n,
		      char *joined, size_t len);
/* Inside a claim of ticket n: 1 this host may take it, 0 denied
 * (placement, with what the ticket asks and what this host is), -1 on
 * error. */
int coord_place_here(struct coord_ctx *c, int64_t n);
/* Why a ticket asking for host (or "") and labels (joined, or "") waits
 * when no live host may claim it: 1 with the sentence in buf, 0 some live
 * host may (or the ticket asks for nothing), -1 on error. */
int coord_place_waiting(struct coord_db *db, const char *host, const char *labels, char *buf,
			size_t len);
/* The joined labels as a vector (coord_mem; none for ""). */
void coord_place_split(const char *joined, char ***v, size_t *n);

#endif
