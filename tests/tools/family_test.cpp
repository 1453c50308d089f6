// Tests of tools/bsp-ss/family.cpp: the family number in effect.
#include "family.hpp"

#include <gtest/gtest.h>
#include <linux/bsp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

TEST(Family, ParseText) {
    EXPECT_EQ(bsp_ss::parse_family_text("23\n"), 23);
    EXPECT_EQ(bsp_ss::parse_family_text("23"), 23);
    EXPECT_EQ(bsp_ss::parse_family_text("1\n"), 1);
    EXPECT_EQ(bsp_ss::parse_family_text("255\n"), 255);
    EXPECT_FALSE(bsp_ss::parse_family_text(""));
    EXPECT_FALSE(bsp_ss::parse_family_text("\n"));
    EXPECT_FALSE(bsp_ss::parse_family_text("0\n"));
    EXPECT_FALSE(bsp_ss::parse_family_text("256\n"));
    EXPECT_FALSE(bsp_ss::parse_family_text("-1\n"));
    EXPECT_FALSE(bsp_ss::parse_family_text("2x\n"));
    EXPECT_FALSE(bsp_ss::parse_family_text("00023\n"));
}

class FamilyFile : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/bsp_ss_family_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        path_ = dir_ + "/family";
    }
    void TearDown() override {
        std::remove(path_.c_str());
        rmdir(dir_.c_str());
    }
    void write(const std::string &s) { std::ofstream(path_) << s; }
    std::string dir_, path_;
};

TEST_F(FamilyFile, AbsentFallsBackToUapi) {
    auto f = bsp_ss::read_family(path_);
    EXPECT_EQ(f.family, AF_BSP);
    EXPECT_FALSE(f.from_sysfs);
    EXPECT_EQ(f.error, "");
}

TEST_F(FamilyFile, ReadsTheParameter) {
    write("41\n");
    auto f = bsp_ss::read_family(path_);
    EXPECT_EQ(f.family, 41);
    EXPECT_TRUE(f.from_sysfs);
    EXPECT_EQ(f.error, "");
}

TEST_F(FamilyFile, GarbageIsAnError) {
    write("hello\n");
    auto f = bsp_ss::read_family(path_);
    EXPECT_NE(f.error.find("does not hold a family number"), std::string::npos);
}

TEST_F(FamilyFile, UnreadableIsAnError) {
    // a directory cannot be read as a file: EISDIR
    auto f = bsp_ss::read_family(dir_);
    EXPECT_NE(f.error.find("cannot read"), std::string::npos) << f.error;
}

}  // namespace
