/*
 * berth-bench-rtt: one message round trip, three ways, with the same payload
 * sizes.
 *
 *   berth  rpc_call() of a read-only verb (show of one ticket) against the
 *          berth-coordinator serving --home: envelope, protobuf, nng, the
 *          coordinator's loop, one sqlite read and its trace line;
 *   nng    a bare nng req/rep round trip over ipc to a forked echo process
 *          that answers with as many bytes as berth's reply had;
 *   unix   a bare AF_UNIX (SOCK_SEQPACKET) round trip to a forked process,
 *          same sizes.
 *
 * Prints p50 and p99 in microseconds as key=value lines.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "bench_util.h"
#include "rpc.h"
#include "util.h"

#define WARMUP 50

static const char *prog = "berth-bench-rtt";

static void
rtt_print(const char *name, int64_t *v, size_t n)
{
	printf("%s_n=%zu\n", name, n);
	printf("%s_p50_us=%.1f\n", name, bench_util_pct(v, n, 50) / 1e3);
	printf("%s_p99_us=%.1f\n", name, bench_util_pct(v, n, 99) / 1e3);
}

/* Measures berth's rpc; returns the packed request and reply sizes. */
static int
rtt_berth(const char *home, long count, int64_t deadline, size_t *req_len, size_t *rep_len)
{
	static char *argv[] = { "true" };
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add add = BERTH__ADD__INIT;
	Berth__Show show = BERTH__SHOW__INIT;
	Berth__Reply *rep = NULL;
	struct rpc_client *c;
	char url[4096], ticket[32];
	int64_t *v, t;
	long i, n = 0;
	int rv = -1;

	if (home_socket_url(home, url, sizeof(url)) != 0 ||
	    (c = rpc_client_open(url, "bench")) == NULL)
		return -1;
	if ((v = calloc((size_t)count, sizeof(*v))) == NULL)
		goto out;
	/* A ticket to show, held so that no supervisor could run it. */
	add.n_argv = 1;
	add.argv = argv;
	add.has_hold = add.hold = 1;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &add;
	if (rpc_call(c, &req, &rep, 10000) != 0 || !msg_is_granted(rep)) {
		fprintf(stderr, "%s: add failed\n", prog);
		goto out;
	}
	snprintf(ticket, sizeof(ticket), "%s", rep->granted->add->ticket);
	berth__reply__free_unpacked(rep, NULL);
	rep = NULL;

	show.id = ticket;
	for (i = 0; i < WARMUP + count && bench_util_now_ns() < deadline; i++) {
		berth__request__init(&req);
		req.verb_case = BERTH__REQUEST__VERB_SHOW;
		req.show = &show;
		t = bench_util_now_ns();
		if (rpc_call(c, &req, &rep, 10000) != 0) {
			fprintf(stderr, "%s: show failed\n", prog);
			goto out;
		}
		t = bench_util_now_ns() - t;
		if (i >= WARMUP)
			v[n++] = t;
		/* rpc_call fills the envelope in its own copy: size it here. */
		req.has_version = req.has_req_id = 1;
		req.version = BERTH_PROTOCOL_VERSION;
		req.req_id = (uint64_t)i + 2;
		req.actor = "bench";
		req.instance = (char *)rpc_client_instance(c);
		*req_len = berth__request__get_packed_size(&req);
		*rep_len = berth__reply__get_packed_size(rep);
		berth__reply__free_unpacked(rep, NULL);
		rep = NULL;
	}
	rtt_print("berth", v, (size_t)n);
	rv = 0;
out:
	free(v);
	rpc_client_close(c);
	return rv;
}

/* The bare nng echo: answers every request with rep_len bytes. It runs in a
 * freshly executed copy of this program, because nng's threads do not
 * survive fork(). */
static int
rtt_nng_server(const char *url, size_t rep_len)
{
	nng_socket s;
	char *buf = calloc(1, rep_len);
	void *in;
	size_t n;

	if (buf == NULL || nng_rep0_open(&s) != 0 || nng_listen(s, url, NULL, 0) != 0)
		return 1;
	for (;;) {
		if (nng_recv(s, &in, &n, NNG_FLAG_ALLOC) != 0)
			continue;
		nng_free(in, n);
		nng_send(s, buf, rep_len, 0);
	}
}

