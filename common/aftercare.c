/*
 * The one reader of what a run left behind (aftercare.h). Every actor that
 * settles a run asks here, so the exit record is parsed in one place and
 * "capture complete" means the same whoever settles.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aftercare.h"
#include "log.h"

/* The shim's spawn_error line, without its newline. */
static int
aftercare_spawn_error(const char *run_dir, char *buf, size_t n)
{
	char path[PATH_MAX];
	ssize_t got;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/spawn_error", run_dir) >= sizeof(path))
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		got = 0;
	buf[got] = '\0';
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		buf[--got] = '\0';
	return 1;
}

int
aftercare_read(const char *run_dir, struct aftercare *a)
{
	char path[PATH_MAX];
	struct stat st;
	int rc;

	memset(a, 0, sizeof(*a));
	if ((size_t)snprintf(path, sizeof(path), "%s/started", run_dir) >= sizeof(path)) {
		log_error("%s: path too long", run_dir);
		return -1;
	}
	if (stat(path, &st) == 0) {
		a->started = 1;
		a->started_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	} else if (errno != ENOENT) {
		log_error("stat %s: %s (taken as started)", path, strerror(errno));
		a->started = 1;
	}
	rc = exitrec_read(run_dir, &a->rec);
	a->has_record = rc == 0;
	a->exit_present = rc != -ENOENT;
	if (rc < 0 && rc != -ENOENT)
		log_warn("%s: exit record unreadable (%s): taken as none", run_dir, strerror(-rc));
	snprintf(path, sizeof(path), "%s/output.log", run_dir);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		a->has_output = 1;
		a->output_bytes = st.st_size;
	}
	a->has_spawn_error = aftercare_spawn_error(run_dir, a->spawn_error, sizeof(a->spawn_error));
	a->capture_complete = a->has_record && a->has_output;
	return 0;
}
