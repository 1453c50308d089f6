/* [SHM97], section 13, "All Sums: Version 1" (logarithmic technique), with a main
 * that sums bsp_pid() + 1 as in the paper's Figure 2 and prints in pid order. */
#include <bsp.h>
#include <stdio.h>

int bsp_allsums1(int x)
{
    int i, left, right;
    bsp_pushregister(&left, sizeof(int));
    bsp_sync();

    right = x;
    for (i = 1; i < bsp_nprocs(); i *= 2) {
        if (bsp_pid() + i < bsp_nprocs())
            bsp_put(bsp_pid() + i, &right, &left, 0, sizeof(int));
        bsp_sync();
        if (bsp_pid() >= i)
            right = left + right;
    }
    bsp_popregister(&left);
    return right;
}

int main(void)
{
    int i, sum;
    bsp_begin(bsp_nprocs());
    sum = bsp_allsums1(bsp_pid() + 1);
    for (i = 0; i < bsp_nprocs(); i++) {
        if (bsp_pid() == i) {
            printf("allsums1 on process %d: %d\n", bsp_pid(), sum);
            fflush(stdout);
        }
        bsp_sync();
    }
    bsp_end();
    return 0;
}
