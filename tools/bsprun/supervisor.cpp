#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "job_token.hpp"
#include "launch_environment.hpp"
#include "rendezvous_address.hpp"
#include "wait_status.hpp"

extern char **environ;

namespace bsprun {

using bsp::launch::Outcome;
using bsp::launch::UniqueFd;

namespace {

std::system_error errno_error(const std::string &what) {
    return std::system_error(errno, std::generic_category(), what);
}

void print_line(const std::string &line) {
    write_all(STDERR_FILENO, line + "\n");
}

sigset_t handled_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        sigaddset(&set, s);
    }
    return set;
}

std::string hostname() {
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) < 0) {
        return "localhost";
    }
    return name;
}

std::string current_directory() {
    char buf[PATH_MAX];
    return ::getcwd(buf, sizeof buf) ? buf : "/";
}

// Standard input is forwarded unless it is closed, or a terminal this job does not own
// (bsprun run in the background would be stopped by SIGTTIN).
bool stdin_forwardable() {
    if (::fcntl(STDIN_FILENO, F_GETFD) < 0) {
        return false;
    }
    if (::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) != ::getpgrp()) {
        return false;
    }
    return true;
}

std::pair<UniqueFd, UniqueFd> make_pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) {
        throw errno_error("pipe");
    }
    return {UniqueFd(p[0]), UniqueFd(p[1])};
}

}  // namespace

Supervisor::Supervisor(Options options) : options_(std::move(options)) {}

Supervisor::~Supervisor() {
    remove_rendezvous();
}

std::string Supervisor::open_rendezvous() {
    using bsp::launch::RendezvousAddress;
    bool tcp = wants_tcp_rendezvous(options_);
    std::string choice = options_.rendezvous.value_or(tcp ? "tcp" : "unix");
    RendezvousAddress address;
    if (tcp) {
        address.kind = RendezvousAddress::Kind::tcp;
        // Only the address the processes need: loopback when every process runs on this
        // machine (no host list, no launch prefix), else this machine's host name.
        address.host = options_.hosts.empty() && !options_.launch ? "127.0.0.1" : hostname();
        if (choice != "tcp") {
            if (!choice.starts_with("tcp:")) {
                throw UsageError("--rendezvous '" + choice +
                                 "': expected tcp, tcp:HOST or tcp:HOST:PORT");
            }
            try {
                address = RendezvousAddress::parse(choice);
            } catch (const std::invalid_argument &e) {
                // tcp:HOST (a host with ':' in brackets, tcp:[::1]), checked as HOST:0.
                std::string host = choice.substr(4);
                bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
                if (!bracketed && host.find(':') != std::string::npos) {
                    throw UsageError(std::string("--rendezvous: ") + e.what());
                }
                try {
                    address = RendezvousAddress::parse(choice + ":0");
                } catch (const std::invalid_argument &) {
                    throw UsageError("--rendezvous '" + choice +
                                     "': expected tcp:HOST or tcp:HOST:PORT (an IPv6 host in "
                                     "brackets, tcp:[::1])");
                }
            }
        }
        if (options_.show) {
            std::string shown = address.to_string();
            return address.port ? shown : shown.substr(0, shown.rfind(':') + 1) + "<port>";
        }
        listener_ = bsp::launch::listen_on(address);
        address.port = bsp::launch::bound_tcp_port(listener_.get());
        return address.to_string();
    }
    if (choice == "unix") {
        const char *tmp = std::getenv("TMPDIR");
        std::string base = tmp && *tmp ? tmp : "/tmp";
        if (options_.show) {
            return "unix:" + base + "/bsprun.XXXXXX/control";
        }
        std::string templ = base + "/bsprun.XXXXXX";
        if (::mkdtemp(templ.data()) == nullptr) {
            throw errno_error("cannot create a directory in " + base);
        }
        socket_dir_ = templ;
        address.path = templ + "/control";
    } else {
        try {
            address = RendezvousAddress::parse(choice);
        } catch (const std::invalid_argument &e) {
            throw UsageError(std::string("--rendezvous: ") + e.what());
        }
        if (options_.show) {
            return address.to_string();
        }
    }
    listener_ = bsp::launch::listen_on(address);
    socket_path_ = address.path;
    return address.to_string();
}

void Supervisor::remove_rendezvous() {
    if (!socket_path_.empty()) {
        ::unlink(socket_path_.c_str());
        socket_path_.clear();
    }
    if (!socket_dir_.empty()) {
        ::rmdir(socket_dir_.c_str());
        socket_dir_.clear();
    }
}

