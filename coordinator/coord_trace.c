/*
 * The coordinator's trace: trace/trace.jsonl, one line per decided request.
 *
 * The order of the lines is the order in which the coordinator's single loop
 * executed the requests, which is the arbitration order: when two actors
 * race for the same run, the trace shows who came first. seq numbers the
 * lines and goes on across restarts, so a reader following the file can tell
 * a restart from a loss.
 *
 * Each line is formatted in full and appended with one write(2) on an
 * O_APPEND descriptor, so a crash leaves at most one torn line at the end.
 * At open, that torn line is cut off (only this process writes the file: it
 * holds the coordinator lock), so the next line starts on a line of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "coord_trace.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define TRACE_TAIL 65536 /* how far back to look for the last complete line */

struct coord_trace {
	int fd;
	uint64_t seq;
	char path[PATH_MAX];
};

const char *
coord_decision_name(enum coord_decision d)
{
	switch (d) {
	case COORD_GRANTED: return "granted";
	case COORD_DENIED: return "denied";
	case COORD_ERROR: return "error";
	case COORD_REPLAYED: return "replayed";
	}
	return "error";
}

int64_t
coord_trace_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
coord_trace_rec_init(struct coord_trace_rec *r, const Berth__Request *req, const char *verb,
		     enum coord_decision d, int64_t t0_us)
{
	memset(r, 0, sizeof *r);
	r->ts_ms = clock_wall_ms();
	if (req != NULL) {
		r->from = req->actor;
		r->instance = req->instance;
		r->req_id = req->has_req_id ? req->req_id : 0;
	}
	r->verb = verb;
	r->decision = coord_decision_name(d);
	r->latency_us = coord_trace_now_us() - t0_us;
}

/* Reads the seq of the last complete line, cutting off a torn tail. */
static int
trace_recover(struct coord_trace *t)
{
	struct stat st;
	char *buf = NULL, *line, *end;
	off_t off;
	size_t len;
	ssize_t n;
	unsigned long long seq;
	int rv = -1;

	if (fstat(t->fd, &st) != 0) {
		log_error("trace: stat %s: %s", t->path, strerror(errno));
		return -1;
	}
	if (st.st_size == 0)
		return 0;
	off = st.st_size > TRACE_TAIL ? st.st_size - TRACE_TAIL : 0;
	len = (size_t)(st.st_size - off);
	if ((buf = malloc(len + 1)) == NULL) {
		log_error("trace: out of memory");
		return -1;
	}
	if ((n = pread(t->fd, buf, len, off)) != (ssize_t)len) {
		log_error("trace: read %s: %s", t->path, n < 0 ? strerror(errno) : "short read");
		goto out;
	}
	buf[len] = '\0';

	/* end: one past the last newline; what follows it is torn. */
	end = buf + len;
	while (end > buf && end[-1] != '\n')
		end--;
	if (end != buf + len) {
		log_warn("trace: cutting a torn last line of %zu bytes off %s",
			 (size_t)(buf + len - end), t->path);
		if (ftruncate(t->fd, off + (end - buf)) != 0) {
			log_error("trace: truncate %s: %s", t->path, strerror(errno));
			goto out;
		}
	}

	/* Walk back over complete lines to the last one that carries a seq. */
	while (end > buf) {
		end[-1] = '\0'; /* the newline */
		line = strrchr(buf, '\n');
		line = line != NULL ? line + 1 : buf;
		if (line != buf || off == 0) {
			if (sscanf(line, "{\"seq\":%llu", &seq) == 1) {
				t->seq = seq;
				break;
			}
			log_warn("trace: skipping an unreadable line in %s", t->path);
		}
		end = line;
	}
	rv = 0;
out:
	free(buf);
	return rv;
}

