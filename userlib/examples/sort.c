/* Parallel sample sort with bulk-synchronous message passing (BSMP).
 * Usage: sort [keys per process]   (default 100000).
 * 1. every process generates pseudo-random keys and sorts them locally;
 * 2. p regular samples of every process are put into every process (one superstep);
 * 3. all choose the same p-1 splitters and bsp_send each bucket to its process;
 * 4. each process sorts what it received; a final superstep checks that process s's
 *    largest key is at most process s+1's smallest and that no key was lost. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int per_process = 100000;

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static void spmd(void)
{
    int p, s, t, i, nmsg, bytes, status, tag_bytes = sizeof(int), ok;
    unsigned *keys, *samples, *splitters, *mine, state;
    unsigned long long sum_in = 0, sum_out = 0, *sums, total_in = 0, total_out = 0;
    unsigned bounds[2], *all_bounds;
    long count = 0, *counts, total = 0;

    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    s = bsp_pid();
    keys = malloc((size_t)per_process * sizeof(unsigned));
    samples = malloc((size_t)p * (size_t)p * sizeof(unsigned));
    splitters = malloc((size_t)p * sizeof(unsigned));
    sums = calloc((size_t)p * 2, sizeof(unsigned long long));
    counts = calloc((size_t)p, sizeof(long));
    all_bounds = calloc((size_t)p * 2, sizeof(unsigned));
    if (!keys || !samples || !splitters || !sums || !counts || !all_bounds) {
        bsp_abort("sort: process %d out of memory", s);
    }

    state = 12345u + 7919u * (unsigned)s;
    for (i = 0; i < per_process; i++) {
        state = state * 1664525u + 1013904223u;
        keys[i] = state >> 4;
        sum_in += keys[i];
    }
    qsort(keys, (size_t)per_process, sizeof(unsigned), cmp_uint);

    bsp_push_reg(samples, p * p * (int)sizeof(unsigned));
    bsp_set_tagsize(&tag_bytes);
    bsp_sync();

    for (t = 0; t < p; t++) {
        unsigned sample[64];
        int k;
        for (k = 0; k < p && k < 64; k++) {
            sample[k] = keys[(long)k * per_process / p];
        }
        bsp_put(t, sample, samples, s * p * (int)sizeof(unsigned), p * (int)sizeof(unsigned));
    }
    bsp_sync();

    qsort(samples, (size_t)p * (size_t)p, sizeof(unsigned), cmp_uint);
    for (t = 1; t < p; t++) {
        splitters[t - 1] = samples[t * p];
    }
    /* Send each bucket as one message, tagged with the sender. */
    i = 0;
    for (t = 0; t < p; t++) {
        int start = i;
        while (i < per_process && (t == p - 1 || keys[i] < splitters[t])) {
            i++;
        }
        bsp_send(t, &s, keys + start, (i - start) * (int)sizeof(unsigned));
    }
    bsp_sync();

    bsp_qsize(&nmsg, &bytes);
    mine = malloc((size_t)bytes + sizeof(unsigned));
    if (!mine) {
        bsp_abort("sort: process %d cannot receive %d bytes", s, bytes);
    }
    for (;;) {
        int src;
        bsp_get_tag(&status, &src);
        if (status < 0) {
            break;
        }
        bsp_move((char *)mine + count * (long)sizeof(unsigned), status);
        count += status / (int)sizeof(unsigned);
    }
    qsort(mine, (size_t)count, sizeof(unsigned), cmp_uint);
    for (i = 0; i < count; i++) {
        sum_out += mine[i];
    }

    /* Check: global order, no key lost or duplicated (count and sum). */
    bounds[0] = count ? mine[0] : 0xffffffffu;
    bounds[1] = count ? mine[count - 1] : 0;
    bsp_push_reg(all_bounds, 2 * p * (int)sizeof(unsigned));
    bsp_push_reg(counts, p * (int)sizeof(long));
    bsp_push_reg(sums, 2 * p * (int)sizeof(unsigned long long));
    bsp_sync();
    unsigned long long both[2] = {sum_in, sum_out};
    bsp_put(0, bounds, all_bounds, 2 * s * (int)sizeof(unsigned), 2 * sizeof(unsigned));
    bsp_put(0, &count, counts, s * (int)sizeof(long), sizeof(long));
    bsp_put(0, both, sums, 2 * s * (int)sizeof(unsigned long long), sizeof both);
    bsp_sync();
    if (s == 0) {
        unsigned prev_max = 0;
        ok = 1;
        for (t = 0; t < p; t++) {
            total += counts[t];
            total_in += sums[2 * t];
            total_out += sums[2 * t + 1];
            if (counts[t] > 0) {
                if (all_bounds[2 * t] < prev_max) {
                    ok = 0;
                }
                prev_max = all_bounds[2 * t + 1];
            }
        }
        ok = ok && total == (long)per_process * p && total_in == total_out;
        printf("sorted %ld keys on %d processes: %s\n", total, p, ok ? "ok" : "WRONG");
    }
    bsp_pop_reg(sums);
    bsp_pop_reg(counts);
    bsp_pop_reg(all_bounds);
    bsp_pop_reg(samples);
    bsp_sync();
    free(keys);
    free(samples);
    free(splitters);
    free(mine);
    free(sums);
    free(counts);
    free(all_bounds);
    bsp_end();
}

int main(int argc, char **argv)
{
    /* Before bsp_init: under a launcher the processes other than 0 run only the SPMD
     * part, so every process reads the argument here. */
    if (argc > 1) {
        per_process = atoi(argv[1]);
    }
    if (per_process < 1 || per_process > 100000000) {
        fprintf(stderr, "usage: sort [keys per process, 1..1e8]\n");
        return 2;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
