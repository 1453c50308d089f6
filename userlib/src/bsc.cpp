// The collectives library of bsc.h (Documentation/bsplib.rst, "Collectives"): requests
// scheduled by superstep, played by bsc_sync, and the collectives built from them, each
// with its algorithms and the BSP cost that chooses between them. Single-threaded, as a
// BSPlib process is; the int entry points are here, the BSP_WIDE_TYPES ones in
// bsc_wide.cpp, both on the 64-bit core of bsc_core.hpp.
#include "bsc_core.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "c_api.hpp"
#include "runtime_config.hpp"

namespace bsp::bsc {

using capi::misuse;

namespace {

struct Group {
    std::vector<int> members;
    int rank = -1;  // of this process
};

struct Step {
    std::vector<Action> start;  // local work once the previous step's data is in
    std::vector<Action> comm;   // requests issued in the step
};

struct State {
    bsc_step_t current = 0;
    std::map<bsc_step_t, Step> queue;  // steps after the current one
    Group all;                         // bsc_all, built at first use
};

State &state() {
    static State s;
    return s;
}

// Requests must leave room for the steps they add (bsc_flush is the largest value).
constexpr bsc_step_t kLastStep = UINT_MAX - 1024;

bsc_step_t first_step(const char *call, bsc_step_t depends) {
    if (depends > kLastStep) {
        misuse(call, "step " + std::to_string(depends) + " is beyond the last step of an epoch (" +
                         std::to_string(kLastStep) + ")");
    }
    return std::max(depends, state().current);
}

void at_start(bsc_step_t step, Action a) {
    State &s = state();
    if (step <= s.current) {
        a();
    } else {
        s.queue[step].start.push_back(std::move(a));
    }
}

void at_comm(bsc_step_t step, Action a) {
    State &s = state();
    if (step <= s.current) {
        a();
    } else {
        s.queue[step].comm.push_back(std::move(a));
    }
}

void play_current() {
    State &s = state();
    auto it = s.queue.find(s.current);
    if (it == s.queue.end()) {
        return;
    }
    Step step = std::move(it->second);
    s.queue.erase(it);
    for (auto &a : step.start) {
        a();
    }
    for (auto &a : step.comm) {
        a();
    }
}

void put_at(const char *call, bsc_step_t step, int pid, const void *src, void *dst, Size offset,
            Size size) {
    at_comm(step, [=] { capi::put(call, pid, src, dst, offset, size, false); });
}

void get_at(const char *call, bsc_step_t step, int pid, const void *src, Size offset, void *dst,
            Size size) {
    at_comm(step, [=] { capi::get(call, pid, src, offset, dst, size); });
}

const Group &group_of(const char *call, bsc_group_t g) {
    if (g != nullptr) {
        const auto &grp = *static_cast<const Group *>(g);
        if (grp.rank < 0) {
            misuse(call, "this process is not a member of the group");
        }
        return grp;
    }
    State &s = state();
    const int p = capi::nprocs(call);
    if (static_cast<int>(s.all.members.size()) != p) {
        s.all.members.resize(static_cast<std::size_t>(p));
        for (int i = 0; i < p; ++i) {
            s.all.members[static_cast<std::size_t>(i)] = i;
        }
    }
    s.all.rank = capi::pid(call);
    return s.all;
}

int rank_of_root(const char *call, const Group &g, int root) {
    for (std::size_t i = 0; i < g.members.size(); ++i) {
        if (g.members[i] == root) {
            return static_cast<int>(i);
        }
    }
    misuse(call, "root " + std::to_string(root) + " is not a member of the group");
}

void check_size(const char *call, const char *what, Size v) {
    if (v < 0) {
        misuse(call, std::string("negative ") + what + " " + std::to_string(v));
    }
}

// Bytes of n elements of `size` bytes, checked against overflow.
Size bytes_of(const char *call, Size n, Size size) {
    if (size > 0 && n > INT64_MAX / size) {
        misuse(call, std::to_string(n) + " elements of " + std::to_string(size) +
                         " bytes do not fit a 64-bit size");
    }
    return n * size;
}

char *at(void *p, Size off) {
    return static_cast<char *>(p) + off;
}
const char *at(const void *p, Size off) {
    return static_cast<const char *>(p) + off;
}

int ceil_log2(int n) {
    int r = 0;
    while ((1 << r) < n) {
        ++r;
    }
    return r;
}

double parse_parameter(const char *name, double fallback) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return fallback;
    }
    char *end = nullptr;
    const double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(d >= 0) || !std::isfinite(d) || *v == ' ' || *v == '+' ||
        *v == '-') {
        misuse("bsc_g", std::string(name) + "=" + v +
                            " is invalid (expected a non-negative decimal number)");
    }
    return d;
}

