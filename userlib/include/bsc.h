/*
 * bsc.h - bulk synchronous collectives for libbsp, source-compatible with the
 * collectives interface of BSPonMPI (Suijlen), so that programs written against it
 * build with bspcc and run unchanged. Reference and algorithms:
 * Documentation/bsplib.rst, "Collectives".
 *
 * Communication is scheduled, not performed: every request names the superstep of the
 * current epoch in which it is issued (its "depends" step; steps count from bsc_start,
 * 0) and returns the step in which its result is available. A request for the current
 * step (or an earlier one) is issued at once, like bsp_put/bsp_get; later ones wait in a
 * local queue that bsc_sync plays, one bsp_sync per step. Collectives return the step
 * after their last communication: chaining a collective on the result of another is
 * passing that step as its depends argument; starting several at the same step runs
 * them in the same supersteps. bsc_sync(bsc_flush) runs the queue to its end on every
 * process and ends the epoch (the step count restarts at 0).
 *
 * Groups: bsc_all (every process, in pid order), or a group made collectively by
 * bsc_group_create_partition or bsc_group_create_neighbourhood. Every member of a group
 * calls a collective with the same depends, root, group and sizes; processes outside the
 * group do not call it, but they take part in the supersteps it needs through their own
 * bsc_sync (bsc_flush waits for everyone).
 *
 * With BSP_WIDE_TYPES, bsc_size_t is the 64-bit bsp_size_t and the functions with sizes
 * are the _wide symbols of libbsp, as for bsp.h.
 */
#ifndef BSC_H
#define BSC_H

#include <bsp.h>

#ifdef BSP_WIDE_TYPES
#define BSC_WIDE(name) __asm__(#name "_wide")
#else
#define BSC_WIDE(name)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A superstep number of the current epoch. */
typedef unsigned bsc_step_t;
/* Sizes in bytes and element counts. */
typedef bsp_size_t bsc_size_t;
/* Process ids. */
typedef bsp_pid_t bsc_pid_t;
/* A process group: bsc_all or a group made by bsc_group_create_*. */
typedef void *bsc_group_t;

/* Every process, in pid order (a null group). */
extern const bsc_group_t bsc_all;
/* The first step of an epoch (0). */
extern const bsc_step_t bsc_start;
/* bsc_sync(bsc_flush): run every queued request on every process and end the epoch. */
extern const bsc_step_t bsc_flush;

/* Groups. Both calls are collective over all processes and synchronise (two
 * supersteps, ending the current one). A partition puts the processes that pass the
 * same symbol in one group, in pid order. A neighbourhood is the caller's list of
 * neighbours (including itself) without those that do not list the caller in turn, in
 * the caller's order: that order numbers the members for scatter, gather, allgather,
 * alltoall and scan. */
bsc_group_t bsc_group_create_partition(unsigned symbol);
bsc_group_t bsc_group_create_neighbourhood(bsc_pid_t *neighbours, bsc_size_t size)
    BSC_WIDE(bsc_group_create_neighbourhood);
void bsc_group_destroy(bsc_group_t group);

/* The BSP cost parameters the algorithms are chosen by: g in seconds per byte of an
 * h-relation and L in seconds per superstep (from BSP_G and BSP_L, as bspprobe
 * prints them). */
double bsc_g(void);
double bsc_L(void);

/* The current step of the epoch. */
bsc_step_t bsc_current(void);
/* Plays the queue until step `until` has started (one bsp_sync per step), or with
 * bsc_flush until every process has nothing left; returns the new current step (0 after
 * bsc_flush). A step not after the current one is a no-op. */
bsc_step_t bsc_sync(bsc_step_t until);

/* bsp_put and bsp_get issued in step `depends`; both return depends + 1. The source of
 * a put is read when the put is issued. */
bsc_step_t bsc_put(bsc_step_t depends, bsc_pid_t dst_pid, const void *src, void *dst,
                   bsc_size_t offset, bsc_size_t size) BSC_WIDE(bsc_put);
bsc_step_t bsc_get(bsc_step_t depends, bsc_pid_t src_pid, const void *src, bsc_size_t offset,
                   void *dst, bsc_size_t size) BSC_WIDE(bsc_get);

/* An associative operator: a = a0 (+) xs[0] (+) ... over the `size` bytes of xs, as
 * one element (reductions) or as the prefix of every element (scan). a must not overlap
 * a0 or xs. */
typedef void (*bsc_reduce_t)(void *a, const void *a0, const void *xs, bsc_size_t size);

/* Runs reducer(a, a0, xs, size) once the communication of step `depends` is complete
 * (at the start of step depends + 1); returns depends + 1. */
bsc_step_t bsc_exec_reduce(bsc_step_t depends, bsc_reduce_t reducer, void *a, const void *a0,
                           const void *xs, bsc_size_t size) BSC_WIDE(bsc_exec_reduce);

/* Collectives. root is a pid (a member of the group); "rank" below is a member's
 * position in the group. Memory marked registered must be registered (bsp_push_reg) by
 * every member when the collective communicates.
 *   scatter    dst (registered) of rank i <- src of root, bytes [i size, (i+1) size)
 *   gather     dst of root, bytes [i size, (i+1) size) <- src (registered) of rank i
 *   allgather  dst of every member, bytes [i size, ...) <- src (registered) of rank i
 *   alltoall   dst (registered) of rank j, bytes [i size, ...) <- src of rank i,
 *              bytes [j size, ...)
 *   bcast      dst (registered) of every member <- src of root, size bytes
 *   reduce     dst of root <- (+) of the nmemb elements of size bytes of every member's
 *              src, in rank order; tmp_space registered, (p + 1) size bytes
 *   allreduce  the same on every member
 *   scan       dst of rank j, element i <- (+) of every element of ranks < j, then of
 *              elements 0..i of rank j; tmp_space registered, 2 p size bytes
 * zero is the neutral element of the reducer. */
bsc_step_t bsc_scatter(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                       void *dst, bsc_size_t size) BSC_WIDE(bsc_scatter);
bsc_step_t bsc_gather(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, bsc_size_t size) BSC_WIDE(bsc_gather);
bsc_step_t bsc_allgather(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         bsc_size_t size) BSC_WIDE(bsc_allgather);
bsc_step_t bsc_alltoall(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                        bsc_size_t size) BSC_WIDE(bsc_alltoall);
bsc_step_t bsc_bcast(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                     void *dst, bsc_size_t size) BSC_WIDE(bsc_bcast);
bsc_step_t bsc_reduce(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, void *tmp_space, bsc_reduce_t reducer, const void *zero,
                      bsc_size_t nmemb, bsc_size_t size) BSC_WIDE(bsc_reduce);
bsc_step_t bsc_allreduce(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         void *tmp_space, bsc_reduce_t reducer, const void *zero, bsc_size_t nmemb,
                         bsc_size_t size) BSC_WIDE(bsc_allreduce);
bsc_step_t bsc_scan(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                    void *tmp_space, bsc_reduce_t reducer, const void *zero, bsc_size_t nmemb,
                    bsc_size_t size) BSC_WIDE(bsc_scan);

#undef BSC_WIDE

#ifdef __cplusplus
}
#endif

#endif /* BSC_H */
