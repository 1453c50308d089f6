/*
 * A superstep in which process 1 computes (sleeps) for MS milliseconds without calling
 * BSPlib while process 0 puts and sends 256 KiB to it and waits in bsp_sync: the
 * transport must keep answering for process 1 meanwhile, or process 0 takes it for
 * unreachable. Every byte is checked; prints "longstep ok" on process 1.
 * Usage: longstep MS
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORDS (1 << 15)

static int area[WORDS];
static int src[WORDS];

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	int bad = 0, i;

	bsp_begin(bsp_nprocs());
	bsp_push_reg(area, sizeof(area));
	bsp_set_tagsize(&(int){ sizeof(int) });
	bsp_sync();
	if (bsp_pid() == 1) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts))
			;
	}
	if (bsp_pid() == 0) {
		for (i = 0; i < WORDS; i++)
			src[i] = i * 7 + 1;
		bsp_put(1, src, area, 0, sizeof(src));
		bsp_send(1, &(int){ 42 }, src, sizeof(src));
	}
	bsp_sync();
	if (bsp_pid() == 1) {
		int status, tag;

		for (i = 0; i < WORDS; i++)
			bad += area[i] != i * 7 + 1;
		bsp_get_tag(&status, &tag);
		if (status != (int)sizeof(src) || tag != 42) {
			bad++;
		} else {
			bsp_move(area, sizeof(area));
			for (i = 0; i < WORDS; i++)
				bad += area[i] != i * 7 + 1;
		}
		if (bad)
			printf("longstep: %d words wrong\n", bad);
		else
			printf("longstep ok\n");
	}
	bsp_end();
	return bad != 0;
}