struct CostParams {
    double g;  // seconds per byte
    double l;  // seconds per superstep
};

const CostParams &params() {
    static std::optional<CostParams> p;
    if (!p) {
        // bspprobe's units: l in microseconds, g in microseconds per 32-bit word.
        const double l_us = parse_parameter("BSP_L", kDefaultLMicroseconds);
        const double g_us = parse_parameter("BSP_G", kDefaultGMicrosecondsPerWord);
        p = CostParams{g_us * 1e-6 / 4, l_us * 1e-6};
    }
    return *p;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Algorithm choice

Algorithm forced_algorithm(const char *call) {
    const char *v = std::getenv("BSC_ALGORITHM");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) {
        return Algorithm::Auto;
    }
    if (std::strcmp(v, "direct") == 0) {
        return Algorithm::Direct;
    }
    if (std::strcmp(v, "two-phase") == 0) {
        return Algorithm::TwoPhase;
    }
    if (std::strcmp(v, "tree") == 0) {
        return Algorithm::Tree;
    }
    misuse(call, std::string("BSC_ALGORITHM=") + v +
                     " is invalid (expected auto, direct, two-phase or tree)");
}

const char *algorithm_name(Algorithm a) {
    switch (a) {
        case Algorithm::Auto:
            return "auto";
        case Algorithm::Direct:
            return "direct";
        case Algorithm::TwoPhase:
            return "two-phase";
        case Algorithm::Tree:
            return "tree";
    }
    return "?";
}

double g_seconds_per_byte() {
    return params().g;
}
double l_seconds() {
    return params().l;
}

double cost(Collective c, Algorithm a, int n, Size size) {
    const double g = params().g, l = params().l;
    const double s = static_cast<double>(size);
    const double lg = ceil_log2(n);
    if (n <= 1) {
        return 0;
    }
    switch (c) {
        case Collective::Bcast:
            if (a == Algorithm::TwoPhase) {
                // The root sends n-1 pieces and the rest, then every member its piece.
                const double piece = std::floor(s / n), rest = static_cast<double>(size % n);
                return 2 * l + g * (n - 1) * (2 * piece + rest);
            }
            if (a == Algorithm::Tree) {
                return lg * (l + g * s);
            }
            return l + g * s * (n - 1);
        case Collective::Reduce:
            if (a == Algorithm::Tree) {
                return (lg + 1) * (l + g * s);
            }
            return l + g * s * (n - 1);
        case Collective::Allreduce:
            if (a == Algorithm::Tree) {
                return 2 * lg * (l + g * s);
            }
            return l + g * s * (n - 1);
        case Collective::Scan:
            if (a == Algorithm::Tree) {
                return lg * (l + g * s);
            }
            return l + g * s * (n - 1);
    }
    return 0;
}

std::vector<Algorithm> algorithms(Collective c) {
    if (c == Collective::Bcast) {
        return {Algorithm::Direct, Algorithm::TwoPhase, Algorithm::Tree};
    }
    return {Algorithm::Direct, Algorithm::Tree};
}

Algorithm choose(const char *call, Collective c, int n, Size size) {
    const Algorithm forced = forced_algorithm(call);
    const auto all = algorithms(c);
    if (forced != Algorithm::Auto) {
        return std::find(all.begin(), all.end(), forced) != all.end() ? forced : Algorithm::Direct;
    }
    // The cheapest by the BSP cost; ties go to the fewer supersteps (listed first).
    Algorithm best = all.front();
    for (Algorithm a : all) {
        if (cost(c, a, n, size) < cost(c, best, n, size)) {
            best = a;
        }
    }
    return best;
}

// ---------------------------------------------------------------------------------------
// Scheduling

bsc_step_t current() {
    return state().current;
}

bsc_step_t sync(bsc_step_t until) {
    State &s = state();
    if (until == kFlush) {
        for (;;) {
            const bool all_ready = capi::sync_ready("bsc_sync", s.queue.empty());
            ++s.current;
            play_current();
            if (all_ready) {
                break;
            }
        }
        s.current = 0;
        return 0;
    }
    while (s.current < until) {
        capi::sync_ready("bsc_sync", false);
        ++s.current;
        play_current();
    }
    return s.current;
}

