// The C++ layer (bsp.hpp): typed registrations, spans, RAII, BSMP messages. Built twice:
// with the int API (cxx_api) and with -DBSP_WIDE_TYPES (cxx_api_wide), same output.
#include <bsp.hpp>

#include <cstdio>
#include <vector>

int main() {
    bsp::Spmd spmd(bsp::nprocs());
    const int p = bsp::nprocs(), s = bsp::pid();
    std::vector<double> all(static_cast<std::size_t>(p), 0.0);
    {
        bsp::Registration reg{std::span<double>(all)};
        bsp::sync();
        const double mine = 1.5 * s;
        for (int t = 0; t < p; ++t)
            reg.put(t, std::span<const double>(&mine, 1), static_cast<std::size_t>(s));
        bsp::sync();
        double from_left = -1;
        reg.get((s + p - 1) % p, static_cast<std::size_t>(s), std::span<double>(&from_left, 1));
        bsp::sync();
        double sum = 0;
        for (double v : all)
            sum += v;
        bsp::set_tag_size(sizeof(int));
        bsp::sync();
        const int payload[2] = {s, s * s};
        bsp::send((s + 1) % p, 100 + s, std::span<const int>(payload));
        bsp::sync();
        auto [n, bytes] = bsp::queue_size();
        auto m = bsp::next_message(sizeof(int));
        const int tag = m ? m->tag_as<int>() : -1;  // valid only until the next sync
        for (int t = 0; t < p; ++t) {
            if (t == s)
                std::printf("[%d] sum %.1f, left's entry %.1f, %d message of %d bytes, tag %d\n", s,
                            sum, from_left, static_cast<int>(n), static_cast<int>(bytes), tag);
            std::fflush(stdout);
            bsp::sync();
        }
    }  // the registration is popped here
    bsp::sync();
    return 0;
}
