#include "slurm_step.hpp"

#include "launch_environment.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bsp::launch {

namespace {

const char *first_env(std::initializer_list<const char *> names, const char **which) {
    for (const char *n : names) {
        if (const char *v = std::getenv(n)) {
            *which = n;
            return v;
        }
    }
    *which = *names.begin();
    return nullptr;
}

std::uint64_t parse_number(const char *name, const char *value) {
    std::string_view s(value);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
        throw std::runtime_error(std::string("bsp: ") + name + "='" + value + "' is not a number");
    }
    return v;
}

}  // namespace

std::uint16_t first_reserved_port(std::string_view ports) {
    std::size_t end = ports.find_first_of(",-");
    std::string_view first = ports.substr(0, end);
    unsigned v = 0;
    auto [stop, ec] = std::from_chars(first.data(), first.data() + first.size(), v);
    if (first.empty() || ec != std::errc() || stop != first.data() + first.size() || v == 0 ||
        v > 65535) {
        throw std::invalid_argument("'" + std::string(ports) + "' does not start with a port");
    }
    return static_cast<std::uint16_t>(v);
}

std::optional<SlurmStep> SlurmStep::from_environment() {
    const char *name;
    const char *procid = first_env({"SLURM_PROCID"}, &name);
    const char *step_name;
    const char *step = first_env({"SLURM_STEP_ID", "SLURM_STEPID"}, &step_name);
    if (procid == nullptr || step == nullptr) {
        // Not a task of an srun step (a batch script has SLURM_PROCID but no step id).
        return std::nullopt;
    }
    SlurmStep s;
    const std::uint64_t procid_value = parse_number("SLURM_PROCID", procid);
    s.step_id = parse_number(step_name, step);
    const char *ntasks = first_env({"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, &name);
    if (ntasks == nullptr) {
        throw std::runtime_error("bsp: started by Slurm but SLURM_NTASKS is not set");
    }
    const std::uint64_t ntasks_value = parse_number(name, ntasks);
    if (ntasks_value < 1 || ntasks_value > static_cast<std::uint64_t>(env::kMaxProcesses)) {
        throw std::runtime_error(std::string("bsp: ") + name + "=" + ntasks + " is outside 1.." +
                                 std::to_string(env::kMaxProcesses) + " tasks");
    }
    s.ntasks = static_cast<int>(ntasks_value);
    if (procid_value >= ntasks_value) {
        throw std::runtime_error(std::string("bsp: SLURM_PROCID=") + procid + " is outside the " +
                                 std::to_string(s.ntasks) + " tasks");
    }
    s.procid = static_cast<int>(procid_value);
    const char *job = first_env({"SLURM_JOB_ID", "SLURM_JOBID"}, &name);
    if (job == nullptr) {
        throw std::runtime_error("bsp: started by Slurm but SLURM_JOB_ID is not set");
    }
    s.job_id = parse_number(name, job);
    if (s.ntasks < 1 || s.procid >= s.ntasks) {
        throw std::runtime_error("bsp: SLURM_PROCID=" + std::to_string(s.procid) +
                                 " is outside the " + std::to_string(s.ntasks) + " tasks");
    }
    if (const char *n = first_env({"SLURM_STEP_NUM_NODES", "SLURM_NNODES"}, &name)) {
        std::uint64_t nodes = parse_number(name, n);
        if (nodes < 1 || nodes > ntasks_value) {
            throw std::runtime_error(std::string("bsp: ") + name + "=" + n + " is outside 1.." +
                                     std::to_string(ntasks_value) + " nodes");
        }
        s.nodes = static_cast<int>(nodes);
    }
    if (const char *override_address = std::getenv("BSP_RENDEZVOUS")) {
        try {
            s.rendezvous = RendezvousAddress::parse(override_address);
        } catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("bsp: BSP_RENDEZVOUS: ") + e.what());
        }
        s.source = Source::variable;
        return s;
    }
    s.rendezvous.kind = RendezvousAddress::Kind::tcp;
    // Only the address the other tasks need: loopback when they all run on this node.
    if (s.nodes == 1) {
        s.rendezvous.host = "127.0.0.1";
    } else if (const char *node = std::getenv("SLURMD_NODENAME"); node != nullptr && *node) {
        s.rendezvous.host = node;
    } else {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) < 0) {
            throw std::runtime_error("bsp: Slurm task: cannot get this node's host name");
        }
        s.rendezvous.host = host;
    }
    s.source = Source::own_node;
    if (const char *reserved = std::getenv("SLURM_STEP_RESV_PORTS")) {
        try {
            s.rendezvous.port = first_reserved_port(reserved);
        } catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("bsp: SLURM_STEP_RESV_PORTS: ") + e.what());
        }
        s.source = Source::reserved;
    }
    return s;
}

}  // namespace bsp::launch
