// Compile-only check of bsp.h and bsp.hpp as C++20 with -Wall -Wextra -Werror -pedantic,
// with and without BSP_WIDE_TYPES (Libbsp.HeaderCompiles.*: tests/userlib/CMakeLists.txt):
// the C functions have exactly the expected types, and the C++ layer follows bsp_size_t.
#include <bsc.h>
#include <bsp.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

#ifdef BSP_WIDE_TYPES
using Size = std::int64_t;
#else
using Size = int;
#endif

static_assert(std::is_same_v<bsp_size_t, Size>);
static_assert(std::is_same_v<bsp_pid_t, int>);  // BSPonMPI's and MulticoreBSP's names
static_assert(std::is_same_v<bsp_nprocs_t, int>);
static_assert(std::is_same_v<bsc_size_t, Size>);
[[maybe_unused]] static bsc_step_t (*const check_bsc_bcast)(bsc_step_t, int, bsc_group_t,
                                                            const void *, void *,
                                                            Size) = &bsc_bcast;
// Initialising a pointer of the exact expected type compiles only if the function has
// that type (a decltype comparison would drop GCC's access attributes with a warning).
[[maybe_unused]] static void (*const check_bsp_put)(int, const void *, void *, Size,
                                                    Size) = &bsp_put;
[[maybe_unused]] static void (*const check_bsp_get)(int, const void *, Size, void *,
                                                    Size) = &bsp_get;
[[maybe_unused]] static void (*const check_bsp_hpput)(int, const void *, void *, Size,
                                                      Size) = &bsp_hpput;
[[maybe_unused]] static void (*const check_bsp_hpget)(int, const void *, Size, void *,
                                                      Size) = &bsp_hpget;
[[maybe_unused]] static void (*const check_bsp_push_reg)(const void *, Size) = &bsp_push_reg;
[[maybe_unused]] static void (*const check_bsp_pushregister)(const void *,
                                                             Size) = &bsp_pushregister;
[[maybe_unused]] static void (*const check_bsp_pop_reg)(const void *) = &bsp_pop_reg;
[[maybe_unused]] static void (*const check_bsp_set_tagsize)(Size *) = &bsp_set_tagsize;
[[maybe_unused]] static void (*const check_bsp_set_tag_size)(Size *) = &bsp_set_tag_size;
[[maybe_unused]] static void (*const check_bsp_send)(int, const void *, const void *,
                                                     Size) = &bsp_send;
[[maybe_unused]] static void (*const check_bsp_qsize)(Size *, Size *) = &bsp_qsize;
[[maybe_unused]] static void (*const check_bsp_bsmp_info)(Size *, Size *) = &bsp_bsmp_info;
[[maybe_unused]] static void (*const check_bsp_get_tag)(Size *, void *) = &bsp_get_tag;
[[maybe_unused]] static void (*const check_bsp_move)(void *, Size) = &bsp_move;
[[maybe_unused]] static Size (*const check_bsp_hpmove)(void **, void **) = &bsp_hpmove;
[[maybe_unused]] static int (*const check_bsp_pid)() = &bsp_pid;
[[maybe_unused]] static void (*const check_bsp_begin)(int) = &bsp_begin;
static_assert(std::is_same_v<decltype(bsp::queue_size()), std::pair<Size, Size>>);
static_assert(std::is_same_v<decltype(bsp::set_tag_size(0)), Size>);

// Instantiates the C++ layer's templates, as a program does.
void header_check_cxx();
void header_check_cxx() {
    bsp::Spmd spmd(bsp::nprocs());
    std::vector<double> v(16);
    bsp::Registration reg{std::span<double>(v)};
    bsp::sync();
    const std::vector<double> src(4, 1.0);
    reg.put(1, std::span<const double>(src), 8);
    reg.hpput(1, std::span<const double>(src), 8);
    reg.get(1, 4, std::span<double>(v).first(4));
    bsp::set_tag_size(sizeof(int));
    bsp::send(0, 7, std::span<const double>(src));
    while (auto m = bsp::next_message(sizeof(int)))
        (void)m->tag_as<int>();
    (void)bsp::queue_size();
}
