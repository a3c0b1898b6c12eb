#include "log.h"
#include "shim.h"
#include "version.h"

int
main(int argc, char **argv)
{
	struct shim_args a;

	version_option(argc, argv, "berth-shim");
	log_init("shim");
	if (shim_parse(argc, argv, &a) == -1)
		return 2;
	return shim_run(&a);
}
