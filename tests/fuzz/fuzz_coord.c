/*
 * libFuzzer harness: the coordinator's request decode and dispatch, fed a
 * SEQUENCE of requests on a fresh temporary database per input, through
 * the path the server uses (coord_fz.c's cfz_decide: the envelope check,
 * then the store). After every request the store's invariants hold (no
 * lease on a settled run, at most one unsettled run per ticket,
 * nonterminal <=> settled_ms IS NULL, ...) and the reply is a well-formed
 * Reply; at the end of the input sqlite's integrity and foreign key checks
 * pass too. A broken check aborts, and libFuzzer keeps the input.
 *
 * One input is a list of records, each an op byte b and its body; by
 * b % 128:
 *
 *     0-81  BUILD    the shared generator (coord_fz.c) draws every choice
 *                    of one request from the bytes that follow (verb,
 *                    fields, plausible or absurd values, the runs and
 *                    tokens learnt so far), then one more choice may damage
 *                    its packed bytes
 *    82-91  CLOCK    the fake clock moves forward: by up to a day, or to an
 *                    absolute u64le time (never back)
 *    92-97  RETRY    the last message again, as a client resends it: a
 *                    decided mutation gets its stored reply, bit for bit,
 *                    with no second effect
 *    98-99  RESTART  the store closed and opened again (a coordinator
 *                    restart), then the last decided mutation resent: it
 *                    still replays
 *  100-127  RAW      u16le length, then that many bytes of a packed Request,
 *                    fed as they are but for placeholders: "~R" c and 29 '~'
 *                    (32 bytes) becomes the run id, "~K" c and 61 '~' (64
 *                    bytes) the worker token, of learnt run c % nruns
 *
 * Why this encoding: raw protobuf alone mutates badly — most mutations
 * break a length and die in the decoder, and no mutation can guess the
 * random run id or token a claim handed out, so the run life (claim, start,
 * record_exit, settle, retries) would never be reached. BUILD makes each
 * input byte one decision of a structured generator, so libFuzzer's
 * byte-level mutations and its comparison tracing become changes of verbs
 * and values; RAW keeps the decoder itself under fire and lets the corpus
 * start from real messages (tests/fuzz/seed_coord.c records them), whose
 * run ids and tokens are placeholders of the same length, so the bytes
 * stay valid protobuf after substitution.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_fz.h"
#include "log.h"

#define MAX_RECORDS 512
#define MSG_CAP     (512 * 1024)

static char work_dir[96], db_path[128];
static uint8_t *tmpl; /* a freshly created database, copied for every input */
static size_t tmpl_len;
static uint8_t *msg; /* the message being fed */

void
cfz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void
rm_db(void)
{
	char p[160];

	unlink(db_path);
	snprintf(p, sizeof p, "%s-wal", db_path);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", db_path);
	unlink(p);
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd;

	if ((fd = open(path, O_RDONLY)) < 0 || fstat(fd, &st) < 0)
		cfz_fail(__FILE__, __LINE__, "%s: %s", path, strerror(errno));
	b = malloc((size_t)st.st_size + 1);
	if (b == NULL || read(fd, b, (size_t)st.st_size) != st.st_size)
		cfz_fail(__FILE__, __LINE__, "read %s", path);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* A new database for every input, so that inputs do not depend on each
 * other (a crash reproduces from its input alone): made once with the
 * schema, then its bytes written afresh, which costs far less than
 * creating it. */
static void
fresh_db(void)
{
	int fd;

	rm_db();
	fd = open(db_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, tmpl, tmpl_len) != (ssize_t)tmpl_len || close(fd) < 0)
		cfz_fail(__FILE__, __LINE__, "write %s: %s", db_path, strerror(errno));
}

static void
cleanup(void)
{
	char cmd[160];

	rm_db();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", work_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_coord: could not remove %s\n", work_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct cfz f;
	const char *t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	(void)argc;
	(void)argv;
	/* The store logs every refusal; the checks say what matters. */
	log_set_level((enum log_level)(LOG_ERROR + 1));
	snprintf(work_dir, sizeof work_dir, "%s/berth-fuzz-coord.XXXXXX", t ? t : "/tmp");
	if (mkdtemp(work_dir) == NULL)
		cfz_fail(__FILE__, __LINE__, "mkdtemp %s: %s", work_dir, strerror(errno));
	atexit(cleanup);
	snprintf(db_path, sizeof db_path, "%s/berth.db", work_dir);
	memset(&f, 0, sizeof f);
	cfz_open(&f, db_path, 1700000000000LL);
	cfz_close(&f);
	tmpl = slurp(db_path, &tmpl_len);
	if ((msg = malloc(MSG_CAP)) == NULL)
		abort();
	return 0;
}

