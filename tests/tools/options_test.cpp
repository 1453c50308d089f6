// Tests of tools/bsp-ss/options.cpp: the command line.
#include "options.hpp"

#include <gtest/gtest.h>
#include <linux/bsp.h>

#include <string_view>
#include <vector>

namespace {

bsp_ss::ParsedOptions parse(std::vector<std::string_view> args) {
    return bsp_ss::parse_options(args);
}

TEST(Options, None) {
    auto p = parse({});
    EXPECT_EQ(p.error, "");
    EXPECT_FALSE(p.opts.port);
    EXPECT_FALSE(p.opts.extended || p.opts.stats || p.opts.meminfo || p.opts.json ||
                 p.opts.numeric || p.opts.no_header || p.opts.help);
    EXPECT_EQ(bsp_ss::show_flags(p.opts), BSP_DIAG_SHOW_PEER);
}

TEST(Options, ShortFlagsSeparateAndCombined) {
    auto p = parse({"-e", "-sm", "-jnH"});
    EXPECT_EQ(p.error, "");
    EXPECT_TRUE(p.opts.extended && p.opts.stats && p.opts.meminfo && p.opts.json &&
                p.opts.numeric && p.opts.no_header);
    EXPECT_FALSE(p.opts.help);
    EXPECT_EQ(bsp_ss::show_flags(p.opts), BSP_DIAG_SHOW_PEER | BSP_DIAG_SHOW_SUPERSTEP |
                                              BSP_DIAG_SHOW_STATS | BSP_DIAG_SHOW_MEMINFO);
}

TEST(Options, LongFlags) {
    auto p = parse(
        {"--extended", "--stats", "--memory", "--json", "--numeric", "--no-header", "--help"});
    EXPECT_EQ(p.error, "");
    EXPECT_TRUE(p.opts.extended && p.opts.stats && p.opts.meminfo && p.opts.json &&
                p.opts.numeric && p.opts.no_header && p.opts.help);
}

TEST(Options, Info) {
    for (const char *a : {"-i", "--info"}) {
        auto p = parse({a});
        EXPECT_EQ(p.error, "");
        EXPECT_TRUE(p.opts.info);
        EXPECT_EQ(bsp_ss::show_flags(p.opts), BSP_DIAG_SHOW_PEER | BSP_DIAG_SHOW_PROTO);
    }
    EXPECT_FALSE(parse({"-s"}).opts.info);
}

TEST(Options, PortForms) {
    EXPECT_EQ(parse({"-p", "5"}).opts.port, 5);
    EXPECT_EQ(parse({"-p5"}).opts.port, 5);
    EXPECT_EQ(parse({"-ep", "65535"}).opts.port, 65535);
    EXPECT_TRUE(parse({"-ep", "65535"}).opts.extended);
    EXPECT_EQ(parse({"--port", "40000"}).opts.port, 40000);
    EXPECT_EQ(parse({"--port=0"}).opts.port, 0);
}

TEST(Options, BadPorts) {
    for (std::string_view v : {"", "65536", "-1", "x", "12a", "999999"}) {
        auto p = parse({"-p", v});
        EXPECT_NE(p.error.find("invalid port"), std::string::npos) << v;
    }
    EXPECT_NE(parse({"-p"}).error.find("needs a PORT"), std::string::npos);
    EXPECT_NE(parse({"--port"}).error.find("needs a PORT"), std::string::npos);
}

TEST(Options, Unknown) {
    EXPECT_NE(parse({"-x"}).error.find("unknown option '-x'"), std::string::npos);
    EXPECT_NE(parse({"-ex"}).error.find("unknown option '-x'"), std::string::npos);
    EXPECT_NE(parse({"--bogus"}).error.find("unknown option"), std::string::npos);
    EXPECT_NE(parse({"--json=1"}).error.find("takes no value"), std::string::npos);
    EXPECT_NE(parse({"extra"}).error.find("unexpected argument"), std::string::npos);
    EXPECT_NE(parse({"-"}).error.find("unexpected argument"), std::string::npos);
}

TEST(Options, XdpCounters) {
    auto p = parse({"-X"});
    EXPECT_EQ(p.error, "");
    EXPECT_TRUE(p.opts.xdp);
    p = parse({"--xdp", "-j"});
    EXPECT_EQ(p.error, "");
    EXPECT_TRUE(p.opts.xdp && p.opts.json);
    EXPECT_FALSE(parse({}).opts.xdp);
    EXPECT_EQ(parse({"--xdp=1"}).error, "option '--xdp' takes no value");
}

}  // namespace
