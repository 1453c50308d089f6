// The collectives library of bsc.h on 64-bit sizes: shared by the int entry points
// (bsc.cpp) and the BSP_WIDE_TYPES ones (bsc_wide.cpp), and used by the collectives
// benchmark through the *_with functions, which take the algorithm instead of choosing
// it. Documentation/bsplib.rst, "Collectives".
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bsc.h"
#include "c_api.hpp"

namespace bsp::bsc {

using Size = std::int64_t;
// a = a0 (+) xs over size bytes (the user's bsc_reduce_t, whatever its size type).
using Reducer = std::function<void(void *, const void *, const void *, Size)>;
using Action = std::function<void()>;

inline constexpr bsc_step_t kFlush = UINT_MAX;

// The BSP parameters when BSP_G and BSP_L are not set: bspprobe's total exchange on
// this project's development machine (UDP over loopback, p = 4; Documentation/bsplib.rst).
inline constexpr double kDefaultLMicroseconds = 400.0;
inline constexpr double kDefaultGMicrosecondsPerWord = 0.2;

enum class Algorithm { Auto, Direct, TwoPhase, Tree };
enum class Collective { Bcast, Reduce, Allreduce, Scan };

const char *algorithm_name(Algorithm a);
// BSC_ALGORITHM (auto, direct, two-phase, tree); Auto when unset.
Algorithm forced_algorithm(const char *call);
std::vector<Algorithm> algorithms(Collective c);
// The BSP cost in seconds of collective c by algorithm a in a group of n members with
// elements (or a message) of size bytes.
double cost(Collective c, Algorithm a, int n, Size size);
Algorithm choose(const char *call, Collective c, int n, Size size);
double g_seconds_per_byte();
double l_seconds();

bsc_step_t current();
bsc_step_t sync(bsc_step_t until);
bsc_step_t put(bsc_step_t depends, int pid, const void *src, void *dst, Size offset, Size size);
bsc_step_t get(bsc_step_t depends, int pid, const void *src, Size offset, void *dst, Size size);
bsc_step_t exec_reduce(bsc_step_t depends, Reducer reducer, void *a, const void *a0, const void *xs,
                       Size size);

bsc_group_t group_create_partition(unsigned symbol);
bsc_group_t group_create_neighbourhood(const int *neighbours, Size size);
void group_destroy(bsc_group_t g);

bsc_step_t scatter(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                   Size size);
bsc_step_t gather(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                  Size size);
bsc_step_t allgather(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, Size size);
bsc_step_t alltoall(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, Size size);
bsc_step_t bcast(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                 Size size);
bsc_step_t bcast_with(Algorithm a, bsc_step_t depends, int root, bsc_group_t group, const void *src,
                      void *dst, Size size);
bsc_step_t reduce(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                  void *tmp, const Reducer &f, const void *zero, Size nmemb, Size size);
bsc_step_t reduce_with(Algorithm a, bsc_step_t depends, int root, bsc_group_t group,
                       const void *src, void *dst, void *tmp, const Reducer &f, const void *zero,
                       Size nmemb, Size size);
bsc_step_t allreduce(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, void *tmp,
                     const Reducer &f, const void *zero, Size nmemb, Size size);
bsc_step_t allreduce_with(Algorithm a, bsc_step_t depends, bsc_group_t group, const void *src,
                          void *dst, void *tmp, const Reducer &f, const void *zero, Size nmemb,
                          Size size);
bsc_step_t scan(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, void *tmp,
                const Reducer &f, const void *zero, Size nmemb, Size size);
bsc_step_t scan_with(Algorithm a, bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                     void *tmp, const Reducer &f, const void *zero, Size nmemb, Size size);

// The user's reducer as a Reducer: its size parameter is T (int or int64_t); a byte count
// T cannot hold ends the program.
template <typename T>
Reducer reducer_of(const char *call, void (*f)(void *, const void *, const void *, T)) {
    if (f == nullptr) {
        return {};
    }
    return [call, f](void *a, const void *a0, const void *xs, Size n) {
        if (n > std::numeric_limits<T>::max()) {
            capi::misuse(call, std::to_string(n) +
                                   " bytes for the reducer, more than an int can hold (compile "
                                   "the program with -DBSP_WIDE_TYPES for 64-bit sizes)");
        }
        f(a, a0, xs, static_cast<T>(n));
    };
}

}  // namespace bsp::bsc
