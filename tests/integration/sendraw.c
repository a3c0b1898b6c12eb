/*
 * berth-sendraw: a test client that puts exact bytes on the coordinator's
 * socket with a real nng REQ socket, and prints the decoded reply. The
 * integration tests use it for what no well-behaved client sends.
 *
 *   berth-sendraw URL hex HEXBYTES     raw bytes ("" for an empty message)
 *   berth-sendraw URL zeros N          N zero bytes (oversized requests)
 *   berth-sendraw URL version V        a well-formed `list` with version V
 *   berth-sendraw URL noactor          a `list` without a sender actor
 *   berth-sendraw URL hangup [N]       connect and hang up before the SP
 *                                      handshake, as a client killed just
 *                                      after connecting does, N times in a
 *                                      row (1); prints nothing
 *   berth-sendraw URL send VERB [KEY=VALUE...]
 *                                      one well-formed request of any verb,
 *                                      with the envelope and fields the test
 *                                      names: actor= instance= req_id=
 *                                      token= run= ticket= code= signal=
 *                                      norecord=1 outcome= reason=
 *                                      new_owner= item= owner= wait_ms=
 *                                      slots= (what a misbehaving job sends);
 *                                      the fused forms (DESIGN §4): shim=PID
 *                                      on a claim (the waiting shim: that
 *                                      process's identity), settle=OUTCOME
 *                                      on a record_exit ("-": none named);
 *                                      timeout_ms= how long to wait for the
 *                                      reply (10000), resending the same
 *                                      request on every new connection, as
 *                                      a sender riding out a coordinator
 *                                      restart does
 *
 * Output, one line: "req_id=N granted|denied: ...|error C: ..." and
 * " replayed" when the reply says so; a granted claim adds " run=R
 * token=T" (T empty when the reply carries none), and a fused verb's answer
 * " fused=granted|denied: ...|error C: ...". Exit 0 when a reply came, 1 if not,
 * 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "ident.h"
#include "rpc.h"

static int
usage(void)
{
	fprintf(stderr,
		"usage: berth-sendraw URL hex HEXBYTES | zeros N | version V | noactor | hangup [N]\n"
		"       berth-sendraw URL send VERB [KEY=VALUE...]\n");
	return 2;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Connects to an ipc:// URL and closes at once, n times. */
static int
hangup(const char *url, long n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc = 0;

	if (strncmp(url, "ipc://", 6) != 0 || strlen(url + 6) >= sizeof(sa.sun_path) || n < 1)
		return usage();
	strcpy(sa.sun_path, url + 6);
	while (n-- > 0 && rc == 0) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) {
			perror("berth-sendraw: socket");
			return 1;
		}
		if ((rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) != 0)
			perror("berth-sendraw: connect");
		close(fd);
	}
	return rc == 0 ? 0 : 1;
}

/* A `list` request with the envelope the test asks for. */
static uint8_t *
list_request(uint32_t version, int with_actor, size_t *len)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__List list = BERTH__LIST__INIT;
	uint8_t *buf;

	req.has_version = 1;
	req.version = version;
	req.actor = with_actor ? "test" : NULL;
	req.instance = "5e5e5e5e5e5e5e5e";
	req.has_req_id = 1;
	req.req_id = 77;
	req.verb_case = BERTH__REQUEST__VERB_LIST;
	req.list = &list;
	*len = berth__request__get_packed_size(&req);
	if ((buf = malloc(*len + 1)) != NULL)
		berth__request__pack(&req, buf);
	return buf;
}

