// The BSP_WIDE_TYPES entry points of bsc.h (bsc_put_wide, ...; version node BSC_1.0 of
// libbsp.map), as api_wide.cpp does for bsp.h: this file sees bsc.h as a wide program
// does, so each definition takes the header's asm label and is checked against it.
#define BSP_WIDE_TYPES 1
#include "bsc.h"

#include <type_traits>

#include "bsc_core.hpp"

static_assert(std::is_same_v<bsc_size_t, std::int64_t>, "bsc_size_t is the core's int64");

extern "C" {

bsc_group_t bsc_group_create_neighbourhood(bsc_pid_t *neighbours, bsc_size_t size) {
    return bsp::bsc::group_create_neighbourhood(neighbours, size);
}
bsc_step_t bsc_put(bsc_step_t depends, bsc_pid_t dst_pid, const void *src, void *dst,
                   bsc_size_t offset, bsc_size_t size) {
    return bsp::bsc::put(depends, dst_pid, src, dst, offset, size);
}
bsc_step_t bsc_get(bsc_step_t depends, bsc_pid_t src_pid, const void *src, bsc_size_t offset,
                   void *dst, bsc_size_t size) {
    return bsp::bsc::get(depends, src_pid, src, offset, dst, size);
}
bsc_step_t bsc_exec_reduce(bsc_step_t depends, bsc_reduce_t reducer, void *a, const void *a0,
                           const void *xs, bsc_size_t size) {
    return bsp::bsc::exec_reduce(depends, bsp::bsc::reducer_of("bsc_exec_reduce", reducer), a, a0,
                                 xs, size);
}
bsc_step_t bsc_scatter(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                       void *dst, bsc_size_t size) {
    return bsp::bsc::scatter(depends, root, group, src, dst, size);
}
bsc_step_t bsc_gather(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, bsc_size_t size) {
    return bsp::bsc::gather(depends, root, group, src, dst, size);
}
bsc_step_t bsc_allgather(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         bsc_size_t size) {
    return bsp::bsc::allgather(depends, group, src, dst, size);
}
bsc_step_t bsc_alltoall(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                        bsc_size_t size) {
    return bsp::bsc::alltoall(depends, group, src, dst, size);
}
bsc_step_t bsc_bcast(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                     void *dst, bsc_size_t size) {
    return bsp::bsc::bcast(depends, root, group, src, dst, size);
}
bsc_step_t bsc_reduce(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, void *tmp_space, bsc_reduce_t reducer, const void *zero,
                      bsc_size_t nmemb, bsc_size_t size) {
    return bsp::bsc::reduce(depends, root, group, src, dst, tmp_space,
                            bsp::bsc::reducer_of("bsc_reduce", reducer), zero, nmemb, size);
}
bsc_step_t bsc_allreduce(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         void *tmp_space, bsc_reduce_t reducer, const void *zero, bsc_size_t nmemb,
                         bsc_size_t size) {
    return bsp::bsc::allreduce(depends, group, src, dst, tmp_space,
                               bsp::bsc::reducer_of("bsc_allreduce", reducer), zero, nmemb, size);
}
bsc_step_t bsc_scan(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                    void *tmp_space, bsc_reduce_t reducer, const void *zero, bsc_size_t nmemb,
                    bsc_size_t size) {
    return bsp::bsc::scan(depends, group, src, dst, tmp_space,
                          bsp::bsc::reducer_of("bsc_scan", reducer), zero, nmemb, size);
}

}  // extern "C"
