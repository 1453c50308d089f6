#include "process_harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char **environ;

namespace launch_test {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1;
    std::size_t written = 0;
    bool exited = false;
    bool signalled = false;
};

void make_pipe(int p[2]) {
    if (::pipe2(p, O_CLOEXEC) < 0) {
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
}

std::vector<std::string> clean_environment(const std::vector<std::string> &add) {
    std::vector<std::string> env;
    for (char **e = environ; *e != nullptr; ++e) {
        std::string_view v(*e);
        if (v.starts_with("BSP_") || v.starts_with("SLURM_")) {
            continue;
        }
        env.emplace_back(v);
    }
    env.insert(env.end(), add.begin(), add.end());
    return env;
}

Running start(const Spec &spec) {
    int in[2], out[2], err[2];
    make_pipe(in);
    make_pipe(out);
    make_pipe(err);
    std::vector<std::string> env = clean_environment(spec.env);
    std::vector<char *> envp, argv;
    for (auto &s : env) {
        envp.push_back(s.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    for (auto &s : args) {
        argv.push_back(s.data());
    }
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::setsid();
        rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        if (spec.pass_fd >= 0) {
            if (spec.pass_fd == 3) {
                ::fcntl(3, F_SETFD, 0);
            } else {
                ::dup2(spec.pass_fd, 3);  // without close-on-exec
            }
        }
        if (spec.nofile) {
            rlimit files{*spec.nofile, *spec.nofile};
            ::setrlimit(RLIMIT_NOFILE, &files);
        }
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    Running r;
    r.pid = pid;
    r.in = in[1];
    r.out = out[0];
    r.err = err[0];
    ::fcntl(r.in, F_SETFL, O_NONBLOCK);
    if (spec.input.empty()) {
        ::close(r.in);
        r.in = -1;
    }
    return r;
}

bool read_into(int &fd, std::string &to) {
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
        to.append(buf, static_cast<std::size_t>(n));
        return true;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return true;
    }
    ::close(fd);
    fd = -1;
    return false;
}

// Every process whose session id is sid: "pid state cmdline".
std::vector<std::string> session_members(pid_t sid) {
    std::vector<std::string> found;
    DIR *d = ::opendir("/proc");
    if (d == nullptr) {
        return found;
    }
    while (dirent *e = ::readdir(d)) {
        if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) {
            continue;
        }
        std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(stat, line)) {
            continue;
        }
        auto close = line.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        std::istringstream rest(line.substr(close + 2));
        char state;
        long ppid, pgrp, session;
        if (!(rest >> state >> ppid >> pgrp >> session) || session != sid) {
            continue;
        }
        // The process may end meanwhile: its cmdline then reads with ESRCH, on which an
        // istreambuf_iterator would throw (basic_filebuf::underflow); read it as it is.
        std::string c;
        if (const int fd = ::open((std::string("/proc/") + e->d_name + "/cmdline").c_str(),
                                  O_RDONLY | O_CLOEXEC);
            fd >= 0) {
            char buf[4096];
            ssize_t n;
            while ((n = ::read(fd, buf, sizeof buf)) > 0) {
                c.append(buf, static_cast<std::size_t>(n));
            }
            ::close(fd);
        }
        std::replace(c.begin(), c.end(), '\0', ' ');
        found.push_back(std::string(e->d_name) + " " + state + " " + c);
    }
    ::closedir(d);
    return found;
}

std::vector<std::string> sweep(pid_t sid) {
    // Processes that are just ending get a moment; whatever stays is a leftover.
    auto until = Clock::now() + std::chrono::seconds(3);
    std::vector<std::string> members = session_members(sid);
    while (!members.empty() && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        members = session_members(sid);
    }
    for (const auto &m : members) {
        ::kill(static_cast<pid_t>(std::stol(m)), SIGKILL);
    }
    return members;
}

}  // namespace

