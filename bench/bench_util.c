/*
 * Shared by the benchmark programs: clocks and percentiles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

int64_t
bench_util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wall time, for comparing stamps taken in different processes. */
int64_t
bench_util_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t
bench_util_pct(int64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	/* Nearest rank: the smallest value with at least p% of the sample at
	 * or below it. */
	i = (size_t)((p / 100.0) * (double)n + 0.999999);
	if (i == 0)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

long
bench_util_num(const char *prog, const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0) {
		fprintf(stderr, "%s: %s wants a positive number, not '%s'\n", prog, opt, s);
		exit(2);
	}
	return v;
}
