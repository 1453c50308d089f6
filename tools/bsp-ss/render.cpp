#include "render.hpp"

#include <linux/sock_diag.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string_view>
#include <utility>

namespace bsp_ss {
namespace {

// Names of the struct bsp_sock_stats counters, in the struct's order.
struct StatField {
    const char *name;
    __u64 bsp_sock_stats::*field;
};
constexpr StatField kStats[] = {
    {"tx_msgs", &bsp_sock_stats::tx_msgs},
    {"tx_bytes", &bsp_sock_stats::tx_bytes},
    {"rx_msgs", &bsp_sock_stats::rx_msgs},
    {"rx_bytes", &bsp_sock_stats::rx_bytes},
    {"tx_local_msgs", &bsp_sock_stats::tx_local_msgs},
    {"tx_remote_msgs", &bsp_sock_stats::tx_remote_msgs},
    {"tx_errors", &bsp_sock_stats::tx_errors},
    {"rx_remote_msgs", &bsp_sock_stats::rx_remote_msgs},
    {"pkts_tx", &bsp_sock_stats::pkts_tx},
    {"pkts_rx", &bsp_sock_stats::pkts_rx},
    {"retransmits", &bsp_sock_stats::retransmits},
    {"failovers", &bsp_sock_stats::failovers},
    {"acks_tx", &bsp_sock_stats::acks_tx},
    {"acks_rx", &bsp_sock_stats::acks_rx},
    {"acked_implicit", &bsp_sock_stats::acked_implicit},
    {"rx_dropped", &bsp_sock_stats::rx_dropped},
};

// Names of the struct bsp_proto_stats counters (bsp-ss -i), in the struct's order.
struct ProtoField {
    const char *name;
    __u64 bsp_proto_stats::*field;
};
constexpr ProtoField kProto[] = {
    {"data_tx", &bsp_proto_stats::data_tx},
    {"data_rx", &bsp_proto_stats::data_rx},
    {"bytes_tx", &bsp_proto_stats::bytes_tx},
    {"bytes_rx", &bsp_proto_stats::bytes_rx},
    {"retx_hole", &bsp_proto_stats::retx_hole},
    {"retx_prod", &bsp_proto_stats::retx_prod},
    {"retx_timeout", &bsp_proto_stats::retx_timeout},
    {"retx_failover", &bsp_proto_stats::retx_failover},
    {"spurious_rx", &bsp_proto_stats::spurious_rx},
    {"dup_rx", &bsp_proto_stats::dup_rx},
    {"acks_tx", &bsp_proto_stats::acks_tx},
    {"acks_rx", &bsp_proto_stats::acks_rx},
    {"ackreq_tx", &bsp_proto_stats::ackreq_tx},
    {"acked_piggy", &bsp_proto_stats::acked_piggy},
    {"acked_implicit", &bsp_proto_stats::acked_implicit},
    {"prods_tx", &bsp_proto_stats::prods_tx},
    {"prods_rx", &bsp_proto_stats::prods_rx},
    {"prods_early", &bsp_proto_stats::prods_early},
    {"probes_tx", &bsp_proto_stats::probes_tx},
    {"timeouts", &bsp_proto_stats::timeouts},
    {"rail_down", &bsp_proto_stats::rail_down},
    {"rail_up", &bsp_proto_stats::rail_up},
    {"msgs_tx", &bsp_proto_stats::msgs_tx},
    {"msgs_rx", &bsp_proto_stats::msgs_rx},
    {"msgs_failed", &bsp_proto_stats::msgs_failed},
    {"chan_closes", &bsp_proto_stats::chan_closes},
    {"srtt_max_ns", &bsp_proto_stats::srtt_max_ns},
    {"chans_evicted", &bsp_proto_stats::chans_evicted},
    {"evicts_tx", &bsp_proto_stats::evicts_tx},
    {"evicts_kept", &bsp_proto_stats::evicts_kept},
    {"evicts_gone", &bsp_proto_stats::evicts_gone},
    {"chan_restarts", &bsp_proto_stats::chan_restarts},
    {"msgs_abandoned", &bsp_proto_stats::msgs_abandoned},
    {"chan_resets", &bsp_proto_stats::chan_resets},
};

// Names of enum bsp_proto_drop, in its order (the drops[] slots bsp-ss -i shows).
constexpr const char *kProtoDrops[] = {
    "truncated",  "version", "type",      "flags",  "csum",  "addr",
    "rail",       "nochan",  "malformed", "toobig", "epoch", "seq_window",
    "msg_window", "nobufs",  "nomem",     "dup",    "auth",  "stale",
};
static_assert(std::size(kProtoDrops) == __BSP_PROTO_DROP_MAX, "a name per enum bsp_proto_drop");

// Names of the SK_MEMINFO_* slots: the ss "skmem" abbreviations and JSON keys.
struct MemField {
    const char *abbrev;
    const char *name;
};
constexpr MemField kMem[] = {
    {"r", "rmem_alloc"}, {"rb", "rcvbuf"},   {"t", "wmem_alloc"},
    {"tb", "sndbuf"},    {"f", "fwd_alloc"}, {"w", "wmem_queued"},
    {"o", "optmem"},     {"bl", "backlog"},  {"d", "drops"},
};
static_assert(std::size(kMem) == SK_MEMINFO_VARS);

std::string endpoint(const Endpoint &e, bool numeric) {
    std::string s = std::to_string(e.node) + ":";
    if (e.port == 0 && !numeric)
        return s + "*";
    return s + std::to_string(e.port);
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width)
        s.append(width - s.size(), ' ');
    return s;
}

std::string mem_name(size_t i, bool json) {
    if (i < std::size(kMem))
        return json ? kMem[i].name : kMem[i].abbrev;
    return (json ? "meminfo" : "m") + std::to_string(i);
}

}  // namespace

