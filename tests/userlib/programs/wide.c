/* A BSPlib program compiled with -DBSP_WIDE_TYPES: every size is bsp_size_t (int64_t)
 * and the calls with sizes go to the wide entry points of libbsp (bsp_put_wide, ...).
 *
 * Every process registers an area of 4 GiB + 4 MiB + 77 bytes, mapped with MAP_NORESERVE
 * so that only the pages touched cost memory, and exchanges blocks with its neighbours
 * at offsets above 2^31 and 2^32, across both boundaries and up to the last byte of the
 * area, by bsp_put, bsp_hpput, bsp_get and bsp_hpget; a block of 3 MiB crosses 2^31 in
 * several units of the messaging layer. The blocks do not overlap, so an offset cut to
 * 32 bits cannot go unnoticed. Then BSMP through the wide names. Every
 * received byte is checked against the pattern of its sender; the program prints what
 * it checked, one line per process and phase (tests/userlib/programs/wide_test.cpp). */
#define _GNU_SOURCE
#include <bsp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define GIB ((bsp_size_t)1 << 30)
#define MIB ((bsp_size_t)1 << 20)
#define AREA (4 * GIB + 4 * MIB + 77)
#define BIG (3 * MIB)

/* The byte that process p writes at offset off of a destination area. */
static unsigned char pattern(int p, bsp_size_t off)
{
    return (unsigned char)((uint64_t)off * 131 + (uint64_t)off / 4093 + 17 * (unsigned)p + 1);
}

static void fill(unsigned char *buf, int p, bsp_size_t off, bsp_size_t n)
{
    for (bsp_size_t i = 0; i < n; ++i)
        buf[i] = pattern(p, off + i);
}

/* Number of bytes of buf (received at offset off) that differ from the pattern of p. */
static bsp_size_t wrong(const unsigned char *buf, int p, bsp_size_t off, bsp_size_t n)
{
    bsp_size_t bad = 0;
    for (bsp_size_t i = 0; i < n; ++i)
        bad += buf[i] != pattern(p, off + i);
    return bad;
}

