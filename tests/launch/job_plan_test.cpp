// bsprun's job plan: mapping, launch prefixes, quoting.
#include "job_plan.hpp"

#include <gtest/gtest.h>

namespace {

using namespace bsprun;

TEST(JobPlan, SplitWordsLikeAShell) {
    EXPECT_EQ(split_words("ip netns exec {host}"),
              (std::vector<std::string>{"ip", "netns", "exec", "{host}"}));
    EXPECT_EQ(split_words(R"(sh -c 'a "b" c' "d \"e\" \$f" g\ h)"),
              (std::vector<std::string>{"sh", "-c", "a \"b\" c", "d \"e\" $f", "g h"}));
    EXPECT_EQ(split_words("''"), (std::vector<std::string>{""}));
    EXPECT_THROW(split_words("a 'b"), UsageError);
    EXPECT_THROW(split_words("a \"b"), UsageError);
}

TEST(JobPlan, ShellQuote) {
    EXPECT_EQ(shell_quote("plain/path-1.x=y"), "plain/path-1.x=y");
    EXPECT_EQ(shell_quote(""), "''");
    EXPECT_EQ(shell_quote("a b"), "'a b'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
}

TEST(JobPlan, HostIndex) {
    std::vector<std::size_t> rr, block;
    for (int p = 0; p < 5; ++p) {
        rr.push_back(host_index(p, 5, 2, Mapping::round_robin));
        block.push_back(host_index(p, 5, 2, Mapping::block));
    }
    EXPECT_EQ(rr, (std::vector<std::size_t>{0, 1, 0, 1, 0}));
    EXPECT_EQ(block, (std::vector<std::size_t>{0, 0, 0, 1, 1}));
}

TEST(JobPlan, LocalProcessesGetTheEnvironmentDirectly) {
    Options o = parse_options({"-n", "2", "prog", "x y"});
    JobPlan plan = plan_job(o, "unix:/r/control", "/cwd");
    ASSERT_EQ(plan.processes.size(), 2u);
    EXPECT_FALSE(plan.remote_shell);
    const auto &p1 = plan.processes[1];
    EXPECT_EQ(p1.host, "");
    EXPECT_EQ(p1.argv, (std::vector<std::string>{"prog", "x y"}));
    // The job secret (BSP_JOB) is not in the plan: bsprun adds it to the environment.
    EXPECT_EQ(p1.env, (std::vector<std::string>{"BSP_PID=1", "BSP_NPROCS=2",
                                                "BSP_RENDEZVOUS=unix:/r/control"}));
    EXPECT_EQ(show_line(p1), "BSP_PID=1 BSP_NPROCS=2 BSP_RENDEZVOUS=unix:/r/control prog 'x y'");
    EXPECT_FALSE(wants_tcp_rendezvous(o));
}

TEST(JobPlan, LaunchPrefixGetsTheEnvironmentThroughEnv) {
    Options o = parse_options(
        {"-n", "3", "-v", "--hosts", "n0,n1", "--launch", "ip netns exec {host}", "prog"});
    JobPlan plan = plan_job(o, "unix:/r/c", "/cwd");
    EXPECT_EQ(plan.processes[2].argv,
              (std::vector<std::string>{"ip", "netns", "exec", "n0", "env", "BSP_PID=2",
                                        "BSP_NPROCS=3", "BSP_RENDEZVOUS=unix:/r/c", "BSP_HOST=n0",
                                        "BSP_VERBOSE=1", "prog"}));
    EXPECT_TRUE(plan.processes[2].env.empty());
    EXPECT_FALSE(wants_tcp_rendezvous(o));
}

TEST(JobPlan, LaunchPrefixWithoutHostsRunsOnLocalhost) {
    Options o = parse_options({"-n", "1", "--launch", "env X={host}:{pid}", "prog"});
    JobPlan plan = plan_job(o, "unix:/r/c", "/cwd");
    EXPECT_EQ(plan.processes[0].host, "localhost");
    EXPECT_EQ(plan.processes[0].argv[0], "env");
    EXPECT_EQ(plan.processes[0].argv[1], "X=localhost:0");
}

TEST(JobPlan, SshGetsOneQuotedRemoteCommand) {
    Options o = parse_options({"-n", "2", "--hosts", "h1,h2", "prog", "it's"});
    EXPECT_TRUE(wants_tcp_rendezvous(o)) << "ssh is the default prefix with hosts";
    JobPlan plan = plan_job(o, "tcp:head:4000", "/my dir");
    EXPECT_TRUE(plan.remote_shell);
    EXPECT_EQ(plan.processes[1].argv,
              (std::vector<std::string>{
                  "ssh", "h2",
                  "cd '/my dir' 2>/dev/null; read -r BSP_JOB && export BSP_JOB && exec env "
                  "BSP_PID=1 BSP_NPROCS=2 BSP_RENDEZVOUS=tcp:head:4000 BSP_HOST=h2 prog "
                  "'it'\\''s'; echo 'bsp: no job secret on the standard input of the remote "
                  "shell' >&2; exit 1"}));
    Options forced = parse_options({"-n", "2", "--hosts", "h1", "--rendezvous", "unix", "p"});
    EXPECT_FALSE(wants_tcp_rendezvous(forced));
}

}  // namespace