std::string format_rate(uint64_t bytes_per_second) {
    if (bytes_per_second == 0)
        return "unpaced";
    double bits = double(bytes_per_second) * 8.0;
    char buf[64];
    if (bits >= 1e9)
        std::snprintf(buf, sizeof(buf), "%.3gGbps", bits / 1e9);
    else if (bits >= 1e6)
        std::snprintf(buf, sizeof(buf), "%.3gMbps", bits / 1e6);
    else if (bits >= 1e3)
        std::snprintf(buf, sizeof(buf), "%.3gKbps", bits / 1e3);
    else
        std::snprintf(buf, sizeof(buf), "%.0fbps", bits);
    return buf;
}

std::string render_table(const std::vector<DiagSocket> &socks, const Options &opts) {
    const std::string_view local_h = "Local Node:Port", peer_h = "Peer Node:Port";
    size_t lw = local_h.size(), pw = peer_h.size();
    std::vector<std::pair<std::string, std::string>> eps;
    for (const auto &s : socks) {
        std::string l = endpoint(s.local, opts.numeric);
        std::string p = s.peer ? endpoint(*s.peer, opts.numeric) : "*:*";
        lw = std::max(lw, l.size());
        pw = std::max(pw, p.size());
        eps.emplace_back(std::move(l), std::move(p));
    }
    std::string out;
    if (!opts.no_header) {
        std::string h = pad("Recv-Q", 7) + pad("Send-Q", 7) + pad(std::string(local_h), lw + 1) +
                        pad(std::string(peer_h), pw + 1) + "Inode";
        out += h + "\n";
    }
    for (size_t i = 0; i < socks.size(); ++i) {
        const DiagSocket &s = socks[i];
        std::string line = pad(std::to_string(s.rqueue), 6) + " " +
                           pad(std::to_string(s.wqueue), 6) + " " + pad(eps[i].first, lw) + " " +
                           pad(eps[i].second, pw) + " " + std::to_string(s.inode);
        if (opts.extended) {
            if (s.superstep) {
                const auto &ss = *s.superstep;
                line +=
                    " epoch:" + std::to_string(ss.epoch) +
                    " group:" + std::to_string(ss.group_size) + " pacing_rate:" +
                    (opts.numeric ? std::to_string(ss.pacing_rate) : format_rate(ss.pacing_rate));
            }
            char cookie[32];
            std::snprintf(cookie, sizeof(cookie), " cookie:%llx",
                          static_cast<unsigned long long>(s.cookie));
            line += cookie;
        }
        out += line + "\n";
        if (opts.meminfo && s.meminfo) {
            std::string m = "\t skmem:(";
            for (size_t k = 0; k < s.meminfo->count; ++k) {
                if (k)
                    m += ",";
                m += mem_name(k, false) + std::to_string(s.meminfo->values[k]);
            }
            out += m + ")\n";
        }
        if (opts.stats && s.stats) {
            std::string st = "\t";
            for (const auto &f : kStats)
                st += std::string(" ") + f.name + ":" + std::to_string((*s.stats).*f.field);
            out += st + "\n";
        }
        if (opts.info && s.proto) {
            // every counter; of the drops only those that happened
            std::string st = "\t";
            for (const auto &f : kProto)
                st += std::string(" ") + f.name + ":" + std::to_string((*s.proto).*f.field);
            for (size_t k = 0; k < std::size(kProtoDrops); ++k)
                if (s.proto->drops[k])
                    st += std::string(" drop_") + kProtoDrops[k] + ":" +
                          std::to_string(s.proto->drops[k]);
            out += st + "\n";
        }
    }
    return out;
}

