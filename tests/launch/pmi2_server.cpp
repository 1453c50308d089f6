#include "pmi2_server.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace pmi2 {

const std::string *Command::find(std::string_view key) const {
    for (const auto &[k, v] : pairs) {
        if (k == key) {
            return &v;
        }
    }
    return nullptr;
}

Command parse(std::string_view body) {
    Command c;
    std::size_t i = 0;
    bool first = true;
    if (body.empty()) {
        throw std::invalid_argument("PMI2: empty message");
    }
    while (i < body.size()) {
        std::size_t eq = body.find('=', i);
        if (eq == std::string_view::npos) {
            throw std::invalid_argument("PMI2: a pair without '='");
        }
        std::string key(body.substr(i, eq - i));
        if (key.empty() || key.size() > kMaxKey || key.find(';') != std::string::npos) {
            throw std::invalid_argument("PMI2: bad key");
        }
        std::string value;
        std::size_t j = eq + 1;
        for (;;) {
            if (j >= body.size()) {
                throw std::invalid_argument("PMI2: a value without its ';'");
            }
            if (body[j] == ';') {
                if (j + 1 < body.size() && body[j + 1] == ';') {
                    value += ';';
                    j += 2;
                    continue;
                }
                break;
            }
            value += body[j++];
        }
        if (value.size() > kMaxValue) {
            throw std::invalid_argument("PMI2: value longer than 1024 bytes");
        }
        if (first) {
            if (key != "cmd" || value.empty()) {
                throw std::invalid_argument("PMI2: the first pair is not cmd=NAME");
            }
            c.name = value;
            first = false;
        } else {
            c.pairs.emplace_back(std::move(key), std::move(value));
        }
        i = j + 1;
    }
    return c;
}

std::string encode(const Command &command) {
    auto check = [](const std::string &key, const std::string &value) {
        if (key.empty() || key.size() > kMaxKey || key.find_first_of("=;") != std::string::npos ||
            value.size() > kMaxValue) {
            throw std::invalid_argument("PMI2: cannot encode key '" + key + "'");
        }
    };
    check("cmd", command.name);
    if (command.name.empty()) {
        throw std::invalid_argument("PMI2: a command needs a name");
    }
    std::string body;
    auto put = [&body](const std::string &key, const std::string &value) {
        body += key + "=";
        for (char ch : value) {
            body += ch;
            if (ch == ';') {
                body += ';';
            }
        }
        body += ';';
    };
    put("cmd", command.name);
    for (const auto &[k, v] : command.pairs) {
        check(k, v);
        put(k, v);
    }
    if (body.size() > kMaxMessage) {
        throw std::invalid_argument("PMI2: message longer than 64 KiB");
    }
    char length[kLengthField + 1];
    std::snprintf(length, sizeof length, "%-6zu", body.size());
    return std::string(length, kLengthField) + body;
}

struct Server::Task {
    int fd = -1;
    std::string in;
    bool initialized = false;  // the PMI-1 init line was answered
    bool fenced = false;
    bool closed = false;
};

Server::Server(int ntasks, std::string jobid)
    : ntasks_(ntasks), jobid_(std::move(jobid)), tasks_(static_cast<std::size_t>(ntasks)) {
    for (int i = 0; i < ntasks; ++i) {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
            throw std::system_error(errno, std::generic_category(), "socketpair");
        }
        tasks_[static_cast<std::size_t>(i)].fd = pair[0];
        task_ends_.push_back(pair[1]);
    }
    stop_ = ::eventfd(0, EFD_CLOEXEC);
    thread_ = std::thread([this] { run(); });
}

Server::~Server() {
    std::uint64_t one = 1;
    ssize_t n = ::write(stop_, &one, sizeof one);
    (void)n;
    thread_.join();
    for (auto &t : tasks_) {
        if (t.fd >= 0) {
            ::close(t.fd);
        }
    }
    for (int fd : task_ends_) {
        ::close(fd);
    }
    ::close(stop_);
}

std::vector<std::string> Server::task_environment(int rank) const {
    return {"PMI_FD=3", "PMI_RANK=" + std::to_string(rank), "PMI_SIZE=" + std::to_string(ntasks_),
            "PMI_JOBID=" + jobid_};
}

std::map<std::string, std::string> Server::kvs() const {
    std::lock_guard lock(mutex_);
    return kvs_;
}

std::vector<std::string> Server::log() const {
    std::lock_guard lock(mutex_);
    return log_;
}

