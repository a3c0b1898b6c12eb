#ifndef BERTH_COORD_FZ_H
#define BERTH_COORD_FZ_H
#include <stddef.h>
#include <stdint.h>

#include "berth.pb-c.h"
#include "coord_db.h"

/*
 * The coordinator against hostile input, shared by the seeded unit test
 * (tests/unit/coord_fuzz_test.c) and the libFuzzer harness
 * (tests/fuzz/fuzz_coord.c): a generator of requests, the server's path
 * (cfz_decide), and the checks every input must pass — every reply a
 * well-formed Reply, the store's invariants of DESIGN §3 after each
 * request, a retry answered by its stored reply with no second effect.
 *
 * The generator draws every choice from cfz_rn(): from a fixed-seed
 * xorshift in the unit test, or from the fuzzer's input bytes, so that
 * libFuzzer's mutations of the bytes become changes of verbs, fields and
 * values, not mostly undecodable protobuf.
 */

#define CFZ_MAXRUNS 64

struct cfz_run {
	char id[40];
	char token[80];
	char ticket[24];
};

struct cfz {
	char path[128]; /* the database */
	struct coord_db *s;
	struct coord_db_opts o;
	/* where choices come from: in != NULL reads in[0..in_len), else xorshift */
	uint64_t rng;
	const uint8_t *in;
	size_t in_len, in_pos;
	/* with tape set (and in NULL), every xorshift choice is also written
	 * down as the input bytes that make the same choice: a seed */
	uint8_t *tape;
	size_t tape_len, tape_cap;
	uint64_t req_id;
	int64_t now;
	struct cfz_run runs[CFZ_MAXRUNS];
	int nruns;
	int ntickets;
	/* allocations of the request being built, freed by cfz_free_all */
	void **arena;
	size_t narena, carena;
	/* counts, to show the inputs reached the store */
	int decided, granted, refused, replays;
};

/* Reports a broken check and does not return. Each user of this file
 * defines it: the unit test fails the cmocka test, the fuzzer aborts (which
 * libFuzzer records as a crash with its input). */
void cfz_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define CFZ_CHECK(c)                                                          \
	do {                                                                  \
		if (!(c))                                                     \
			cfz_fail(__FILE__, __LINE__, "check failed: %s", #c); \
	} while (0)
#define CFZ_EQ(a, b)                                                                            \
	do {                                                                                    \
		long long a_ = (long long)(a), b_ = (long long)(b);                             \
		if (a_ != b_)                                                                   \
			cfz_fail(__FILE__, __LINE__, "%s == %lld, want %s == %lld", #a, a_, #b, \
				 b_);                                                           \
	} while (0)

/* Opens a fresh store at path (the file need not exist) with a fake clock
 * at now; cfz_close closes it, leaves the file, clears the clock. */
void cfz_open(struct cfz *f, const char *path, int64_t now);
void cfz_close(struct cfz *f);
/* A coordinator restart: the store closed and opened again. */
void cfz_reopen(struct cfz *f);

/* The next choice in [0, n) (0 when n is 0, or once the input is used up),
 * and 64 bits of choice. */
uint32_t cfz_rn(struct cfz *f, uint32_t n);
uint64_t cfz_rnd(struct cfz *f);
/* 1 once an input-driven cfz has read all its bytes. */
int cfz_exhausted(const struct cfz *f);
/* n raw bytes of input (little-endian, at most 4): from the input, or from
 * xorshift and written to the tape. */
uint32_t cfz_take(struct cfz *f, int n);
/* Appends n bytes to the tape (when there is one). */
void cfz_tape(struct cfz *f, const void *b, size_t n);

/* One request into q (initialised by the caller): the envelope, mostly
 * valid, and a verb of any kind with plausible or absurd fields, naming the
 * runs and tokens learnt so far. Its memory lives until cfz_free_all. */
void cfz_build(struct cfz *f, Berth__Request *q);
void cfz_free_all(struct cfz *f);
/* Byte-level damage to a packed request of len bytes in buf (cap bytes):
 * the new length. */
size_t cfz_mutate(struct cfz *f, uint8_t *buf, size_t len, size_t cap);

/* The server's path for one received message: the envelope check, then the
 * store. The reply, decoded and checked (NULL when the envelope was refused,
 * and that refusal checked); *reqp is the decoded request then, and
 * *replayed says whether the store answered with a stored reply. */
Berth__Reply *cfz_feed(struct cfz *f, const uint8_t *data, size_t len, Berth__Request **reqp,
		       int *replayed);
/* Remembers what a granted reply handed out (runs, tokens, tickets). */
void cfz_learn(struct cfz *f, const Berth__Request *q, const Berth__Reply *r);
/* The same bytes again, as a client's retry: a decided mutation must come
 * back as its stored reply, bit for bit but for replayed, with no new event;
 * a read, an error or a nothing_due claim is decided afresh. */
void cfz_check_replay(struct cfz *f, const uint8_t *data, size_t len, const Berth__Request *q,
		      const Berth__Reply *first);
/* The store's invariants (DESIGN §3); full adds sqlite's integrity and
 * foreign key checks. */
void cfz_check_store(struct cfz *f, int full);

/* Whether a request decided something a retry must replay: not a read, not
 * an error, not a claim of the next ticket denied nothing_due. */
int cfz_replayable(const Berth__Request *q, const Berth__Reply *r);

#endif