bsc_step_t put(bsc_step_t depends, int pid, const void *src, void *dst, Size offset, Size size) {
    const bsc_step_t d = first_step("bsc_put", depends);
    put_at("bsc_put", d, pid, src, dst, offset, size);
    return d + 1;
}

bsc_step_t get(bsc_step_t depends, int pid, const void *src, Size offset, void *dst, Size size) {
    const bsc_step_t d = first_step("bsc_get", depends);
    get_at("bsc_get", d, pid, src, offset, dst, size);
    return d + 1;
}

bsc_step_t exec_reduce(bsc_step_t depends, Reducer reducer, void *a, const void *a0, const void *xs,
                       Size size) {
    const char *call = "bsc_exec_reduce";
    const bsc_step_t d = first_step(call, depends);
    check_size(call, "size", size);
    if (!reducer) {
        misuse(call, "the reducer is NULL");
    }
    at_start(d + 1, [=] { reducer(a, a0, xs, size); });
    return d + 1;
}

// ---------------------------------------------------------------------------------------
// Groups

namespace {

// A synchronising exchange of one value per process (the group constructors): every
// process writes `mine` into slot `me` of the array of each process in `to`.
template <typename T>
std::vector<T> exchange(const char *call, const T &mine, const std::vector<int> &to,
                        std::vector<T> initial) {
    const int me = capi::pid(call);
    const auto bytes = static_cast<Size>(sizeof(T));
    capi::push_reg(call, initial.data(), bytes * static_cast<Size>(initial.size()));
    capi::sync_ready(call, false);
    for (int j : to) {
        capi::put(call, j, &mine, initial.data(), bytes * me, bytes, false);
    }
    bsp_pop_reg(initial.data());
    capi::sync_ready(call, false);
    return initial;
}

}  // namespace

bsc_group_t group_create_partition(unsigned symbol) {
    const char *call = "bsc_group_create_partition";
    const int p = capi::nprocs(call), me = capi::pid(call);
    std::vector<int> everyone(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
        everyone[static_cast<std::size_t>(i)] = i;
    }
    auto symbols = exchange<unsigned>(call, symbol, everyone,
                                      std::vector<unsigned>(static_cast<std::size_t>(p)));
    auto g = std::make_unique<Group>();
    for (int i = 0; i < p; ++i) {
        if (symbols[static_cast<std::size_t>(i)] == symbol) {
            if (i == me) {
                g->rank = static_cast<int>(g->members.size());
            }
            g->members.push_back(i);
        }
    }
    return g.release();
}

bsc_group_t group_create_neighbourhood(const int *neighbours, Size size) {
    const char *call = "bsc_group_create_neighbourhood";
    const int p = capi::nprocs(call), me = capi::pid(call);
    check_size(call, "size", size);
    if (size > 0 && neighbours == nullptr) {
        misuse(call, "the neighbour list is NULL");
    }
    std::vector<int> list(neighbours, neighbours + size);
    std::vector<char> seen(static_cast<std::size_t>(p), 0);
    for (int n : list) {
        if (n < 0 || n >= p) {
            misuse(call, "bad pid " + std::to_string(n) + " in the neighbour list (nprocs is " +
                             std::to_string(p) + ")");
        }
        if (seen[static_cast<std::size_t>(n)]) {
            misuse(call, "pid " + std::to_string(n) + " is twice in the neighbour list");
        }
        seen[static_cast<std::size_t>(n)] = 1;
    }
    if (!seen[static_cast<std::size_t>(me)]) {
        misuse(call, "the neighbour list does not hold the calling process " + std::to_string(me));
    }
    std::vector<int> others;
    for (int n : list) {
        if (n != me) {
            others.push_back(n);
        }
    }
    // listed_by[j] = 1: process j lists this process.
    auto listed_by =
        exchange<unsigned char>(call, static_cast<unsigned char>(1), others,
                                std::vector<unsigned char>(static_cast<std::size_t>(p), 0));
    auto g = std::make_unique<Group>();
    for (int n : list) {
        if (n == me || listed_by[static_cast<std::size_t>(n)]) {
            if (n == me) {
                g->rank = static_cast<int>(g->members.size());
            }
            g->members.push_back(n);
        }
    }
    return g.release();
}

