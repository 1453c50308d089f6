/* A BSPlib program built by the bspcc wrapper in bspcc_test.sh and run by bsprun. */
#include <bsp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	bsp_begin(bsp_nprocs());
	printf("hello from %d of %d\n", bsp_pid(), bsp_nprocs());
	bsp_sync();
	if (strcmp(mode, "abort") == 0 && bsp_pid() == 1)
		bsp_abort("bspcc test: process %d aborts\n", bsp_pid());
	bsp_sync();
	bsp_end();
	return 0;
}