/* Placeholders of RAW messages become learnt run ids and tokens. */
static void
substitute(struct cfz *f, uint8_t *b, size_t len)
{
	size_t i, k, n;
	const char *with;

	if (f->nruns == 0)
		return;
	for (i = 0; i + 3 <= len; i++) {
		if (b[i] != '~' || (b[i + 1] != 'R' && b[i + 1] != 'K'))
			continue;
		n = b[i + 1] == 'R' ? 32 : 64;
		if (i + n > len)
			continue;
		for (k = 3; k < n && b[i + k] == '~'; k++)
			;
		if (k < n)
			continue;
		with = b[i + 1] == 'R' ? f->runs[b[i + 2] % f->nruns].id
				       : f->runs[b[i + 2] % f->nruns].token;
		if (strlen(with) != n)
			continue;
		memcpy(b + i, with, n);
		i += n - 1;
	}
}

struct last {
	uint8_t *bytes; /* the last message fed, after substitution */
	size_t len;
	Berth__Request *req; /* decoded, when it passed the envelope check */
	Berth__Reply *reply;
	int decided; /* decided afresh (not a replay): RETRY checks it */
};

static void
last_clear(struct last *l)
{
	free(l->bytes);
	if (l->req != NULL)
		berth__request__free_unpacked(l->req, NULL);
	if (l->reply != NULL)
		berth__reply__free_unpacked(l->reply, NULL);
	memset(l, 0, sizeof *l);
}

/* A copy of the message in b and its reply, for a resend later. */
static void
keep(struct last *k, const uint8_t *b, size_t len, const Berth__Reply *r)
{
	size_t n = berth__reply__get_packed_size(r);
	uint8_t *p = malloc(n + 1);

	last_clear(k);
	if (p == NULL || (k->bytes = malloc(len + 1)) == NULL)
		abort();
	memcpy(k->bytes, b, len);
	k->len = len;
	k->req = berth__request__unpack(NULL, len, b);
	berth__reply__pack(r, p);
	k->reply = berth__reply__unpack(NULL, n, p);
	free(p);
	CFZ_CHECK(k->req != NULL && k->reply != NULL);
	k->decided = 1;
}

/* Feeds msg[0..len) and remembers it as the last message, and as the kept
 * one when it decided a mutation. */
static void
feed_last(struct cfz *f, struct last *l, struct last *kept, size_t len, int damaged)
{
	int replayed;

	last_clear(l);
	l->reply = cfz_feed(f, msg, len, &l->req, &replayed);
	cfz_check_store(f, 0);
	if ((l->bytes = malloc(len + 1)) == NULL)
		abort();
	memcpy(l->bytes, msg, len);
	l->len = len;
	if (l->reply == NULL)
		return;
	cfz_learn(f, l->req, l->reply);
	l->decided = !replayed;
	/* A damaged message may differ from what it decoded to only in
	 * bytes protobuf skips; keep only clean ones, as the unit test does. */
	if (!replayed && !damaged && cfz_replayable(l->req, l->reply))
		keep(kept, msg, len, l->reply);
}

enum { OP_BUILD, OP_RAW, OP_CLOCK, OP_RETRY, OP_RESTART };

/* The next record's op from its byte (see the top of this file). A seed
 * being written draws it from 0..99: no RAW of xorshift noise. */
static int
next_op(struct cfz *f)
{
	uint32_t b = (f->in != NULL ? cfz_take(f, 1) : cfz_rn(f, 100)) % 128;

	return b < 82    ? OP_BUILD
	       : b < 92  ? OP_CLOCK
	       : b < 98  ? OP_RETRY
	       : b < 100 ? OP_RESTART
			 : OP_RAW;
}

