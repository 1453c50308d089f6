/* collbench: the collectives of bsc.h with the algorithm the BSP cost model chooses
 * against every fixed algorithm (BSC_ALGORITHM, set here between runs on every process),
 * for broadcast, reduce, allreduce and scan over sizes from 8 bytes to 256 KiB. Prints,
 * per row, the model's prediction and the measured time of each algorithm, the model's
 * choice, and the measured time of auto over that of the fastest fixed algorithm.
 *
 *   bsprun -n 8 collbench [reps]          (BSP_G, BSP_L: bspprobe's g and l)
 *
 * A time is that of process 0 from a global barrier (bsc_sync(bsc_flush)) to the next,
 * over reps collectives started one after the other, divided by reps. */
#include <bsc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The element size of the current run: the reducers combine elements of that many
 * bytes (a multiple of 8) word by word with exclusive or. */
static bsc_size_t g_elem;

/* a = a0 ^ xs[0] ^ ... (reduce) */
static void xor_words(void *a, const void *a0, const void *xs, bsc_size_t size)
{
    const bsc_size_t e = g_elem, count = size / e;
    for (bsc_size_t w = 0; w < e / 8; ++w) {
        uint64_t acc, v;
        memcpy(&acc, (const char *)a0 + w * 8, 8);
        for (bsc_size_t k = 0; k < count; ++k) {
            memcpy(&v, (const char *)xs + k * e + w * 8, 8);
            acc ^= v;
        }
        memcpy((char *)a + w * 8, &acc, 8);
    }
}

/* a[k] = a0 ^ xs[0] ^ ... ^ xs[k] (scan) */
static void xor_prefix(void *a, const void *a0, const void *xs, bsc_size_t size)
{
    const bsc_size_t e = g_elem;
    const char *prev = a0;
    for (bsc_size_t k = 0; k < size / e; ++k) {
        xor_words((char *)a + k * e, prev, (const char *)xs + k * e, e);
        prev = (const char *)a + k * e;
    }
}

enum { BCAST, REDUCE, ALLREDUCE, SCAN, NCOLL };
static const char *coll_name[] = {"bcast", "reduce", "allreduce", "scan"};
enum { DIRECT, TWOPHASE, TREE, AUTO, NALG };
static const char *alg_name[] = {"direct", "two-phase", "tree", "auto"};

static int ceil_log2(int n)
{
    int r = 0;
    while ((1 << r) < n) {
        ++r;
    }
    return r;
}

/* The cost model of Documentation/bsplib.rst, "Collectives", in seconds. */
static double model(int coll, int alg, int n, double s)
{
    const double g = bsc_g(), l = bsc_L(), lg = ceil_log2(n);
    if (n <= 1) {
        return 0;
    }
    switch (coll) {
        case BCAST:
            if (alg == TWOPHASE) {
                return 2 * l + g * (n - 1) * (2 * floor(s / n) + fmod(s, n));
            }
            if (alg == TREE) {
                return lg * (l + g * s);
            }
            return l + g * s * (n - 1);
        case REDUCE:
            return alg == TREE ? (lg + 1) * (l + g * s) : l + g * s * (n - 1);
        case ALLREDUCE:
            return alg == TREE ? 2 * lg * (l + g * s) : l + g * s * (n - 1);
        default:
            return alg == TREE ? lg * (l + g * s) : l + g * s * (n - 1);
    }
}

static char *buf, *dst, *tmp, *src;

static double run(int coll, int alg, int size, int reps)
{
    const int p = bsp_nprocs();
    setenv("BSC_ALGORITHM", alg_name[alg], 1);
    g_elem = size;
    bsc_sync(bsc_flush);
    const double t0 = bsp_time();
    for (int r = 0; r < reps; ++r) {
        bsc_step_t s;
        switch (coll) {
            case BCAST:
                s = bsc_bcast(bsc_start, 0, bsc_all, src, dst, size);
                break;
            case REDUCE:
                s = bsc_reduce(bsc_start, 0, bsc_all, src, buf, tmp, xor_words, src, 1, size);
                break;
            case ALLREDUCE:
                s = bsc_allreduce(bsc_start, bsc_all, src, buf, tmp, xor_words, src, 1, size);
                break;
            default:
                s = bsc_scan(bsc_start, bsc_all, src, buf, tmp, xor_prefix, src, 1, size);
                break;
        }
        bsc_sync(s);
    }
    bsc_sync(bsc_flush);
    (void)p;
    return (bsp_time() - t0) / reps;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 10;
    static const int sizes[] = {8, 1024, 16384, 262144};
    bsp_begin(bsp_nprocs());
    const int p = bsp_nprocs();
    const int max = 262144;
    src = calloc(max, 1);
    buf = calloc(max, 1);
    dst = calloc(max, 1);
    tmp = calloc((size_t)(2 * p + 2) * max, 1);
    bsp_push_reg(dst, max);
    bsp_push_reg(tmp, (2 * p + 2) * max);
    bsp_sync();
    if (bsp_pid() == 0) {
        printf("collectives of bsc.h, p = %d, %d repetitions; model: g = %.4f us/word, l = %.1f us\n",
               p, reps, bsc_g() * 4e6, bsc_L() * 1e6);
        printf("%-10s %7s | %-28s | %-28s | %-10s %9s %12s\n", "", "",
               "model (us): direct 2-phase tree", "measured (us): direct 2-phase tree",
               "choice", "auto (us)", "best / auto");
    }
    for (int c = 0; c < NCOLL; ++c) {
        for (int si = 0; si < 4; ++si) {
            const int size = sizes[si];
            double t[NALG], m[NALG];
            int choice = DIRECT;
            for (int a = 0; a < NALG; ++a) {
                t[a] = -1;
                m[a] = -1;
                if (a == TWOPHASE && c != BCAST) {
                    continue;
                }
                if (a != AUTO) {
                    m[a] = model(c, a, p, size);
                    if (m[a] < m[choice]) {
                        choice = a;
                    }
                }
                t[a] = run(c, a, size, reps);
            }
            double best = -1;
            for (int a = 0; a < AUTO; ++a) {
                if (t[a] >= 0 && (best < 0 || t[a] < best)) {
                    best = t[a];
                }
            }
            if (bsp_pid() == 0) {
                char mm[3][16], tt[3][16];
                for (int a = 0; a < 3; ++a) {
                    if (m[a] < 0) {
                        strcpy(mm[a], "-");
                        strcpy(tt[a], "-");
                    } else {
                        snprintf(mm[a], sizeof mm[a], "%.0f", m[a] * 1e6);
                        snprintf(tt[a], sizeof tt[a], "%.0f", t[a] * 1e6);
                    }
                }
                printf("%-10s %7d | %8s %8s %8s   | %8s %8s %8s   | %-10s %9.0f %11.2fx\n",
                       coll_name[c], size, mm[0], mm[1], mm[2], tt[0], tt[1], tt[2],
                       alg_name[choice], t[AUTO] * 1e6, best / t[AUTO]);
                fflush(stdout);
            }
        }
    }
    bsp_pop_reg(tmp);
    bsp_pop_reg(dst);
    bsp_end();
    return 0;
}