void Server::run() {
    for (;;) {
        std::vector<pollfd> fds{{stop_, POLLIN, 0}};
        std::vector<std::size_t> ranks;
        for (std::size_t r = 0; r < tasks_.size(); ++r) {
            if (!tasks_[r].closed) {
                fds.push_back({tasks_[r].fd, POLLIN, 0});
                ranks.push_back(r);
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[0].revents != 0) {
            return;
        }
        for (std::size_t i = 1; i < fds.size(); ++i) {
            if (fds[i].revents != 0) {
                serve(ranks[i - 1]);
            }
        }
    }
}

void Server::serve(std::size_t rank) {
    Task &t = tasks_[rank];
    char buf[4096];
    ssize_t n = ::recv(t.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (n <= 0) {
        t.closed = true;
        return;
    }
    t.in.append(buf, static_cast<std::size_t>(n));
    for (;;) {
        if (!t.initialized) {
            auto nl = t.in.find('\n');
            if (nl == std::string::npos) {
                return;
            }
            std::string line = t.in.substr(0, nl);
            t.in.erase(0, nl + 1);
            bool ok = line == "cmd=init pmi_version=2 pmi_subversion=0";
            {
                std::lock_guard lock(mutex_);
                log_.push_back(std::to_string(rank) + " init");
            }
            std::string answer = "cmd=response_to_init rc=" + std::string(ok ? "0" : "1") +
                                 " pmi_version=2 pmi_subversion=0\n";
            ssize_t w = ::send(t.fd, answer.data(), answer.size(), MSG_NOSIGNAL);
            (void)w;
            t.initialized = true;
            continue;
        }
        if (t.in.size() < kLengthField) {
            return;
        }
        std::size_t length = 0;
        std::size_t k = 0;
        for (; k < kLengthField && t.in[k] >= '0' && t.in[k] <= '9'; ++k) {
            length = length * 10 + static_cast<std::size_t>(t.in[k] - '0');
        }
        if (k == 0 || length > kMaxMessage) {
            t.closed = true;  // not PMI2: the task gets nothing more
            return;
        }
        if (t.in.size() < kLengthField + length) {
            return;
        }
        std::string body = t.in.substr(kLengthField, length);
        t.in.erase(0, kLengthField + length);
        try {
            handle(rank, parse(body));
        } catch (const std::invalid_argument &e) {
            reply(rank, {"error", {{"rc", "14"}, {"errmsg", e.what()}}});
        }
        if (t.closed) {
            return;
        }
    }
}

void Server::reply(std::size_t rank, const Command &c) {
    std::string out = encode(c);
    std::size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::send(tasks_[rank].fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

void Server::handle(std::size_t rank, const Command &c) {
    {
        std::lock_guard lock(mutex_);
        log_.push_back(std::to_string(rank) + " " + c.name);
    }
    const std::string ok = "0";
    if (c.name == "fullinit") {
        // As slurmstepd: pmijobid, pmirank and threaded are required; the rank is the
        // one of the task's own descriptor, whatever it claims.
        bool complete = c.find("pmijobid") && c.find("pmirank") && c.find("threaded");
        reply(rank, {"fullinit-response",
                     {{"rc", complete ? ok : "3"},
                      {"pmi-version", "2"},
                      {"pmi-subversion", "0"},
                      {"rank", std::to_string(rank)},
                      {"size", std::to_string(ntasks_)},
                      {"appnum", "-1"},
                      {"debugged", "FALSE"},
                      {"pmiverbose", "FALSE"}}});
    } else if (c.name == "job-getid") {
        reply(rank, {"job-getid-response", {{"rc", ok}, {"jobid", jobid_}}});
    } else if (c.name == "kvs-put") {
        const std::string *key = c.find("key");
        const std::string *value = c.find("value");
        if (key != nullptr && value != nullptr) {
            std::lock_guard lock(mutex_);
            pending_[*key] = *value;
        }
        reply(rank, {"kvs-put-response", {{"rc", key && value ? ok : "3"}}});
    } else if (c.name == "kvs-fence") {
        tasks_[rank].fenced = true;
        for (const auto &t : tasks_) {
            if (!t.fenced) {
                return;  // answered when the last task enters the fence
            }
        }
        {
            std::lock_guard lock(mutex_);
            kvs_.merge(pending_);
            pending_.clear();
        }
        for (std::size_t r = 0; r < tasks_.size(); ++r) {
            tasks_[r].fenced = false;
            reply(r, {"kvs-fence-response", {{"rc", ok}}});
        }
    } else if (c.name == "kvs-get") {
        const std::string *key = c.find("key");
        std::optional<std::string> value;
        {
            std::lock_guard lock(mutex_);
            if (key != nullptr) {
                if (auto it = kvs_.find(*key); it != kvs_.end()) {
                    value = it->second;
                }
            }
        }
        if (value) {
            reply(rank, {"kvs-get-response", {{"rc", ok}, {"found", "TRUE"}, {"value", *value}}});
        } else {
            reply(rank, {"kvs-get-response", {{"rc", ok}, {"found", "FALSE"}}});
        }
    } else if (c.name == "finalize") {
        reply(rank, {"finalize-response", {{"rc", ok}}});
        ::shutdown(tasks_[rank].fd, SHUT_RDWR);
        tasks_[rank].closed = true;
    } else if (c.name == "abort") {
        // No answer: Slurm would end the step.
    } else {
        reply(rank, {c.name + "-response", {{"rc", "14"}, {"errmsg", "not emulated"}}});
    }
}

}  // namespace pmi2