/* Blocks written by puts: (offset, size), with the last one ending at the area's end. */
static const bsp_size_t put_blocks[][2] = {
    {0, 16},
    {2 * GIB + 2 * MIB + 5, 24},  /* above 2^31 */
    {4 * GIB + 2 * MIB + 11, 40}, /* above 2^32 */
    {4 * GIB - 3, 8},             /* across 2^32 */
    {2 * GIB - BIG / 2, BIG},     /* 3 MiB across 2^31, several units */
    {AREA - 32, 32},              /* the last bytes of the area */
};
#define NBLOCKS (sizeof put_blocks / sizeof put_blocks[0])

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    const int p = bsp_pid(), n = bsp_nprocs();
    const int right = (p + 1) % n, left = (p + n - 1) % n;
    unsigned char *area =
        mmap(NULL, (size_t)AREA, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        bsp_abort("process %d: mmap of %" PRId64 " bytes failed", p, (int64_t)AREA);
    static unsigned char src[BIG], got[BIG], got2[128];
    static int64_t small;
    bsp_push_reg(area, AREA);
    bsp_pushregister(&small, sizeof small); /* the older name, wide too */
    bsp_sync();

    /* Superstep 1: buffered puts to the right neighbour, even blocks unbuffered. The
     * source buffer is overwritten after every bsp_put (it was copied), but must stay
     * as it is for a bsp_hpput until the sync: those get their own buffer. */
    static unsigned char hpsrc[NBLOCKS][BIG];
    for (size_t b = 0; b < NBLOCKS; ++b) {
        const bsp_size_t off = put_blocks[b][0], len = put_blocks[b][1];
        if (b % 2 == 0) {
            fill(hpsrc[b], p, off, len);
            bsp_hpput(right, hpsrc[b], area, off, len);
        } else {
            fill(src, p, off, len);
            bsp_put(right, src, area, off, len);
            memset(src, 0, (size_t)len);
        }
    }
    bsp_sync();
    bsp_size_t bad = 0, checked = 0;
    for (size_t b = 0; b < NBLOCKS; ++b) {
        bad += wrong(area + put_blocks[b][0], left, put_blocks[b][0], put_blocks[b][1]);
        checked += put_blocks[b][1];
    }
    printf("[%d] puts from %d: %" PRId64 " bytes at offsets up to %" PRId64 ", %" PRId64
           " wrong\n",
           p, left, (int64_t)checked, (int64_t)(AREA - 32), (int64_t)bad);
    fflush(stdout);
    bsp_sync(); /* everyone has read its area before the gets below */

    /* Superstep 2: read back from the right neighbour what this process put there. */
    bsp_get(right, area, 2 * GIB - BIG / 2, got, BIG);
    bsp_hpget(right, area, 4 * GIB + 2 * MIB + 11, got2, 40);
    bsp_get(right, area, 4 * GIB - 3, got2 + 40, 8);
    bsp_hpget(right, area, AREA - 32, got2 + 48, 32);
    bsp_sync();
    bad = wrong(got, p, 2 * GIB - BIG / 2, BIG) + wrong(got2, p, 4 * GIB + 2 * MIB + 11, 40) +
          wrong(got2 + 40, p, 4 * GIB - 3, 8) + wrong(got2 + 48, p, AREA - 32, 32);
    printf("[%d] gets from %d: %" PRId64 " bytes, %" PRId64 " wrong\n", p, right,
           (int64_t)(BIG + 40 + 8 + 32), (int64_t)bad);
    fflush(stdout);

    /* Superstep 3: BSMP through the wide names (tag size and sizes are bsp_size_t). */
    bsp_size_t tagsize = sizeof(int64_t);
    bsp_set_tag_size(&tagsize);
    bsp_sync();
    for (int k = 0; k < 2; ++k) {
        const int64_t tag = ((int64_t)1 << 40) + 100 * p + k;
        const bsp_size_t len = 5 + k;
        fill(src, p, 3 * GIB + k, len);
        bsp_send(right, &tag, src, len);
    }
    bsp_sync();
    bsp_size_t nmsg = -1, nbytes = -1, nmsg2 = -1, nbytes2 = -1, status = -2;
    bsp_qsize(&nmsg, &nbytes);
    bsp_bsmp_info(&nmsg2, &nbytes2);
    int64_t tag = 0;
    bsp_get_tag(&status, &tag);
    unsigned char payload[8] = {0};
    bsp_move(payload, status);
    bad = wrong(payload, left, 3 * GIB, status);
    printf("[%d] queue %" PRId64 " messages %" PRId64 " bytes (bsmp_info %" PRId64 " %" PRId64
           "), first tag 2^40+%" PRId64 " length %" PRId64 ", %" PRId64 " wrong",
           p, (int64_t)nmsg, (int64_t)nbytes, (int64_t)nmsg2, (int64_t)nbytes2,
           tag - ((int64_t)1 << 40), (int64_t)status, (int64_t)bad);
    void *tp = NULL, *pp = NULL;
    const bsp_size_t len = bsp_hpmove(&tp, &pp);
    memcpy(&tag, tp, sizeof tag);
    printf(", hpmove tag 2^40+%" PRId64 " length %" PRId64 ", %" PRId64 " wrong, then %" PRId64
           "\n",
           tag - ((int64_t)1 << 40), (int64_t)len, (int64_t)wrong(pp, left, 3 * GIB + 1, len),
           (int64_t)bsp_hpmove(&tp, &pp));
    fflush(stdout);
    tagsize = 0;
    bsp_set_tagsize(&tagsize);
    printf("[%d] previous tag size %" PRId64 "\n", p, (int64_t)tagsize);
    bsp_pop_reg(area);
    bsp_popregister(&small);
    bsp_sync();
    munmap(area, (size_t)AREA);
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