int Supervisor::run() {
    token_ = bsp::launch::make_job_token();
    std::string rendezvous = open_rendezvous();
    JobPlan plan = plan_job(options_, rendezvous, current_directory());
    if (options_.show) {
        for (const auto &p : plan.processes) {
            std::cout << show_line(p) << "\n";
        }
        std::cout.flush();
        return 0;
    }
    if (options_.verbose) {
        print_line("bsprun: " + std::to_string(options_.nprocs) + " process" +
                   (options_.nprocs == 1 ? "" : "es") + ", rendezvous " + rendezvous);
        for (const auto &p : plan.processes) {
            print_line("bsprun: process " + std::to_string(p.pid) + " on " +
                       (p.host.empty() ? "this machine" : p.host) + ": " + show_line(p));
        }
    }

    bsp::launch::Coordinator::Options co;
    co.nprocs = options_.nprocs;
    co.token = token_;
    co.name = "bsprun";
    // bsprun sees every process it started end, and --timeout bounds the whole job: no
    // join limit unless asked for (process 0 may read its input before bsp_begin while
    // the others have joined long ago).
    if (std::getenv(bsp::launch::env::kJoinTimeout) != nullptr) {
        co.join_timeout = bsp::launch::env::join_timeout();
    } else {
        co.join_timeout.reset();
    }
    co.describe_loss = [this](int pid) { return describe_loss(pid); };
    co.on_teardown = [this](const Outcome &o) { on_teardown(o); };
    coordinator_ = std::make_unique<bsp::launch::Coordinator>(std::move(co));
    coordinator_->set_listener(std::move(listener_));

    sigset_t set = handled_signals();
    sigset_t old;
    ::sigprocmask(SIG_BLOCK, &set, &old);
    signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_) {
        throw errno_error("signalfd");
    }
    ::signal(SIGPIPE, SIG_IGN);

    if (options_.timeout) {
        deadline_ = Clock::now() +
                    std::chrono::milliseconds(static_cast<long long>(*options_.timeout * 1000));
    }
    remote_shell_ = plan.remote_shell;
    start_all(plan);
    loop();
    if (outcome_) {
        // No orphans: whatever is left in the processes' groups goes with the job.
        kill_groups();
    }
    coordinator_->close_all();
    remove_rendezvous();
    if (outcome_ && !outcome_->message.empty()) {
        print_line(outcome_->message);
    }
    int status = exit_status();
    if (options_.verbose) {
        print_line("bsprun: job ended with exit status " + std::to_string(status));
    }
    return status;
}

void Supervisor::start_all(const JobPlan &plan) {
    forward_stdin_ = stdin_forwardable();
    children_.resize(plan.processes.size());
    for (std::size_t i = 0; i < plan.processes.size(); ++i) {
        children_[i].command = plan.processes[i];
    }
    for (auto &child : children_) {
        UniqueFd in;
        if (remote_shell_ || (child.command.pid == 0 && forward_stdin_)) {
            auto [r, w] = make_pipe();
            in = std::move(r);
            if (remote_shell_) {
                // The job secret travels as the first line of the remote shell's standard
                // input (ssh forwards it over its encrypted channel): never in an argv.
                // A pipe holds far more than one line: this write does not block.
                write_all(w.get(), token_ + "\n");
            }
            if (child.command.pid == 0 && forward_stdin_) {
                stdin_pipe_ = std::move(w);
                ::fcntl(stdin_pipe_.get(), F_SETFL, O_NONBLOCK);
            }
        } else {
            in.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
            if (!in) {
                throw errno_error("/dev/null");
            }
        }
        if (!start(child, std::move(in))) {
            break;
        }
    }
}

