/* Programs written for other BSPlibs, one behaviour per case (argv[1]), each printing
 * what it saw (Documentation/bsplib.rst, "Portability"):
 *   edupack           BSPedupack's start: bsp_init, P read on process 0 only, bsp_begin(P)
 *                     on every process (the others pass their global, still 0)
 *   push_pop          bsp_push_reg and bsp_pop_reg take effect at the next bsp_sync in the
 *                     order issued: a push and a pop of one area in one superstep
 *   overlapping_gets  gets whose destinations overlap: the later get wins
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *which;
static bsp_nprocs_t P; /* as BSPedupack: set in main on process 0 only */

static int is(const char *name) { return strcmp(which, name) == 0; }

static void edupack(void)
{
    bsp_begin(P);
    bsp_nprocs_t p = bsp_nprocs();
    bsp_pid_t s = bsp_pid();
    int *all = calloc((size_t)p, sizeof *all);
    int mine = s + 1, sum = 0;
    bsp_push_reg(all, p * (int)sizeof *all);
    bsp_sync();
    for (bsp_pid_t t = 0; t < p; ++t)
        bsp_put(t, &mine, all, s * (int)sizeof mine, sizeof mine);
    bsp_sync();
    for (bsp_pid_t t = 0; t < p; ++t)
        sum += all[t];
    printf("process %d of %d: sum %d\n", s, p, sum);
    bsp_pop_reg(all);
    bsp_end();
    free(all);
}

static void push_pop(void)
{
    int a[2] = {0, 0}, b = 0, c = 0, v;
    bsp_begin(3);
    bsp_pid_t s = bsp_pid(), right = (s + 1) % 3;
    /* Superstep 0: a pushed and popped again, b pushed. */
    bsp_push_reg(a, sizeof a);
    bsp_pop_reg(a);
    bsp_push_reg(&b, sizeof b);
    bsp_sync();
    /* Superstep 1: b usable; a (4 bytes) and c pushed. */
    v = 10 + s;
    bsp_put(right, &v, &b, 0, sizeof v);
    bsp_push_reg(a, sizeof a[0]);
    bsp_push_reg(&c, sizeof c);
    bsp_sync();
    /* Superstep 2: a pushed again (8 bytes) and popped in issue order: the 4-byte
     * registration of superstep 1 stays; c popped (it still receives this superstep's
     * put); puts to a and c. */
    bsp_push_reg(a, sizeof a);
    bsp_pop_reg(a);
    v = 20 + s;
    bsp_put(right, &v, a, 0, sizeof v);
    v = 30 + s;
    bsp_put(right, &v, &c, 0, sizeof v);
    bsp_pop_reg(&c);
    bsp_sync();
    /* Superstep 3: a (4 bytes) pushed and popped with b, in one superstep each. */
    v = 40 + s;
    bsp_put(right, &v, a, 0, sizeof v);
    bsp_pop_reg(a);
    bsp_pop_reg(&b);
    bsp_push_reg(&c, sizeof c);
    bsp_pop_reg(&c);
    bsp_sync();
    printf("[%d] a = %d %d, b = %d, c = %d\n", s, a[0], a[1], b, c);
    bsp_end();
}

static void overlapping_gets(void)
{
    int src[4], dst[4] = {-1, -1, -1, -1};
    bsp_begin(3);
    bsp_pid_t s = bsp_pid();
    for (int i = 0; i < 4; ++i)
        src[i] = 100 * s + i;
    bsp_push_reg(src, sizeof src);
    bsp_sync();
    /* Issued from the highest source to this process itself: applied in issue order,
     * whatever the order of the sources. */
    bsp_get((s + 2) % 3, src, 0, dst, 3 * sizeof(int));             /* dst[0..2] */
    bsp_hpget((s + 1) % 3, src, sizeof(int), dst + 1, 2 * sizeof(int)); /* dst[1..2] */
    bsp_get(s, src, 3 * sizeof(int), dst + 2, sizeof(int));         /* dst[2] */
    bsp_get((s + 1) % 3, src, 3 * sizeof(int), dst + 3, sizeof(int)); /* dst[3] */
    bsp_get((s + 2) % 3, src, 0, dst + 3, sizeof(int));             /* dst[3] again */
    bsp_sync();
    printf("[%d] dst = %d %d %d %d\n", s, dst[0], dst[1], dst[2], dst[3]);
    bsp_pop_reg(src);
    bsp_end();
}

static void spmd(void)
{
    if (is("edupack"))
        edupack();
    else if (is("push_pop"))
        push_pop();
    else if (is("overlapping_gets"))
        overlapping_gets();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    which = argv[1];
    bsp_init(spmd, argc, argv);
    if (is("edupack")) {
        P = bsp_nprocs();
        printf("How many processes? (at most %d)\n", P);
        fflush(stdout);
        if (scanf("%d", &P) != 1) {
            fprintf(stderr, "no number of processes\n");
            return 1;
        }
    }
    spmd();
    printf("process 0 continues after bsp_end\n");
    return 0;
}
