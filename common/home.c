/*
 * The default home (DESIGN §2), apart from util.c because it asks the user
 * database (getpwuid, so NSS) when HOME is unset: the shim, linked
 * statically (BERTH_STATIC_START), must never link it, and a static link
 * fails on such a call (supervisor/CMakeLists.txt).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

char *
home_default(void)
{
	const char *e, *home;
	struct passwd *pw;
	char *out = NULL;

	if ((e = getenv("BERTH_HOME")) != NULL && *e != '\0')
		return strdup(e);
	if ((e = getenv("XDG_STATE_HOME")) != NULL && *e == '/') {
		if (asprintf(&out, "%s/berth", e) < 0)
			return NULL;
		return out;
	}
	home = getenv("HOME");
	if (home == NULL || *home == '\0') {
		pw = getpwuid(getuid());
		if (pw == NULL || pw->pw_dir == NULL) {
			log_error("no BERTH_HOME and no home directory");
			return NULL;
		}
		home = pw->pw_dir;
	}
	if (asprintf(&out, "%s/.local/state/berth", home) < 0)
		return NULL;
	return out;
}
