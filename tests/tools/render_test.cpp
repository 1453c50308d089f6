// Tests of tools/bsp-ss/render.cpp: the table and the JSON document.
#include "render.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using bsp_ss::DiagSocket;

std::vector<DiagSocket> sample() {
    DiagSocket a;
    a.family = AF_BSP;
    a.type = 4;
    a.local = {7, 32768};
    a.inode = 1001;
    a.cookie = 0x1f;
    a.rqueue = 3;
    a.wqueue = 0;
    a.peer = bsp_ss::Endpoint{9, 40000};
    a.superstep = bsp_diag_superstep{5, 4, 125000000};
    a.stats = bsp_sock_stats{};
    a.stats->tx_msgs = 2;
    a.stats->rx_dropped = 9;
    bsp_ss::MemInfo mi;
    mi.count = 9;
    for (unsigned i = 0; i < 9; ++i)
        mi.values[i] = i * 10;
    a.meminfo = mi;
    DiagSocket b;
    b.family = AF_BSP;
    b.local = {7, 0};
    b.inode = 1002;
    b.superstep = bsp_diag_superstep{0, 0, 0};
    return {a, b};
}

TEST(Render, Info) {
    auto socks = sample();
    socks[0].proto = bsp_proto_stats{};
    socks[0].proto->data_tx = 40;
    socks[0].proto->retx_failover = 3;
    socks[0].proto->rail_down = 1;
    socks[0].proto->drops[BSP_PROTO_DROP_DUP] = 2;
    bsp_ss::Options o;
    o.info = o.no_header = true;
    EXPECT_EQ(bsp_ss::render_table(socks, o),
              "3      0      7:32768         9:40000        1001\n"
              "\t data_tx:40 data_rx:0 bytes_tx:0 bytes_rx:0 retx_hole:0 retx_prod:0 "
              "retx_timeout:0 retx_failover:3 spurious_rx:0 dup_rx:0 acks_tx:0 acks_rx:0 "
              "ackreq_tx:0 acked_piggy:0 acked_implicit:0 prods_tx:0 prods_rx:0 prods_early:0 "
              "probes_tx:0 timeouts:0 rail_down:1 rail_up:0 msgs_tx:0 msgs_rx:0 msgs_failed:0 "
              "chan_closes:0 srtt_max_ns:0 chans_evicted:0 evicts_tx:0 evicts_kept:0 "
              "evicts_gone:0 chan_restarts:0 msgs_abandoned:0 chan_resets:0 drop_dup:2\n"
              "0      0      7:*             *:*            1002\n");
    std::string j = bsp_ss::render_json(socks, o);
    EXPECT_NE(j.find("\"info\": {\"data_tx\": 40, "), std::string::npos) << j;
    EXPECT_NE(j.find("\"retx_failover\": 3, "), std::string::npos) << j;
    EXPECT_NE(j.find("\"chan_resets\": 0, \"drops\": {\"truncated\": 0, "), std::string::npos) << j;
    EXPECT_NE(j.find("\"dup\": 2, \"auth\": 0, \"stale\": 0}}}"), std::string::npos) << j;
    // without -i nothing of it
    o.info = false;
    EXPECT_EQ(bsp_ss::render_json(socks, o).find("info"), std::string::npos);
}

TEST(Render, Rate) {
    EXPECT_EQ(bsp_ss::format_rate(0), "unpaced");
    EXPECT_EQ(bsp_ss::format_rate(100), "800bps");
    EXPECT_EQ(bsp_ss::format_rate(1000), "8Kbps");
    EXPECT_EQ(bsp_ss::format_rate(125000000), "1Gbps");
    EXPECT_EQ(bsp_ss::format_rate(1250000), "10Mbps");
    EXPECT_EQ(bsp_ss::format_rate(187500), "1.5Mbps");
}

TEST(Render, PlainTable) {
    bsp_ss::Options o;
    EXPECT_EQ(bsp_ss::render_table(sample(), o),
              "Recv-Q Send-Q Local Node:Port Peer Node:Port Inode\n"
              "3      0      7:32768         9:40000        1001\n"
              "0      0      7:*             *:*            1002\n");
}

TEST(Render, NumericNoHeader) {
    bsp_ss::Options o;
    o.numeric = true;
    o.no_header = true;
    EXPECT_EQ(bsp_ss::render_table(sample(), o),
              "3      0      7:32768         9:40000        1001\n"
              "0      0      7:0             *:*            1002\n");
}

TEST(Render, ExtendedStatsMemory) {
    bsp_ss::Options o;
    o.extended = o.stats = o.meminfo = o.no_header = true;
    std::string t = bsp_ss::render_table(sample(), o);
    EXPECT_EQ(t,
              "3      0      7:32768         9:40000        1001 epoch:5 group:4 pacing_rate:1Gbps "
              "cookie:1f\n"
              "\t skmem:(r0,rb10,t20,tb30,f40,w50,o60,bl70,d80)\n"
              "\t tx_msgs:2 tx_bytes:0 rx_msgs:0 rx_bytes:0 tx_local_msgs:0 tx_remote_msgs:0 "
              "tx_errors:0 rx_remote_msgs:0 pkts_tx:0 pkts_rx:0 retransmits:0 failovers:0 "
              "acks_tx:0 acks_rx:0 acked_implicit:0 rx_dropped:9\n"
              "0      0      7:*             *:*            1002 epoch:0 group:0 "
              "pacing_rate:unpaced cookie:0\n");
    o.numeric = true;
    t = bsp_ss::render_table(sample(), o);
    EXPECT_NE(t.find("pacing_rate:125000000 "), std::string::npos);
    EXPECT_NE(t.find("pacing_rate:0 "), std::string::npos);
}

TEST(Render, Json) {
    bsp_ss::Options o;
    EXPECT_EQ(bsp_ss::render_json({}, o), "[]\n");
    EXPECT_EQ(bsp_ss::render_json(sample(), o),
              "[\n"
              "  {\"local\": {\"node\": 7, \"port\": 32768}, \"peer\": {\"node\": 9, \"port\": "
              "40000}, \"recv_q\": 3, \"send_q\": 0, \"inode\": 1001, \"cookie\": 31},\n"
              "  {\"local\": {\"node\": 7, \"port\": 0}, \"peer\": null, \"recv_q\": 0, "
              "\"send_q\": 0, \"inode\": 1002, \"cookie\": 0}\n"
              "]\n");
    o.extended = o.stats = o.meminfo = true;
    std::string j = bsp_ss::render_json(sample(), o);
    EXPECT_NE(j.find("\"superstep\": {\"epoch\": 5, \"group_size\": 4, \"pacing_rate\": "
                     "125000000}"),
              std::string::npos);
    EXPECT_NE(j.find("\"meminfo\": {\"rmem_alloc\": 0, \"rcvbuf\": 10, \"wmem_alloc\": 20, "
                     "\"sndbuf\": 30, \"fwd_alloc\": 40, \"wmem_queued\": 50, \"optmem\": 60, "
                     "\"backlog\": 70, \"drops\": 80}"),
              std::string::npos);
    EXPECT_NE(j.find("\"stats\": {\"tx_msgs\": 2, "), std::string::npos);
    EXPECT_NE(j.find("\"rx_dropped\": 9}"), std::string::npos);
}

}  // namespace
