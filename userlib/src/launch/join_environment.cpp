// Session::join_from_environment: bsprun's BSP_* variables, else an srun step, else none.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

#include "client_session.hpp"
#include "coordinator_thread.hpp"
#include "job_token.hpp"
#include "launch_environment.hpp"
#include "rendezvous_address.hpp"
#include "session.hpp"
#include "slurm_pmi.hpp"
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

// The address a listener is bound to, with the numeric host the other tasks connect to.
RendezvousAddress bound_address(int listen_fd, const RendezvousAddress &asked) {
    if (asked.kind != RendezvousAddress::Kind::tcp) {
        return asked;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(listen_fd, reinterpret_cast<sockaddr *>(&ss), &len) < 0) {
        throw std::system_error(errno, std::generic_category(), "getsockname");
    }
    char host[INET6_ADDRSTRLEN] = {};
    RendezvousAddress a = asked;
    if (ss.ss_family == AF_INET6) {
        auto *sa = reinterpret_cast<sockaddr_in6 *>(&ss);
        ::inet_ntop(AF_INET6, &sa->sin6_addr, host, sizeof host);
        a.port = ntohs(sa->sin6_port);
    } else {
        auto *sa = reinterpret_cast<sockaddr_in *>(&ss);
        ::inet_ntop(AF_INET, &sa->sin_addr, host, sizeof host);
        a.port = ntohs(sa->sin_port);
    }
    a.host = host;
    return a;
}

bool is_loopback(const RendezvousAddress &a) {
    return a.kind == RendezvousAddress::Kind::tcp &&
           (a.host.starts_with("127.") || a.host == "::1");
}

// Task 0 listens (unless it is alone), makes the job secret and publishes both through
// the PMI2 key-value space; every task reads them after the fence. Nothing about the job's
// rendezvous can be guessed from its Slurm ids.
struct SlurmWireUp {
    std::string token;
    RendezvousAddress rendezvous;
    UniqueFd listener;  // task 0 of a step of several tasks
};

SlurmWireUp wire_up(const SlurmStep &step) {
    SlurmWireUp w;
    if (step.ntasks == 1) {
        w.token = make_job_token();  // nobody to share it with
        return w;
    }
    if (!Pmi2Session::available()) {
        throw std::runtime_error(
            "bsp: started by Slurm (SLURM_STEP_ID is set) without Slurm's PMI2: PMI_FD is not "
            "set, so the tasks cannot exchange the job's address and secret (run the step "
            "with srun --mpi=pmi2, or set MpiDefault=pmi2 in slurm.conf)");
    }
    Pmi2Session pmi;
    if (pmi.rank() != step.procid || pmi.size() != step.ntasks) {
        throw std::runtime_error(
            "bsp: Slurm's PMI2 says this is task " + std::to_string(pmi.rank()) + " of " +
            std::to_string(pmi.size()) + ", SLURM_PROCID and the task " + "count say " +
            std::to_string(step.procid) + " of " + std::to_string(step.ntasks));
    }
    if (step.procid == 0) {
        try {
            w.listener = listen_on(step.rendezvous);
        } catch (const std::system_error &e) {
            throw std::runtime_error("bsp: Slurm task 0 cannot listen for the job at " +
                                     step.rendezvous.to_string() +
                                     (step.source == SlurmStep::Source::variable
                                          ? " (set BSP_RENDEZVOUS to choose another address)"
                                          : " (set BSP_RENDEZVOUS=tcp:ADDRESS:0 to an address "
                                            "of this node)") +
                                     ": " + e.what());
        }
        w.rendezvous = bound_address(w.listener.get(), step.rendezvous);
        if (step.nodes > 1 && is_loopback(w.rendezvous)) {
            throw std::runtime_error(
                "bsp: Slurm task 0 would listen on " + w.rendezvous.to_string() +
                ", a loopback address that tasks on the other " + std::to_string(step.nodes - 1) +
                " node(s) cannot reach (" + step.rendezvous.host +
                " resolves to it): set BSP_RENDEZVOUS=tcp:ADDRESS:0 to an address of this node");
        }
        w.token = make_job_token();
        pmi.put(kPmiRendezvousKey, w.rendezvous.to_string());
        pmi.put(kPmiSecretKey, w.token);
    }
    pmi.fence();
    if (step.procid != 0) {
        try {
            w.rendezvous = RendezvousAddress::parse(pmi.get(kPmiRendezvousKey, 0));
        } catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("bsp: task 0's address from Slurm's PMI2: ") +
                                     e.what());
        }
        w.token = pmi.get(kPmiSecretKey, 0);
    }
    pmi.finalize();
    return w;
}

std::unique_ptr<Session> join_slurm(const SlurmStep &step) {
    SlurmWireUp w = wire_up(step);
    if (step.procid != 0) {
        return std::make_unique<ClientSession>(
            step.procid, step.ntasks, w.token, reach(w.rendezvous, step.procid), nullptr,
            env::join_timeout(), w.rendezvous.to_string(),
            "; it is not the address task 0 published through Slurm's PMI2");
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        throw std::system_error(errno, std::generic_category(), "socketpair");
    }
    UniqueFd mine(pair[0]), coordinator_end(pair[1]);
    Coordinator::Options options;
    options.nprocs = step.ntasks;
    options.token = w.token;
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
    if (w.listener) {
        coordinator->set_listener(std::move(w.listener));
    }
    coordinator->adopt(std::move(coordinator_end));
    auto companion = std::make_unique<InProcessCoordinator>(std::move(coordinator));
    return std::make_unique<ClientSession>(0, step.ntasks, w.token, std::move(mine),
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
        const char *job = std::getenv(env::kJob);
        if (job == nullptr || *job == '\0') {
            throw std::runtime_error(
                std::string("bsp: ") + env::kPid + " is set (started by bsprun) but " + env::kJob +
                " is missing (bsprun passes the job secret in the environment, or on the "
                "standard input of ssh or rsh: a launch prefix that clears the environment "
                "cannot start BSP processes)");
        }
        std::string token = job;
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
