/* TEST PROGRAM, used only by udp_trust_test: the job an attacker goes after. After the
 * registration superstep every process prints "ready <pid> <os pid>"; process 0 then waits
 * until the file argv[1] exists (the attack happens meanwhile, while the others already
 * wait in the next bsp_sync) and puts 1234 into x of process 1, which prints x. Five
 * supersteps of a total exchange follow, each process printing its checksum. */
#include <bsp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int x = 0, v = 1234, step, j, vals[64] = {0};
    long total = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: udp_victim GOFILE\n");
        return 2;
    }
    bsp_begin(bsp_nprocs());
    if (bsp_nprocs() < 2 || bsp_nprocs() > 64)
        bsp_abort("udp_victim needs 2 to 64 processes\n");
    bsp_pushregister(&x, sizeof x);
    bsp_pushregister(vals, sizeof vals);
    bsp_sync();
    printf("ready %d %d\n", bsp_pid(), (int)getpid());
    fflush(stdout);
    if (bsp_pid() == 0) {
        while (access(argv[1], F_OK) != 0)
            usleep(10000);
        bsp_put(1, &v, &x, 0, sizeof v);
    }
    bsp_sync();
    if (bsp_pid() == 1)
        printf("x = %d\n", x);
    for (step = 1; step <= 5; step++) {
        v = (bsp_pid() + 1) * step;
        for (j = 0; j < bsp_nprocs(); j++)
            bsp_put(j, &v, vals, bsp_pid() * (int)sizeof(int), sizeof(int));
        bsp_sync();
        for (j = 0; j < bsp_nprocs(); j++)
            total += vals[j];
    }
    printf("total %d = %ld\n", bsp_pid(), total);
    fflush(stdout);
    bsp_end();
    return 0;
}