void group_destroy(bsc_group_t g) {
    delete static_cast<Group *>(g);
}

// ---------------------------------------------------------------------------------------
// Collectives without a choice: one superstep, the least h-relation there is (the root,
// or every member, sends or receives (n - 1) size bytes).

bsc_step_t scatter(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                   Size size) {
    const char *call = "bsc_scatter";
    const bsc_step_t d = first_step(call, depends);
    const Group &g = group_of(call, group);
    rank_of_root(call, g, root);
    check_size(call, "size", size);
    if (g.members[static_cast<std::size_t>(g.rank)] == root && size > 0) {
        for (std::size_t i = 0; i < g.members.size(); ++i) {
            put_at(call, d, g.members[i], at(src, static_cast<Size>(i) * size), dst, 0, size);
        }
    }
    return d + 1;
}

bsc_step_t gather(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                  Size size) {
    const char *call = "bsc_gather";
    const bsc_step_t d = first_step(call, depends);
    const Group &g = group_of(call, group);
    rank_of_root(call, g, root);
    check_size(call, "size", size);
    if (g.members[static_cast<std::size_t>(g.rank)] == root && size > 0) {
        for (std::size_t i = 0; i < g.members.size(); ++i) {
            get_at(call, d, g.members[i], src, 0, at(dst, static_cast<Size>(i) * size), size);
        }
    }
    return d + 1;
}

bsc_step_t allgather(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, Size size) {
    const char *call = "bsc_allgather";
    const bsc_step_t d = first_step(call, depends);
    const Group &g = group_of(call, group);
    check_size(call, "size", size);
    if (size > 0) {
        for (std::size_t i = 0; i < g.members.size(); ++i) {
            get_at(call, d, g.members[i], src, 0, at(dst, static_cast<Size>(i) * size), size);
        }
    }
    return d + 1;
}

bsc_step_t alltoall(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, Size size) {
    const char *call = "bsc_alltoall";
    const bsc_step_t d = first_step(call, depends);
    const Group &g = group_of(call, group);
    check_size(call, "size", size);
    const Size me = g.rank;
    if (size > 0) {
        for (std::size_t j = 0; j < g.members.size(); ++j) {
            put_at(call, d, g.members[j], at(src, static_cast<Size>(j) * size), dst, me * size,
                   size);
        }
    }
    return d + 1;
}

// ---------------------------------------------------------------------------------------
// Broadcast: direct (root sends to every member: 1 superstep, h = (n-1) size), two-phase
// (root scatters n pieces, every member sends its piece to all: 2 supersteps,
// h ~ 2 size), binomial tree (ceil(log2 n) supersteps, h = size).

bsc_step_t bcast_with(Algorithm a, bsc_step_t depends, int root, bsc_group_t group, const void *src,
                      void *dst, Size size) {
    const char *call = "bsc_bcast";
    const bsc_step_t d = first_step(call, depends);
    const Group &g = group_of(call, group);
    const int r0 = rank_of_root(call, g, root);
    check_size(call, "size", size);
    const int n = static_cast<int>(g.members.size());
    const bool is_root = g.rank == r0;
    auto member = [&](int rank) { return g.members[static_cast<std::size_t>(rank)]; };
    const Size piece = size / n;
    if (a == Algorithm::TwoPhase && piece == 0) {
        a = Algorithm::Direct;  // fewer bytes than members: nothing to split
    }
    if (n == 1 || size == 0) {
        if (is_root && size > 0 && src != dst) {
            at_start(d, [=] { std::memmove(dst, src, static_cast<std::size_t>(size)); });
        }
        return n == 1 ? d : d + 1;
    }
    if (a == Algorithm::Direct) {
        if (is_root) {
            for (int i = 0; i < n; ++i) {
                put_at(call, d, member(i), src, dst, 0, size);
            }
        }
        return d + 1;
    }
    if (a == Algorithm::TwoPhase) {
        const Size rest_off = piece * n;
        if (is_root) {
            for (int i = 0; i < n; ++i) {
                put_at(call, d, member(i), at(src, piece * i), dst, piece * i, piece);
                if (rest_off < size) {
                    put_at(call, d, member(i), at(src, rest_off), dst, rest_off, size - rest_off);
                }
            }
        }
        const Size mine = piece * g.rank;
        for (int i = 0; i < n; ++i) {
            if (i != g.rank) {
                put_at(call, d + 1, member(i), at(dst, mine), dst, mine, piece);
            }
        }
        return d + 2;
    }
    // Binomial tree over the ranks relative to the root: in round r the members with
    // relative rank below 2^r send to relative rank + 2^r.
    const int rel = (g.rank - r0 + n) % n;
    const int rounds = ceil_log2(n);
    if (is_root && src != dst) {
        at_start(d, [=] { std::memmove(dst, src, static_cast<std::size_t>(size)); });
    }
    for (int r = 0; r < rounds; ++r) {
        const int span = 1 << r;
        if (rel < span && rel + span < n) {
            put_at(call, d + static_cast<bsc_step_t>(r), member((rel + span + r0) % n),
                   is_root ? src : dst, dst, 0, size);
        }
    }
    return d + static_cast<bsc_step_t>(rounds);
}

