/* [SHM97], section 13, "All Sums on an Array": the paper's program unchanged except
 * that main returns int (and bsp_popregister comes before free in bsp_allsums2, since
 * popping a freed area's registration would name a dangling pointer). */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

int bsp_allsums2(int x)
{
    int i, result, *array = calloc(bsp_nprocs(), sizeof(int));
    if (array == NULL)
        bsp_abort("Unable to allocate %d element array", bsp_nprocs());
    bsp_pushregister(array, bsp_nprocs() * sizeof(int));
    bsp_sync();

    for (i = bsp_pid(); i < bsp_nprocs(); i++)
        bsp_put(i, &x, array, bsp_pid() * sizeof(int), sizeof(int));
    bsp_sync();

    result = array[0];
    for (i = 1; i <= bsp_pid(); i++)
        result += array[i];
    bsp_popregister(array);
    free(array);
    return result;
}

void bsp_allsums(int *array, int n_over_p)
{
    int i, last, lefts_last;
    bsp_pushregister(&last, sizeof(int));

    for (i = 1; i < n_over_p; i++)
        array[i] += array[i - 1];

    last = bsp_allsums2(array[n_over_p - 1]);

    if (bsp_pid() == 0)
        lefts_last = 0;
    else
        bsp_get(bsp_pid() - 1, &last, 0, &lefts_last, sizeof(int));
    bsp_sync();
    for (i = 0; i < n_over_p; i++)
        array[i] += lefts_last;

    bsp_popregister(&last);
}

int main(void)
{
    int i, j, n_over_p, *xs;
    bsp_begin(bsp_nprocs());

    n_over_p = 100;
    xs = calloc(n_over_p, sizeof(int));
    for (i = 0; i < n_over_p; i++)
        xs[i] = 1;
    bsp_allsums(xs, n_over_p);

    for (i = 0; i < bsp_nprocs(); i++) {
        if (bsp_pid() == i) {
            printf("On process %d: ", bsp_pid());
            for (j = 0; j < n_over_p; j++)
                printf("%d ", xs[j]);
            printf("\n");
            fflush(stdout);
        }
        bsp_sync();
    }
    bsp_end();
    free(xs);
    return 0;
}
