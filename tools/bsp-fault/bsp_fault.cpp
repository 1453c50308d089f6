// bsp-fault: loads the XDP fault injector (ebpf/xdp_fault.bpf.c) on a rail and
// edits its rule table, so tests can drop exactly the AF_BSP frames they name.
//
//   bsp-fault attach DEV [--skb]
//   bsp-fault rule DEV IDX [--offset N] [--mask M] [--value V] [--skip N]
//                          [--count N|all] [--prob P]
//   bsp-fault disable DEV IDX
//   bsp-fault stats DEV
//   bsp-fault detach DEV
//
// The rule map is pinned in bpffs per network namespace and interface, so the
// commands can run as separate processes (see Documentation/testing.rst). The
// program is attached through libxdp's dispatcher, so it shares a rail with the
// AF_BSP pre-filter (tools/bsp-xdp), running before it.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bsp_fault.h"
#include "xdp_attach.hpp"
#include "xdp_fault.skel.h"

namespace {

using bsp::xdp::errno_text;
using bsp::xdp::Error;
using bsp::xdp::Fd;

constexpr const char *kPinRoot = "/sys/fs/bpf/bsp_fault";
constexpr const char *kProgName = "xdp_bsp_fault";

// The rule map of @ifindex: the path names the namespace and the interface.
std::string pin_path(int ifindex) {
    return std::string(kPinRoot) + "/" + bsp::xdp::netns_id() + "-" + std::to_string(ifindex);
}

std::uint64_t parse_u64(std::string_view what, std::string_view text) {
    std::uint64_t v = 0;
    int base = 10;
    if (text.starts_with("0x") || text.starts_with("0X")) {
        text.remove_prefix(2);
        base = 16;
    }
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
    if (ec != std::errc() || p != text.data() + text.size() || text.empty())
        throw Error("bad value for " + std::string(what) + ": '" + std::string(text) + "'");
    return v;
}

std::uint32_t parse_u32(std::string_view what, std::string_view text) {
    std::uint64_t v = parse_u64(what, text);
    if (v > 0xffffffffULL)
        throw Error(std::string(what) + " out of range: " + std::string(text));
    return static_cast<std::uint32_t>(v);
}

struct SkelDeleter {
    void operator()(xdp_fault *s) const { xdp_fault__destroy(s); }
};

void cmd_attach(const std::string &dev, bool skb_mode) {
    bsp::xdp::require_bpffs();
    int ifindex = bsp::xdp::ifindex_of(dev);
    std::unique_ptr<xdp_fault, SkelDeleter> skel(xdp_fault__open());
    if (!skel)
        throw Error("cannot open the XDP program: " + errno_text(errno));
    bsp::xdp::Program prog = bsp::xdp::attach(skel->obj, kProgName, ifindex, skb_mode);
    mkdir(kPinRoot, 0700);
    std::string path = pin_path(ifindex);
    unlink(path.c_str());
    int err = bpf_map__pin(skel->maps.rules, path.c_str());
    if (err) {
        bsp::xdp::undo_attach(prog.get(), ifindex, skb_mode);
        throw Error("cannot pin rule map at " + path + ": " + errno_text(err));
    }
    std::printf("attached to %s (%s mode), rules at %s\n", dev.c_str(), skb_mode ? "skb" : "native",
                path.c_str());
}

int open_rules(const std::string &dev) {
    bsp::xdp::require_bpffs();
    std::string path = pin_path(bsp::xdp::ifindex_of(dev));
    int fd = bpf_obj_get(path.c_str());
    if (fd < 0)
        throw Error("no fault injector attached to " + dev + " (" + path + ")");
    return fd;
}

void write_slot(const std::string &dev, std::uint32_t idx, const bsp_fault_rule &rule) {
    if (idx >= BSP_FAULT_MAX_RULES)
        throw Error("rule index must be below " + std::to_string(BSP_FAULT_MAX_RULES));
    Fd fd(open_rules(dev));
    bsp_fault_slot slot{};
    slot.rule = rule;
    int err = bpf_map_update_elem(fd.get(), &idx, &slot, BPF_F_LOCK);
    if (err)
        throw Error("cannot update rule: " + errno_text(errno));
}

void cmd_rule(const std::string &dev, std::uint32_t idx, const std::vector<std::string> &opts) {
    bsp_fault_rule r{};
    r.enabled = 1;
    r.count = BSP_FAULT_FOREVER;
    r.prob = BSP_FAULT_ALWAYS;
    for (std::size_t i = 0; i < opts.size(); i += 2) {
        const std::string &k = opts[i];
        if (i + 1 >= opts.size())
            throw Error("option " + k + " needs a value");
        const std::string &v = opts[i + 1];
        if (k == "--offset") {
            r.offset = parse_u32(k, v);
            if (r.offset > 0xfff)
                throw Error("--offset must be below 4096");
        } else if (k == "--mask") {
            r.mask = parse_u32(k, v);
        } else if (k == "--value") {
            r.value = parse_u32(k, v);
        } else if (k == "--skip") {
            r.skip = parse_u32(k, v);
        } else if (k == "--count") {
            r.count = v == "all" ? BSP_FAULT_FOREVER : parse_u32(k, v);
        } else if (k == "--prob") {
            char *end = nullptr;
            double p = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end || !(p >= 0.0 && p <= 1.0))
                throw Error("--prob must be a number in [0, 1]: " + v);
            r.prob = p >= 1.0 ? BSP_FAULT_ALWAYS : static_cast<std::uint32_t>(std::ldexp(p, 32));
        } else {
            throw Error("unknown option: " + k);
        }
    }
    if (r.value & ~r.mask)
        throw Error("--value has bits outside --mask");
    write_slot(dev, idx, r);
}

