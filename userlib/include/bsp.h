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
 * Semantics and every error message are documented in Documentation/bsplib.rst.
 */
#ifndef BSP_H
#define BSP_H

#ifdef __cplusplus
extern "C" {
#endif

#define BSPLIB_VERSION 1998 /* the standard this header follows */

/*
 * Registration identifiers and the remote source of a get are addresses that libbsp
 * compares but never reads through: tell GCC, so that registering a variable before
 * its first assignment (as seed 003's examples do) draws no -Wmaybe-uninitialized.
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
int bsp_pid(void);
int bsp_nprocs(void);
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
void bsp_push_reg(const void *ident, int size) BSP_ADDRESS_ONLY(1);
void bsp_pop_reg(const void *ident) BSP_ADDRESS_ONLY(1);

/* DRMA: buffered puts and gets */
void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes);
void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes) BSP_ADDRESS_ONLY(2);

/* DRMA: unbuffered (high performance) puts and gets */
void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes);
void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes) BSP_ADDRESS_ONLY(2);

/* BSMP: bulk synchronous message passing */
void bsp_set_tagsize(int *tag_nbytes);
void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes);
void bsp_qsize(int *nmessages, int *accum_nbytes);
void bsp_get_tag(int *status, void *tag);
void bsp_move(void *payload, int reception_nbytes);
int bsp_hpmove(void **tag_ptr, void **payload_ptr);

/* Older names (seed literature, Oxford BSP toolset) */
void bsp_pushregister(const void *ident, int size) BSP_ADDRESS_ONLY(1);
void bsp_popregister(const void *ident) BSP_ADDRESS_ONLY(1);
void bsp_set_tag_size(int *tag_nbytes);
void bsp_bsmp_info(int *nmessages, int *accum_nbytes);

#ifdef __cplusplus
}
#endif

#endif /* BSP_H */