bsc_step_t bcast(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                 Size size) {
    const char *call = "bsc_bcast";
    const Group &g = group_of(call, group);
    return bcast_with(choose(call, Collective::Bcast, static_cast<int>(g.members.size()), size),
                      depends, root, group, src, dst, size);
}

// ---------------------------------------------------------------------------------------
// Reductions. Every member first reduces its own nmemb elements to one (its partial);
// partials are then combined in rank order, so the operator need not be commutative.
// tmp_space (registered, (p + 1) size bytes) holds partials: slot k at k size.

namespace {

// x (+) y into out (out overlaps neither), by the reducer on one element.
void combine(const Reducer &f, void *out, const void *x, const void *y, Size size) {
    f(out, x, y, size);
}

// The partial of this member into out: zero when it has no elements.
void partial(const Reducer &f, void *out, const void *zero, const void *src, Size nmemb,
             Size size) {
    if (nmemb == 0) {
        std::memcpy(out, zero, static_cast<std::size_t>(size));
    } else {
        f(out, zero, src, nmemb * size);
    }
}

struct ReduceArgs {
    const char *call;
    bsc_step_t d;
    const Group *g;
    const void *src;
    void *dst;
    void *tmp;
    Reducer f;
    const void *zero;
    Size nmemb, size;
};

ReduceArgs reduce_args(const char *call, bsc_step_t depends, bsc_group_t group, const void *src,
                       void *dst, void *tmp, const Reducer &f, const void *zero, Size nmemb,
                       Size size) {
    ReduceArgs r{
        call, first_step(call, depends), &group_of(call, group), src, dst, tmp, f, zero, nmemb,
        size};
    check_size(call, "element count", nmemb);
    check_size(call, "element size", size);
    bytes_of(call, nmemb, size);
    bytes_of(call, static_cast<Size>(r.g->members.size()) + 1, size);
    if (!f) {
        misuse(call, "the reducer is NULL");
    }
    if (size > 0 && zero == nullptr) {
        misuse(call, "the zero element is NULL");
    }
    if (size > 0 && tmp == nullptr) {
        misuse(call, "tmp_space is NULL");
    }
    return r;
}

// Binomial reduction to rank 0 in slot 0 of tmp (rounds = ceil(log2 n) supersteps after
// d): in round r, rank i with i mod 2^(r+1) = 2^r sends its accumulation (blocks
// [i, i + 2^r)) to slot r + 1 of rank i - 2^r, which appends it at the start of step
// d + r + 1. Slot n is the scratch of the combination.
void tree_reduce_to_rank0(const ReduceArgs &a) {
    const int n = static_cast<int>(a.g->members.size());
    const int rank = a.g->rank;
    const Size s = a.size;
    const int rounds = ceil_log2(n);
    void *tmp = a.tmp;
    const Reducer f = a.f;
    for (int r = 0; r < rounds; ++r) {
        const int span = 1 << r;
        const auto step = a.d + static_cast<bsc_step_t>(r);
        if (rank % (2 * span) == span) {
            put_at(a.call, step, a.g->members[static_cast<std::size_t>(rank - span)], tmp, tmp,
                   (r + 1) * s, s);
            break;  // this member's part is done
        }
        if (rank % (2 * span) == 0 && rank + span < n) {
            at_start(step + 1, [=] {
                combine(f, at(tmp, n * s), tmp, at(tmp, (r + 1) * s), s);
                std::memcpy(tmp, at(tmp, n * s), static_cast<std::size_t>(s));
            });
        }
    }
}

int tree_rounds(int n) {
    return ceil_log2(n);
}

}  // namespace

