/* Dense matrix-vector multiplication y = A x with a row-block distribution.
 * Usage: matvec [n]   (default 512). A(i,j) = (i + 2j) mod 11 - 5, x_j = j mod 13 - 6.
 * Superstep 1: every process gets the whole x (bsp_get of each owner's block);
 * superstep 2: local rows times x; the blocks of y are hpput into process 0, which
 * checks every entry against a sequential computation and prints a checksum. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static int n = 512;

static long a_ij(long i, long j) { return (i + 2 * j) % 11 - 5; }
static long x_j(long j) { return j % 13 - 6; }

static void spmd(void)
{
    int p, s, t, first, rows, i, j, ok = 1;
    long *x, *xfull, *y, *yfull, checksum = 0;

    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    s = bsp_pid();
    first = (int)((long)s * n / p);
    rows = (int)((long)(s + 1) * n / p) - first;
    x = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(long));
    y = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(long));
    xfull = malloc((size_t)n * sizeof(long));
    yfull = malloc((size_t)n * sizeof(long));
    if (!x || !y || !xfull || !yfull) {
        bsp_abort("matvec: process %d out of memory", s);
    }
    for (i = 0; i < rows; i++) {
        x[i] = x_j(first + i); /* x distributed like the rows */
    }
    bsp_push_reg(x, rows * (int)sizeof(long));
    bsp_push_reg(yfull, n * (int)sizeof(long));
    bsp_sync();

    for (t = 0; t < p; t++) {
        int tf = (int)((long)t * n / p), tr = (int)((long)(t + 1) * n / p) - tf;
        bsp_get(t, x, 0, xfull + tf, tr * (int)sizeof(long));
    }
    bsp_sync();

    for (i = 0; i < rows; i++) {
        long sum = 0;
        for (j = 0; j < n; j++) {
            sum += a_ij(first + i, j) * xfull[j];
        }
        y[i] = sum;
    }
    bsp_hpput(0, y, yfull, first * (int)sizeof(long), rows * (int)sizeof(long));
    bsp_sync();

    if (s == 0) {
        for (i = 0; i < n; i++) {
            long sum = 0;
            for (j = 0; j < n; j++) {
                sum += a_ij(i, j) * x_j(j);
            }
            ok = ok && sum == yfull[i];
            checksum += (long)(i % 17 + 1) * yfull[i];
        }
        printf("y = A x for n=%d on %d processes: checksum %ld (%s)\n", n, p, checksum,
               ok ? "correct" : "WRONG");
    }
    bsp_pop_reg(yfull);
    bsp_pop_reg(x);
    bsp_sync();
    free(x);
    free(y);
    free(xfull);
    free(yfull);
    bsp_end();
}

int main(int argc, char **argv)
{
    /* Before bsp_init: under a launcher the processes other than 0 run only the SPMD
     * part, so every process reads the argument here. */
    if (argc > 1) {
        n = atoi(argv[1]);
    }
    if (n < 1 || n > 20000) {
        fprintf(stderr, "usage: matvec [n, 1..20000]\n");
        return 2;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
