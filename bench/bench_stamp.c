/*
 * berth-bench-stamp FILE: the job of the latency benchmark. Its first act
 * is to write the wall clock in nanoseconds to FILE (a temporary name, then
 * rename, so a reader never sees half a number).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

int
main(int argc, char **argv)
{
	int64_t now = bench_util_wall_ns();
	char tmp[4096], buf[32];
	int fd, n;

	if (argc != 2) {
		fprintf(stderr, "usage: berth-bench-stamp FILE\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)now);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		perror(tmp);
		return 1;
	}
	if (write(fd, buf, (size_t)n) != n || close(fd) != 0 || rename(tmp, argv[1]) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
