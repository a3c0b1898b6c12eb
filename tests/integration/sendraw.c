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
 *
 * Output, one line: "req_id=N granted|denied: ...|error C: ..." and
 * " replayed" when the reply says so. Exit 0 when a reply came, 1 if not,
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

#include "rpc.h"

static int
usage(void)
{
	fprintf(stderr,
		"usage: berth-sendraw URL hex HEXBYTES | zeros N | version V | noactor | hangup [N]\n");
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
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
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
	int rv;

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
	nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 10000);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 10000);
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
	printf("req_id=%llu %s%s\n", (unsigned long long)r->req_id, text,
	       r->has_replayed && r->replayed ? " replayed" : "");
	berth__reply__free_unpacked(r, NULL);
	nng_free(in, inlen);
	nng_close(s);
	free(buf);
	return 0;
}