bsc_step_t reduce_with(Algorithm alg, bsc_step_t depends, int root, bsc_group_t group,
                       const void *src, void *dst, void *tmp, const Reducer &f, const void *zero,
                       Size nmemb, Size size) {
    const ReduceArgs a =
        reduce_args("bsc_reduce", depends, group, src, dst, tmp, f, zero, nmemb, size);
    const int n = static_cast<int>(a.g->members.size());
    const int r0 = rank_of_root(a.call, *a.g, root);
    const int rank = a.g->rank;
    const Size s = size;
    const bsc_step_t d = a.d;
    if (s == 0) {
        return n == 1 ? d : d + 1;
    }
    if (n == 1) {
        at_start(d, [=] { partial(f, dst, zero, src, nmemb, s); });
        return d;
    }
    if (alg == Algorithm::Direct) {
        at_start(d, [=] { partial(f, at(tmp, rank * s), zero, src, nmemb, s); });
        put_at(a.call, d, root, at(tmp, rank * s), tmp, rank * s, s);
        if (rank == r0) {
            at_start(d + 1, [=] { f(dst, zero, tmp, n * s); });
        }
        return d + 1;
    }
    at_start(d, [=] { partial(f, tmp, zero, src, nmemb, s); });
    tree_reduce_to_rank0(a);
    const auto done = d + static_cast<bsc_step_t>(tree_rounds(n));
    if (r0 == 0) {
        if (rank == 0) {
            at_start(done, [=] { std::memcpy(dst, tmp, static_cast<std::size_t>(s)); });
        }
        return done;
    }
    if (rank == 0) {
        put_at(a.call, done, root, tmp, tmp, s, s);
    }
    if (rank == r0) {
        at_start(done + 1, [=] { std::memcpy(dst, at(tmp, s), static_cast<std::size_t>(s)); });
    }
    return done + 1;
}

bsc_step_t reduce(bsc_step_t depends, int root, bsc_group_t group, const void *src, void *dst,
                  void *tmp, const Reducer &f, const void *zero, Size nmemb, Size size) {
    const Group &g = group_of("bsc_reduce", group);
    return reduce_with(
        choose("bsc_reduce", Collective::Reduce, static_cast<int>(g.members.size()), size), depends,
        root, group, src, dst, tmp, f, zero, nmemb, size);
}

bsc_step_t allreduce_with(Algorithm alg, bsc_step_t depends, bsc_group_t group, const void *src,
                          void *dst, void *tmp, const Reducer &f, const void *zero, Size nmemb,
                          Size size) {
    const ReduceArgs a =
        reduce_args("bsc_allreduce", depends, group, src, dst, tmp, f, zero, nmemb, size);
    const int n = static_cast<int>(a.g->members.size());
    const int rank = a.g->rank;
    const Size s = size;
    const bsc_step_t d = a.d;
    if (s == 0) {
        return n == 1 ? d : d + 1;
    }
    if (n == 1) {
        at_start(d, [=] { partial(f, dst, zero, src, nmemb, s); });
        return d;
    }
    if (alg == Algorithm::Direct) {
        at_start(d, [=] { partial(f, at(tmp, rank * s), zero, src, nmemb, s); });
        for (int j = 0; j < n; ++j) {
            if (j != rank) {
                put_at(a.call, d, a.g->members[static_cast<std::size_t>(j)], at(tmp, rank * s), tmp,
                       rank * s, s);
            }
        }
        at_start(d + 1, [=] { f(dst, zero, tmp, n * s); });
        return d + 1;
    }
    // Tree: binomial reduction to rank 0, then a binomial broadcast of slot 0 from it.
    at_start(d, [=] { partial(f, tmp, zero, src, nmemb, s); });
    tree_reduce_to_rank0(a);
    const int rounds = tree_rounds(n);
    const auto b = d + static_cast<bsc_step_t>(rounds);
    for (int r = 0; r < rounds; ++r) {
        const int span = 1 << r;
        if (rank < span && rank + span < n) {
            put_at(a.call, b + static_cast<bsc_step_t>(r),
                   a.g->members[static_cast<std::size_t>(rank + span)], tmp, tmp, 0, s);
        }
    }
    const auto done = b + static_cast<bsc_step_t>(rounds);
    at_start(done, [=] { std::memcpy(dst, tmp, static_cast<std::size_t>(s)); });
    return done;
}

