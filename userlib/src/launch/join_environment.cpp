// Session::join_from_environment: bsprun's BSP_* variables, else an srun step, else none.
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

#include "client_session.hpp"
#include "coordinator_thread.hpp"
#include "launch_environment.hpp"
#include "rendezvous_address.hpp"
#include "session.hpp"
#include "slurm_step.hpp"

namespace bsp::launch {

namespace env {

namespace {

std::chrono::milliseconds seconds_from(const char *name, std::chrono::milliseconds fallback,
                                       bool zero_allowed) {
    const char *v = std::getenv(name);
    if (v == nullptr) {
        return fallback;
    }
    char *end = nullptr;
    double s = std::strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !(s > 0 || (zero_allowed && s == 0)) || s > 1e6) {
        throw std::runtime_error(std::string("bsp: ") + name + "='" + v + "' is not a " +
                                 (zero_allowed ? "non-negative" : "positive") +
                                 " number of seconds");
    }
    return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

}  // namespace

std::chrono::milliseconds join_timeout() {
    return seconds_from(kJoinTimeout, std::chrono::seconds(60), false);
}

std::chrono::milliseconds teardown_grace(std::chrono::milliseconds fallback) {
    return seconds_from(kTeardownGrace, fallback, true);
}

}  // namespace env

namespace {

const char *required(const char *name) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        throw std::runtime_error(std::string("bsp: ") + env::kPid +
                                 " is set (started by bsprun) but " + name + " is missing");
    }
    return v;
}

int parse_int(const char *name, const char *value) {
    std::string_view s(value);
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
        throw std::runtime_error(std::string("bsp: ") + name + "='" + value +
                                 "' is not a non-negative integer");
    }
    return v;
}

RendezvousAddress parse_address(const char *value) {
    try {
        return RendezvousAddress::parse(value);
    } catch (const std::invalid_argument &e) {
        throw std::runtime_error(std::string("bsp: ") + env::kRendezvous + ": " + e.what());
    }
}

UniqueFd reach(const RendezvousAddress &address, int pid) {
    try {
        return connect_to(address, std::chrono::steady_clock::now() + env::join_timeout());
    } catch (const std::system_error &e) {
        throw std::system_error(e.code(), "bsp: process " + std::to_string(pid) +
                                              " cannot reach the job coordinator: " + e.what());
    }
}

// The coordinator of an srun step runs on a thread of rank 0.
class InProcessCoordinator final : public SessionCompanion {
  public:
    explicit InProcessCoordinator(std::unique_ptr<Coordinator> c) : thread_(std::move(c)) {}
    void after_finish() override {
        thread_.wait_done(std::chrono::steady_clock::now() + std::chrono::seconds(5));
        thread_.stop();
    }
    void before_exit() override { thread_.stop(); }

  private:
    CoordinatorThread thread_;
};

// What to fix when the step's address leads to another job's coordinator, or is taken.
std::string slurm_address_hint(const SlurmStep &step) {
    switch (step.source) {
        case SlurmStep::Source::variable:
            return "; BSP_RENDEZVOUS leads to another job";
        case SlurmStep::Source::reserved:
            return "; the port comes from SLURM_STEP_RESV_PORTS: something outside Slurm's "
                   "reservation uses it, set BSP_RENDEZVOUS=tcp:HOST:PORT to another";
        case SlurmStep::Source::derived:
            break;
    }
    return "; another job step uses the port derived from its Slurm job and step ids: give "
           "this step a free one with BSP_RENDEZVOUS=tcp:HOST:PORT, or let Slurm reserve "
           "ports for it (srun --resv-ports, or MpiParams=ports=... in slurm.conf)";
}

std::unique_ptr<Session> join_slurm(const SlurmStep &step) {
    if (step.procid != 0) {
        return std::make_unique<ClientSession>(
            step.procid, step.ntasks, step.token, reach(step.rendezvous, step.procid), nullptr,
            env::join_timeout(), step.rendezvous.to_string(), slurm_address_hint(step));
    }
    UniqueFd listener;
    try {
        // A single task needs no rendezvous (and must not fail over a taken port).
        if (step.ntasks > 1) {
            listener = listen_on(step.rendezvous);
        }
    } catch (const std::system_error &e) {
        if (step.source == SlurmStep::Source::variable) {
            throw std::runtime_error(
                "bsp: Slurm task 0 cannot listen for the job at " + step.rendezvous.to_string() +
                " (set BSP_RENDEZVOUS to choose another address): " + e.what());
        }
        throw std::runtime_error("bsp: Slurm task 0 cannot listen for the job at " +
                                 step.rendezvous.to_string() + ": " + e.what() +
                                 slurm_address_hint(step));
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        throw std::system_error(errno, std::generic_category(), "socketpair");
    }
    UniqueFd mine(pair[0]), coordinator_end(pair[1]);
    Coordinator::Options options;
    options.nprocs = step.ntasks;
    options.token = step.token;
    options.name = "bsp";
    options.join_timeout = env::join_timeout();
    options.describe_loss = [](int pid) {
        return Outcome{pid, 1,
                       "bsp: process " + std::to_string(pid) +
                           " lost its control connection before bsp_end (it died or was killed)"};
    };
    options.on_teardown = [](const Outcome &o) {
        std::string line = o.message + "\n";
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
    };
    auto coordinator = std::make_unique<Coordinator>(std::move(options));
    if (listener) {
        coordinator->set_listener(std::move(listener));
    }
    coordinator->adopt(std::move(coordinator_end));
    auto companion = std::make_unique<InProcessCoordinator>(std::move(coordinator));
    return std::make_unique<ClientSession>(0, step.ntasks, step.token, std::move(mine),
                                           std::move(companion), env::join_timeout(),
                                           "its own coordinator thread");
}

}  // namespace

std::unique_ptr<Session> Session::join_from_environment() {
    if (std::getenv(env::kPid) != nullptr) {
        int pid = parse_int(env::kPid, required(env::kPid));
        int nprocs = parse_int(env::kNprocs, required(env::kNprocs));
        if (nprocs > env::kMaxProcesses) {
            throw std::runtime_error("bsp: BSP_NPROCS=" + std::to_string(nprocs) +
                                     " is more than " + std::to_string(env::kMaxProcesses) +
                                     " processes");
        }
        if (nprocs < 1 || pid >= nprocs) {
            throw std::runtime_error(
                "bsp: BSP_PID=" + std::to_string(pid) +
                " is outside 0..BSP_NPROCS-1 (BSP_NPROCS=" + std::to_string(nprocs) + ")");
        }
        RendezvousAddress address = parse_address(required(env::kRendezvous));
        std::string token = required(env::kJob);
        return std::make_unique<ClientSession>(
            pid, nprocs, token, reach(address, pid), nullptr, env::join_timeout(),
            address.to_string(), "; BSP_JOB or BSP_RENDEZVOUS of this process is wrong");
    }
    if (auto step = SlurmStep::from_environment()) {
        return join_slurm(*step);
    }
    return nullptr;
}

}  // namespace bsp::launch