/* One input's records on the store of f (see the top of this file). */
static void
run_records(struct cfz *f, int max_records)
{
	struct last last = { 0 }, kept = { 0 };
	int nrec;

	for (nrec = 0; nrec < max_records && !cfz_exhausted(f); nrec++) {
		switch (next_op(f)) {
		case OP_RAW: {
			size_t len = cfz_take(f, 2);

			if (len > f->in_len - f->in_pos)
				len = f->in_len - f->in_pos;
			memcpy(msg, f->in + f->in_pos, len);
			f->in_pos += len;
			substitute(f, msg, len);
			feed_last(f, &last, &kept, len, 0);
			break;
		}
		case OP_CLOCK:
			if (cfz_rn(f, 2)) {
				f->now += (int64_t)cfz_rn(f, 86400000);
			} else {
				uint64_t at = cfz_rnd(f);

				/* a time sqlite and the ms arithmetic can hold */
				if (at < (uint64_t)1 << 50 && (int64_t)at > f->now)
					f->now = (int64_t)at;
			}
			clock_fake_set(f->now);
			break;
		case OP_RETRY:
			if (last.reply != NULL && last.decided) {
				cfz_check_replay(f, last.bytes, last.len, last.req, last.reply);
				cfz_check_store(f, 0);
			}
			break;
		case OP_RESTART:
			cfz_reopen(f);
			cfz_check_store(f, 1);
			if (kept.bytes != NULL) {
				cfz_check_replay(f, kept.bytes, kept.len, kept.req, kept.reply);
				cfz_check_store(f, 0);
			}
			break;
		default: { /* OP_BUILD */
			Berth__Request q = BERTH__REQUEST__INIT;
			size_t len;
			int damaged = 0;

			cfz_build(f, &q);
			len = berth__request__get_packed_size(&q);
			if (len > MSG_CAP) {
				cfz_free_all(f);
				break;
			}
			berth__request__pack(&q, msg);
			cfz_free_all(f);
			if (cfz_rn(f, 4) == 0) {
				len = cfz_mutate(f, msg, len, MSG_CAP);
				damaged = 1;
			}
			feed_last(f, &last, &kept, len, damaged);
			break;
		}
		}
	}
	cfz_check_store(f, 1);
	last_clear(&last);
	last_clear(&kept);
}

#ifndef FUZZ_COORD_SEEDS
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfz *f = calloc(1, sizeof *f);

	if (f == NULL)
		abort();
	fresh_db();
	cfz_open(f, db_path, 1700000000000LL);
	f->in = data;
	f->in_len = size;
	run_records(f, MAX_RECORDS);
	/* BERTH_FUZZ_VERBOSE=1 fuzz_coord FILE: how deep an input went */
	if (getenv("BERTH_FUZZ_VERBOSE") != NULL)
		fprintf(stderr,
			"fuzz_coord: %d decided (%d granted, %d replays), %d refused, %d runs\n",
			f->decided, f->granted, f->replays, f->refused, f->nruns);
	cfz_close(f);
	free(f);
	return 0;
}
#else
/*
 * fuzz_coord_seeds DIR [N [RECORDS]]: writes N seeds DIR/gen-<k>, each the
 * input bytes of RECORDS records that the generator chose from a fixed
 * xorshift seed, run through the same loop (so each seed is known to pass).
 * These give the fuzzer whole run lives to start from: adds, claims that
 * are granted, starts, exits, settles, retries and restarts.
 */
int
main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 8, records = argc > 3 ? atoi(argv[3]) : 48, k;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_coord_seeds DIR [N [RECORDS]]\n");
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (k = 0; k < n; k++) {
		struct cfz *f = calloc(1, sizeof *f);
		char path[4096];
		FILE *out;

		if (f == NULL)
			abort();
		fresh_db();
		cfz_open(f, db_path, 1700000000000LL);
		f->rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1);
		f->tape_cap = 4096;
		if ((f->tape = malloc(f->tape_cap)) == NULL)
			abort();
		run_records(f, records);
		snprintf(path, sizeof path, "%s/gen-%d", argv[1], k);
		if ((out = fopen(path, "w")) == NULL ||
		    fwrite(f->tape, 1, f->tape_len, out) != f->tape_len || fclose(out) != 0) {
			fprintf(stderr, "fuzz_coord_seeds: cannot write %s\n", path);
			return 1;
		}
		printf("%s: %zu bytes, %d decided (%d granted, %d replays), %d runs\n", path,
		       f->tape_len, f->decided, f->granted, f->replays, f->nruns);
		free(f->tape);
		cfz_close(f);
		free(f);
	}
	return 0;
}
#endif
