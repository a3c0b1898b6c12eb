/*
 * berth-bench-coord: what one run's coordination costs.
 *
 * A run's life is four decisions: claim, start, record_exit, settle; with
 * --fused it is the two requests the supervisor sends on its fast path
 * (DESIGN §4 "One decision, fewer trips"): a claim carrying the waiting
 * shim's identity (claim + start) and a record_exit carrying its settle
 * (record_exit + settle), each one transaction. This program executes them
 * either in-process, straight on the store with no messaging (the limit of
 * the design: the same store transactions and nothing else; the home's
 * sqlite file, or with --store URL a PostgreSQL database, opened as the
 * coordinator opens it), or through a running berth-coordinator over nng
 * (what the supervisor pays). Tickets are added beforehand, untimed, so
 * only the four decisions are measured.
 *
 *   --what life   N full lives; prints runs/s and each verb's mean
 *   --what claim  the cost of one claim with --queued tickets waiting: every
 *                 iteration adds one ticket (untimed) so the queue keeps its
 *                 length, claims (timed) and finishes the run (untimed)
 *   --what seed   adds --queued tickets and exits (for list/RSS at scale)
 *
 * Output is key=value lines for bench/run. Every loop has a count and a
 * deadline; a loop cut by its deadline says so (complete=0).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "ident.h"
#include "rpc.h"
#include "util.h"

enum { V_CLAIM, V_START, V_EXIT, V_SETTLE, V_N };
/* With --fused, claim_us is claim + start and record_exit_us is
 * record_exit + settle; start_us and settle_us are 0. */
static const char *verb_names[V_N] = { "claim", "start", "record_exit", "settle" };

struct bench {
	struct coord_db *store; /* in-process, or ... */
	struct rpc_client *rpc; /* ... over nng */
	struct coord_result res;
	Berth__Reply *rep; /* the last reply when we own it */
	uint64_t req_id;
	char instance[32];
	struct ident self;
	int64_t deadline_ns;
	int fused; /* two requests per life, each with its fused verb */
};

static const char *prog = "berth-bench-coord";

/* Executes req and returns its reply, valid until the next call. Exits on
 * a transport or storage failure: a benchmark that cannot talk has nothing
 * to measure. */
static const Berth__Reply *
bench_call(struct bench *b, Berth__Request *req)
{
	int rv;

	coord_exec_free(&b->res);
	memset(&b->res, 0, sizeof(b->res));
	if (b->rep != NULL) {
		berth__reply__free_unpacked(b->rep, NULL);
		b->rep = NULL;
	}
	if (b->rpc != NULL) {
		req->has_req_id = 0;
		if ((rv = rpc_call(b->rpc, req, &b->rep, 30000)) != 0) {
			fprintf(stderr, "%s: %s: rpc failed (%d)\n", prog, msg_verb_name(req), rv);
			exit(1);
		}
	} else {
		req->has_version = 1;
		req->version = BERTH_PROTOCOL_VERSION;
		req->actor = "bench";
		req->instance = b->instance;
		req->has_req_id = 1;
		req->req_id = ++b->req_id;
		if (coord_exec_request(b->store, req, NULL, NULL, &b->res) != 0) {
			fprintf(stderr, "%s: %s: store failed\n", prog, msg_verb_name(req));
			exit(1);
		}
		if (b->res.reply == NULL)
			b->rep = berth__reply__unpack(NULL, b->res.packed_len, b->res.packed);
	}
	if (b->res.reply != NULL)
		return b->res.reply;
	if (b->rep == NULL) {
		fprintf(stderr, "%s: %s: unreadable reply\n", prog, msg_verb_name(req));
		exit(1);
	}
	return b->rep;
}

static void
bench_need_granted(const Berth__Reply *r, const char *what)
{
	char buf[256];

	if (msg_is_granted(r))
		return;
	msg_describe(r, buf, sizeof(buf));
	fprintf(stderr, "%s: %s: %s\n", prog, what, buf);
	exit(1);
}