void cmd_stats(const std::string &dev) {
    Fd fd(open_rules(dev));
    for (std::uint32_t i = 0; i <= BSP_FAULT_MAX_RULES; i++) {
        bsp_fault_slot slot{};
        if (bpf_map_lookup_elem_flags(fd.get(), &i, &slot, BPF_F_LOCK))
            throw Error("cannot read rule map: " + errno_text(errno));
        if (i == BSP_FAULT_GLOBAL)
            std::printf("total seen=%llu dropped=%llu\n",
                        static_cast<unsigned long long>(slot.counters.matched),
                        static_cast<unsigned long long>(slot.counters.dropped));
        else if (slot.rule.enabled || slot.counters.matched)
            std::printf("rule %u matched=%llu dropped=%llu\n", i,
                        static_cast<unsigned long long>(slot.counters.matched),
                        static_cast<unsigned long long>(slot.counters.dropped));
    }
}

void cmd_detach(const std::string &dev) {
    bsp::xdp::require_bpffs();
    bsp::xdp::detach(dev, kProgName, "the fault injector");
    unlink(pin_path(bsp::xdp::ifindex_of(dev)).c_str());
}

[[noreturn]] void usage() {
    std::fputs(
        "usage: bsp-fault attach DEV [--skb]\n"
        "       bsp-fault rule DEV IDX [--offset N] [--mask M] [--value V] [--skip N]\n"
        "                              [--count N|all] [--prob P]\n"
        "       bsp-fault disable DEV IDX\n"
        "       bsp-fault stats DEV\n"
        "       bsp-fault detach DEV\n",
        stderr);
    std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() < 2)
        usage();
    const std::string &cmd = args[0];
    const std::string &dev = args[1];
    try {
        if (cmd == "attach" && args.size() <= 3) {
            bool skb = args.size() == 3 && args[2] == "--skb";
            if (args.size() == 3 && !skb)
                usage();
            cmd_attach(dev, skb);
        } else if (cmd == "rule" && args.size() >= 3) {
            cmd_rule(dev, parse_u32("IDX", args[2]),
                     std::vector<std::string>(args.begin() + 3, args.end()));
        } else if (cmd == "disable" && args.size() == 3) {
            write_slot(dev, parse_u32("IDX", args[2]), bsp_fault_rule{});
        } else if (cmd == "stats" && args.size() == 2) {
            cmd_stats(dev);
        } else if (cmd == "detach" && args.size() == 2) {
            cmd_detach(dev);
        } else {
            usage();
        }
    } catch (const Error &e) {
        std::fprintf(stderr, "bsp-fault %s: %s\n", cmd.c_str(), e.what());
        return 1;
    }
    return 0;
}