std::string render_json(const std::vector<DiagSocket> &socks, const Options &opts) {
    auto ep = [](const Endpoint &e) {
        return "{\"node\": " + std::to_string(e.node) + ", \"port\": " + std::to_string(e.port) +
               "}";
    };
    std::string out = "[";
    for (size_t i = 0; i < socks.size(); ++i) {
        const DiagSocket &s = socks[i];
        out += i ? ",\n  {" : "\n  {";
        out += "\"local\": " + ep(s.local);
        out += ", \"peer\": " + (s.peer ? ep(*s.peer) : std::string("null"));
        out += ", \"recv_q\": " + std::to_string(s.rqueue);
        out += ", \"send_q\": " + std::to_string(s.wqueue);
        out += ", \"inode\": " + std::to_string(s.inode);
        out += ", \"cookie\": " + std::to_string(s.cookie);
        if (opts.extended && s.superstep) {
            out += ", \"superstep\": {\"epoch\": " + std::to_string(s.superstep->epoch) +
                   ", \"group_size\": " + std::to_string(s.superstep->group_size) +
                   ", \"pacing_rate\": " + std::to_string(s.superstep->pacing_rate) + "}";
        }
        if (opts.meminfo && s.meminfo) {
            out += ", \"meminfo\": {";
            for (size_t k = 0; k < s.meminfo->count; ++k) {
                if (k)
                    out += ", ";
                out += "\"" + mem_name(k, true) + "\": " + std::to_string(s.meminfo->values[k]);
            }
            out += "}";
        }
        if (opts.stats && s.stats) {
            out += ", \"stats\": {";
            bool first = true;
            for (const auto &f : kStats) {
                if (!first)
                    out += ", ";
                first = false;
                out += std::string("\"") + f.name + "\": " + std::to_string((*s.stats).*f.field);
            }
            out += "}";
        }
        if (opts.info && s.proto) {
            out += ", \"info\": {";
            for (const auto &f : kProto)
                out += std::string("\"") + f.name + "\": " + std::to_string((*s.proto).*f.field) +
                       ", ";
            out += "\"drops\": {";
            for (size_t k = 0; k < std::size(kProtoDrops); ++k) {
                if (k)
                    out += ", ";
                out +=
                    std::string("\"") + kProtoDrops[k] + "\": " + std::to_string(s.proto->drops[k]);
            }
            out += "}}";
        }
        out += "}";
    }
    out += socks.empty() ? "]\n" : "\n]\n";
    return out;
}

}  // namespace bsp_ss
