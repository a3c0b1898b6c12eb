/*
 * seed_coord: records the real messages of a running group as a seed of
 * the coordinator harness (tests/fuzz/fuzz_coord.c).
 *
 * It stands in for berth-coordinator (tests/fuzz/record-seeds.sh puts it
 * next to a copy of the launcher under that name): it listens on
 * coordinator.sock, decides every request with the real store, as the
 * coordinator does (envelope check, then coord_exec_request; a claim that
 * finds nothing due is held up to its wait_ms and tried again, as the
 * server parks it), answers it, and appends the request to the seed file
 * $BERTH_SEED_OUT as the harness reads it: a CLOCK record with the time it
 * was decided, then a RAW record with its bytes. The run ids and worker
 * tokens the store handed out are written as the harness's placeholders,
 * numbered in claim order, so the seed names the runs its own replay
 * creates. There is no trace, no caller class and no failpoint here: this
 * is a recorder, never a coordinator a group should run with.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "ids.h"
#include "log.h"
#include "observe.h"
#include "rpc.h"
#include "util.h"

#define MAXRUNS 64

struct held {
	struct rpc_incoming *in;
	Berth__Request *req;
	int64_t deadline;
	struct held *next;
};

static struct coord_db *store;
static struct rpc_server *rpc;
static FILE *out;
static char run_ids[MAXRUNS][IDS_RUN_LEN + 1], tokens[MAXRUNS][IDS_TOKEN_LEN + 1];
static int nruns;
static struct held *held;

/* Each learnt id in b becomes "~R<k>~~..." (or "~K<k>~~..." for a token),
 * the same length, so the protobuf lengths stay right. */
static void
placeholders(uint8_t *b, size_t len)
{
	size_t i, n;
	int k;

	for (k = 0; k < nruns; k++) {
		for (i = 0; i + IDS_RUN_LEN <= len; i++) {
			const char *id = NULL;

			if (memcmp(b + i, run_ids[k], IDS_RUN_LEN) == 0)
				id = "R", n = IDS_RUN_LEN;
			else if (i + IDS_TOKEN_LEN <= len && tokens[k][0] != '\0' &&
				 memcmp(b + i, tokens[k], IDS_TOKEN_LEN) == 0)
				id = "K", n = IDS_TOKEN_LEN;
			if (id == NULL)
				continue;
			memset(b + i, '~', n);
			b[i + 1] = (uint8_t)id[0];
			b[i + 2] = (uint8_t)k;
			i += n - 1;
		}
	}
}

static void
record(const uint8_t *data, size_t len)
{
	uint8_t clock_rec[10], raw_hdr[3], *b;
	int64_t now = clock_wall_ms();
	int i;

	if (len > 0xffff || (b = malloc(len + 1)) == NULL)
		return;
	memcpy(b, data, len);
	placeholders(b, len);
	clock_rec[0] = 82; /* CLOCK, absolute */
	clock_rec[1] = 0;
	for (i = 0; i < 8; i++)
		clock_rec[2 + i] = (uint8_t)((uint64_t)now >> (8 * i));
	raw_hdr[0] = 100; /* RAW */
	raw_hdr[1] = (uint8_t)len;
	raw_hdr[2] = (uint8_t)(len >> 8);
	fwrite(clock_rec, 1, sizeof clock_rec, out);
	fwrite(raw_hdr, 1, sizeof raw_hdr, out);
	fwrite(b, 1, len, out);
	fflush(out);
	free(b);
}

static void
learn(const Berth__Reply *r)
{
	const Berth__ClaimGranted *g;

	if (r == NULL || r->result_case != BERTH__REPLY__RESULT_GRANTED ||
	    r->granted->payload_case != BERTH__GRANTED__PAYLOAD_CLAIM || nruns == MAXRUNS)
		return;
	g = r->granted->claim;
	if (g->run_id == NULL || strlen(g->run_id) != IDS_RUN_LEN)
		return;
	snprintf(run_ids[nruns], sizeof run_ids[0], "%s", g->run_id);
	snprintf(tokens[nruns], sizeof tokens[0], "%s",
		 g->token != NULL && strlen(g->token) == IDS_TOKEN_LEN ? g->token : "");
	nruns++;
}

