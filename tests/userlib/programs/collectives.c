/* Every collective of bsc.h against a naive reference computed locally, with every
 * algorithm (BSC_ALGORITHM auto, direct, two-phase, tree: set by the program itself
 * between rounds, the same on every process), on bsc_all, on the two groups of a
 * partition working in the same supersteps, and on a neighbourhood in reverse pid order.
 * Sizes are odd, roots vary, some members reduce no element at all. The reduction
 * operator is the product of 2x2 matrices modulo 2^32: associative, not commutative, so
 * any change of order shows. Prints one line per process:
 *   [pid] collectives: N checks, W wrong
 * and one line per wrong value. */
#include <bsc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t a, b, c, d;
} mat;

static const mat identity = {1, 0, 0, 1};

static mat mul(mat x, mat y)
{
    mat r = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
             x.c * y.b + x.d * y.d};
    return r;
}

/* a = a0 * xs[0] * ... (reduce) */
static void product(void *a, const void *a0, const void *xs, bsc_size_t size)
{
    mat acc;
    memcpy(&acc, a0, sizeof acc);
    for (bsc_size_t i = 0; i < size / (bsc_size_t)sizeof(mat); ++i) {
        mat x;
        memcpy(&x, (const char *)xs + i * (bsc_size_t)sizeof(mat), sizeof x);
        acc = mul(acc, x);
    }
    memcpy(a, &acc, sizeof acc);
}

/* a[i] = a0 * xs[0] * ... * xs[i] (scan) */
static void prefix_product(void *a, const void *a0, const void *xs, bsc_size_t size)
{
    mat acc;
    memcpy(&acc, a0, sizeof acc);
    for (bsc_size_t i = 0; i < size / (bsc_size_t)sizeof(mat); ++i) {
        mat x;
        memcpy(&x, (const char *)xs + i * (bsc_size_t)sizeof(mat), sizeof x);
        acc = mul(acc, x);
        memcpy((char *)a + i * (bsc_size_t)sizeof(mat), &acc, sizeof acc);
    }
}

static int checks, wrong;
static bsp_pid_t me;
static const char *alg;

static void check(int ok, const char *what, int detail)
{
    ++checks;
    if (!ok) {
        ++wrong;
        printf("[%d] wrong: %s (%d) with BSC_ALGORITHM=%s\n", me, what, detail, alg);
    }
}

/* Element k of process pid. */
static mat input(int pid, int k)
{
    mat m = {(uint32_t)(pid + 2), (uint32_t)(3 * k + 1), (uint32_t)(pid * 7 + k), (uint32_t)(k + 5)};
    return m;
}
static int count_of(int pid) { return pid % 3; } /* 0, 1 or 2 elements */
static unsigned char byte_of(int pid, int i) { return (unsigned char)(pid * 31 + i * 7 + 1); }

enum { BUF = 4096 };
static unsigned char bdst[BUF], gsrc[64], out[BUF], src[BUF];
static mat *tmp;

