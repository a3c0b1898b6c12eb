/*
 * berth-bench-latency: from `berth add` to the job's first instruction, on
 * an idle group.
 *
 * Each sample: take the wall clock, run `berth --home DIR add -- STAMP F`
 * (a fresh CLI process, as a user would), and wait until the job
 * (berth-bench-stamp) has written the wall clock of its own start to F. The
 * difference is the latency: CLI start, add, the parked claim's wake-up, the
 * claim, the shim's spawn, start, and the job's exec. Between samples the
 * group is left to settle the run and go idle again.
 */
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

extern char **environ;

static const char *prog = "berth-bench-latency";

/* Runs argv with stdout to /dev/null; returns its exit status or -1. */
static int
lat_run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rv;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rv = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rv != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
lat_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Waits (polling every 100 us) until path exists, up to deadline; returns
 * the nanoseconds it holds, or -1. */
static int64_t
lat_wait_stamp(const char *path, int64_t deadline)
{
	struct stat sb;
	long long v;
	FILE *f;

	while (stat(path, &sb) != 0) {
		if (bench_util_now_ns() > deadline)
			return -1;
		lat_sleep_us(100);
	}
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "berth", required_argument, NULL, 'b' },
		{ "stamp", required_argument, NULL, 's' },
		{ "home", required_argument, NULL, 'H' },
		{ "dir", required_argument, NULL, 'D' },
		{ "count", required_argument, NULL, 'n' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "deadline-s", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *berth = NULL, *stamp = NULL, *home = NULL, *dir = NULL;
	long count = 50, gap_ms = 200, deadline_s = 60, i, n = 0;
	int64_t *lat, *cli, deadline, t0, t1, s;
	char file[4096];
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': berth = optarg; break;
		case 's': stamp = optarg; break;
		case 'H': home = optarg; break;
		case 'D': dir = optarg; break;
		case 'n': count = bench_util_num(prog, "--count", optarg); break;
		case 'g': gap_ms = bench_util_num(prog, "--gap-ms", optarg); break;
		case 'd': deadline_s = bench_util_num(prog, "--deadline-s", optarg); break;
		default:
			fprintf(stderr,
				"usage: %s --berth PATH --stamp PATH --home DIR --dir DIR "
				"[--count N] [--gap-ms MS] [--deadline-s S]\n",
				prog);
			return c == 'h' ? 0 : 2;
		}
	}
	if (berth == NULL || stamp == NULL || home == NULL || dir == NULL) {
		fprintf(stderr, "%s: --berth, --stamp, --home and --dir are required\n", prog);
		return 2;
	}
	lat = calloc((size_t)count, sizeof(*lat));
	cli = calloc((size_t)count, sizeof(*cli));
	if (lat == NULL || cli == NULL)
		return 1;
	deadline = bench_util_now_ns() + (int64_t)deadline_s * 1000000000;
	for (i = 0; i < count && bench_util_now_ns() < deadline; i++) {
		char *av[] = { (char *)berth, "--home",      (char *)home, "add",
			       "--",          (char *)stamp, file,         NULL };

		snprintf(file, sizeof(file), "%s/stamp.%ld", dir, i);
		t0 = bench_util_wall_ns();
		if (lat_run(av) != 0) {
			fprintf(stderr, "%s: berth add failed\n", prog);
			break;
		}
		t1 = bench_util_wall_ns();
		if ((s = lat_wait_stamp(file, deadline)) < 0) {
			fprintf(stderr, "%s: job %ld never started\n", prog, i);
			break;
		}
		lat[n] = s - t0;
		cli[n] = t1 - t0;
		n++;
		lat_sleep_us(gap_ms * 1000);
	}
	printf("samples=%ld\ncomplete=%d\n", n, n == count);
	printf("add_cli_p50_ms=%.2f\n", bench_util_pct(cli, (size_t)n, 50) / 1e6);
	printf("latency_p50_ms=%.2f\n", bench_util_pct(lat, (size_t)n, 50) / 1e6);
	printf("latency_p99_ms=%.2f\n", bench_util_pct(lat, (size_t)n, 99) / 1e6);
	free(lat);
	free(cli);
	return n == count ? 0 : 1;
}
