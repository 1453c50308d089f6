// Shared configuration of the engine test suites.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "sim.hpp"

namespace enginetest {

// Channel memory for engines the tests drive directly (ops->chan_alloc / chan_free).
inline void *heap_chan_alloc(void *, size_t size) {
    return std::calloc(1, size);
}
inline void heap_chan_free(void *, void *mem, size_t) {
    std::free(mem);
}

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;

// Small fragments (1000 B) so tests produce many packets; RTT estimate 50 us over 5 us links;
// conservative 50 ms sender timeout so that every recovery in a test is hole filling or prods
// unless the test is about timeouts.
inline bspe_cfg test_cfg() {
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.max_chans = 16;
    c.frag_size = 1000;
    c.max_msg = 256 * 1024;
    c.snd_wnd = 256;
    c.rcv_wnd = 256;
    c.msg_wnd = 32;
    c.sndbuf_pkts = 1024;
    c.rcvbuf = 8 << 20;
    c.nprocs = 2;
    c.rtt_init_ns = 50 * kUs;
    c.rtt_min_ns = 10 * kUs;
    c.rtt_max_ns = 10 * kMs;
    c.rto_min_ns = 50 * kMs;
    c.prod_max_ns = 100 * kMs;
    c.unreach_ns = 2000 * kMs;
    c.flags = BSPE_CFG_CSUM;
    return c;
}

inline bspsim::NetCfg net(int nodes, int rails, uint64_t seed = 1) {
    bspsim::NetCfg n;
    n.nodes = nodes;
    n.rails = rails;
    n.seed = seed;
    n.rail.resize(rails);
    return n;
}

// Node @n delivered exactly the messages @want, in this order, each once.
inline void expect_delivered(const bspsim::Node &n, const std::vector<std::vector<uint8_t>> &want) {
    ASSERT_EQ(n.delivered.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
        EXPECT_EQ(n.delivered[i].data, want[i]) << "message " << i;
}

}  // namespace enginetest
