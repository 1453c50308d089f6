// bsp-ss: lists the AF_BSP sockets of the current network namespace, like
// iproute2's ss, through NETLINK_SOCK_DIAG. Manual: Documentation/tools.rst.
#include <linux/bsp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "diag_socket.hpp"
#include "family.hpp"
#include "options.hpp"
#include "render.hpp"
#include "xdp_stats.hpp"

namespace {

// A dump interrupted by concurrent socket changes (NLM_F_DUMP_INTR, or a
// socket answered twice) is repeated this often before the last answer is
// shown with a warning.
constexpr int kDumpAttempts = 3;

int run_xdp(const bsp_ss::Options &opts) {
    bsp_ss::XdpRead r = bsp_ss::read_xdp_counters(bsp_ss::xdp_counters_path());
    if (!r.error.empty()) {
        std::fprintf(stderr, "bsp-ss: %s\n", r.error.c_str());
        return 1;
    }
    std::fputs(bsp_ss::render_xdp(r.sums, opts).c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

int run(const bsp_ss::Options &opts) {
    bsp_ss::FamilyInEffect fam = bsp_ss::read_family(BSP_FAMILY_PARAM_PATH);
    if (!fam.error.empty()) {
        std::fprintf(stderr, "bsp-ss: %s\n", fam.error.c_str());
        return 1;
    }
    uint16_t kport = opts.port.value_or(0);  // the kernel's 0 means every port
    bsp_ss::DumpOutcome o;
    for (int attempt = 0; attempt < kDumpAttempts; ++attempt) {
        o = bsp_ss::run_dump(uint8_t(fam.family), kport, bsp_ss::show_flags(opts));
        if (!o.io_error.empty() || (!o.result.interrupted && !o.result.duplicates))
            break;
    }
    if (!o.io_error.empty()) {
        std::fprintf(stderr, "bsp-ss: %s\n", o.io_error.c_str());
        return 1;
    }
    const bsp_ss::DumpResult &r = o.result;
    if (!r.malformed.empty()) {
        std::fprintf(stderr, "bsp-ss: malformed sock_diag answer from the kernel: %s\n",
                     r.malformed.c_str());
        return 1;
    }
    if (r.error) {
        if (r.error == ENOENT)
            std::fprintf(stderr,
                         "bsp-ss: AF_BSP sock_diag not available: is af_bsp loaded? "
                         "(no sock_diag handler for family %d)\n",
                         fam.family);
        else
            std::fprintf(stderr, "bsp-ss: sock_diag dump for family %d failed: %s%s%s\n",
                         fam.family, std::strerror(r.error), r.error_msg.empty() ? "" : ": ",
                         r.error_msg.c_str());
        return 1;
    }
    if (r.interrupted || r.duplicates)
        std::fprintf(stderr,
                     "bsp-ss: warning: dump interrupted %d times by socket changes; the list "
                     "may be inconsistent\n",
                     kDumpAttempts);
    std::vector<bsp_ss::DiagSocket> socks = r.sockets;
    if (opts.port)  // also for port 0 (unbound sockets), which the kernel cannot filter
        std::erase_if(socks, [&](const auto &s) { return s.local.port != *opts.port; });
    std::sort(socks.begin(), socks.end(), [](const auto &a, const auto &b) {
        return a.local.port != b.local.port ? a.local.port < b.local.port : a.inode < b.inode;
    });
    std::string out =
        opts.json ? bsp_ss::render_json(socks, opts) : bsp_ss::render_table(socks, opts);
    std::fputs(out.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    bsp_ss::ParsedOptions p = bsp_ss::parse_options(args);
    if (!p.error.empty()) {
        std::fprintf(stderr, "bsp-ss: %s\n%s", p.error.c_str(), bsp_ss::kUsage);
        return 2;
    }
    if (p.opts.help) {
        std::fputs(bsp_ss::kUsage, stdout);
        return 0;
    }
    return p.opts.xdp ? run_xdp(p.opts) : run(p.opts);
}
