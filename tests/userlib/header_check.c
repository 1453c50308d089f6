/* Compile-only check of bsp.h (Libbsp.HeaderCompiles.*: tests/userlib/CMakeLists.txt),
 * as C11 with -Wall -Wextra -Werror -pedantic, with and without BSP_WIDE_TYPES: every
 * function of bsp.h has exactly the type expected (the 1998 int prototypes, or the same
 * with int64_t sizes). */
#include <bsc.h>
#include <bsp.h>
#include <stdint.h>

#ifdef BSP_WIDE_TYPES
#define SIZE int64_t
#else
#define SIZE int
#endif

#define HAS_TYPE(f, type) _Generic(&(f), type: 1, default: 0)

_Static_assert(_Generic((bsp_size_t)0, SIZE: 1, default: 0), "bsp_size_t");
/* The names of BSPonMPI and MulticoreBSP for C: int in both modes. */
_Static_assert(_Generic((bsp_pid_t)0, int: 1, default: 0), "bsp_pid_t");
_Static_assert(_Generic((bsp_nprocs_t)0, int: 1, default: 0), "bsp_nprocs_t");
/* bsc.h follows bsp_size_t as BSPonMPI's does. */
_Static_assert(_Generic((bsc_size_t)0, SIZE: 1, default: 0), "bsc_size_t");
_Static_assert(_Generic((bsc_step_t)0, unsigned: 1, default: 0), "bsc_step_t");
_Static_assert(HAS_TYPE(bsc_put, bsc_step_t (*)(bsc_step_t, int, const void *, void *, SIZE, SIZE)),
               "bsc_put");
_Static_assert(HAS_TYPE(bsc_sync, bsc_step_t (*)(bsc_step_t)), "bsc_sync");
_Static_assert(HAS_TYPE(bsp_init, void (*)(void (*)(void), int, char **)), "bsp_init");
_Static_assert(HAS_TYPE(bsp_begin, void (*)(int)), "bsp_begin");
_Static_assert(HAS_TYPE(bsp_end, void (*)(void)), "bsp_end");
_Static_assert(HAS_TYPE(bsp_pid, int (*)(void)), "bsp_pid");
_Static_assert(HAS_TYPE(bsp_nprocs, int (*)(void)), "bsp_nprocs");
_Static_assert(HAS_TYPE(bsp_time, double (*)(void)), "bsp_time");
_Static_assert(HAS_TYPE(bsp_sync, void (*)(void)), "bsp_sync");
_Static_assert(HAS_TYPE(bsp_abort, void (*)(const char *, ...)), "bsp_abort");
_Static_assert(HAS_TYPE(bsp_push_reg, void (*)(const void *, SIZE)), "bsp_push_reg");
_Static_assert(HAS_TYPE(bsp_pop_reg, void (*)(const void *)), "bsp_pop_reg");
_Static_assert(HAS_TYPE(bsp_put, void (*)(int, const void *, void *, SIZE, SIZE)), "bsp_put");
_Static_assert(HAS_TYPE(bsp_get, void (*)(int, const void *, SIZE, void *, SIZE)), "bsp_get");
_Static_assert(HAS_TYPE(bsp_hpput, void (*)(int, const void *, void *, SIZE, SIZE)), "bsp_hpput");
_Static_assert(HAS_TYPE(bsp_hpget, void (*)(int, const void *, SIZE, void *, SIZE)), "bsp_hpget");
_Static_assert(HAS_TYPE(bsp_set_tagsize, void (*)(SIZE *)), "bsp_set_tagsize");
_Static_assert(HAS_TYPE(bsp_send, void (*)(int, const void *, const void *, SIZE)), "bsp_send");
_Static_assert(HAS_TYPE(bsp_qsize, void (*)(SIZE *, SIZE *)), "bsp_qsize");
_Static_assert(HAS_TYPE(bsp_get_tag, void (*)(SIZE *, void *)), "bsp_get_tag");
_Static_assert(HAS_TYPE(bsp_move, void (*)(void *, SIZE)), "bsp_move");
_Static_assert(HAS_TYPE(bsp_hpmove, SIZE (*)(void **, void **)), "bsp_hpmove");
_Static_assert(HAS_TYPE(bsp_pushregister, void (*)(const void *, SIZE)), "bsp_pushregister");
_Static_assert(HAS_TYPE(bsp_popregister, void (*)(const void *)), "bsp_popregister");
_Static_assert(HAS_TYPE(bsp_set_tag_size, void (*)(SIZE *)), "bsp_set_tag_size");
_Static_assert(HAS_TYPE(bsp_bsmp_info, void (*)(SIZE *, SIZE *)), "bsp_bsmp_info");

/* A use of every call, as a program writes it. */
void header_check_calls(void);
void header_check_calls(void)
{
    static char area[64];
    bsp_size_t n = 0, bytes = 0, status = 0, tagsize = 0;
    void *tag = 0, *payload = 0;
    bsp_begin(bsp_nprocs());
    bsp_push_reg(area, sizeof area);
    bsp_pushregister(area, (bsp_size_t)sizeof area);
    bsp_sync();
    bsp_put(1, area, area, 8, 4);
    bsp_hpput(1, area, area, 8, 4);
    bsp_get(1, area, 0, area + 32, 4);
    bsp_hpget(1, area, 0, area + 32, 4);
    bsp_set_tagsize(&tagsize);
    bsp_set_tag_size(&tagsize);
    bsp_send(bsp_pid(), 0, area, 4);
    bsp_qsize(&n, &bytes);
    bsp_bsmp_info(&n, &bytes);
    bsp_get_tag(&status, area);
    bsp_move(area, status);
    n = bsp_hpmove(&tag, &payload);
    bsp_pop_reg(area);
    bsp_popregister(area);
    if (bsp_time() < 0)
        bsp_abort("time %f", bsp_time());
    bsp_end();
}
