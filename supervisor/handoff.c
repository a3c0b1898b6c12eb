#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handoff.h"
#include "log.h"

static size_t
handoff_strs_len(char *const *v, size_t n)
{
	size_t len = 0, i;

	for (i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	return len;
}

static char *
handoff_put(char *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return p + n;
}

int
handoff_encode(const char *run_id, const char *workdir, int isolate, char *const *argv, size_t argc,
	       char *const *env, size_t envc, char **out, size_t *len)
{
	char nums[2][24], *buf, *p;
	size_t body;
	uint32_t n32;

	*out = NULL;
	*len = 0;
	if (run_id == NULL || run_id[0] == '\0' || argc == 0 || argv == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (workdir == NULL)
		workdir = "";
	snprintf(nums[0], sizeof(nums[0]), "%zu", argc);
	snprintf(nums[1], sizeof(nums[1]), "%zu", envc);
	body = strlen(run_id) + 1 + strlen(workdir) + 1 + 2 + strlen(nums[0]) + 1 +
	       handoff_strs_len(argv, argc) + strlen(nums[1]) + 1 + handoff_strs_len(env, envc);
	if (body > HANDOFF_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((buf = malloc(HANDOFF_HDR + body)) == NULL)
		return -1;
	memcpy(buf, HANDOFF_MAGIC, 4);
	n32 = (uint32_t)body;
	memcpy(buf + 4, &n32, sizeof(n32));
	p = buf + HANDOFF_HDR;
	p = handoff_put(p, run_id);
	p = handoff_put(p, workdir);
	p = handoff_put(p, isolate ? "1" : "0");
	p = handoff_put(p, nums[0]);
	for (size_t i = 0; i < argc; i++)
		p = handoff_put(p, argv[i]);
	p = handoff_put(p, nums[1]);
	for (size_t i = 0; i < envc; i++)
		p = handoff_put(p, env[i]);
	*out = buf;
	*len = HANDOFF_HDR + body;
	return 0;
}

/* The next string of the body at *p, or NULL when the body ends first. */
static char *
handoff_next(char **p, char *end)
{
	char *s = *p, *nul;

	if (s >= end || (nul = memchr(s, '\0', (size_t)(end - s))) == NULL)
		return NULL;
	*p = nul + 1;
	return s;
}

/* A count of strings still to come, each at least one byte (its NUL). */
static int
handoff_count(char **p, char *end, size_t *n)
{
	char *s = handoff_next(p, end), *e;
	unsigned long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno != 0 || *e != '\0' || v > (unsigned long long)(end - *p))
		return -1;
	*n = (size_t)v;
	return 0;
}

static char **
handoff_vec(char **p, char *end, size_t n)
{
	char **v = calloc(n + 1, sizeof(*v));
	size_t i;

	if (v == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((v[i] = handoff_next(p, end)) == NULL) {
			free(v);
			return NULL;
		}
	}
	return v;
}

int
handoff_parse(char *buf, size_t len, struct handoff *h)
{
	char *p = buf, *end = buf + len, *iso;
	size_t argc, envc;

	memset(h, 0, sizeof(*h));
	h->buf = buf;
	if ((h->run_id = handoff_next(&p, end)) == NULL || h->run_id[0] == '\0' ||
	    (h->workdir = handoff_next(&p, end)) == NULL || (iso = handoff_next(&p, end)) == NULL ||
	    (strcmp(iso, "0") && strcmp(iso, "1")) || handoff_count(&p, end, &argc) == -1 ||
	    argc == 0 || (h->argv = handoff_vec(&p, end, argc)) == NULL ||
	    handoff_count(&p, end, &envc) == -1 || (h->env = handoff_vec(&p, end, envc)) == NULL ||
	    p != end) {
		handoff_free(h);
		return -1;
	}
	h->isolate = iso[0] == '1';
	return 0;
}

/* Reads exactly n bytes. 1 read, 0 end of file first, -1 error. */
static int
handoff_read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, buf + got, n - got);
		if (r > 0)
			got += (size_t)r;
		else if (r == 0)
			return 0;
		else if (errno != EINTR)
			return -1;
	}
	return 1;
}

int
handoff_read(int fd, struct handoff *h)
{
	char hdr[HANDOFF_HDR], *buf;
	uint32_t n32;
	int rc;

	memset(h, 0, sizeof(*h));
	if ((rc = handoff_read_all(fd, hdr, sizeof(hdr))) <= 0) {
		/* Closed without a run, or unreadable: no run either way. */
		if (rc < 0)
			log_error("read go pipe: %s", strerror(errno));
		return 0;
	}
	memcpy(&n32, hdr + 4, sizeof(n32));
	if (memcmp(hdr, HANDOFF_MAGIC, 4) != 0 || n32 > HANDOFF_MAX) {
		log_error("bug: the go pipe carried no hand-off (%u bytes announced)",
			  (unsigned)n32);
		return -1;
	}
	if ((buf = malloc(n32 ? n32 : 1)) == NULL) {
		log_error("hand-off: out of memory");
		return -1;
	}
	if ((rc = handoff_read_all(fd, buf, n32)) <= 0) {
		if (rc < 0)
			log_error("read go pipe: %s", strerror(errno));
		free(buf);
		return 0;
	}
	if (handoff_parse(buf, n32, h) == -1) {
		log_error("bug: a malformed hand-off (%u bytes)", (unsigned)n32);
		return -1;
	}
	return 1;
}

void
handoff_free(struct handoff *h)
{
	free(h->argv);
	free(h->env);
	free(h->buf);
	memset(h, 0, sizeof(*h));
}
