// Cost of the packet MAC per packet (Documentation/messaging.rst, "Cost of
// authentication"): sealing a packet with its SipHash-2-4 MAC (what every authenticated
// sender does, bspe_seal_key), checking the MAC of a received one (bspe_mac_ok, what the
// receiver does before anything else), and, for comparison, sealing with the Internet
// checksum of the unauthenticated mode. Payloads: none (ACK, PROD), 1416 bytes (one
// Ethernet frame of the UDP transport) and 16384 bytes (its fragment on loopback).
// Run: build/<dir>/bench/mac_bench (Google Benchmark; prints ns per packet and bytes/s).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bspe.h"

namespace {

struct Packet {
    std::vector<std::uint8_t> bytes;
    explicit Packet(std::size_t payload, std::uint16_t flags)
        : bytes(BSPE_HDR_LEN + payload, 0x5a) {
        bspe_hdr h{};
        h.version = BSPE_VERSION;
        h.type = payload ? BSPE_T_DATA : BSPE_T_ACK;
        h.flags = htons(flags);
        h.src_node = htonl(0);
        h.dst_node = htonl(1);
        h.payload_len = htons(static_cast<std::uint16_t>(payload));
        std::memcpy(bytes.data(), &h, sizeof h);
    }
    std::uint8_t *hdr() { return bytes.data(); }
    const std::uint8_t *payload() const { return bytes.data() + BSPE_HDR_LEN; }
    std::uint32_t payload_len() const {
        return static_cast<std::uint32_t>(bytes.size() - BSPE_HDR_LEN);
    }
};

const std::uint8_t *test_key() {
    static std::uint8_t key[BSPE_KEY_LEN];
    static const bool done = [] {
        const char secret[] = "0123456789abcdef0123456789abcdef";
        bspe_key_derive(secret, sizeof secret - 1, key);
        return true;
    }();
    (void)done;
    return key;
}

void seal_mac(benchmark::State &state) {
    Packet p(static_cast<std::size_t>(state.range(0)), BSPE_F_AUTH);
    for (auto _ : state) {
        bspe_seal_key(test_key(), p.hdr(), p.payload(), p.payload_len());
        benchmark::DoNotOptimize(p.bytes.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(p.bytes.size()));
}

void check_mac(benchmark::State &state) {
    Packet p(static_cast<std::size_t>(state.range(0)), BSPE_F_AUTH);
    bspe_seal_key(test_key(), p.hdr(), p.payload(), p.payload_len());
    for (auto _ : state) {
        const int ok =
            bspe_mac_ok(test_key(), p.bytes.data(), static_cast<std::uint32_t>(p.bytes.size()));
        if (!ok)
            state.SkipWithError("the MAC of a sealed packet does not verify");
        benchmark::DoNotOptimize(ok);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(p.bytes.size()));
}

void seal_csum(benchmark::State &state) {
    Packet p(static_cast<std::size_t>(state.range(0)), BSPE_F_CSUM);
    for (auto _ : state) {
        bspe_seal_key(nullptr, p.hdr(), p.payload(), p.payload_len());
        benchmark::DoNotOptimize(p.bytes.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(p.bytes.size()));
}

BENCHMARK(seal_mac)->Arg(0)->Arg(1416)->Arg(16384);
BENCHMARK(check_mac)->Arg(0)->Arg(1416)->Arg(16384);
BENCHMARK(seal_csum)->Arg(0)->Arg(1416)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