static int
rtt_nng(const char *dir, long count, int64_t deadline, size_t req_len, size_t rep_len)
{
	nng_socket s;
	char url[4200];
	char *buf = calloc(1, req_len);
	int64_t *v = calloc((size_t)count, sizeof(*v)), t;
	void *in;
	size_t n;
	long i, k = 0;
	pid_t pid;
	int rv = -1, open = 0;

	snprintf(url, sizeof(url), "ipc://%s/rtt-nng.sock", dir);
	if (buf == NULL || v == NULL)
		goto out;
	if ((pid = fork()) < 0)
		goto out;
	if (pid == 0) {
		char len[32];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(len, sizeof(len), "%zu", rep_len);
		execl("/proc/self/exe", prog, "--serve-nng", url, "--rep-bytes", len, (char *)NULL);
		_exit(127);
	}
	if (nng_req0_open(&s) != 0)
		goto kill;
	open = 1;
	/* The echo process may not listen yet: redial for up to 5 s. */
	for (i = 0; i < 500 && nng_dial(s, url, NULL, 0) != 0; i++)
		usleep(10000);
	for (i = 0; i < WARMUP + count && bench_util_now_ns() < deadline; i++) {
		t = bench_util_now_ns();
		if (nng_send(s, buf, req_len, 0) != 0 ||
		    nng_recv(s, &in, &n, NNG_FLAG_ALLOC) != 0) {
			fprintf(stderr, "%s: nng round trip failed\n", prog);
			goto kill;
		}
		t = bench_util_now_ns() - t;
		nng_free(in, n);
		if (i >= WARMUP)
			v[k++] = t;
	}
	rtt_print("nng", v, (size_t)k);
	rv = 0;
kill:
	if (open)
		nng_close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	free(buf);
	free(v);
	return rv;
}

static int
rtt_unix(long count, int64_t deadline, size_t req_len, size_t rep_len)
{
	char *buf = calloc(1, req_len > rep_len ? req_len : rep_len);
	int64_t *v = calloc((size_t)count, sizeof(*v)), t;
	int sv[2] = { -1, -1 }, rv = -1;
	long i, k = 0;
	pid_t pid;

	if (buf == NULL || v == NULL || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		goto out;
	if ((pid = fork()) < 0)
		goto out;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		while (read(sv[1], buf, req_len) > 0)
			if (write(sv[1], buf, rep_len) != (ssize_t)rep_len)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	sv[1] = -1;
	for (i = 0; i < WARMUP + count && bench_util_now_ns() < deadline; i++) {
		t = bench_util_now_ns();
		if (write(sv[0], buf, req_len) != (ssize_t)req_len ||
		    read(sv[0], buf, rep_len) != (ssize_t)rep_len) {
			fprintf(stderr, "%s: unix round trip failed: %s\n", prog, strerror(errno));
			break;
		}
		t = bench_util_now_ns() - t;
		if (i >= WARMUP)
			v[k++] = t;
	}
	close(sv[0]);
	sv[0] = -1;
	waitpid(pid, NULL, 0);
	rtt_print("unix", v, (size_t)k);
	rv = 0;
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	free(buf);
	free(v);
	return rv;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "count", required_argument, NULL, 'n' },
		{ "deadline-s", required_argument, NULL, 'd' },
		{ "serve-nng", required_argument, NULL, 'S' },
		{ "rep-bytes", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *home = NULL, *serve = NULL;
	long count = 2000, deadline_s = 60;
	size_t req_len = 0, rep_len = 0;
	int64_t deadline;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': home = optarg; break;
		case 'n': count = bench_util_num(prog, "--count", optarg); break;
		case 'd': deadline_s = bench_util_num(prog, "--deadline-s", optarg); break;
		case 'S': serve = optarg; break;
		case 'R': rep_len = (size_t)bench_util_num(prog, "--rep-bytes", optarg); break;
		case 'h':
			printf("usage: %s --home DIR [--count N] [--deadline-s S]\n", prog);
			return 0;
		default:
			fprintf(stderr, "usage: %s --home DIR [--count N] [--deadline-s S]\n",
				prog);
			return 2;
		}
	}
	if (serve != NULL)
		return rtt_nng_server(serve, rep_len);
	if (home == NULL) {
		fprintf(stderr, "usage: %s --home DIR [--count N] [--deadline-s S]\n", prog);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	deadline = bench_util_now_ns() + (int64_t)deadline_s * 1000000000;
	if (rtt_berth(home, count, deadline, &req_len, &rep_len) != 0)
		return 1;
	printf("req_bytes=%zu\nrep_bytes=%zu\n", req_len, rep_len);
	if (rtt_nng(home, count, deadline, req_len, rep_len) != 0)
		return 1;
	if (rtt_unix(count, deadline, req_len, rep_len) != 0)
		return 1;
	return 0;
}