/* Adds n tickets running "true", in batches of up to 1000 per transaction. */
static void
bench_seed(struct bench *b, long n)
{
	static char *argv[] = { "true" };
	Berth__Add *adds, **ptrs;
	long done = 0, i, k;

	adds = calloc(1000, sizeof(*adds));
	ptrs = calloc(1000, sizeof(*ptrs));
	if (adds == NULL || ptrs == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	for (i = 0; i < 1000; i++) {
		berth__add__init(&adds[i]);
		adds[i].n_argv = 1;
		adds[i].argv = argv;
		/* No workdir: two live runs never share one (DESIGN §8), and
		 * senders at once would wait for each other's. */
		ptrs[i] = &adds[i];
	}
	while (done < n) {
		Berth__Request req = BERTH__REQUEST__INIT;
		Berth__AddBatch ab = BERTH__ADD_BATCH__INIT;

		k = n - done < 1000 ? n - done : 1000;
		ab.n_adds = (size_t)k;
		ab.adds = ptrs;
		req.verb_case = BERTH__REQUEST__VERB_ADD_BATCH;
		req.add_batch = &ab;
		bench_need_granted(bench_call(b, &req), "add_batch");
		done += k;
		if (bench_util_now_ns() > b->deadline_ns) {
			fprintf(stderr, "%s: deadline passed while seeding (%ld of %ld)\n", prog,
				done, n);
			exit(1);
		}
	}
	free(adds);
	free(ptrs);
}

/* One run's life; each verb's duration is added to ns[]. */
static void
bench_life(struct bench *b, int64_t ns[V_N])
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim cl = BERTH__CLAIM__INIT;
	Berth__Start st = BERTH__START__INIT;
	Berth__Ident id = BERTH__IDENT__INIT;
	Berth__RecordExit re = BERTH__RECORD_EXIT__INIT;
	Berth__Settle se = BERTH__SETTLE__INIT;
	const Berth__Reply *r;
	char run[64];
	int64_t t;

	/* The shim's identity: ours is as good as any live process. */
	id.boot_id = b->self.boot_id;
	id.has_pid = id.has_start_time = id.has_pgid = 1;
	id.pid = b->self.pid;
	id.start_time = b->self.start_time;
	id.pgid = b->self.pgid;
	if (b->fused)
		cl.shim = &id;
	/* Over nng, several senders may share one coordinator (bench/run's
	 * group commit rows) and take each other's tickets: a claim that
	 * finds none due waits for one, as the supervisor's does. */
	if (b->rpc != NULL) {
		cl.has_wait_ms = 1;
		cl.wait_ms = 10000;
	}
	req.verb_case = BERTH__REQUEST__VERB_CLAIM;
	req.claim = &cl;
	t = bench_util_now_ns();
	r = bench_call(b, &req);
	ns[V_CLAIM] += bench_util_now_ns() - t;
	bench_need_granted(r, "claim");
	snprintf(run, sizeof(run), "%s", r->granted->claim->run_id);
	if (b->fused && (r->fused == NULL || !msg_is_granted(r->fused))) {
		fprintf(stderr, "%s: the claim's fused start was not granted\n", prog);
		exit(1);
	}

	st.run_id = run;
	st.shim = &id;
	if (!b->fused) {
		berth__request__init(&req);
		req.verb_case = BERTH__REQUEST__VERB_START;
		req.start = &st;
		t = bench_util_now_ns();
		r = bench_call(b, &req);
		ns[V_START] += bench_util_now_ns() - t;
		bench_need_granted(r, "start");
	}

	re.run_id = run;
	re.has_has_record = re.has_record = 1;
	re.has_exit_code = 1;
	re.exit_code = 0;
	re.has_ended_ms = 1;
	re.ended_ms = clock_wall_ms();
	se.has_capture_complete = se.capture_complete = 1;
	if (b->fused)
		re.settle = &se;
	berth__request__init(&req);
	req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
	req.record_exit = &re;
	t = bench_util_now_ns();
	r = bench_call(b, &req);
	ns[V_EXIT] += bench_util_now_ns() - t;
	bench_need_granted(r, "record_exit");
	if (b->fused) {
		if (r->fused == NULL || !msg_is_granted(r->fused)) {
			fprintf(stderr, "%s: the record_exit's fused settle was not granted\n",
				prog);
			exit(1);
		}
		return;
	}

	se.run_id = run;
	berth__request__init(&req);
	req.verb_case = BERTH__REQUEST__VERB_SETTLE;
	req.settle = &se;
	t = bench_util_now_ns();
	r = bench_call(b, &req);
	ns[V_SETTLE] += bench_util_now_ns() - t;
	bench_need_granted(r, "settle");
}