/* One round of every collective on a group of n members (members[rank] = pid). */
static void round_on(bsc_group_t group, int n, const int *members, int rank)
{
    const int sizes[] = {1, 7, 1003};
    for (int si = 0; si < 3; ++si) {
        const int size = sizes[si];
        /* bcast, from another root for every size */
        const int roots[] = {0, n - 1, n / 2};
        const int root = members[roots[si]];
        for (int i = 0; i < size; ++i)
            src[i] = byte_of(root, i + 1000 * si);
        memset(bdst, 0, sizeof bdst);
        bsc_sync(bsc_bcast(bsc_start, root, group, src, bdst, size));
        int bad = 0;
        for (int i = 0; i < size; ++i)
            bad += bdst[i] != byte_of(root, i + 1000 * si);
        check(bad == 0, "bcast", size);
        bsc_sync(bsc_flush);
    }
    /* scatter and gather (5 and 3 bytes a member), alltoall (3), allgather (3) */
    {
        const int root = members[n - 1];
        for (int i = 0; i < 5 * n; ++i)
            src[i] = byte_of(me, i);
        memset(bdst, 0, sizeof bdst);
        bsc_sync(bsc_scatter(bsc_start, root, group, src, bdst, 5));
        int bad = 0;
        for (int i = 0; i < 5; ++i)
            bad += bdst[i] != byte_of(root, 5 * rank + i);
        check(bad == 0, "scatter", rank);
        bsc_sync(bsc_flush);

        for (int i = 0; i < 3; ++i)
            gsrc[i] = byte_of(me, i);
        memset(out, 0, sizeof out);
        bsc_sync(bsc_gather(bsc_start, members[0], group, gsrc, out, 3));
        bad = 0;
        if (me == members[0])
            for (int r = 0; r < n; ++r)
                for (int i = 0; i < 3; ++i)
                    bad += out[3 * r + i] != byte_of(members[r], i);
        check(bad == 0, "gather", rank);
        bsc_sync(bsc_flush);

        memset(out, 0, sizeof out);
        bsc_sync(bsc_allgather(bsc_start, group, gsrc, out, 3));
        bad = 0;
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < 3; ++i)
                bad += out[3 * r + i] != byte_of(members[r], i);
        check(bad == 0, "allgather", rank);
        bsc_sync(bsc_flush);

        for (int j = 0; j < n; ++j)
            for (int i = 0; i < 3; ++i)
                src[3 * j + i] = byte_of(me, 100 * j + i);
        memset(bdst, 0, sizeof bdst);
        bsc_sync(bsc_alltoall(bsc_start, group, src, bdst, 3));
        bad = 0;
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < 3; ++i)
                bad += bdst[3 * r + i] != byte_of(members[r], 100 * rank + i);
        check(bad == 0, "alltoall", rank);
        bsc_sync(bsc_flush);
    }
    /* reduce (two roots), allreduce and scan of 0, 1 or 2 matrices a member */
    {
        mat in[2], res[2], want = identity, before = identity;
        const int k = count_of(me);
        for (int i = 0; i < k; ++i)
            in[i] = input(me, i);
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < count_of(members[r]); ++i) {
                want = mul(want, input(members[r], i));
                if (r < rank)
                    before = mul(before, input(members[r], i));
            }
        const int roots[] = {members[0], members[n - 1]};
        for (int ri = 0; ri < 2; ++ri) {
            memset(res, 0, sizeof res);
            bsc_sync(bsc_reduce(bsc_start, roots[ri], group, in, res, tmp, product, &identity, k,
                                sizeof(mat)));
            if (me == roots[ri])
                check(memcmp(&res[0], &want, sizeof want) == 0, "reduce", ri);
            bsc_sync(bsc_flush);
        }
        memset(res, 0, sizeof res);
        bsc_sync(bsc_allreduce(bsc_start, group, in, res, tmp, product, &identity, k, sizeof(mat)));
        check(memcmp(&res[0], &want, sizeof want) == 0, "allreduce", rank);
        bsc_sync(bsc_flush);

        memset(res, 0, sizeof res);
        bsc_sync(bsc_scan(bsc_start, group, in, res, tmp, prefix_product, &identity, k,
                          sizeof(mat)));
        mat run = before;
        for (int i = 0; i < k; ++i) {
            run = mul(run, in[i]);
            check(memcmp(&res[i], &run, sizeof run) == 0, "scan", i);
        }
        bsc_sync(bsc_flush);
    }
    /* Chained: a reduce started at the step the bcast ends, one bsc_sync for both. */
    {
        mat in = input(me, 1), res = {0, 0, 0, 0}, want = identity;
        for (int r = 0; r < n; ++r)
            want = mul(want, input(members[r], 1));
        for (int i = 0; i < 11; ++i)
            src[i] = byte_of(members[0], i);
        memset(bdst, 0, sizeof bdst);
        bsc_step_t s = bsc_bcast(bsc_start, members[0], group, src, bdst, 11);
        s = bsc_allreduce(s, group, &in, &res, tmp, product, &identity, 1, sizeof(mat));
        bsc_sync(s);
        check(memcmp(&res, &want, sizeof want) == 0 && bdst[10] == byte_of(members[0], 10),
              "chained bcast and allreduce", rank);
        bsc_sync(bsc_flush);
    }
}

int main(void)
{
    bsp_begin(bsp_nprocs());
    const int p = bsp_nprocs();
    me = bsp_pid();
    tmp = calloc((size_t)(2 * p + 2), sizeof(mat));
    bsp_push_reg(bdst, sizeof bdst);
    bsp_push_reg(gsrc, sizeof gsrc);
    bsp_push_reg(tmp, (2 * p + 2) * (int)sizeof(mat));
    bsp_sync();

    int *all = malloc((size_t)p * sizeof *all), *half = malloc((size_t)p * sizeof *half);
    for (int i = 0; i < p; ++i)
        all[i] = i;
    /* Two partition groups: even and odd pids. */
    bsc_group_t parity = bsc_group_create_partition((unsigned)(me % 2));
    int nh = 0, hrank = 0;
    for (int i = me % 2; i < p; i += 2) {
        if (i == me)
            hrank = nh;
        half[nh++] = i;
    }
    /* A neighbourhood of everyone in reverse pid order (consistent on every member), and
     * one of the next two processes, of which only the acknowledged ones remain. */
    int *rev = malloc((size_t)p * sizeof *rev);
    for (int i = 0; i < p; ++i)
        rev[i] = p - 1 - i;
    bsc_group_t reversed = bsc_group_create_neighbourhood(rev, p);
    int ring[3] = {me, (me + 1) % p, (me + 2) % p}, nring = p >= 3 ? 3 : p;
    bsc_group_t next = bsc_group_create_neighbourhood(ring, nring);
    bsc_group_destroy(next);

    static const char *algs[] = {"auto", "direct", "two-phase", "tree"};
    for (int a = 0; a < 4; ++a) {
        alg = algs[a];
        setenv("BSC_ALGORITHM", alg, 1);
        round_on(bsc_all, p, all, me);
        round_on(parity, nh, half, hrank);
        round_on(reversed, p, rev, p - 1 - me);
    }
    bsc_group_destroy(parity);
    bsc_group_destroy(reversed);
    printf("[%d] collectives: %d checks, %d wrong\n", me, checks, wrong);
    bsp_end();
    free(all);
    free(half);
    free(rev);
    free(tmp);
    return 0;
}
