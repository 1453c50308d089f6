// libFuzzer target of the bsp-ss sock_diag parser (tools/bsp-ss/diag_parser.cpp):
// any datagram, fed twice into one dump result, must parse without a crash,
// leak or undefined behaviour, and a malformed answer must never yield sockets
// it did not fully check. Build with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "diag_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // the first byte picks the sequence number and family the dump expects
    bsp_ss::ParseContext ctx;
    ctx.seq = size ? data[0] % 2 : 0;
    ctx.family = 23;
    auto buf = std::as_bytes(std::span(data, size));
    bsp_ss::DumpResult r;
    bsp_ss::parse_diag_datagram(buf, ctx, r);
    size_t n = r.sockets.size();
    bsp_ss::parse_diag_datagram(buf, ctx, r);
    if (n != 0 && r.sockets.size() != n && r.sockets.size() != 2 * n && !r.finished())
        std::abort();
    for (const auto &s : r.sockets)
        if (s.family != ctx.family || (s.meminfo && s.meminfo->count > bsp_ss::MemInfo::kMax))
            std::abort();
    if (r.error < 0)
        std::abort();
    return 0;
}
