// A tiny program that links only the launch library and exercises a Session the way
// the BSPlib runtime does. The multi-process tests run it under bsprun, under emulated
// Slurm and directly (spawn_local). Usage: launch_probe [--spawn P] ACTION [ARGS...]
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "session.hpp"

using bsp::launch::Session;

namespace {

std::vector<std::byte> blob_of(int pid, int round) {
    // Sizes differ per process (and are zero for pid 0 in round 0) to check framing.
    std::string s = "pid=" + std::to_string(pid) + " round=" + std::to_string(round) + " ";
    if (pid == 0 && round == 0) {
        s.clear();
    }
    s.append(static_cast<std::size_t>(pid * 997 + round), static_cast<char>('a' + pid % 26));
    auto b = std::as_bytes(std::span(s.data(), s.size()));
    return {b.begin(), b.end()};
}

int gather_rounds(Session &s, int rounds) {
    for (int r = 0; r < rounds; ++r) {
        auto all = s.allgather(blob_of(s.pid(), r));
        if (static_cast<int>(all.size()) != s.nprocs()) {
            std::printf("process %d: allgather returned %zu blobs\n", s.pid(), all.size());
            return 1;
        }
        for (int p = 0; p < s.nprocs(); ++p) {
            if (all[static_cast<std::size_t>(p)] != blob_of(p, r)) {
                std::printf("process %d: round %d: blob of %d is wrong\n", s.pid(), r, p);
                return 1;
            }
        }
    }
    return 0;
}

// Children of this process found in /proc (pid, state), except `except`.
std::vector<std::pair<int, char>> children_of_me(pid_t except) {
    std::vector<std::pair<int, char>> found;
    DIR *proc = ::opendir("/proc");
    if (proc == nullptr) {
        return found;
    }
    while (dirent *e = ::readdir(proc)) {
        int pid = std::atoi(e->d_name);
        if (pid <= 0 || pid == except) {
            continue;
        }
        // Any process may end between readdir and read: its stat then reads with ESRCH (an
        // ifstream's underflow throws on that), and it is no child left.
        const int fd =
            ::open((std::string("/proc/") + e->d_name + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        char buf[1024];
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        if (n <= 0) {
            continue;
        }
        const std::string stat(buf, static_cast<std::size_t>(n));
        // pid (comm) state ppid ...: comm may hold spaces and parentheses.
        auto close = stat.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        char state = 0;
        int ppid = 0;
        if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 &&
            ppid == ::getpid()) {
            found.emplace_back(pid, state);
        }
    }
    ::closedir(proc);
    return found;
}

// Forks a child of the program's own that exits with `code`; returns what waitpid says.
std::string own_child_status(int code) {
    pid_t child = ::fork();
    if (child == 0) {
        ::_exit(code);
    }
    int ws = 0;
    if (child < 0 || ::waitpid(child, &ws, 0) != child) {
        return "lost (" + std::string(std::strerror(errno)) + ")";
    }
    return WIFEXITED(ws) ? "exited with " + std::to_string(WEXITSTATUS(ws)) : "did not exit";
}

void wait_forever_computing() {
    for (;;) {
        ::pause();
    }
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    int spawn = 0;
    if (args.size() >= 2 && args[0] == "--spawn") {
        spawn = std::atoi(args[1].c_str());
        args.erase(args.begin(), args.begin() + 2);
    }
    if (args.empty()) {
        std::fprintf(stderr, "usage: launch_probe [--spawn P] ACTION [ARGS...]\n");
        return 2;
    }
    std::string action = args[0];
    auto arg = [&](std::size_t i) { return i < args.size() ? std::atoi(args[i].c_str()) : 0; };

    if (action == "nojoin") {  // nojoin K: K leaves (status 0) before joining
        const char *me = std::getenv("BSP_PID");
        if (me != nullptr && std::atoi(me) == arg(1)) {
            return 0;
        }
        action = "gather";
    }
    if (action == "badtoken") {  // badtoken K: K presents a wrong job token
        const char *me = std::getenv("BSP_PID");
        if (me != nullptr && std::atoi(me) == arg(1)) {
            ::setenv("BSP_JOB", "0123456789abcdef0123456789abcdef", 1);
        }
        action = "gather";
    }
    if (action == "joinafter") {  // joinafter FILE: join once FILE exists, then as gather 3
        while (::access(args.at(1).c_str(), F_OK) != 0) {
            ::usleep(10000);
        }
        args = {"gather", "3"};
        action = "gather";
    }
    if (action == "latejoin") {  // latejoin S: process 0 joins S seconds after the others
        const char *me = std::getenv("BSP_PID");
        if (me != nullptr && std::atoi(me) == 0) {
            ::usleep(static_cast<useconds_t>(std::atof(args[1].c_str()) * 1e6));
        }
        action = "gather";
    }
    if (action == "joinlate") {  // joinlate K S: process K (bsprun or Slurm) joins S s late
        const char *me = std::getenv("BSP_PID");
        if (me == nullptr) {
            me = std::getenv("SLURM_PROCID");
        }
        if (me != nullptr && std::atoi(me) == arg(1)) {
            ::usleep(static_cast<useconds_t>(std::atof(args[2].c_str()) * 1e6));
        }
        action = "gather";
    }
    std::unique_ptr<Session> s;
    try {
        s = Session::join_from_environment();
        if (!s) {
            if (spawn == 0) {
                std::printf("started directly\n");
                return 0;
            }
            s = Session::spawn_local(spawn);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "launch_probe: %s\n", e.what());
        return 2;
    }
    const int pid = s->pid();
    const int nprocs = s->nprocs();

    if (action == "gather") {
        int rounds = args[0] == "gather" ? arg(1) : 1;
        if (gather_rounds(*s, rounds) != 0) {
            s->abort("probe: allgather check failed");
        }
        s->finish();
        std::printf("process %d of %d: %d rounds ok\n", pid, nprocs, rounds);
        return 0;
    }
    if (action == "abort") {  // abort K: K aborts after one round, the others wait
        int k = arg(1);
        gather_rounds(*s, 1);
        if (pid == k) {
            std::printf("process %d: output before abort", pid);  // no newline, no flush
            s->abort("probe: process " + std::to_string(pid) + " aborts on purpose");
        }
        gather_rounds(*s, 1);
        std::printf("process %d: not reached\n", pid);
        return 3;
    }
    if (action == "abort-computing") {  // the others compute and never call the session
        int k = arg(1);
        if (pid != k) {
            std::printf("process %d: computing\n", pid);  // buffered, flushed at the end
        }
        gather_rounds(*s, 1);
        if (pid == k) {
            s->abort("probe: process " + std::to_string(pid) + " aborts on purpose");
        }
        wait_forever_computing();
    }
    if (action == "control") {  // the others see control_fd and abort quietly
        int k = arg(1);
        gather_rounds(*s, 1);
        if (pid == k) {
            s->abort("probe: process " + std::to_string(pid) + " aborts on purpose");
        }
        pollfd p = {s->control_fd(), POLLIN, 0};
        while (::poll(&p, 1, -1) != 1) {
        }
        std::printf("process %d: control_fd readable\n", pid);
        s->abort("probe: this second abort must not be printed");
    }
    if (action == "segv" || action == "kill") {  // K dies, the others wait in allgather
        int k = arg(1);
        gather_rounds(*s, 1);
        if (pid == k) {
            std::fflush(stdout);
            // Default action, even under a sanitizer that handles SIGSEGV itself.
            ::signal(SIGSEGV, SIG_DFL);
            ::raise(action == "segv" ? SIGSEGV : SIGKILL);
        }
        gather_rounds(*s, 1);
        return 3;
    }
    if (action == "exit") {  // exit K CODE: K exits without finish
        int k = arg(1);
        gather_rounds(*s, 1);
        if (pid == k) {
            std::exit(arg(2));
        }
        gather_rounds(*s, 1);
        return 3;
    }
    if (action == "exit-after-finish") {  // K exits with CODE after a normal finish
        gather_rounds(*s, 2);
        s->finish();
        return pid == arg(1) ? arg(2) : 0;
    }
    if (action == "mismatch") {  // 0 finishes while the others gather
        if (pid == 0) {
            s->finish();
        } else {
            gather_rounds(*s, 1);
        }
        return 3;
    }
    if (action == "stdin") {  // process 0 echoes its standard input
        if (pid == 0) {
            std::string all;
            char buf[4096];
            std::size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
                all.append(buf, n);
            }
            std::printf("process 0 read %zu bytes: %s", all.size(), all.c_str());
        } else {
            int c = std::fgetc(stdin);
            std::printf("process %d stdin %s\n", pid, c == EOF ? "empty" : "has data");
        }
        gather_rounds(*s, 1);
        s->finish();
        return 0;
    }
    if (action == "where") {  // prints the host bsprun assigned and the test variable
        const char *h = std::getenv("BSP_HOST");
        const char *t = std::getenv("BSP_TEST_HOST");
        std::printf("process %d host %s test %s\n", pid, h ? h : "-", t ? t : "-");
        gather_rounds(*s, 1);
        s->finish();
        return 0;
    }
    if (action == "args") {  // prints its directory and arguments, one per line
        char cwd[4096];
        std::string line = "process " + std::to_string(pid) + " in " +
                           (::getcwd(cwd, sizeof cwd) ? cwd : "?") + " on " +
                           (std::getenv("BSP_TEST_HOST") ? std::getenv("BSP_TEST_HOST") : "-");
        for (std::size_t i = 1; i < args.size(); ++i) {
            line += " [" + args[i] + "]";
        }
        std::printf("%s\n", line.c_str());
        gather_rounds(*s, 1);
        s->finish();
        return 0;
    }
    if (action == "reap") {  // reap [keep]: no zombies while process 0 goes on after finish
        if (pid == 0) {
            std::printf("process 0: own child during the job %s\n", own_child_status(42).c_str());
        }
        gather_rounds(*s, 1);
        s->finish();
        if (pid != 0) {
            std::printf("process %d of %d: finished\n", pid, nprocs);
            return 0;
        }
        // The other processes exit now; process 0 keeps running and must not keep them
        // as zombies. A child of its own, forked after the job, is still its to wait for.
        pid_t mine = ::fork();
        if (mine == 0) {
            ::pause();
            ::_exit(1);
        }
        std::vector<std::pair<int, char>> left;
        for (int i = 0; i < 1000; ++i) {  // at most 10 s
            left = children_of_me(mine);
            if (left.empty()) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        std::string states;
        for (auto [p, state] : left) {
            states += " " + std::to_string(p) + ":" + state;
        }
        std::printf("process 0: children of the job left:%s\n",
                    left.empty() ? " none" : states.c_str());
        ::kill(mine, SIGTERM);
        int ws = 0;
        bool ok = ::waitpid(mine, &ws, 0) == mine && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM;
        std::printf("process 0: own child after the job %s\n", ok ? "killed by SIGTERM" : "lost");
        std::printf("process 0: own child after the job %s\n", own_child_status(43).c_str());
        if (args.size() > 1 && args[1] == "keep") {
            // As libbsp does: the session is never destroyed, the process just exits.
            static Session *kept = s.release();
            (void)kept;
            std::fflush(stdout);
            std::exit(0);
        }
        return 0;
    }
    if (action == "sleep") {  // joins, then sleeps for ever (time limit, signals)
        gather_rounds(*s, 1);
        std::printf("process %d: sleeping\n", pid);
        std::fflush(stdout);
        wait_forever_computing();
    }
    if (action == "orphan") {  // K leaves a grandchild behind, then aborts
        int k = arg(1);
        gather_rounds(*s, 1);
        if (pid == k) {
            if (::fork() == 0) {
                ::execlp("sleep", "sleep", "1000", static_cast<char *>(nullptr));
                ::_exit(127);
            }
            s->abort("probe: process " + std::to_string(pid) + " aborts with a child running");
        }
        gather_rounds(*s, 1);
        return 3;
    }
    if (action == "hold") {  // hold FILE: joins, prints the job secret, waits for FILE
        gather_rounds(*s, 1);
        auto secret = s->job_secret();
        std::printf(
            "process %d: holding %s session %d\n", pid,
            std::string(reinterpret_cast<const char *>(secret.data()), secret.size()).c_str(),
            static_cast<int>(::getsid(0)));
        std::fflush(stdout);
        while (::access(args.at(1).c_str(), F_OK) != 0) {
            ::usleep(10000);
        }
        if (gather_rounds(*s, 2) != 0) {
            s->abort("probe: allgather check failed");
        }
        s->finish();
        std::printf("process %d: done\n", pid);
        return 0;
    }
    if (action == "lines") {  // many lines per process, for label/interleaving checks
        for (int i = 0; i < arg(1); ++i) {
            std::printf("line %d of process %d\n", i, pid);
        }
        gather_rounds(*s, 1);
        s->finish();
        return 0;
    }
    std::fprintf(stderr, "launch_probe: unknown action '%s'\n", action.c_str());
    s->abort("launch_probe: unknown action");
}
