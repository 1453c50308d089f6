/* Inner product of two distributed vectors (cyclic distribution), as in BSPedupack:
 * every process sums its part, puts its partial sum into every process, and all add
 * them up. Usage: inprod [n]   (default n = 1000000). x_i = i mod 7 + 1, y_i = i mod 5 + 1,
 * so the exact result is printed and checked against a sequential sum on process 0. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static long n = 1000000;

static void spmd(void)
{
    int p, s, t;
    long i, local_n;
    double *x, *y, sum = 0.0, alpha = 0.0, *partial;

    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    s = bsp_pid();
    local_n = (n - s + p - 1) / p; /* elements s, s+p, s+2p, ... */
    x = malloc((size_t)(local_n > 0 ? local_n : 1) * sizeof(double));
    y = malloc((size_t)(local_n > 0 ? local_n : 1) * sizeof(double));
    partial = calloc((size_t)p, sizeof(double));
    if (!x || !y || !partial) {
        bsp_abort("inprod: process %d cannot allocate %ld elements", s, local_n);
    }
    for (i = 0; i < local_n; i++) {
        long g = s + i * p;
        x[i] = (double)(g % 7 + 1);
        y[i] = (double)(g % 5 + 1);
    }
    bsp_push_reg(partial, p * (int)sizeof(double));
    bsp_sync();

    for (i = 0; i < local_n; i++) {
        sum += x[i] * y[i];
    }
    for (t = 0; t < p; t++) {
        bsp_put(t, &sum, partial, s * (int)sizeof(double), sizeof(double));
    }
    bsp_sync();
    for (t = 0; t < p; t++) {
        alpha += partial[t];
    }
    bsp_pop_reg(partial);

    if (s == 0) {
        double check = 0.0;
        for (i = 0; i < n; i++) {
            check += (double)(i % 7 + 1) * (double)(i % 5 + 1);
        }
        printf("inner product of n=%ld on %d processes: %.0f (%s)\n", n, p, alpha,
               alpha == check ? "correct" : "WRONG");
    }
    free(x);
    free(y);
    free(partial);
    bsp_end();
}

int main(int argc, char **argv)
{
    /* Before bsp_init: under a launcher the processes other than 0 run only the SPMD
     * part, so every process reads the argument here. */
    if (argc > 1) {
        n = atol(argv[1]);
    }
    if (n < 1) {
        fprintf(stderr, "usage: inprod [n >= 1]\n");
        return 2;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
