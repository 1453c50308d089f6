/* Misuse with BSP_WIDE_TYPES, one case per argv[1]: sizes and offsets beyond the range of
 * an int must be reported exactly (never cut to 32 bits, which would turn -2^32 into 0
 * or 2^32 + 4 into 4). Every process registers an area of 4 GiB + 4 KiB (+ 8 bytes on
 * process 1) mapped with MAP_NORESERVE; each case must end the whole program with one
 * message naming the call as the program wrote it, the process and the reason. */
#define _GNU_SOURCE
#include <bsp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define AREA (((bsp_size_t)1 << 32) + 4096)

static const char *which;

static int is(const char *name) { return strcmp(which, name) == 0; }

static void spmd(void)
{
    long long y = 0;
    bsp_begin(3);
    const bsp_size_t size = AREA + (bsp_pid() == 1 ? 8 : 0);
    unsigned char *area = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        bsp_abort("process %d: mmap failed", bsp_pid());
    bsp_push_reg(area, size);
    bsp_sync();
    if (is("push_negative") && bsp_pid() == 2)
        bsp_push_reg(&y, -((bsp_size_t)1 << 32));
    if (is("put_negative_offset") && bsp_pid() == 0)
        bsp_put(1, &y, area, -3000000000LL, 4);
    if (is("get_negative_size") && bsp_pid() == 2)
        bsp_get(0, area, 0, &y, -((bsp_size_t)1 << 32) - 5);
    if (is("hpput_beyond_end") && bsp_pid() == 0) /* process 1's area is 8 bytes longer */
        bsp_hpput(1, &y, area, AREA + 4, 8);
    if (is("hpget_beyond_end") && bsp_pid() == 1)
        bsp_hpget(2, area, ((bsp_size_t)1 << 32) + 4, &y, 4096);
    if (is("put_offset_2_33") && bsp_pid() == 1)
        bsp_put(0, &y, area, (bsp_size_t)1 << 33, 1);
    if (is("send_negative") && bsp_pid() == 1)
        bsp_send(0, NULL, &y, -3000000000LL);
    if (is("tagsize_too_large") && bsp_pid() == 0) {
        bsp_size_t t = 3000000000LL;
        bsp_set_tagsize(&t);
    }
    if (is("move_negative")) {
        bsp_send((bsp_pid() + 1) % 3, NULL, &y, 8);
        bsp_sync();
        if (bsp_pid() == 2)
            bsp_move(&y, -((bsp_size_t)1 << 31) - 1);
    }
    bsp_sync();
    printf("no error detected on process %d\n", bsp_pid());
    bsp_end();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    which = argv[1];
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