bsc_step_t allreduce(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, void *tmp,
                     const Reducer &f, const void *zero, Size nmemb, Size size) {
    const Group &g = group_of("bsc_allreduce", group);
    return allreduce_with(
        choose("bsc_allreduce", Collective::Allreduce, static_cast<int>(g.members.size()), size),
        depends, group, src, dst, tmp, f, zero, nmemb, size);
}

// Scan: the reducer writes the prefix of every element. Every member scans its own
// elements to learn its total T (the last prefix; zero without elements); the members
// then learn ex = T_0 (+) ... (+) T_{rank-1}, and the result is the scan of the own
// elements started from ex. tmp_space: 2 p size bytes.
bsc_step_t scan_with(Algorithm alg, bsc_step_t depends, bsc_group_t group, const void *src,
                     void *dst, void *tmp, const Reducer &f, const void *zero, Size nmemb,
                     Size size) {
    const ReduceArgs a =
        reduce_args("bsc_scan", depends, group, src, dst, tmp, f, zero, nmemb, size);
    bytes_of(a.call, 2 * static_cast<Size>(a.g->members.size()), size);
    const int n = static_cast<int>(a.g->members.size());
    const int rank = a.g->rank;
    const Size s = size;
    const bsc_step_t d = a.d;
    if (s == 0) {
        return n == 1 ? d : d + 1;
    }
    // State of this member kept alive by the scheduled actions: the total, ex, and the
    // running inclusive total of the tree.
    struct Scratch {
        std::vector<char> prefix, total, ex, incl, out;
        bool have_ex = false;
    };
    auto sc = std::make_shared<Scratch>();
    const auto bytes = static_cast<std::size_t>(s);
    at_start(d, [=] {
        sc->total.assign(bytes, 0);
        if (nmemb == 0) {
            std::memcpy(sc->total.data(), zero, bytes);
        } else {
            sc->prefix.assign(static_cast<std::size_t>(nmemb * s), 0);
            f(sc->prefix.data(), zero, src, nmemb * s);
            std::memcpy(sc->total.data(), sc->prefix.data() + (nmemb - 1) * s, bytes);
        }
        sc->incl = sc->total;
        sc->ex.assign(bytes, 0);
        sc->out.assign(bytes, 0);
    });
    auto finish = [=] {
        if (nmemb > 0) {
            f(dst, sc->have_ex ? static_cast<const void *>(sc->ex.data()) : zero, src, nmemb * s);
        }
    };
    if (n == 1) {
        at_start(d, finish);
        return d;
    }
    if (alg == Algorithm::Direct) {
        // Every member sends its total to slot `rank` of every later member.
        for (int j = rank + 1; j < n; ++j) {
            at_comm(d, [=, call = a.call, pid = a.g->members[static_cast<std::size_t>(j)]] {
                capi::put(call, pid, sc->total.data(), tmp, rank * s, s, false);
            });
        }
        at_start(d + 1, [=] {
            if (rank > 0) {
                // The scan of slots 0 .. rank-1 into the second half; its last is ex.
                f(at(tmp, n * s), zero, tmp, rank * s);
                std::memcpy(sc->ex.data(), at(tmp, (n + rank - 1) * s), bytes);
                sc->have_ex = true;
            }
            finish();
        });
        return d + 1;
    }
    // Tree (recursive doubling): in round r member j sends its inclusive total of the
    // ranks (j - 2^r, j] to slot r of member j + 2^r, which puts it in front of its own.
    const int rounds = ceil_log2(n);
    for (int r = 0; r < rounds; ++r) {
        const int span = 1 << r;
        const auto step = d + static_cast<bsc_step_t>(r);
        if (rank + span < n) {
            at_comm(step,
                    [=, call = a.call, pid = a.g->members[static_cast<std::size_t>(rank + span)]] {
                        capi::put(call, pid, sc->incl.data(), tmp, r * s, s, false);
                    });
        }
        if (rank - span >= 0) {
            at_start(step + 1, [=] {
                const void *x = at(tmp, r * s);
                if (sc->have_ex) {
                    combine(f, sc->out.data(), x, sc->ex.data(), s);
                    sc->ex = sc->out;
                } else {
                    std::memcpy(sc->ex.data(), x, bytes);
                    sc->have_ex = true;
                }
                combine(f, sc->out.data(), x, sc->incl.data(), s);
                sc->incl = sc->out;
            });
        }
    }
    const auto done = d + static_cast<bsc_step_t>(rounds);
    at_start(done, finish);
    return done;
}

