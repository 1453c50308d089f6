/*
 * bsp.h - the BSPlib programming interface (Hill, McColl, Stefanescu, Goudreau,
 * Lang, Rao, Suel, Tsantilas, Bisseling: "BSPlib: The BSP programming library",
 * 1998), as implemented by libbsp of the AF_BSP project.
 *
 * Usable from C and C++. Sizes, offsets and process ids are `int`, exactly as in
 * the 1998 standard, so existing BSPlib programs compile unchanged. The older
 * names used in the literature (bsp_pushregister, bsp_popregister,
 * bsp_set_tag_size, bsp_bsmp_info) are provided as well.
 *
 * Wide types (opt-in): a program that defines BSP_WIDE_TYPES before including this
 * header (or compiles with -DBSP_WIDE_TYPES) gets every size, offset, byte count and
 * message count as bsp_size_t = int64_t; process ids stay int. The functions with
 * sizes are then other symbols of libbsp (bsp_put is bsp_put_wide, version node
 * BSPLIB_1.1), bound by GNU asm labels, so the int ABI (BSPLIB_1.0) never changes.
 * Without the macro bsp_size_t is int and the declarations are those of the standard.
 *
 * Semantics and every error message are documented in Documentation/bsplib.rst.
 */
#ifndef BSP_H
#define BSP_H

/* bsp_size_t: the type of sizes, offsets and counts; BSP_WIDE(name) binds a function
 * with sizes to its wide symbol name_wide (nothing without BSP_WIDE_TYPES). */
#ifdef BSP_WIDE_TYPES
#include <stdint.h>
typedef int64_t bsp_size_t; /* signed: bsp_get_tag and bsp_hpmove report -1 */
#if defined(__GNUC__) || defined(__clang__)
#define BSP_WIDE(name) __asm__(#name "_wide")
#else
#error "BSP_WIDE_TYPES needs a compiler with GNU asm labels (GCC, Clang)"
#endif
#else
typedef int bsp_size_t;
#define BSP_WIDE(name)
#endif

/* bsp_pid_t, bsp_nprocs_t: process ids and counts (the names of BSPonMPI and MulticoreBSP
 * for C). int in both modes: the 1998 prototypes use int, and a job has at most 65535
 * processes, which an int holds whatever the size type. */
typedef int bsp_pid_t;
typedef int bsp_nprocs_t;

#ifdef __cplusplus
extern "C" {
#endif

#define BSPLIB_VERSION 1998 /* the standard this header follows */

/*
 * Registration identifiers and the remote source of a get are addresses that libbsp
 * compares but never reads through: tell GCC, so that registering a variable before
 * its first assignment (as [SHM97]'s examples do) draws no -Wmaybe-uninitialized.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define BSP_ADDRESS_ONLY(i) __attribute__((access(none, i)))
#else
#define BSP_ADDRESS_ONLY(i)
#endif

/* Initialisation */
void bsp_init(void (*spmd_part)(void), int argc, char **argv);
void bsp_begin(int maxprocs);
void bsp_end(void);

/* Enquiry */
bsp_pid_t bsp_pid(void);
bsp_nprocs_t bsp_nprocs(void);
double bsp_time(void);

/* Synchronisation */
void bsp_sync(void);

/* Halt: prints the formatted message and ends every process of the program. */
void bsp_abort(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* DRMA: registration (takes effect at the next bsp_sync, matched by call order) */
void bsp_push_reg(const void *ident, bsp_size_t size) BSP_WIDE(bsp_push_reg) BSP_ADDRESS_ONLY(1);
void bsp_pop_reg(const void *ident) BSP_ADDRESS_ONLY(1);

/* DRMA: buffered puts and gets */
void bsp_put(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes)
    BSP_WIDE(bsp_put);
void bsp_get(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes)
    BSP_WIDE(bsp_get) BSP_ADDRESS_ONLY(2);

/* DRMA: unbuffered (high performance) puts and gets */
void bsp_hpput(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes)
    BSP_WIDE(bsp_hpput);
void bsp_hpget(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes)
    BSP_WIDE(bsp_hpget) BSP_ADDRESS_ONLY(2);

/* BSMP: bulk synchronous message passing */
void bsp_set_tagsize(bsp_size_t *tag_nbytes) BSP_WIDE(bsp_set_tagsize);
void bsp_send(int pid, const void *tag, const void *payload, bsp_size_t payload_nbytes)
    BSP_WIDE(bsp_send);
void bsp_qsize(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) BSP_WIDE(bsp_qsize);
void bsp_get_tag(bsp_size_t *status, void *tag) BSP_WIDE(bsp_get_tag);
void bsp_move(void *payload, bsp_size_t reception_nbytes) BSP_WIDE(bsp_move);
bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr) BSP_WIDE(bsp_hpmove);

/* Older names (seed literature, Oxford BSP toolset) */
void bsp_pushregister(const void *ident, bsp_size_t size) BSP_WIDE(bsp_pushregister)
    BSP_ADDRESS_ONLY(1);
void bsp_popregister(const void *ident) BSP_ADDRESS_ONLY(1);
void bsp_set_tag_size(bsp_size_t *tag_nbytes) BSP_WIDE(bsp_set_tag_size);
void bsp_bsmp_info(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) BSP_WIDE(bsp_bsmp_info);

#undef BSP_WIDE

#ifdef __cplusplus
}
#endif

#endif /* BSP_H */
