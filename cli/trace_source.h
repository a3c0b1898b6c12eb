#ifndef BERTH_TRACE_SOURCE_H
#define BERTH_TRACE_SOURCE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ring.h"
#include "trace.h"

/* Where berth trace reads from (trace_source.c): the trace file a line at a
 * time, and the shared-memory ring with the launcher's log, loaded whole. */

#define TRACE_NOTES 5 /* unreadable lines named before they are only counted */

struct trace_vec {
	struct trace_ev *v;
	size_t n;
	size_t cap;
};

struct trace_key {
	char instance[40];
	uint64_t req_id;
	size_t idx; /* in the ring vector */
};

/* instance -> pid, from ring records */
struct trace_pids {
	struct trace_key *v;
	size_t n;
	size_t cap;
};

/* The trace file, read a line at a time. */
struct trace_src {
	const char *path;
	FILE *f;
	dev_t dev;
	ino_t ino;
	off_t off; /* end of the last line consumed */
	/* the last bytes before off: a file rewritten in place (same inode,
	 * as long or longer) shows there */
	char tail[64];
	size_t tail_len;
	long lineno;
	int notes;
	int quiet;
	char *line;
	size_t cap;
};

struct trace_ring {
	struct ring *t;
	uint64_t cursor;
	struct trace_vec v;     /* every record present, by time */
	struct trace_key *keys; /* of the redundant-looking ones, sorted */
	size_t nkeys;
	char *decided; /* per record: its decision is in the file */
};

int trace_push(struct trace_vec *v, const struct trace_ev *ev);
int trace_key_cmp(const void *a, const void *b);
int trace_ring_redundant(const struct trace_ev *ev);
void trace_pids_learn(struct trace_pids *m, const struct trace_ev *ev);
void trace_pids_apply(const struct trace_pids *m, struct trace_ev *ev);
int trace_src_open(struct trace_src *s);
void trace_src_close(struct trace_src *s);
int trace_src_next(struct trace_src *s, int partial, struct trace_ev *ev);
int trace_ring_load(struct trace_ring *R, const char *home, struct trace_pids *pids);
void trace_ring_decided(struct trace_ring *R, const struct trace_ev *ev);
void trace_ring_free(struct trace_ring *R);

#endif
