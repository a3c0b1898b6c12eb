/*
 * libFuzzer harness: the shim's exit record parser (common/exitrec.c).
 * The input is the record's text. What the parser accepts must be a
 * record the shim could have written: exactly one of code and signal, both
 * within 0..255, and formatting it again (exitrec_format, what
 * exitrec_write writes) must parse back to the same record. One input in
 * sixteen also goes through a real file and exitrec_read, which must give
 * the same verdict and record as the buffer parser.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitrec.h"
#include "log.h"

static char dir[96];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
cleanup(void)
{
	char p[128];

	snprintf(p, sizeof p, "%s/exit", dir);
	unlink(p);
	rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	(void)argc;
	(void)argv;
	log_set_level((enum log_level)(LOG_ERROR + 1));
	snprintf(dir, sizeof dir, "%s/berth-fuzz-exitrec.XXXXXX", t);
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(cleanup);
	return 0;
}

static int
same(const struct exit_record *a, const struct exit_record *b)
{
	return a->has_code == b->has_code && a->has_signal == b->has_signal &&
	       (!a->has_code || a->code == b->code) && (!a->has_signal || a->signal == b->signal) &&
	       a->started_ms == b->started_ms && a->ended_ms == b->ended_ms &&
	       a->utime_us == b->utime_us && a->stime_us == b->stime_us &&
	       a->maxrss_kb == b->maxrss_kb && a->stragglers == b->stragglers &&
	       a->disk_full == b->disk_full;
}

static void
through_file(const uint8_t *data, size_t size, int rc, const struct exit_record *r)
{
	struct exit_record f;
	char p[128];
	int fd, frc;

	snprintf(p, sizeof p, "%s/exit", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) < 0)
		abort();
	frc = exitrec_read(dir, &f);
	if (frc != rc) {
		fprintf(stderr, "exitrec_read says %d, exitrec_parse %d\n", frc, rc);
		abort();
	}
	if (rc == 0 && !same(r, &f)) {
		fprintf(stderr, "exitrec_read and exitrec_parse read different records\n");
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct exit_record r, back;
	char text[EXITREC_MAX];
	int rc, n;

	memset(&r, 0x5a, sizeof r);
	rc = exitrec_parse((const char *)data, size, &r);
	/* -EINPROGRESS: a reservation (the shim's "pending 1", or a file
	 * whose content never reached the disk). */
	if (rc != 0 && rc != -EINVAL && rc != -EINPROGRESS)
		abort();
	if (size > 0 && (data[0] & 0x0f) == 0)
		through_file(data, size, rc, &r);
	if (rc != 0)
		return 0;
	if (r.has_code == r.has_signal || (r.has_code && (r.code < 0 || r.code > 255)) ||
	    (r.has_signal && (r.signal < 0 || r.signal > 255))) {
		fprintf(stderr, "accepted a record the shim cannot write\n");
		abort();
	}
	n = exitrec_format(&r, text, sizeof text);
	if (n <= 0 || exitrec_parse(text, (size_t)n, &back) != 0 || !same(&r, &back)) {
		fprintf(stderr, "an accepted record does not format and parse back\n");
		abort();
	}
	return 0;
}