std::vector<Result> run_all(const std::vector<Spec> &specs, std::chrono::seconds limit) {
    std::vector<Running> procs;
    std::vector<Result> results(specs.size());
    for (const auto &s : specs) {
        procs.push_back(start(s));
    }
    auto deadline = Clock::now() + limit;
    std::optional<Clock::time_point> drain_deadline;
    for (;;) {
        std::vector<pollfd> fds;
        std::vector<std::pair<std::size_t, int>> which;  // (process, 0 in / 1 out / 2 err)
        for (std::size_t i = 0; i < procs.size(); ++i) {
            if (procs[i].in >= 0) {
                fds.push_back({procs[i].in, POLLOUT, 0});
                which.emplace_back(i, 0);
            }
            if (procs[i].out >= 0) {
                fds.push_back({procs[i].out, POLLIN, 0});
                which.emplace_back(i, 1);
            }
            if (procs[i].err >= 0) {
                fds.push_back({procs[i].err, POLLIN, 0});
                which.emplace_back(i, 2);
            }
        }
        bool all_exited =
            std::all_of(procs.begin(), procs.end(), [](const Running &r) { return r.exited; });
        if (all_exited && (fds.empty() || (drain_deadline && Clock::now() > *drain_deadline))) {
            break;
        }
        if (all_exited && !drain_deadline) {
            drain_deadline = Clock::now() + std::chrono::seconds(2);
        }
        ::poll(fds.data(), fds.size(), 20);
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) {
                continue;
            }
            auto [i, kind] = which[k];
            Running &r = procs[i];
            if (kind == 0) {
                const std::string &input = specs[i].input;
                ssize_t n = ::write(r.in, input.data() + r.written, input.size() - r.written);
                if (n > 0) {
                    r.written += static_cast<std::size_t>(n);
                }
                if (n < 0 || r.written == input.size()) {
                    ::close(r.in);
                    r.in = -1;
                }
            } else {
                read_into(kind == 1 ? r.out : r.err, kind == 1 ? results[i].out : results[i].err);
            }
        }
        for (std::size_t i = 0; i < procs.size(); ++i) {
            Running &r = procs[i];
            if (!r.exited && !r.signalled && specs[i].signal_when &&
                specs[i].signal_when(results[i].out)) {
                ::kill(r.pid, specs[i].signal);
                r.signalled = true;
            }
            if (!r.exited) {
                int ws = 0;
                rusage ru{};
                if (::wait4(r.pid, &ws, WNOHANG, &ru) == r.pid) {
                    r.exited = true;
                    results[i].status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
                    results[i].max_rss_kib = ru.ru_maxrss;
                    results[i].cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
                }
            }
        }
        if (Clock::now() > deadline) {
            for (std::size_t i = 0; i < procs.size(); ++i) {
                if (!procs[i].exited) {
                    results[i].timed_out = true;
                    ::kill(-procs[i].pid, SIGKILL);
                    ::waitpid(procs[i].pid, nullptr, 0);
                    procs[i].exited = true;
                }
            }
            deadline = Clock::time_point::max();
        }
    }
    for (std::size_t i = 0; i < procs.size(); ++i) {
        for (int fd : {procs[i].in, procs[i].out, procs[i].err}) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
        results[i].leftovers = sweep(procs[i].pid);
    }
    return results;
}

Result run(const Spec &spec, std::chrono::seconds limit) {
    return run_all({spec}, limit)[0];
}

std::optional<Result> run_intruder_as_nobody(const std::vector<std::string> &args) {
    if (::geteuid() != 0) {
        return std::nullopt;
    }
    namespace fs = std::filesystem;
    std::string dir = (fs::temp_directory_path() / "bsp-intruder.XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
        throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
    }
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    std::string copy = dir + "/launch_intruder";
    fs::copy_file(INTRUDER_PATH, copy);
    fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    Spec s{{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", copy}};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    Result r = run(s);
    fs::remove_all(dir);
    return r;
}

std::vector<std::string> sorted_lines(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        lines.push_back(l);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

}  // namespace launch_test
