// libFuzzer target of the parsers of user-supplied text in libbsp and bsprun. The first
// byte picks the parser; the rest is its input:
//   0  parse_quantity / parse_schedule (BSP_LINK_RATE, BSP_UNIT_BYTES, BSP_SCHEDULE;
//      userlib/src/runtime_config.cpp, schedule.cpp): digits alone parse to their value;
//   1  parse_rails (BSP_UDP_RAILS, userlib/src/udp_rails.cpp): at most 8 rails, none empty;
//   2  RendezvousAddress::parse (BSP_RENDEZVOUS, bsprun --rendezvous): to_string() of what
//      it accepts parses back to the same address;
//   3  first_reserved_port (SLURM_STEP_RESV_PORTS, userlib/src/launch/slurm_step.cpp), and
//      the PMI2 message parser of the emulated slurmstepd (tests/launch/pmi2_server.cpp):
//      what it accepts encodes and parses back to the same command;
//   4  split_words / shell_quote (bsprun --launch, tools/bsprun/job_plan.cpp):
//      split_words(shell_quote(w)) is exactly {w};
//   5  bsprun's command line (parse_options, words separated by NUL bytes; --hostfile is
//      left out: it reads a file): 1..kMaxProcesses processes, --timeout and --grace in
//      (0, kMaxSeconds]; and the job it plans: every process's --show line splits back
//      into exactly its environment and argv.
// Every parser may only reject its input with the exception it documents.
//
// Bounded run (tests/check.sh fuzz): build/fuzz/fuzz/text_parsers_fuzz -max_total_time=30
//   -max_len=4096 <corpus dir>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "job_plan.hpp"
#include "options.hpp"
#include "pmi2_server.hpp"
#include "rendezvous_address.hpp"
#include "runtime_config.hpp"
#include "schedule.hpp"
#include "slurm_step.hpp"
#include "udp_rails.hpp"

namespace {

[[noreturn]] void fail(const char *why, const std::string &input) {
    std::fprintf(stderr, "text_parsers_fuzz: %s (input '%s')\n", why, input.c_str());
    std::abort();
}

void quantity(const std::string &s) {
    const auto q = bsp::rt::parse_quantity(s);
    if (!s.empty() && s.size() <= 15 && s.find_first_not_of("0123456789") == std::string::npos) {
        if (!q || *q != std::stoull(s))
            fail("digits did not parse to their value", s);
    }
    bsp::rt::parse_schedule(s);
}

void rails(const std::string &s) {
    // Items that are not addresses are looked up as interfaces (getifaddrs): keep it short.
    if (s.size() > 200)
        return;
    try {
        const auto r = bsp::rt::parse_rails(s);
        if (r.empty() || r.size() > 8)
            fail("parse_rails returned no rails or more than 8", s);
        for (const auto &x : r)
            if (x.spec.empty())
                fail("parse_rails returned an empty rail", s);
    } catch (const std::runtime_error &) {
    }
}

void rendezvous(const std::string &s) {
    using bsp::launch::RendezvousAddress;
    try {
        const auto a = RendezvousAddress::parse(s);
        const auto b = RendezvousAddress::parse(a.to_string());
        if (b.kind != a.kind || b.path != a.path || b.host != a.host || b.port != a.port)
            fail("to_string() did not parse back to the same address", s);
    } catch (const std::invalid_argument &) {
    }
}

void slurm(const std::string &s) {
    try {
        const auto c = pmi2::parse(s);
        const auto m = pmi2::encode(c);
        if (pmi2::parse(std::string_view(m).substr(pmi2::kLengthField)) != c)
            fail("a PMI2 message did not encode and parse back to itself", s);
    } catch (const std::invalid_argument &) {
    }
    try {
        if (bsp::launch::first_reserved_port(s) == 0)
            fail("first_reserved_port returned port 0", s);
    } catch (const std::invalid_argument &) {
    }
}

void words(const std::string &s) {
    const auto q = bsprun::shell_quote(s);
    const auto back = bsprun::split_words(q);
    if (back.size() != 1 || back[0] != s)
        fail("split_words(shell_quote(w)) is not {w}", s);
    try {
        for (const auto &w : bsprun::split_words(s))
            if (w.empty() && s.find_first_of("'\"") == std::string::npos)
                fail("an empty word without quotes", s);
    } catch (const bsprun::UsageError &) {
    }
}

void command_line(const std::string &s) {
    std::vector<std::string> args;
    std::size_t pos = 0;
    for (;;) {
        const auto nul = s.find('\0', pos);
        args.push_back(s.substr(pos, nul == std::string::npos ? std::string::npos : nul - pos));
        if (nul == std::string::npos)
            break;
        pos = nul + 1;
    }
    for (const auto &a : args)
        if (a == "-f" || a.starts_with("--hostfile"))
            return;
    bsprun::Options o;
    try {
        o = bsprun::parse_options(args);
    } catch (const bsprun::UsageError &) {
        return;
    }
    if (o.help || o.version)
        return;
    if (o.nprocs < 1)
        fail("parse_options accepted a job without processes", s);
    if (o.nprocs > bsprun::kMaxProcesses)
        fail("parse_options accepted more than kMaxProcesses processes", s);
    if ((o.timeout && !(*o.timeout > 0 && *o.timeout <= bsprun::kMaxSeconds)) ||
        !(o.grace > 0 && o.grace <= bsprun::kMaxSeconds))
        fail("parse_options accepted a --timeout or --grace out of range", s);
    if (o.nprocs > 8)
        o.nprocs = 8;  // planning more processes checks nothing more, only slower
    bsprun::JobPlan plan;
    try {
        plan = bsprun::plan_job(o, "unix:/tmp/fuzz.sock", "/tmp/a dir");
    } catch (const bsprun::UsageError &) {
        return;  // an unterminated quote in --launch
    }
    if (plan.processes.size() != static_cast<std::size_t>(o.nprocs))
        fail("plan_job planned another number of processes", s);
    for (const auto &p : plan.processes) {
        std::vector<std::string> expect = p.env;
        expect.insert(expect.end(), p.argv.begin(), p.argv.end());
        if (bsprun::split_words(bsprun::show_line(p)) != expect)
            fail("a --show line does not split back into its command", s);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    const std::string s(reinterpret_cast<const char *>(data) + 1, size - 1);
    switch (data[0] % 6) {
        case 0:
            quantity(s);
            break;
        case 1:
            rails(s);
            break;
        case 2:
            rendezvous(s);
            break;
        case 3:
            slurm(s);
            break;
        case 4:
            words(s);
            break;
        default:
            command_line(s);
            break;
    }
    return 0;
}
