// What another local user can do against a job: the multi-process tests run it as
// `nobody` (and as the job's own user, as a control) while a job is held.
//
//   launch_intruder [--session SID]... [--at ADDR]... [--guess TOKEN]... [--nprocs N]
//                   [--no-join]
//
// 1. Scans /proc/*/cmdline and /proc/*/environ of the processes of the given sessions (the
//    job's; never anybody else's) it may read for
//    job secrets (the value of BSP_JOB=, and any run of exactly 32 hex digits) and for
//    rendezvous addresses (BSP_RENDEZVOUS=). Prints "found SECRET in cmdline|environ of
//    PID" for each, and "readable environ: N" (other processes' environments it could read).
// 2. Tries to join the job at every address found or given with --at: with each secret
//    found, else with a random guess, and with each --guess, as pid 0 of N processes. Prints "join
//    ADDR: welcomed", "join ADDR: refused (CODE) TEXT", "join ADDR: closed" or "join ADDR:
//    unreachable".
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "rendezvous_address.hpp"
#include "wire.hpp"

namespace {

using namespace bsp::launch;

// What a file holds, or what could be read of it: a /proc file of a process that ends
// meanwhile reads with ESRCH, on which an istreambuf_iterator would throw.
std::string read_file(const std::string &path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return out;
    }
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Values after NAME= up to a separator (NUL, space, quote, semicolon).
std::vector<std::string> values_of(const std::string &text, const std::string &name) {
    std::vector<std::string> out;
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        std::size_t start = at + name.size();
        std::size_t end = text.find_first_of(std::string("\0 '\";", 5), start);
        out.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    }
    return out;
}

std::vector<std::string> hex_runs(const std::string &text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!is_hex(text[i])) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < text.size() && is_hex(text[j])) {
            ++j;
        }
        if (j - i == 32) {
            out.push_back(text.substr(i, 32));
        }
        i = j;
    }
    return out;
}

int session_of(int pid) {
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat.rfind(')');
    int ppid = 0, pgrp = 0, session = -1;
    char state = 0;
    if (close == std::string::npos || std::sscanf(stat.c_str() + close + 1, " %c %d %d %d", &state,
                                                  &ppid, &pgrp, &session) != 4) {
        return -1;
    }
    return session;
}

std::string attempt(const std::string &where, const std::string &token, int nprocs) {
    RendezvousAddress address;
    try {
        address = RendezvousAddress::parse(where);
    } catch (const std::exception &e) {
        return std::string("bad address: ") + e.what();
    }
    UniqueFd fd;
    try {
        fd = connect_to(address, std::chrono::steady_clock::now() + std::chrono::seconds(2));
    } catch (const std::exception &) {
        return "unreachable";
    }
    auto hello = wire::Encoder()
                     .u32(wire::kVersion)
                     .u32(0)
                     .u32(static_cast<std::uint32_t>(nprocs))
                     .string(token)
                     .data();
    if (!wire::send_message(fd.get(), wire::Type::hello, hello)) {
        return "closed";
    }
    wire::Reader reader;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
        pollfd p{fd.get(), POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) {
            continue;
        }
        auto fill = reader.fill(fd.get());
        if (fill == wire::Reader::Fill::would_block) {
            continue;
        }
        if (fill != wire::Reader::Fill::data) {
            return "closed";
        }
        try {
            while (auto m = reader.next()) {
                if (m->type == wire::Type::welcome) {
                    return "welcomed";
                }
                if (m->type == wire::Type::refused) {
                    wire::Decoder d(m->body);
                    std::uint32_t code = d.u32();
                    return "refused (" + std::to_string(code) + ") " + d.string();
                }
            }
        } catch (const std::exception &e) {
            return std::string("garbled: ") + e.what();
        }
    }
    return "no answer";
}

}  // namespace

int main(int argc, char **argv) {
    std::set<std::string> addresses;
    std::set<std::string> guesses;
    std::set<int> sessions;
    int nprocs = 0;
    bool join = true;
    for (int i = 1; i < argc; ++i) {
        std::string opt = argv[i];
        if (opt == "--no-join") {
            join = false;
        } else if (i + 1 < argc && opt == "--at") {
            addresses.insert(argv[++i]);
        } else if (i + 1 < argc && opt == "--guess") {
            guesses.insert(argv[++i]);
        } else if (i + 1 < argc && opt == "--session") {
            sessions.insert(std::atoi(argv[++i]));
        } else if (i + 1 < argc && opt == "--nprocs") {
            nprocs = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "launch_intruder: bad argument '%s'\n", opt.c_str());
            return 2;
        }
    }
    std::set<std::string> secrets;
    int readable_environ = 0;
    const int self = ::getpid();
    DIR *proc = ::opendir("/proc");
    while (dirent *e = proc ? ::readdir(proc) : nullptr) {
        int pid = std::atoi(e->d_name);
        if (pid <= 0 || pid == self || sessions.count(session_of(pid)) == 0) {
            continue;
        }
        for (const char *what : {"cmdline", "environ"}) {
            std::string text = read_file("/proc/" + std::string(e->d_name) + "/" + what);
            if (text.empty()) {
                continue;
            }
            if (std::string(what) == "environ") {
                ++readable_environ;
            }
            std::set<std::string> here;
            for (const auto &v : values_of(text, "BSP_JOB=")) {
                here.insert(v);
            }
            for (const auto &v : hex_runs(text)) {
                here.insert(v);
            }
            for (const auto &v : here) {
                std::printf("found %s in %s of %d\n", v.c_str(), what, pid);
                secrets.insert(v);
            }
            for (const auto &v : values_of(text, "BSP_RENDEZVOUS=")) {
                addresses.insert(v);
            }
            for (const auto &v : values_of(text, "BSP_NPROCS=")) {
                if (nprocs == 0) {
                    nprocs = std::atoi(v.c_str());
                }
            }
        }
    }
    if (proc != nullptr) {
        ::closedir(proc);
    }
    std::printf("readable environ: %d\n", readable_environ);
    if (secrets.empty()) {
        unsigned char guess[16];
        if (::getrandom(guess, sizeof guess, 0) != sizeof guess) {
            return 1;
        }
        std::string hex;
        for (unsigned char b : guess) {
            static constexpr char kHex[] = "0123456789abcdef";
            hex += kHex[b >> 4];
            hex += kHex[b & 15];
        }
        secrets.insert(hex);
    }
    if (!join) {
        return 0;
    }
    secrets.insert(guesses.begin(), guesses.end());
    for (const auto &where : addresses) {
        for (const auto &secret : secrets) {
            std::printf("join %s: %s\n", where.c_str(),
                        attempt(where, secret, nprocs > 0 ? nprocs : 1).c_str());
        }
    }
    return 0;
}
