#ifndef BERTH_COORD_VERBS_H
#define BERTH_COORD_VERBS_H
#include <stddef.h>
#include <stdint.h>
#include "berth.pb-c.h"
#include "coord_caller.h"
#include "coord_ctx.h"

/*
 * The verb table: one row per Request verb (DESIGN §1, §4, §8), the one
 * place that says what a verb is. Adding a verb is the schema, a row here
 * and its handler.
 */

/* Who may send a verb is the row's caller classes and, for an actor, its
 * roles (coord_caller.h: enum coord_class, enum coord_role): the class
 * DESIGN §1 "Who may ask what" gives it, and the actors that send it
 * (what supervisor/, recovery/ and reaper/ put on the wire). coord_exec.c
 * refuses anyone else (denied not_permitted) before the handler runs. A
 * worker verb is also taken from an operator, on coordinator.sock: it still
 * needs its run's token. */

/* Flags. Each row is exactly one of READS and MUTATES. */
#define COORD_VERB_READS 0x1u /* a read transaction; no event row, no stored reply */
#define COORD_VERB_MUTATES \
	0x2u                  /* IMMEDIATE transaction, event row, reply stored under
				 * (sender instance, request id) and replayed */
#define COORD_VERB_PARKS 0x4u /* may be held until work is due (coord_verb_wait_ms) */

struct coord_verb {
	Berth__Request__VerbCase verb;
	const char *name; /* as the trace spells it: the Request oneof field's name */
	coord_handler_fn *handler;
	unsigned flags;
	unsigned callers; /* enum coord_class bits: who may send it */
	unsigned roles;   /* enum coord_role bits: the actors that may (with CALLER_ACTOR) */
};

/* The row of a verb; NULL for one this coordinator does not know. */
const struct coord_verb *coord_verb_find(Berth__Request__VerbCase verb);
/* The i-th row (0, 1, ...), NULL past the last: for tests and tools. */
const struct coord_verb *coord_verb_row(size_t i);
/* The verb's name in the trace: its row's name, "none" without a verb,
 * "unknown" for a verb without a row. */
const char *coord_verb_name(const Berth__Request *req);
/* How long req may be held (ms): the wait of a claim for the next ticket
 * (Claim.wait_ms), the one request a PARKS verb parks; 0 for any other,
 * and for a request with parts (Request.then), which is never held. */
int64_t coord_verb_wait_ms(const Berth__Request *req);
/* 1 when req only reads: a READS verb, without parts. */
int coord_verb_reads(const Berth__Request *req);

/* What a fused verb's request is made of (coord_verb_fused). */
struct coord_verb_fusion {
	Berth__Request req;
	Berth__Start start;
	Berth__Settle settle;
};

/*
 * The fused verb head carries (its FUSE line's field is set,
 * proto/run_moves.def), as the request the same sender would have sent
 * next: the envelope is head's, the run is the one head's grant names
 * (granted, its reply). 1 with fz->req made (pointing into head, granted
 * and fz), 0 when head carries none, -1 when the fused verb names another
 * run than head's (an input error of the fused verb: why in err).
 */
int coord_verb_fused(const Berth__Request *head, const Berth__Reply *granted,
		     struct coord_verb_fusion *fz, char *err, size_t errlen);
/* 1 when coord_verb_fused makes the fused verb of FUSE line (verb, then):
 * every FUSE line has its maker (tests check it). */
int coord_verb_fuses(Berth__Request__VerbCase verb, Berth__Request__VerbCase then);

#endif