/* The value of key in the KEY=VALUE arguments, or def. */
static const char *
arg(int argc, char **argv, const char *key, const char *def)
{
	size_t n = strlen(key);
	int i;

	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

/* One request of any verb, as a job that forges messages would send it. */
static uint8_t *
send_request(const char *verb, int argc, char **argv, size_t *len)
{
	static Berth__Claim claim = BERTH__CLAIM__INIT;
	static Berth__Start start = BERTH__START__INIT;
	static Berth__Renew renew = BERTH__RENEW__INIT;
	static Berth__Readopt readopt = BERTH__READOPT__INIT;
	static Berth__RecordExit rx = BERTH__RECORD_EXIT__INIT;
	static Berth__Abandon abandon = BERTH__ABANDON__INIT;
	static Berth__Settle settle = BERTH__SETTLE__INIT;
	static Berth__Hello hello = BERTH__HELLO__INIT;
	static Berth__Scan scan = BERTH__SCAN__INIT;
	static Berth__MarkStop mark = BERTH__MARK_STOP__INIT;
	static Berth__SeatReap seat_reap = BERTH__SEAT_REAP__INIT;
	static Berth__SeatRelease seat = BERTH__SEAT_RELEASE__INIT;
	static Berth__WorkerRef wref = BERTH__WORKER_REF__INIT;
	static Berth__Note note = BERTH__NOTE__INIT;
	static Berth__Progress progress = BERTH__PROGRESS__INIT;
	static Berth__Show show = BERTH__SHOW__INIT;
	static Berth__Ident shim = BERTH__IDENT__INIT;
	static Berth__Settle fsettle = BERTH__SETTLE__INIT;
	static struct ident self;
	Berth__Request req = BERTH__REQUEST__INIT;
	char *run = (char *)arg(argc, argv, "run", "");
	char *ticket = (char *)arg(argc, argv, "ticket", "");
	uint8_t *buf;

	req.has_version = 1;
	req.version = BERTH_PROTOCOL_VERSION;
	req.actor = (char *)arg(argc, argv, "actor", "supervisor");
	req.instance = (char *)arg(argc, argv, "instance", "5e5e5e5e5e5e5e5e");
	req.has_req_id = 1;
	req.req_id = strtoull(arg(argc, argv, "req_id", "1"), NULL, 10);
	req.token = (char *)arg(argc, argv, "token", NULL);
	if (strcmp(verb, "claim") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_CLAIM;
		req.claim = &claim;
		claim.ticket = ticket;
		claim.has_wait_ms = 1;
		claim.wait_ms = (uint32_t)strtoul(arg(argc, argv, "wait_ms", "0"), NULL, 10);
		if (arg(argc, argv, "shim", NULL) != NULL) {
			if (ident_read((pid_t)atoi(arg(argc, argv, "shim", "")), &self) != 0)
				return NULL;
			shim.boot_id = self.boot_id;
			shim.has_pid = shim.has_start_time = shim.has_pgid = 1;
			shim.pid = self.pid;
			shim.start_time = self.start_time;
			shim.pgid = self.pgid;
			claim.shim = &shim;
		}
	} else if (strcmp(verb, "start") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_START;
		req.start = &start;
		start.run_id = run;
	} else if (strcmp(verb, "renew") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_RENEW;
		req.renew = &renew;
		renew.run_id = run;
		renew.ticket = ticket;
	} else if (strcmp(verb, "readopt") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_READOPT;
		req.readopt = &readopt;
		readopt.run_id = run;
		readopt.ticket = ticket;
		readopt.new_owner = (char *)arg(argc, argv, "new_owner", "nobody");
	} else if (strcmp(verb, "record_exit") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_RECORD_EXIT;
		req.record_exit = &rx;
		rx.run_id = run;
		rx.has_has_record = 1;
		rx.has_record = strcmp(arg(argc, argv, "norecord", "0"), "1") != 0;
		rx.has_exit_code = arg(argc, argv, "signal", NULL) == NULL;
		rx.exit_code = atoi(arg(argc, argv, "code", "0"));
		rx.has_signal = !rx.has_exit_code;
		rx.signal = atoi(arg(argc, argv, "signal", "0"));
		if (arg(argc, argv, "settle", NULL) != NULL) {
			fsettle.run_id = run;
			if (strcmp(arg(argc, argv, "settle", ""), "-") != 0)
				fsettle.outcome = (char *)arg(argc, argv, "settle", "");
			fsettle.has_capture_complete = fsettle.capture_complete = 1;
			rx.settle = &fsettle;
		}
	} else if (strcmp(verb, "abandon") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_ABANDON;
		req.abandon = &abandon;
		abandon.run_id = run;
		abandon.reason = (char *)arg(argc, argv, "reason", "forged");
	} else if (strcmp(verb, "settle") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SETTLE;
		req.settle = &settle;
		settle.run_id = run;
		settle.outcome = (char *)arg(argc, argv, "outcome", "");
		settle.reason = (char *)arg(argc, argv, "reason", NULL);
	} else if (strcmp(verb, "hello") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_HELLO;
		req.hello = &hello;
		hello.has_slots = 1;
		hello.slots = (uint32_t)strtoul(arg(argc, argv, "slots", "1"), NULL, 10);
	} else if (strcmp(verb, "scan") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SCAN;
		req.scan = &scan;
	} else if (strcmp(verb, "mark_stop") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_MARK_STOP;
		req.mark_stop = &mark;
		mark.run_id = run;
		mark.reason = (char *)arg(argc, argv, "reason", "cancel");
	} else if (strcmp(verb, "seat_reap") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_REAP;
		req.seat_reap = &seat_reap;
	} else if (strcmp(verb, "seat_force_release") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SEAT_FORCE_RELEASE;
		req.seat_force_release = &seat;
		seat.item = (char *)arg(argc, argv, "item", "");
		seat.owner = (char *)arg(argc, argv, "owner", NULL);
	} else if (strcmp(verb, "heartbeat") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_HEARTBEAT;
		req.heartbeat = &wref;
		wref.run_id = run;
	} else if (strcmp(verb, "note") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_NOTE;
		req.note = &note;
		note.run_id = run;
		note.text = (char *)arg(argc, argv, "text", "forged note");
	} else if (strcmp(verb, "progress") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_PROGRESS;
		req.progress = &progress;
		progress.run_id = run;
		progress.has_index = progress.has_total = 1;
		progress.index = 1;
		progress.total = 2;
		progress.label = (char *)arg(argc, argv, "label", "forged");
	} else if (strcmp(verb, "show") == 0) {
		req.verb_case = BERTH__REQUEST__VERB_SHOW;
		req.show = &show;
		show.id = ticket[0] ? ticket : run;
	} else {
		return NULL;
	}
	*len = berth__request__get_packed_size(&req);
	if ((buf = malloc(*len + 1)) != NULL)
		berth__request__pack(&req, buf);
	return buf;
}

int
main(int argc, char **argv)
{
	uint8_t *buf = NULL;
	size_t len = 0, i;
	nng_socket s;
	void *in = NULL;
	size_t inlen = 0;
	Berth__Reply *r;
	char text[1024];
	int rv, timeout_ms;

	if (argc < 3)
		return usage();
	if (strcmp(argv[2], "hangup") == 0 && (argc == 3 || argc == 4))
		return hangup(argv[1], argc == 4 ? strtol(argv[3], NULL, 10) : 1);
	if (strcmp(argv[2], "hex") == 0 && argc == 4) {
		len = strlen(argv[3]) / 2;
		buf = malloc(len + 1);
		for (i = 0; buf != NULL && i < len; i++) {
			int hi = hexval(argv[3][2 * i]), lo = hexval(argv[3][2 * i + 1]);

			if (hi < 0 || lo < 0)
				return usage();
			buf[i] = (uint8_t)(hi << 4 | lo);
		}
	} else if (strcmp(argv[2], "zeros") == 0 && argc == 4) {
		len = strtoul(argv[3], NULL, 10);
		buf = calloc(1, len + 1);
	} else if (strcmp(argv[2], "version") == 0 && argc == 4) {
		buf = list_request((uint32_t)strtoul(argv[3], NULL, 10), 1, &len);
	} else if (strcmp(argv[2], "noactor") == 0 && argc == 3) {
		buf = list_request(BERTH_PROTOCOL_VERSION, 0, &len);
	} else if (strcmp(argv[2], "send") == 0 && argc >= 4) {
		if ((buf = send_request(argv[3], argc - 4, argv + 4, &len)) == NULL)
			return usage();
	} else {
		return usage();
	}
	if (buf == NULL) {
		fprintf(stderr, "berth-sendraw: out of memory\n");
		return 1;
	}

	if ((rv = nng_req0_open(&s)) != 0 || (rv = nng_dial(s, argv[1], NULL, 0)) != 0) {
		fprintf(stderr, "berth-sendraw: %s: %s\n", argv[1], nng_strerror(rv));
		return 1;
	}
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
	timeout_ms = 10000;
	if (strcmp(argv[2], "send") == 0)
		timeout_ms = atoi(arg(argc - 4, argv + 4, "timeout_ms", "10000"));
	nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, timeout_ms);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, timeout_ms);
	if ((rv = nng_send(s, buf, len, 0)) != 0 ||
	    (rv = nng_recv(s, &in, &inlen, NNG_FLAG_ALLOC)) != 0) {
		fprintf(stderr, "berth-sendraw: no reply: %s\n", nng_strerror(rv));
		return 1;
	}
	if ((r = berth__reply__unpack(NULL, inlen, in)) == NULL) {
		fprintf(stderr, "berth-sendraw: the reply (%zu bytes) does not decode\n", inlen);
		return 1;
	}
	msg_describe(r, text, sizeof(text));
	printf("req_id=%llu %s%s", (unsigned long long)r->req_id, text,
	       r->has_replayed && r->replayed ? " replayed" : "");
	if (msg_is_granted(r) && r->granted->payload_case == BERTH__GRANTED__PAYLOAD_CLAIM)
		printf(" run=%s token=%s",
		       r->granted->claim->run_id ? r->granted->claim->run_id : "",
		       r->granted->claim->token ? r->granted->claim->token : "");
	if (r->fused != NULL) {
		msg_describe(r->fused, text, sizeof(text));
		printf(" fused=%s", text);
	}
	printf("\n");
	berth__reply__free_unpacked(r, NULL);
	nng_free(in, inlen);
	nng_close(s);
	free(buf);
	return 0;
}