static int
bench_what_life(struct bench *b, long runs)
{
	int64_t ns[V_N] = { 0 }, t0, total;
	long i;
	int v;

	bench_seed(b, runs);
	t0 = bench_util_now_ns();
	for (i = 0; i < runs && bench_util_now_ns() < b->deadline_ns; i++)
		bench_life(b, ns);
	total = bench_util_now_ns() - t0;
	printf("runs=%ld\nseconds=%.3f\nruns_per_s=%.1f\ncomplete=%d\n", i, total / 1e9,
	       i > 0 ? i / (total / 1e9) : 0.0, i == runs);
	for (v = 0; v < V_N; v++)
		printf("%s_us=%.1f\n", verb_names[v], i > 0 ? ns[v] / 1e3 / i : 0.0);
	return i == runs ? 0 : 1;
}

static int
bench_what_claim(struct bench *b, long queued, long iters)
{
	static char *argv[] = { "true" };
	int64_t ns[V_N], *claims;
	long i;

	bench_seed(b, queued);
	if ((claims = calloc((size_t)iters, sizeof(*claims))) == NULL)
		return 1;
	for (i = 0; i < iters && bench_util_now_ns() < b->deadline_ns; i++) {
		Berth__Request req = BERTH__REQUEST__INIT;
		Berth__Add add = BERTH__ADD__INIT;

		add.n_argv = 1;
		add.argv = argv;
		add.workdir = "/";
		req.verb_case = BERTH__REQUEST__VERB_ADD;
		req.add = &add;
		bench_need_granted(bench_call(b, &req), "add");
		memset(ns, 0, sizeof(ns));
		bench_life(b, ns);
		claims[i] = ns[V_CLAIM];
	}
	printf("queued=%ld\nclaims=%ld\ncomplete=%d\n", queued, i, i == iters);
	printf("claim_p50_us=%.1f\n", bench_util_pct(claims, (size_t)i, 50) / 1e3);
	printf("claim_p99_us=%.1f\n", bench_util_pct(claims, (size_t)i, 99) / 1e3);
	free(claims);
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: berth-bench-coord --home DIR [--mode inproc|rpc] [--what life|claim|seed]\n"
		"                         [--sync full|normal] [--runs N] [--queued N]\n"
		"                         [--deadline-s S] [--fused] [--store URL]\n"
		"\n"
		"  --mode inproc   execute on DIR/berth.db in this process (default)\n"
		"  --mode rpc      talk to the berth-coordinator serving DIR\n"
		"  --store URL     inproc only: execute on this PostgreSQL database\n"
		"                  (postgresql://...) instead of DIR/berth.db; its key is\n"
		"                  kept in DIR\n"
		"  --sync MODE     inproc only: sqlite synchronous (default full)\n"
		"  --runs N        lives (life) or timed claims (claim); default 500\n"
		"  --queued N      tickets waiting (claim, seed); default 100\n"
		"  --deadline-s S  stop measuring after S seconds (default 120)\n"
		"  --fused         a life is two requests: claim + start, record_exit + settle\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "mode", required_argument, NULL, 'm' },
		{ "what", required_argument, NULL, 'w' },
		{ "sync", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "queued", required_argument, NULL, 'q' },
		{ "deadline-s", required_argument, NULL, 'd' },
		{ "fused", no_argument, NULL, 'f' },
		{ "store", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct coord_db_opts o = { .sync_full = 1,
				   .default_lease_ms = 60000,
				   .backoff_base_ms = 1000,
				   .backoff_max_ms = 300000 };
	struct bench b;
	const char *home = NULL, *mode = "inproc", *what = "life", *store = NULL;
	char path[4096], err[512];
	long runs = 500, queued = 100, deadline_s = 120;
	int c, rv;

	memset(&b, 0, sizeof(b));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': home = optarg; break;
		case 'm': mode = optarg; break;
		case 'w': what = optarg; break;
		case 's':
			if (strcmp(optarg, "full") != 0 && strcmp(optarg, "normal") != 0) {
				usage(stderr);
				return 2;
			}
			o.sync_full = strcmp(optarg, "full") == 0;
			break;
		case 'r': runs = bench_util_num(prog, "--runs", optarg); break;
		case 'q': queued = bench_util_num(prog, "--queued", optarg); break;
		case 'd': deadline_s = bench_util_num(prog, "--deadline-s", optarg); break;
		case 'f': b.fused = 1; break;
		case 'S':
			if (!coord_db_is_url(optarg)) {
				fprintf(stderr, "%s: --store takes a postgresql:// URL, not '%s'\n",
					prog, optarg);
				return 2;
			}
			store = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (home == NULL || optind != argc || (store != NULL && strcmp(mode, "inproc") != 0)) {
		usage(stderr);
		return 2;
	}
	b.deadline_ns = bench_util_now_ns() + (int64_t)deadline_s * 1000000000;
	snprintf(b.instance, sizeof(b.instance), "bench%d", (int)getpid());
	if (ident_self(&b.self) != 0) {
		fprintf(stderr, "%s: cannot read this process's identity\n", prog);
		return 1;
	}

	if (strcmp(mode, "rpc") == 0) {
		if (home_socket_url(home, path, sizeof(path)) != 0) {
			fprintf(stderr, "%s: bad home '%s'\n", prog, home);
			return 2;
		}
		if ((b.rpc = rpc_client_open(path, "bench")) == NULL)
			return 1;
	} else if (strcmp(mode, "inproc") == 0) {
		snprintf(path, sizeof(path), "%s/berth.db", home);
		if (store != NULL)
			o.key_dir = home;
		if (coord_db_open(&b.store, store != NULL ? store : path, &o, err, sizeof(err)) !=
		    0) {
			fprintf(stderr, "%s: %s\n", prog, err);
			return 1;
		}
	} else {
		usage(stderr);
		return 2;
	}
	/* sync: the coordinator's own (rpc), or PostgreSQL's (its
	 * synchronous_commit; --sync is sqlite's). */
	printf("mode=%s\nstore=%s\nsync=%s\nfused=%d\n", mode,
	       b.rpc           ? "coordinator"
	       : store != NULL ? "postgresql"
			       : "sqlite",
	       b.rpc           ? "coordinator"
	       : store != NULL ? "postgresql"
	       : o.sync_full   ? "full"
			       : "normal",
	       b.fused);

	if (strcmp(what, "life") == 0) {
		rv = bench_what_life(&b, runs);
	} else if (strcmp(what, "claim") == 0) {
		rv = bench_what_claim(&b, queued, runs);
	} else if (strcmp(what, "seed") == 0) {
		int64_t t0 = bench_util_now_ns();

		bench_seed(&b, queued);
		printf("seeded=%ld\nseconds=%.3f\n", queued, (bench_util_now_ns() - t0) / 1e9);
		rv = 0;
	} else {
		usage(stderr);
		rv = 2;
	}

	coord_exec_free(&b.res);
	if (b.rep != NULL)
		berth__reply__free_unpacked(b.rep, NULL);
	if (b.store != NULL)
		coord_db_close(b.store);
	if (b.rpc != NULL)
		rpc_client_close(b.rpc);
	return rv;
}
