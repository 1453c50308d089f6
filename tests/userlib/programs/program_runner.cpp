#include "program_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace bsp::test {

ProgramResult run_program(const std::vector<std::string> &argv,
                          const std::vector<std::pair<std::string, std::string>> &env,
                          int timeout_seconds, const std::string &stdin_text) {
    ProgramResult res;
    // Orphaned processes of the program (spawn_local's children) are re-parented to us,
    // so that we can reap them and tell live leftovers from zombies.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int out[2], err[2], in[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC))
        return res;
    const pid_t child = fork();
    if (child == 0) {
        setpgid(0, 0);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (const auto &[k, v] : env)
            setenv(k.c_str(), v.c_str(), 1);
        std::vector<char *> args;
        for (const auto &a : argv)
            args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    setpgid(child, child);  // both sides, to win the race
    close(out[1]);
    close(err[1]);
    close(in[0]);
    if (!stdin_text.empty())
        (void)!write(in[1], stdin_text.data(), stdin_text.size());
    close(in[1]);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            res.timed_out = true;
            kill(-child, SIGKILL);
            break;
        }
        if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? res.out : res.err).append(buf, static_cast<std::size_t>(n));
            }
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0)
            close(f.fd);
    int status = 0;
    waitpid(child, &status, 0);
    res.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // Every process of the program must be gone within a bounded grace time.
    auto reap = [] {
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0) {
        }
    };
    reap();
    for (int i = 0; i < 100 && kill(-child, 0) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        reap();
    }
    if (kill(-child, 0) == 0) {
        res.leftovers = true;
        kill(-child, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        reap();
    }
    return res;
}

std::vector<std::string> sorted_lines(const std::string &text) {
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos)
            nl = text.size();
        lines.push_back(text.substr(pos, nl - pos));
        pos = nl + 1;
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

}  // namespace bsp::test