/* Decides req (received as in); 1 when it was held for later. */
static int
decide(struct rpc_incoming *in, Berth__Request *req, int final)
{
	struct coord_result res;
	size_t len;
	const uint8_t *data = rpc_incoming_data(in, &len);

	if (coord_exec_request(store, req, NULL, NULL, &res) != 0) {
		rpc_server_drop(rpc, in);
		return 0;
	}
	if (!final && req->verb_case == BERTH__REQUEST__VERB_CLAIM && req->claim->wait_ms > 0 &&
	    res.decided_nothing) {
		coord_exec_free(&res);
		return 1;
	}
	record(data, len);
	learn(res.reply);
	rpc_server_reply_raw(rpc, in, res.packed, res.packed_len);
	coord_exec_free(&res);
	return 0;
}

static void
serve(void)
{
	struct rpc_incoming *in;
	struct held **hp, *h;
	int64_t now = clock_mono_ms();

	while ((in = rpc_server_next(rpc)) != NULL) {
		Berth__Request *req;
		char msg[256];
		size_t len;
		const uint8_t *data = rpc_incoming_data(in, &len);

		if (coord_envelope_check(data, len, &req, msg, sizeof msg) != 0) {
			/* refused: the recorder keeps no garbage, the fuzzer makes plenty */
			if (req != NULL)
				berth__request__free_unpacked(req, NULL);
			rpc_server_drop(rpc, in);
			continue;
		}
		if (decide(in, req, 0)) {
			if ((h = calloc(1, sizeof *h)) == NULL)
				abort();
			h->in = in;
			h->req = req;
			h->deadline = now + req->claim->wait_ms;
			h->next = held;
			held = h;
			continue;
		}
		berth__request__free_unpacked(req, NULL);
	}
	/* held claims: again every pass, answered for good at their deadline */
	for (hp = &held; (h = *hp) != NULL;) {
		if (rpc_incoming_orphaned(rpc, h->in)) {
			rpc_server_drop(rpc, h->in);
		} else if (decide(h->in, h->req, now >= h->deadline)) {
			hp = &h->next;
			continue;
		}
		*hp = h->next;
		berth__request__free_unpacked(h->req, NULL);
		free(h);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "lease-ms", required_argument, NULL, 'l' },
		{ "backoff-ms", required_argument, NULL, 'b' },
		{ "sync", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct coord_db_opts so = { .sync_full = 0,
				    .default_lease_ms = 30000,
				    .backoff_base_ms = 1000,
				    .backoff_max_ms = 300000 };
	const char *home = getenv("BERTH_HOME"), *path = getenv("BERTH_SEED_OUT");
	char db[4096], url[4200], err[256], inst[17];
	struct pollfd pfd[2];
	sigset_t ss;
	int c;

	log_init("seed_coord");
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'H')
			home = optarg;
		else if (c == 'l')
			so.default_lease_ms = atoll(optarg);
		else if (c == 'b')
			so.backoff_base_ms = atoll(optarg);
		else if (c == '?')
			return 2;
	}
	if (home == NULL || path == NULL) {
		fprintf(stderr, "seed_coord: needs --home (or BERTH_HOME) and BERTH_SEED_OUT\n");
		return 2;
	}
	if ((out = fopen(path, "a")) == NULL) {
		fprintf(stderr, "seed_coord: %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(db, sizeof db, "%s/berth.db", home);
	if (home_ensure(home) != 0 || coord_db_open(&store, db, &so, err, sizeof err) != 0 ||
	    home_socket_url(home, url, sizeof url) != 0) {
		fprintf(stderr, "seed_coord: %s: %s\n", home, err);
		return 1;
	}
	if (ids_instance(inst) == 0)
		observe_attach(home, "coordinator", inst);
	unlink(url + strlen("ipc://"));
	if ((rpc = rpc_server_open(url, 16)) == NULL)
		return 1;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	pfd[0].fd = rpc_server_fd(rpc);
	pfd[0].events = POLLIN;
	pfd[1].fd = signalfd(-1, &ss, SFD_CLOEXEC);
	pfd[1].events = POLLIN;
	observe_beat("running");
	for (;;) {
		if (poll(pfd, 2, held != NULL ? 100 : 1000) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents != 0)
			break;
		observe_beat(NULL);
		rpc_server_mend(rpc);
		serve();
	}
	observe_detach("stopped");
	rpc_server_close(rpc);
	coord_db_close(store);
	fclose(out);
	return 0;
}
