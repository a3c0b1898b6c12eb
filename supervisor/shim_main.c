#include "log.h"
#include "shim.h"

int
main(int argc, char **argv)
{
	struct shim_args a;

	log_init("shim");
	if (shim_parse(argc, argv, &a) == -1)
		return 2;
	return shim_run(&a);
}
