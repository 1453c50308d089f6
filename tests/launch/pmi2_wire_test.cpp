// The PMI2 wire format of the emulated slurmstepd (pmi2_server.hpp), as libpmi2 writes it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "pmi2_server.hpp"

namespace {

TEST(Pmi2Wire, EncodesAsLibpmi2) {
    pmi2::Command c{"kvs-put", {{"key", "bsp-rendezvous"}, {"value", "a;b"}}};
    std::string m = pmi2::encode(c);
    EXPECT_EQ(m, "42    cmd=kvs-put;key=bsp-rendezvous;value=a;;b;");
    EXPECT_EQ(pmi2::parse(m.substr(pmi2::kLengthField)), c);
}

TEST(Pmi2Wire, ParsesResponsesAndEscapes) {
    auto c = pmi2::parse("cmd=kvs-get-response;rc=0;found=TRUE;value=x;;;;y=z;");
    EXPECT_EQ(c.name, "kvs-get-response");
    ASSERT_NE(c.find("value"), nullptr);
    EXPECT_EQ(*c.find("value"), "x;;y=z");
    EXPECT_EQ(*c.find("rc"), "0");
    EXPECT_EQ(c.find("missing"), nullptr);
    EXPECT_EQ(pmi2::parse("cmd=finalize;").pairs.size(), 0u);
}

TEST(Pmi2Wire, MalformedMessagesAreErrors) {
    for (const char *bad :
         {"", "cmd=x", "key=v;", "cmd=;", "cmd=x;novalue;", "cmd=x;=v;", "cmd=x;k=v"}) {
        EXPECT_THROW(pmi2::parse(bad), std::invalid_argument) << bad;
    }
    EXPECT_THROW(pmi2::parse("cmd=x;" + std::string(65, 'k') + "=v;"), std::invalid_argument);
    EXPECT_THROW(pmi2::parse("cmd=x;k=" + std::string(1025, 'v') + ";"), std::invalid_argument);
    EXPECT_NO_THROW(pmi2::parse("cmd=x;k=" + std::string(1024, 'v') + ";"));
    EXPECT_THROW(pmi2::encode({"x", {{"k=", "v"}}}), std::invalid_argument);
    EXPECT_THROW(pmi2::encode({"", {}}), std::invalid_argument);
}

}  // namespace