bsc_step_t scan(bsc_step_t depends, bsc_group_t group, const void *src, void *dst, void *tmp,
                const Reducer &f, const void *zero, Size nmemb, Size size) {
    const Group &g = group_of("bsc_scan", group);
    return scan_with(choose("bsc_scan", Collective::Scan, static_cast<int>(g.members.size()), size),
                     depends, group, src, dst, tmp, f, zero, nmemb, size);
}

}  // namespace bsp::bsc

// ---------------------------------------------------------------------------------------
// The int entry points of bsc.h.

extern "C" {

const bsc_group_t bsc_all = nullptr;
const bsc_step_t bsc_start = 0;
const bsc_step_t bsc_flush = bsp::bsc::kFlush;

bsc_group_t bsc_group_create_partition(unsigned symbol) {
    return bsp::bsc::group_create_partition(symbol);
}
bsc_group_t bsc_group_create_neighbourhood(bsc_pid_t *neighbours, int size) {
    return bsp::bsc::group_create_neighbourhood(neighbours, size);
}
void bsc_group_destroy(bsc_group_t group) {
    bsp::bsc::group_destroy(group);
}
double bsc_g(void) {
    return bsp::bsc::g_seconds_per_byte();
}
double bsc_L(void) {
    return bsp::bsc::l_seconds();
}
bsc_step_t bsc_current(void) {
    return bsp::bsc::current();
}
bsc_step_t bsc_sync(bsc_step_t until) {
    return bsp::bsc::sync(until);
}
bsc_step_t bsc_put(bsc_step_t depends, bsc_pid_t dst_pid, const void *src, void *dst, int offset,
                   int size) {
    return bsp::bsc::put(depends, dst_pid, src, dst, offset, size);
}
bsc_step_t bsc_get(bsc_step_t depends, bsc_pid_t src_pid, const void *src, int offset, void *dst,
                   int size) {
    return bsp::bsc::get(depends, src_pid, src, offset, dst, size);
}
bsc_step_t bsc_exec_reduce(bsc_step_t depends, bsc_reduce_t reducer, void *a, const void *a0,
                           const void *xs, int size) {
    return bsp::bsc::exec_reduce(depends, bsp::bsc::reducer_of("bsc_exec_reduce", reducer), a, a0,
                                 xs, size);
}
bsc_step_t bsc_scatter(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                       void *dst, int size) {
    return bsp::bsc::scatter(depends, root, group, src, dst, size);
}
bsc_step_t bsc_gather(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, int size) {
    return bsp::bsc::gather(depends, root, group, src, dst, size);
}
bsc_step_t bsc_allgather(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         int size) {
    return bsp::bsc::allgather(depends, group, src, dst, size);
}
bsc_step_t bsc_alltoall(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                        int size) {
    return bsp::bsc::alltoall(depends, group, src, dst, size);
}
bsc_step_t bsc_bcast(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                     void *dst, int size) {
    return bsp::bsc::bcast(depends, root, group, src, dst, size);
}
bsc_step_t bsc_reduce(bsc_step_t depends, bsc_pid_t root, bsc_group_t group, const void *src,
                      void *dst, void *tmp_space, bsc_reduce_t reducer, const void *zero, int nmemb,
                      int size) {
    return bsp::bsc::reduce(depends, root, group, src, dst, tmp_space,
                            bsp::bsc::reducer_of("bsc_reduce", reducer), zero, nmemb, size);
}
bsc_step_t bsc_allreduce(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                         void *tmp_space, bsc_reduce_t reducer, const void *zero, int nmemb,
                         int size) {
    return bsp::bsc::allreduce(depends, group, src, dst, tmp_space,
                               bsp::bsc::reducer_of("bsc_allreduce", reducer), zero, nmemb, size);
}
bsc_step_t bsc_scan(bsc_step_t depends, bsc_group_t group, const void *src, void *dst,
                    void *tmp_space, bsc_reduce_t reducer, const void *zero, int nmemb, int size) {
    return bsp::bsc::scan(depends, group, src, dst, tmp_space,
                          bsp::bsc::reducer_of("bsc_scan", reducer), zero, nmemb, size);
}

}  // extern "C"
