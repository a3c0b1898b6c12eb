/*
 * Run data past retention (DESIGN §7): runs/<run>/ holds output.log, the
 * exit record and the started marker. The database rows stay; only the
 * files go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "reap_pass.h"
#include "util.h"

int
reap_run_id_valid(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	for (n = 0; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
		      (s[n] >= 'A' && s[n] <= 'F')))
			return 0;
	return n >= 1 && n <= 64;
}

int
reap_data_remove(const char *home, const char *run)
{
	char dir[4096];
	struct dirent *de;
	DIR *d = NULL;
	int dfd, rc = -1;

	/* The id becomes a path we delete under: anything but a plain id is
	 * refused, so no reply can point the reaper outside runs/. */
	if (!reap_run_id_valid(run)) {
		log_error("run data: refusing to remove odd run id \"%s\"", run);
		return -1;
	}
	if (home_run_dir(home, run, dir, sizeof(dir)) < 0)
		return -1;
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT)
			return 0;
		log_error("run data %s: %s", dir, strerror(errno));
		return -1;
	}
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT) {
			log_error("run data %s/%s: %s", dir, de->d_name, strerror(errno));
			goto out;
		}
	}
	if (rmdir(dir) < 0 && errno != ENOENT) {
		log_error("run data %s: %s", dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	closedir(d);
	return rc;
}
