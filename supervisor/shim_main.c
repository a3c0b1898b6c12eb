#include <sys/stat.h>

#include "log.h"
#include "shim.h"
#include "version.h"

int
main(int argc, char **argv)
{
	struct shim_args a;
	mode_t started;

	version_option(argc, argv, "berth-shim");
	/* What the shim creates in the home (output.log, exit, started) is
	 * the user's alone; the job gets the user's umask back (--umask). */
	started = umask(077);
	log_init("shim");
	if (shim_parse(argc, argv, &a) == -1)
		return 2;
	if (!a.has_umask) {
		a.has_umask = 1;
		a.job_umask = started;
	}
	shim_title_area(&a, argc, argv);
	return shim_run(&a);
}
