// bsprun's command line.
#include "options.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

namespace {

using namespace bsprun;

TEST(BsprunOptions, ProcessCountSpellingsAndProgram) {
    for (auto args : {std::vector<std::string>{"-n", "4", "prog", "-n", "x"},
                      {"-np", "4", "prog", "-n", "x"},
                      {"-npes", "4", "prog", "-n", "x"},
                      {"--nprocs=4", "prog", "-n", "x"},
                      {"-n4", "--", "prog", "-n", "x"}}) {
        Options o = parse_options(args);
        EXPECT_EQ(o.nprocs, 4);
        EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "-n", "x"}));
    }
}

TEST(BsprunOptions, Flags) {
    Options o = parse_options({"-l", "-v", "--show", "--map", "block", "--timeout", "2.5",
                               "--grace=1", "--rendezvous", "tcp", "--hosts", "a,b,c", "--launch",
                               "ssh -x {host}", "prog"});
    EXPECT_TRUE(o.label);
    EXPECT_TRUE(o.verbose);
    EXPECT_TRUE(o.show);
    EXPECT_EQ(o.mapping, Mapping::block);
    EXPECT_EQ(o.timeout, 2.5);
    EXPECT_EQ(o.grace, 1.0);
    EXPECT_EQ(o.rendezvous, "tcp");
    EXPECT_EQ(o.hosts, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(o.launch, "ssh -x {host}");
    EXPECT_EQ(o.nprocs, 3) << "one process per host by default";
}

TEST(BsprunOptions, Errors) {
    auto message = [](std::vector<std::string> args) {
        try {
            parse_options(args);
        } catch (const UsageError &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({"prog"}), "say how many processes to start with -n P");
    EXPECT_EQ(message({"-n", "2"}), "no program to run");
    EXPECT_EQ(message({"-n"}), "-n needs a value");
    EXPECT_EQ(message({"-n", "-3", "p"}), "-n expects a positive number of processes, not '-3'");
    EXPECT_EQ(message({"-n", "2", "--bogus", "p"}), "unknown option '--bogus'");
    EXPECT_EQ(message({"-n", "2", "--map", "cyclic", "p"}),
              "--map expects 'rr' (round-robin) or 'block', not 'cyclic'");
    EXPECT_EQ(message({"-n", "2", "--timeout", "0", "p"}),
              "--timeout expects a positive number of seconds, not '0'");
    EXPECT_EQ(message({"--hosts", "a,,b", "p"}), "--hosts 'a,,b' has an empty entry");
    EXPECT_EQ(message({"--hosts", "a", "--hostfile", "f", "p"}),
              "give the hosts once (--hosts or --hostfile)");
    EXPECT_EQ(message({"-n", "2", "--launch", " ", "p"}),
              "--launch needs a command prefix, e.g. 'ssh {host}'");
    EXPECT_EQ(message({"-n", "2", "--show=yes", "p"}), "option '--show' takes no value");
    EXPECT_EQ(message({"--hostfile", "/nonexistent/hosts", "p"}),
              "cannot read host file '/nonexistent/hosts': No such file or directory");
}

TEST(BsprunOptions, JobSizeAndTimesAreBounded) {
    auto message = [](std::vector<std::string> args) {
        try {
            parse_options(args);
        } catch (const UsageError &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(parse_options({"-n", "65535", "p"}).nprocs, 65535);
    EXPECT_EQ(message({"-n", "65536", "p"}), "-n 65536: at most 65535 processes are supported");
    EXPECT_EQ(message({"-n", "2000000000", "p"}),
              "-n 2000000000: at most 65535 processes are supported");
    EXPECT_EQ(message({"-npes", "99999999999999999999999", "p"}),
              "-npes 99999999999999999999999: at most 65535 processes are supported");
    EXPECT_EQ(message({"-n2000000000", "p"}),
              "-n 2000000000: at most 65535 processes are supported");
    EXPECT_EQ(message({"--nprocs=70000", "p"}),
              "--nprocs 70000: at most 65535 processes are supported");
    EXPECT_EQ(message({"-n", "4x", "p"}), "-n expects a positive number of processes, not '4x'");
    EXPECT_EQ(message({"-n", "0", "p"}), "-n expects a positive number of processes, not '0'");
    EXPECT_EQ(message({"-n", "", "p"}), "-n expects a positive number of processes, not ''");

    std::string many = "h";
    for (int i = 1; i < 65536; ++i) {
        many += ",h";
    }
    EXPECT_EQ(message({"--hosts", many, "p"}),
              "the host list has 65536 entries: one process per entry would be more than the "
              "65535 processes supported (give -n P)");
    Options o = parse_options({"-n", "2", "--hosts", many, "p"});
    EXPECT_EQ(o.nprocs, 2) << "a long host list is fine when -n says how many processes";
    EXPECT_EQ(o.hosts.size(), 65536u);

    EXPECT_EQ(parse_options({"-n", "1", "--timeout", "1e9", "p"}).timeout, 1e9);
    EXPECT_EQ(message({"-n", "1", "--timeout", "1e300", "p"}),
              "--timeout 1e300: at most 1000000000 seconds");
    EXPECT_EQ(message({"-n", "1", "--grace=2e9", "p"}), "--grace 2e9: at most 1000000000 seconds");
}

TEST(BsprunOptions, Hostfile) {
    std::string file =
        std::filesystem::temp_directory_path() / ("bsprun-opt-hosts-" + std::to_string(::getpid()));
    std::FILE *f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("  h1\n# comment\n\nh2 # two\nh1\n", f);
    std::fclose(f);
    EXPECT_EQ(read_hostfile(file), (std::vector<std::string>{"h1", "h2", "h1"}));
    f = std::fopen(file.c_str(), "w");
    std::fputs("h1 slots=2\n", f);
    std::fclose(f);
    try {
        read_hostfile(file);
        FAIL();
    } catch (const UsageError &e) {
        EXPECT_EQ(std::string(e.what()), "host file '" + file +
                                             "' line 1: one host name per line, found "
                                             "'slots=2' after 'h1'");
    }
    std::filesystem::remove(file);
}

}  // namespace
