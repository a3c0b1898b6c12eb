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
 *
 * A line is in the file whole or not at all. A write that fails, or writes
 * only part (a full disk), is cut back to the last whole line at once, and
 * the line waits, with every line after it, in order, until the file takes
 * them: each decision's seq is taken when it is decided and never given to
 * another, so a line written late still says where it belongs. What waits
 * is bounded (TRACE_WAIT_MAX bytes; beyond it the oldest waiting lines are
 * dropped, which shows as a gap in seq); the database keeps the line of the
 * last decision besides (coord_trace_restore).
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

#define TRACE_TAIL     65536              /* how far back to look for the last complete line */
#define TRACE_WAIT_MAX (16 * 1024 * 1024) /* lines kept while the file refuses them */

struct trace_wait {
	uint64_t seq;
	char *line;
	size_t len;
};

struct coord_trace {
	int fd;
	uint64_t seq;            /* the last seq taken: its line is in the file or waits */
	off_t size;              /* the file's size, which ends with a whole line */
	struct trace_wait *wait; /* lines not yet written, oldest first */
	size_t nwait, capwait, waitbytes;
	uint64_t dropped; /* waiting lines given up since the last report */
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
	t->size = st.st_size;
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
		t->size = off + (end - buf);
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
	size_t i;

	if (t == NULL)
		return;
	if (t->fd >= 0 && coord_trace_flush(t) > 0)
		log_error("trace: %zu line%s could not be written to %s and are lost (the "
			  "database keeps the last decision's)",
			  t->nwait, t->nwait == 1 ? "" : "s", t->path);
	for (i = 0; i < t->nwait; i++)
		free(t->wait[i].line);
	free(t->wait);
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

/* One write: a line is whole in the file or not there. A failed or short
 * write (ENOSPC) is cut back at once to the last whole line, so the next
 * line never continues a torn one. 0, or -1 (logged once per outage). */
static int
trace_put(struct coord_trace *t, const char *line, size_t len)
{
	ssize_t n = write(t->fd, line, len);
	int err = errno;

	if (n == (ssize_t)len) {
		t->size += (off_t)len;
		return 0;
	}
	if (n > 0 && ftruncate(t->fd, t->size) != 0)
		log_error("trace: cannot cut %s back to its last whole line: %s", t->path,
			  strerror(errno));
	if (t->nwait == 0)
		log_error("trace: append to %s: %s; lines wait until it takes them", t->path,
			  n < 0 ? strerror(err) : "short write");
	return -1;
}

int
coord_trace_flush(struct coord_trace *t)
{
	size_t done = 0, late = t->nwait;

	if (t->nwait == 0)
		return 0;
	if (t->dropped > 0) {
		log_error("trace: %" PRIu64 " waiting line%s dropped (more than %d bytes "
			  "waited): seq has a gap in %s",
			  t->dropped, t->dropped == 1 ? "" : "s", TRACE_WAIT_MAX, t->path);
		t->dropped = 0;
	}
	while (done < t->nwait && trace_put(t, t->wait[done].line, t->wait[done].len) == 0) {
		t->waitbytes -= t->wait[done].len;
		free(t->wait[done].line);
		done++;
	}
	memmove(t->wait, t->wait + done, (t->nwait - done) * sizeof(*t->wait));
	t->nwait -= done;
	if (done > 0 && t->nwait == 0)
		log_warn("trace: %zu line%s written late to %s, in order", late,
			 late == 1 ? "" : "s", t->path);
	return (int)(t->nwait > INT_MAX ? INT_MAX : t->nwait);
}

/* Keeps a line the file did not take, after those already waiting. */
static int
trace_keep(struct coord_trace *t, uint64_t seq, const char *line, size_t len)
{
	struct trace_wait *w;

	while (t->nwait > 0 && t->waitbytes + len > TRACE_WAIT_MAX) {
		t->waitbytes -= t->wait[0].len;
		free(t->wait[0].line);
		memmove(t->wait, t->wait + 1, (t->nwait - 1) * sizeof(*t->wait));
		t->nwait--;
		t->dropped++;
	}
	if (t->nwait == t->capwait) {
		size_t cap = t->capwait ? 2 * t->capwait : 64;

		if ((w = realloc(t->wait, cap * sizeof(*w))) == NULL)
			goto nomem;
		t->wait = w;
		t->capwait = cap;
	}
	w = &t->wait[t->nwait];
	if ((w->line = malloc(len)) == NULL)
		goto nomem;
	memcpy(w->line, line, len);
	w->len = len;
	w->seq = seq;
	t->nwait++;
	t->waitbytes += len;
	return 0;
nomem:
	t->dropped++;
	log_error("trace: out of memory keeping the line of seq %" PRIu64, seq);
	return -1;
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
	size_t len = strlen(line);
	uint64_t n = trace_nlines(line);

	if (seq != t->seq + 1) {
		log_error("trace: a line for seq %" PRIu64 " after seq %" PRIu64 "; not written",
			  seq, t->seq);
		return -1;
	}
	if (n == 0)
		return -1;
	/* The seqs are taken now, whether the lines are written now or
	 * later (together: a group's lines are one write, whole or not). */
	t->seq = seq + n - 1;
	if (t->nwait == 0 && trace_put(t, line, len) == 0)
		return 0;
	if (trace_keep(t, seq, line, len) != 0)
		return -1;
	coord_trace_flush(t);
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
	if (len == 0 || line[len - 1] != '\n' || sscanf(line, "{\"seq\":%llu", &got) != 1 ||
	    got != seq) {
		log_warn("trace: the database's last decision (seq %" PRIu64 ") does not follow "
			 "%s (seq %" PRIu64 "); not restored",
			 seq, t->path, t->seq);
		/* Its seq was taken all the same: never given again. */
		t->seq = seq;
		return 0;
	}
	/* Lines between the file's last and the kept one waited in a
	 * coordinator that is gone: they are lost, and the gap in seq says so. */
	if (seq != t->seq + 1)
		log_warn("trace: the lines of seq %" PRIu64 "..%" PRIu64 " never reached %s (the "
			 "file refused them until the coordinator stopped); the last decision's "
			 "is restored",
			 t->seq + 1, seq - 1, t->path);
	t->seq = seq - 1;
	if (coord_trace_append(t, seq, line) != 0)
		return -1;
	log_warn("trace: restored the line of decision %" PRIu64 " to %s (the coordinator "
		 "stopped before its trace line was written)",
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
