/* [SHM97], section 13, "All Sums: Version 2" (one superstep of p puts). */
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

int main(void)
{
    int i, sum;
    bsp_begin(bsp_nprocs());
    sum = bsp_allsums2(bsp_pid() + 1);
    for (i = 0; i < bsp_nprocs(); i++) {
        if (bsp_pid() == i) {
            printf("allsums2 on process %d: %d\n", bsp_pid(), sum);
            fflush(stdout);
        }
        bsp_sync();
    }
    bsp_end();
    return 0;
}