int
coord_trace_open(struct coord_trace **out, const char *home)
{
	struct coord_trace *t;
	char dir[PATH_MAX];

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		log_error("trace: out of memory");
		return -1;
	}
	t->fd = -1;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/trace", home) >= sizeof(dir) ||
	    (size_t)snprintf(t->path, sizeof(t->path), "%s/trace.jsonl", dir) >= sizeof(t->path)) {
		log_error("trace: path too long under %s", home);
		goto fail;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		log_error("trace: mkdir %s: %s", dir, strerror(errno));
		goto fail;
	}
	if ((t->fd = open(t->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		log_error("trace: open %s: %s", t->path, strerror(errno));
		goto fail;
	}
	if (trace_recover(t) != 0)
		goto fail;
	*out = t;
	return 0;
fail:
	coord_trace_close(t);
	return -1;
}

void
coord_trace_close(struct coord_trace *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

uint64_t
coord_trace_seq(const struct coord_trace *t)
{
	return t->seq;
}

char *
coord_trace_format(const struct coord_trace_rec *r, uint64_t seq)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&line, &len)) == NULL) {
		log_error("trace: open_memstream: %s", strerror(errno));
		return NULL;
	}
	fprintf(f, "{\"seq\":%" PRIu64 ",\"ts_ms\":%" PRId64 ",\"from\":", seq, r->ts_ms);
	json_str(f, r->from);
	fputs(",\"instance\":", f);
	json_str(f, r->instance);
	fprintf(f, ",\"req_id\":%" PRIu64 ",\"verb\":", r->req_id);
	json_str(f, r->verb);
	fputs(",\"ticket\":", f);
	json_str(f, r->ticket);
	fputs(",\"run\":", f);
	json_str(f, r->run);
	fputs(",\"decision\":", f);
	json_str(f, r->decision);
	fputs(",\"reason\":", f);
	json_str(f, r->reason);
	if (r->detail != NULL && r->detail[0] != '\0') {
		fputs(",\"detail\":", f);
		json_str(f, r->detail);
	}
	if (r->lease_expires_ms > 0) {
		fprintf(f, ",\"lease_expires_ms\":%" PRId64 ",\"lease_renewed_ms\":%" PRId64,
			r->lease_expires_ms, r->lease_renewed_ms);
		fputs(",\"lease_owner\":", f);
		json_str(f, r->lease_owner);
	}
	fprintf(f, ",\"latency_us\":%" PRId64, r->latency_us);
	if (r->caller != NULL) {
		fputs(",\"caller\":", f);
		json_str(f, r->caller);
	}
	if (r->fused != NULL) {
		fputs(",\"fused\":", f);
		json_str(f, r->fused);
	}
	fputs("}\n", f);
	if (fclose(f) != 0) {
		log_error("trace: formatting a line failed");
		free(line);
		return NULL;
	}
	return line;
}

/* One write: a line is whole in the file or (after a crash) torn at the
 * very end, never interleaved. */
static int
trace_append(struct coord_trace *t, const char *line)
{
	size_t len = strlen(line);
	ssize_t n = write(t->fd, line, len);

	if (n != (ssize_t)len) {
		log_error("trace: append to %s: %s", t->path,
			  n < 0 ? strerror(errno) : "short write");
		return -1;
	}
	return 0;
}

/* How many lines text holds (each ends in a newline). */
static uint64_t
trace_nlines(const char *text)
{
	uint64_t n = 0;

	for (; (text = strchr(text, '\n')) != NULL; text++)
		n++;
	return n;
}

int
coord_trace_append(struct coord_trace *t, uint64_t seq, const char *line)
{
	uint64_t n = trace_nlines(line);

	if (seq != t->seq + 1) {
		log_error("trace: a line for seq %" PRIu64 " after seq %" PRIu64 "; not written",
			  seq, t->seq);
		return -1;
	}
	if (n == 0 || trace_append(t, line) != 0)
		return -1;
	t->seq = seq + n - 1;
	return 0;
}

int
coord_trace_write(struct coord_trace *t, const struct coord_trace_rec *r)
{
	char *line = coord_trace_format(r, t->seq + 1);
	int rv = line != NULL ? coord_trace_append(t, t->seq + 1, line) : -1;

	free(line);
	return rv;
}

/* One kept line (restore's rule for each). */
static int
trace_restore_line(struct coord_trace *t, uint64_t seq, const char *line)
{
	unsigned long long got;
	size_t len = strlen(line);

	if (seq <= t->seq)
		return 0;
	if (seq != t->seq + 1 || len == 0 || line[len - 1] != '\n' ||
	    sscanf(line, "{\"seq\":%llu", &got) != 1 || got != seq) {
		log_warn("trace: the database's last decision (seq %" PRIu64 ") does not follow "
			 "%s (seq %" PRIu64 "); not restored",
			 seq, t->path, t->seq);
		return 0;
	}
	if (coord_trace_append(t, seq, line) != 0)
		return -1;
	log_warn("trace: restored the line of decision %" PRIu64 " to %s (the coordinator "
		 "stopped between its commit and its trace line)",
		 seq, t->path);
	return 1;
}

/* The kept lines are a group's (one or more, coord_exec.c), in seq order
 * from seq on: each is restored by the rule for one, in order. */
int
coord_trace_restore(struct coord_trace *t, uint64_t seq, const char *lines)
{
	const char *p = lines, *nl;
	char *one;
	int rc, any = 0;

	while ((nl = strchr(p, '\n')) != NULL) {
		if ((one = strndup(p, (size_t)(nl - p) + 1)) == NULL) {
			log_error("trace: out of memory restoring lines");
			return -1;
		}
		rc = trace_restore_line(t, seq, one);
		free(one);
		if (rc < 0)
			return -1;
		any |= rc;
		seq++;
		p = nl + 1;
	}
	if (*p != '\0' && trace_restore_line(t, seq, p) < 0)
		return -1;
	return any;
}
