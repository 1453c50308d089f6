#include "options.hpp"

#include <linux/bsp.h>

namespace bsp_ss {

const char kUsage[] =
    "Usage: bsp-ss [OPTIONS]\n"
    "List the AF_BSP sockets of the current network namespace (sock_diag).\n"
    "\n"
    "  -p, --port=PORT   only sockets bound to PORT (0: unbound sockets)\n"
    "  -e, --extended    superstep epoch, group size and pacing rate\n"
    "  -s, --stats       per-socket counters (struct bsp_sock_stats)\n"
    "  -i, --info        protocol engine counters: retransmissions by cause,\n"
    "                    failover, rails, acks, prods, rtt, drops (bsp_proto_stats)\n"
    "  -m, --memory      socket memory (skmem)\n"
    "  -j, --json        JSON output\n"
    "  -n, --numeric     raw numbers (port 0, pacing rate in bytes/s)\n"
    "  -H, --no-header   no table header\n"
    "  -X, --xdp         the XDP pre-filter's counters (frames passed, steered and\n"
    "                    dropped by reason; bsp-xdp) instead of the sockets\n"
    "  -h, --help        this help\n";

namespace {

bool parse_port(std::string_view s, uint16_t &port) {
    if (s.empty() || s.size() > 5)
        return false;
    unsigned v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + unsigned(c - '0');
    }
    if (v > 65535)
        return false;
    port = uint16_t(v);
    return true;
}

bool *flag_of(Options &o, char c) {
    switch (c) {
        case 'e':
            return &o.extended;
        case 's':
            return &o.stats;
        case 'i':
            return &o.info;
        case 'm':
            return &o.meminfo;
        case 'j':
            return &o.json;
        case 'n':
            return &o.numeric;
        case 'H':
            return &o.no_header;
        case 'X':
            return &o.xdp;
        case 'h':
            return &o.help;
        default:
            return nullptr;
    }
}

struct LongOption {
    std::string_view name;
    char short_name;
};
constexpr LongOption kLong[] = {
    {"port", 'p'}, {"extended", 'e'}, {"stats", 's'},     {"info", 'i'}, {"memory", 'm'},
    {"json", 'j'}, {"numeric", 'n'},  {"no-header", 'H'}, {"help", 'h'}, {"xdp", 'X'},
};

}  // namespace

ParsedOptions parse_options(std::span<const std::string_view> args) {
    ParsedOptions r;
    auto set_port = [&](std::string_view v) {
        uint16_t p;
        if (!parse_port(v, p)) {
            r.error = "invalid port '" + std::string(v) + "' (0..65535)";
            return false;
        }
        r.opts.port = p;
        return true;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i];
        if (a.starts_with("--") && a.size() > 2) {
            std::string_view name = a.substr(2), value;
            bool has_value = false;
            if (auto eq = name.find('='); eq != name.npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                has_value = true;
            }
            const LongOption *lo = nullptr;
            for (const auto &l : kLong)
                if (l.name == name)
                    lo = &l;
            if (!lo) {
                r.error = "unknown option '" + std::string(a) + "'";
                return r;
            }
            if (lo->short_name == 'p') {
                if (!has_value) {
                    if (i + 1 >= args.size()) {
                        r.error = "option '--port' needs a PORT";
                        return r;
                    }
                    value = args[++i];
                }
                if (!set_port(value))
                    return r;
                continue;
            }
            if (has_value) {
                r.error = "option '--" + std::string(name) + "' takes no value";
                return r;
            }
            *flag_of(r.opts, lo->short_name) = true;
            continue;
        }
        if (a.size() < 2 || a[0] != '-') {
            r.error = "unexpected argument '" + std::string(a) + "'";
            return r;
        }
        for (size_t j = 1; j < a.size(); ++j) {
            char c = a[j];
            if (c == 'p') {
                std::string_view value = a.substr(j + 1);
                if (value.empty()) {
                    if (i + 1 >= args.size()) {
                        r.error = "option '-p' needs a PORT";
                        return r;
                    }
                    value = args[++i];
                }
                if (!set_port(value))
                    return r;
                break;
            }
            bool *f = flag_of(r.opts, c);
            if (!f) {
                r.error = std::string("unknown option '-") + c + "'";
                return r;
            }
            *f = true;
        }
    }
    return r;
}

uint32_t show_flags(const Options &opts) {
    uint32_t show = BSP_DIAG_SHOW_PEER;
    if (opts.extended)
        show |= BSP_DIAG_SHOW_SUPERSTEP;
    if (opts.stats)
        show |= BSP_DIAG_SHOW_STATS;
    if (opts.info)
        show |= BSP_DIAG_SHOW_PROTO;
    if (opts.meminfo)
        show |= BSP_DIAG_SHOW_MEMINFO;
    return show;
}

}  // namespace bsp_ss
