/*
 * A superstep in which process 1 computes (sleeps) for MS milliseconds without calling
 * BSPlib while process 0 puts and sends 256 KiB to it and waits in bsp_sync: the
 * transport must keep answering for process 1 meanwhile, or process 0 takes it for
 * unreachable. Every byte is checked; prints "longstep ok" on process 1.
 * First, on every process: a signal sent to the process while its thread blocks it waits
 * for that thread (the library's threads block every signal).
 * Usage: longstep MS
 */
#include <bsp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WORDS (1 << 15)

static int area[WORDS];
static int src[WORDS];
static pthread_t main_thread;
static volatile sig_atomic_t on_main = -1;

static void on_usr1(int sig)
{
	(void)sig;
	on_main = pthread_equal(pthread_self(), main_thread) ? 1 : 0;
}

/* 0 if SIGUSR1, sent to the process while this thread blocks it, ran here. */
static int signal_stays_with_the_program(void)
{
	struct timespec ts = { 0, 100000000L };
	sigset_t u;

	main_thread = pthread_self();
	signal(SIGUSR1, on_usr1);
	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);
	sigprocmask(SIG_BLOCK, &u, NULL);
	kill(getpid(), SIGUSR1);
	nanosleep(&ts, NULL);	/* another thread that takes it would run it now */
	sigprocmask(SIG_UNBLOCK, &u, NULL);
	if (on_main != 1) {
		printf("longstep: process %d: SIGUSR1 %s\n", bsp_pid(),
		       on_main == 0 ? "ran on a thread of the library" : "never ran");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	int bad = 0, i;

	bsp_begin(bsp_nprocs());
	bad += signal_stays_with_the_program();
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
