#ifndef BERTH_BENCH_UTIL_H
#define BERTH_BENCH_UTIL_H
#include <stddef.h>
#include <stdint.h>

/* Helpers the benchmark programs share: a monotonic clock in nanoseconds and
 * percentiles of a sample. Benchmarks print numbers; they never judge them. */

int64_t bench_util_now_ns(void);
int64_t bench_util_wall_ns(void);
/* The p-th percentile (0..100) of v[0..n), nearest rank; sorts v in place.
 * 0 when n is 0. */
int64_t bench_util_pct(int64_t *v, size_t n, double p);
/* Parses a positive integer option or exits 2 with a message naming it. */
long bench_util_num(const char *prog, const char *opt, const char *s);

#endif
