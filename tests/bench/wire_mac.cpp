// Per-packet cost of wire format version 2's integrity options, sender and receiver together:
// seal (bspe_seal_key: MAC or checksum into the header) plus verify (bspe_mac_ok or
// bspe_csum_ok), for a DATA packet of 64, 1428 (Ethernet MTU 1500) and 8972 bytes of payload.
// "none" seals with neither flag (what a packet costs without integrity). After the Google
// Benchmark table it prints the cost per packet side by side and the ratios to "none" and to
// the checksum. Speed is reported, never asserted.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "bspe.h"
}

namespace {

enum Mode { kNone, kCsum, kMac };
const char *const kModeName[] = {"none", "csum", "siphash"};
const uint32_t kSizes[] = {64, 1428, 8972};
const uint8_t kKey[BSPE_KEY_LEN] = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
                                    0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};

void seal_verify(benchmark::State &state) {
    const auto mode = static_cast<Mode>(state.range(0));
    const auto payload = static_cast<uint32_t>(state.range(1));
    std::vector<uint8_t> pkt(BSPE_HDR_LEN + payload);
    for (size_t i = 0; i < pkt.size(); i++)
        pkt[i] = static_cast<uint8_t>(i * 31 + 7);
    uint16_t flags = mode == kMac ? BSPE_F_AUTH : mode == kCsum ? BSPE_F_CSUM : 0;
    pkt[2] = static_cast<uint8_t>(flags >> 8);
    pkt[3] = static_cast<uint8_t>(flags);
    const uint8_t *key = mode == kMac ? kKey : nullptr;
    const auto len = static_cast<uint32_t>(pkt.size());
    int ok = 1;
    for (auto _ : state) {
        bspe_seal_key(key, pkt.data(), pkt.data() + BSPE_HDR_LEN, payload);
        if (mode == kMac)
            ok &= bspe_mac_ok(kKey, pkt.data(), len);
        else if (mode == kCsum)
            ok &= bspe_csum_ok(pkt.data(), len);
        benchmark::DoNotOptimize(pkt.data());
        benchmark::ClobberMemory();
    }
    if (!ok)
        state.SkipWithError("a sealed packet did not verify");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * len);
    state.SetLabel(std::string(kModeName[mode]) + " " + std::to_string(payload) + " B");
}

// Keeps the time per packet of every run for the summary.
class Summary : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run> &runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run &r : runs)
            if (!r.error_occurred && r.run_type == Run::RT_Iteration)
                ns[r.report_label] = r.GetAdjustedRealTime();
    }
    std::map<std::string, double> ns;
};

}  // namespace

BENCHMARK(seal_verify)->ArgsProduct({{kNone, kCsum, kMac}, {64, 1428, 8972}});

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    Summary rep;
    benchmark::RunSpecifiedBenchmarks(&rep);
    std::printf("\nseal + verify per packet (ns), sender and receiver together\n");
    std::printf("%8s %10s %10s %10s %14s %14s\n", "payload", "none", "csum", "siphash",
                "siphash/csum", "siphash/none");
    for (uint32_t size : kSizes) {
        auto get = [&](Mode m) {
            auto it = rep.ns.find(std::string(kModeName[m]) + " " + std::to_string(size) + " B");
            return it == rep.ns.end() ? 0.0 : it->second;
        };
        double none = get(kNone), csum = get(kCsum), mac = get(kMac);
        std::printf("%8u %10.1f %10.1f %10.1f %13.2fx %13.2fx\n", size, none, csum, mac,
                    csum > 0 ? mac / csum : 0.0, none > 0 ? mac / none : 0.0);
    }
    benchmark::Shutdown();
    return 0;
}
