#include "slurm_step.hpp"

#include "launch_environment.hpp"

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

std::string first_host_of(std::string_view list) {
    // The first item ends at the first comma outside brackets.
    int depth = 0;
    std::size_t end = list.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i] == '[') {
            ++depth;
        } else if (list[i] == ']') {
            --depth;
        } else if (list[i] == ',' && depth == 0) {
            end = i;
            break;
        }
    }
    std::string_view item = list.substr(0, end);
    std::string host;
    std::size_t i = 0;
    while (i < item.size()) {
        if (item[i] == ']') {
            throw std::invalid_argument("host list '" + std::string(list) + "': unbalanced ']'");
        }
        if (item[i] != '[') {
            host += item[i++];
            continue;
        }
        std::size_t close = item.find(']', i);
        if (close == std::string_view::npos) {
            throw std::invalid_argument("host list '" + std::string(list) + "': missing ']'");
        }
        std::string_view range = item.substr(i + 1, close - i - 1);
        std::size_t stop = range.find_first_of(",-");
        std::string_view low = range.substr(0, stop);
        if (low.empty() || low.find_first_not_of("0123456789") != std::string_view::npos) {
            throw std::invalid_argument("host list '" + std::string(list) + "': bad range [" +
                                        std::string(range) + "]");
        }
        host += low;
        i = close + 1;
    }
    if (host.empty()) {
        throw std::invalid_argument("host list '" + std::string(list) + "' has no host");
    }
    return host;
}

std::uint16_t slurm_rendezvous_port(std::uint64_t job_id, std::uint64_t step_id) {
    // Reduced first: 64 * job_id must not wrap around for large ids.
    std::uint64_t v =
        (64 * (job_id % kSlurmPortModulus) + step_id % kSlurmPortModulus) % kSlurmPortModulus;
    return static_cast<std::uint16_t>(10000 + v);
}

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
    s.token = "slurm-" + std::to_string(s.job_id) + "." + std::to_string(s.step_id);
    if (const char *override_address = std::getenv("BSP_RENDEZVOUS")) {
        try {
            s.rendezvous = RendezvousAddress::parse(override_address);
        } catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("bsp: BSP_RENDEZVOUS: ") + e.what());
        }
        s.source = Source::variable;
        return s;
    }
    const char *nodes =
        first_env({"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}, &name);
    if (nodes == nullptr) {
        throw std::runtime_error("bsp: started by Slurm but SLURM_STEP_NODELIST is not set");
    }
    s.nodelist = nodes;
    try {
        s.rendezvous.kind = RendezvousAddress::Kind::tcp;
        s.rendezvous.host = first_host_of(s.nodelist);
    } catch (const std::invalid_argument &e) {
        throw std::runtime_error(std::string("bsp: ") + name + ": " + e.what());
    }
    if (const char *reserved = std::getenv("SLURM_STEP_RESV_PORTS")) {
        try {
            s.rendezvous.port = first_reserved_port(reserved);
        } catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("bsp: SLURM_STEP_RESV_PORTS: ") + e.what());
        }
        s.source = Source::reserved;
        return s;
    }
    s.rendezvous.port = slurm_rendezvous_port(s.job_id, s.step_id);
    s.source = Source::derived;
    return s;
}

}  // namespace bsp::launch
