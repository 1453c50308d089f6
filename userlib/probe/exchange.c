/* exchange: times a total exchange (or cyclic shift) of n bytes per pair of processes
 * with bsp_put, and checks every byte that arrived. A superstep lasts until its last
 * process has all its data: every process times its own bsp_sync, and a repetition
 * counts as its slowest process (process 0 alone may be done long before the others,
 * as in pid order, where every process sends to it first). One line from process 0:
 *   exchange total p=8 bytes=65536 reps=10 schedule=latin: 1234.5 us/superstep, ok
 * Usage: exchange [-n bytes per pair] [-r reps] [-c]   (-c: cyclic shift instead)
 * The destination schedule comes from BSP_SCHEDULE, as for any BSPlib program. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nbytes = 65536, reps = 10, cyclic = 0;

static unsigned char pattern(int src, int dst, int rep, int i)
{
    return (unsigned char)(src * 131 + dst * 31 + rep * 7 + i * 13 + (i >> 8));
}

static void spmd(void)
{
    int p, s, r, t, i, bad = 0;
    unsigned char *out, *in;
    double t0, elapsed, *mine, *all;
    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    s = bsp_pid();
    out = malloc((size_t)nbytes * (size_t)p);
    in = malloc((size_t)nbytes * (size_t)p);
    mine = calloc((size_t)reps, sizeof(double));
    all = calloc((size_t)reps * (size_t)p, sizeof(double));
    if (!out || !in || !mine || !all) {
        bsp_abort("exchange: process %d cannot allocate 2 x %d x %d bytes", s, p, nbytes);
    }
    bsp_push_reg(in, nbytes * p);
    bsp_sync();
    elapsed = 0.0;
    for (r = 0; r < reps; r++) {
        for (t = 0; t < p; t++) {
            for (i = 0; i < nbytes; i++) {
                out[(size_t)t * nbytes + i] = pattern(s, t, r, i);
            }
        }
        memset(in, 0, (size_t)nbytes * (size_t)p);
        bsp_sync(); /* untimed: everybody starts together */
        t0 = bsp_time();
        for (t = 1; t < p; t++) {
            int dst = (s + t) % p;
            if (cyclic && t != 1) {
                break;
            }
            /* issued in pid order on purpose: the runtime's schedule decides the order */
            dst = cyclic ? dst : (t - 1 < s ? t - 1 : t);
            bsp_put(dst, out + (size_t)dst * nbytes, in, s * nbytes, nbytes);
        }
        bsp_sync();
        mine[r] = bsp_time() - t0;
        for (t = 0; t < p; t++) {
            if (t == s || (cyclic && t != (s + p - 1) % p)) {
                continue;
            }
            for (i = 0; i < nbytes; i++) {
                bad += in[(size_t)t * nbytes + i] != pattern(t, s, r, i);
            }
        }
    }
    {
        int *bads = calloc((size_t)p, sizeof(int));
        if (!bads) {
            bsp_abort("exchange: process %d cannot allocate %d ints", s, p);
        }
        bsp_push_reg(bads, p * (int)sizeof(int));
        bsp_push_reg(all, reps * p * (int)sizeof(double));
        bsp_sync();
        bsp_put(0, &bad, bads, s * (int)sizeof(int), sizeof(int));
        bsp_put(0, mine, all, s * reps * (int)sizeof(double), reps * (int)sizeof(double));
        bsp_sync();
        if (s == 0) {
            int total = 0;
            const char *sched = getenv("BSP_SCHEDULE");
            for (t = 0; t < p; t++) {
                total += bads[t];
            }
            elapsed = 0.0;
            for (r = 0; r < reps; r++) {
                double slowest = 0.0;
                for (t = 0; t < p; t++) {
                    if (all[t * reps + r] > slowest) {
                        slowest = all[t * reps + r];
                    }
                }
                elapsed += slowest;
            }
            printf("exchange %s p=%d bytes=%d reps=%d schedule=%s: %.1f us/superstep, %s\n",
                   cyclic ? "cyclic" : "total", p, nbytes, reps, sched ? sched : "latin",
                   elapsed / reps * 1e6, total == 0 ? "ok" : "CORRUPTED");
        }
        bsp_pop_reg(all);
        bsp_pop_reg(bads);
        bsp_sync();
        free(bads);
    }
    free(mine);
    free(all);
    bsp_pop_reg(in);
    bsp_end();
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            nbytes = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-c") == 0) {
            cyclic = 1;
        } else {
            fprintf(stderr, "usage: exchange [-n bytes per pair] [-r reps] [-c]\n");
            return 2;
        }
    }
    if (nbytes < 1 || nbytes > (64 << 20) || reps < 1) {
        fprintf(stderr, "exchange: -n must be 1..64M and -r >= 1\n");
        return 2;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