bool Supervisor::start(Child &child, UniqueFd stdin_fd) {
    auto [out_r, out_w] = make_pipe();
    auto [err_r, err_w] = make_pipe();
    auto [exec_r, exec_w] = make_pipe();
    std::vector<std::string> add_env = child.command.env;
    if (!remote_shell_) {
        // The job secret is in the process's environment (readable only by its user),
        // never on a command line; a remote shell gets it on its standard input instead.
        add_env.push_back(std::string(bsp::launch::env::kJob) + "=" + token_);
    }
    std::vector<std::string> env_strings;
    for (char **e = environ; *e != nullptr; ++e) {
        std::string_view v(*e);
        // An inherited BSP_JOB (bsprun started by a BSP process) never goes on.
        bool replaced = v.starts_with(std::string(bsp::launch::env::kJob) + "=");
        for (const auto &add : add_env) {
            if (v.substr(0, v.find('=') + 1) == add.substr(0, add.find('=') + 1)) {
                replaced = true;
            }
        }
        if (!replaced) {
            env_strings.emplace_back(v);
        }
    }
    env_strings.insert(env_strings.end(), add_env.begin(), add_env.end());
    std::vector<char *> envp, argv;
    for (auto &s : env_strings) {
        envp.push_back(s.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = child.command.argv;
    for (auto &s : args) {
        argv.push_back(s.data());
    }
    argv.push_back(nullptr);

    const pid_t supervisor = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
        throw errno_error("fork");
    }
    if (pid == 0) {
        // Child: own process group (so the whole group can be signalled), dies with
        // bsprun, default signal handling, pipes as stdin/stdout/stderr.
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != supervisor) {
            ::_exit(127);
        }
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::dup2(stdin_fd.get(), STDIN_FILENO);
        ::dup2(out_w.get(), STDOUT_FILENO);
        ::dup2(err_w.get(), STDERR_FILENO);
        ::execvpe(argv[0], argv.data(), envp.data());
        int err = errno;
        ssize_t n = ::write(exec_w.get(), &err, sizeof err);
        (void)n;
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    child.os_pid = pid;
    exec_w.reset();
    out_w.reset();
    err_w.reset();
    int err = 0;
    ssize_t n;
    do {
        n = ::read(exec_r.get(), &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    std::string prefix = options_.label ? "[" + std::to_string(child.command.pid) + "] " : "";
    // Whole lines only, except process 0's prompts when output is not labelled.
    bool prompts = child.command.pid == 0 && !options_.label;
    child.out = std::make_unique<OutputRelay>(std::move(out_r), STDOUT_FILENO, prefix, prompts);
    child.err = std::make_unique<OutputRelay>(std::move(err_r), STDERR_FILENO, prefix);
    if (n == sizeof err) {
        end_job({child.command.pid, 127,
                 "bsprun: cannot run '" + child.command.argv[0] + "' for process " +
                     std::to_string(child.command.pid) + ": " + std::strerror(err)});
        return false;
    }
    return true;
}

void Supervisor::loop() {
    while (!all_done()) {
        PollSet set = poll_set();
        int n = ::poll(set.fds.data(), set.fds.size(), poll_timeout(set));
        if (n < 0 && errno != EINTR) {
            throw errno_error("poll");
        }
        if (n > 0) {
            dispatch(set);
        }
        on_timers(set, Clock::now());
    }
}

// What to wait for: the signalfd (always index 0), standard input or the pipe to process 0,
// every open output relay, and the coordinator's sockets.
Supervisor::PollSet Supervisor::poll_set() {
    PollSet set;
    set.fds.push_back({signal_fd_.get(), POLLIN, 0});
    if (stdin_pipe_) {
        if (stdin_buffer_.empty() && !stdin_eof_) {
            set.stdin_index = set.fds.size();
            set.fds.push_back({STDIN_FILENO, POLLIN, 0});
        } else if (!stdin_buffer_.empty()) {
            set.stdin_pipe_index = set.fds.size();
            set.fds.push_back({stdin_pipe_.get(), POLLOUT, 0});
        }
    }
    set.relay_start = set.fds.size();
    for (auto &c : children_) {
        for (OutputRelay *r : {c.out.get(), c.err.get()}) {
            if (r != nullptr && r->open()) {
                set.relays.push_back(r);
                set.fds.push_back({r->fd(), POLLIN, 0});
            }
        }
    }
    set.coordinator_start = set.fds.size();
    coordinator_->append_pollfds(set.fds);
    return set;
}

// The poll timeout in milliseconds until the next wake-up (-1: none): the kill, the time
// limit, the end of draining, the coordinator's deadline, or a relay's partial line.
int Supervisor::poll_timeout(const PollSet &set) const {
    std::optional<Clock::time_point> wake;
    auto consider = [&wake](std::optional<Clock::time_point> t) {
        if (t && (!wake || *t < *wake)) {
            wake = t;
        }
    };
    consider(kill_at_);
    consider(deadline_);
    consider(drain_until_);
    consider(coordinator_->next_deadline());
    for (OutputRelay *r : set.relays) {
        Clock::time_point due;
        if (r->partial_due(due)) {
            consider(due);
        }
    }
    if (!wake) {
        return -1;
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - Clock::now());
    // Clamped: a --timeout of up to kMaxSeconds is more milliseconds than an int holds.
    return static_cast<int>(
        std::clamp<long long>(ms.count() + 1, 0, std::numeric_limits<int>::max()));
}

// Handles what poll reported ready in @set.
void Supervisor::dispatch(PollSet &set) {
    const std::vector<pollfd> &fds = set.fds;
    if (fds[0].revents != 0) {
        signalfd_siginfo si;
        while (::read(signal_fd_.get(), &si, sizeof si) == sizeof si) {
            if (si.ssi_signo == SIGCHLD) {
                reap_children();
            } else {
                on_signal(static_cast<int>(si.ssi_signo));
            }
        }
    }
    if (set.stdin_index != 0 && fds[set.stdin_index].revents != 0) {
        forward_stdin_readable();
    }
    if (set.stdin_pipe_index != 0 && fds[set.stdin_pipe_index].revents != 0) {
        forward_stdin_writable();
    }
    for (std::size_t i = 0; i < set.relays.size(); ++i) {
        if (fds[set.relay_start + i].revents != 0) {
            set.relays[i]->on_readable();
        }
    }
    for (std::size_t i = set.coordinator_start; i < fds.size(); ++i) {
        if (fds[i].revents != 0) {
            coordinator_->handle(fds[i]);
        }
    }
}

// The timers due at @now: partial output lines, the coordinator's, the time limit, a
// process that exited 0 without joining, the kill after teardown, the end of draining.
void Supervisor::on_timers(const PollSet &set, Clock::time_point now) {
    for (OutputRelay *r : set.relays) {
        Clock::time_point due;
        if (r->open() && r->partial_due(due) && due <= now) {
            r->flush_partial();
        }
    }
    coordinator_->on_time(now);
    if (deadline_ && now >= *deadline_) {
        deadline_.reset();
        std::string s = std::to_string(*options_.timeout);
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.') {
            s.pop_back();
        }
        end_job({-1, 124, "bsprun: time limit of " + s + " s exceeded; job ended"});
    }
    if (zero_exit_unjoined_ && coordinator_->joined_count() > 0) {
        zero_exit_unjoined_ = false;
        end_job({zero_exit_pid_, 1,
                 "bsprun: process " + std::to_string(zero_exit_pid_) +
                     " exited without joining the job (it never called bsp_begin)"});
    }
    if (kill_at_ && now >= *kill_at_) {
        kill_at_.reset();
        kill_groups();
    }
    if (drain_until_ && now >= *drain_until_) {
        // Every process has ended; whatever still holds their pipes open (a
        // background grandchild left in its process group) is ended too.
        drain_until_.reset();
        kill_groups();
        for (auto &c : children_) {
            for (OutputRelay *r : {c.out.get(), c.err.get()}) {
                if (r != nullptr && r->open()) {
                    r->close();
                }
            }
        }
    }
}

// SIGKILL to the process group of every process started.
void Supervisor::kill_groups() {
    for (auto &c : children_) {
        if (c.os_pid > 0) {
            ::kill(-c.os_pid, SIGKILL);
        }
    }
}

bool Supervisor::all_done() const {
    for (const auto &c : children_) {
        if (c.os_pid > 0 && !c.wstatus) {
            return false;
        }
        for (const OutputRelay *r : {c.out.get(), c.err.get()}) {
            if (r != nullptr && r->open()) {
                return false;
            }
        }
    }
    return true;
}

void Supervisor::reap_children() {
    for (;;) {
        int ws = 0;
        pid_t pid = ::waitpid(-1, &ws, WNOHANG);
        if (pid <= 0) {
            break;
        }
        for (auto &c : children_) {
            if (c.os_pid == pid) {
                c.wstatus = ws;
                on_child_exit(c);
            }
        }
    }
    bool all_reaped = true;
    for (const auto &c : children_) {
        all_reaped = all_reaped && (c.os_pid <= 0 || c.wstatus);
    }
    if (all_reaped && !drain_until_) {
        drain_until_ = Clock::now() + std::chrono::seconds(1);
    }
}

void Supervisor::on_child_exit(Child &child) {
    int pid = child.command.pid;
    if (pid == 0) {
        close_stdin_forwarding();
    }
    if (outcome_ || coordinator_->state() != bsp::launch::Coordinator::State::running) {
        return;
    }
    int ws = *child.wstatus;
    if (coordinator_->has_joined(pid)) {
        end_job(describe_loss(pid));
        return;
    }
    int status = bsp::launch::shell_status(ws);
    if (status != 0) {
        end_job({pid, status,
                 "bsprun: process " + std::to_string(pid) + " " +
                     bsp::launch::describe_wait_status(ws) + " before joining the job"});
    } else if (!zero_exit_unjoined_) {
        // A program that is not a BSP program may run under bsprun; only when others
        // joined is its leaving an error (they would wait for it for ever).
        zero_exit_unjoined_ = true;
        zero_exit_pid_ = pid;
    }
}

Outcome Supervisor::describe_loss(int pid) {
    Child &child = children_[static_cast<std::size_t>(pid)];
    auto until = Clock::now() + std::chrono::seconds(1);
    while (!child.wstatus && Clock::now() < until) {
        int ws = 0;
        if (::waitpid(child.os_pid, &ws, WNOHANG) == child.os_pid) {
            child.wstatus = ws;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string who = "bsprun: process " + std::to_string(pid);
    if (!child.wstatus) {
        return {pid, 1, who + " closed its control connection before bsp_end"};
    }
    if (pid == 0) {
        close_stdin_forwarding();
    }
    int status = bsp::launch::shell_status(*child.wstatus);
    return {pid, status == 0 ? 1 : status,
            who + " " + bsp::launch::describe_wait_status(*child.wstatus) + " before bsp_end"};
}

void Supervisor::end_job(const Outcome &outcome) {
    if (coordinator_->state() == bsp::launch::Coordinator::State::running) {
        coordinator_->tear_down(outcome);  // calls on_teardown
    } else {
        on_teardown(outcome);
    }
}

void Supervisor::on_teardown(const Outcome &outcome) {
    if (outcome_) {
        return;
    }
    outcome_ = outcome;
    // Joined processes are told through their control connection and end by
    // themselves; the others are asked with SIGTERM. SIGKILL follows after the grace.
    signal_groups(SIGTERM, true);
    kill_at_ =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(options_.grace * 1000));
}

void Supervisor::signal_groups(int sig, bool only_unjoined) {
    for (auto &c : children_) {
        if (c.os_pid <= 0 || c.wstatus) {
            continue;
        }
        if (only_unjoined && coordinator_->connected(c.command.pid)) {
            continue;
        }
        ::kill(-c.os_pid, sig);
    }
}

void Supervisor::on_signal(int sig) {
    ++signals_seen_;
    if (signals_seen_ > 1) {
        kill_groups();
        return;
    }
    signal_groups(sig, false);
    end_job(
        {-1, 128 + sig, std::string("bsprun: received ") + ::sigabbrev_np(sig) + "; job ended"});
}

void Supervisor::forward_stdin_readable() {
    char buf[65536];
    ssize_t n;
    do {
        n = ::read(STDIN_FILENO, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) {
        return;
    }
    if (n <= 0) {
        stdin_eof_ = true;
        close_stdin_forwarding();
        return;
    }
    stdin_buffer_.append(buf, static_cast<std::size_t>(n));
    forward_stdin_writable();
}

void Supervisor::forward_stdin_writable() {
    while (!stdin_buffer_.empty()) {
        ssize_t n = ::write(stdin_pipe_.get(), stdin_buffer_.data(), stdin_buffer_.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN) {
                return;
            }
            // Process 0 closed its standard input: nothing more to forward.
            stdin_buffer_.clear();
            stdin_eof_ = true;
            stdin_pipe_.reset();
            return;
        }
        stdin_buffer_.erase(0, static_cast<std::size_t>(n));
    }
    if (stdin_eof_) {
        stdin_pipe_.reset();
    }
}

void Supervisor::close_stdin_forwarding() {
    if (stdin_buffer_.empty() || stdin_eof_) {
        stdin_eof_ = true;
    }
    if (stdin_buffer_.empty()) {
        stdin_pipe_.reset();
    }
}

int Supervisor::exit_status() const {
    if (outcome_) {
        return outcome_->status;
    }
    for (const auto &c : children_) {
        if (c.wstatus) {
            int s = bsp::launch::shell_status(*c.wstatus);
            if (s != 0) {
                return s;
            }
        }
    }
    return 0;
}

}  // namespace bsprun
