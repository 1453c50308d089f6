#include "coordinator.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <stdexcept>

#include "job_token.hpp"
#include "rendezvous_address.hpp"

namespace bsp::launch {

struct Coordinator::Connection {
    UniqueFd fd;
    wire::Reader reader;
    int pid = -1;  // known after the hello
    bool closed = false;
    bool stranger = false;  // came through the listener (anyone may connect there)
    Clock::time_point since;
};

namespace {

// A process that stops reading its control connection must not stall the coordinator.
void bound_send_time(int fd) {
    timeval tv{};
    tv.tv_sec = 5;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

std::string pid_list(const std::vector<int> &pids) {
    std::string s;
    for (int p : pids) {
        s += (s.empty() ? "" : ", ") + std::to_string(p);
    }
    return s;
}

}  // namespace

Coordinator::Coordinator(Options options)
    : options_(std::move(options)),
      round_(static_cast<std::size_t>(options_.nprocs)),
      joined_(static_cast<std::size_t>(options_.nprocs), false),
      finishing_(static_cast<std::size_t>(options_.nprocs), false) {
    if (options_.nprocs < 1) {
        throw std::invalid_argument("coordinator: nprocs must be at least 1");
    }
    if (!options_.describe_loss) {
        throw std::invalid_argument("coordinator: describe_loss is required");
    }
}

Coordinator::~Coordinator() = default;

void Coordinator::set_listener(UniqueFd listener) {
    listener_ = std::move(listener);
}

void Coordinator::adopt(UniqueFd connection) {
    add(std::move(connection), false);
}

void Coordinator::add(UniqueFd connection, bool stranger) {
    bound_send_time(connection.get());
    auto c = std::make_unique<Connection>();
    c->fd = std::move(connection);
    c->stranger = stranger;
    c->since = Clock::now();
    // Until the hello is accepted a connection may send only what a hello needs.
    c->reader.limit(wire::kMaxHelloBody);
    connections_.push_back(std::move(c));
    if (stranger && unauthenticated_count() > std::max(1, options_.max_unauthenticated)) {
        evict_oldest_stranger("closed to make room: at most " +
                              std::to_string(std::max(1, options_.max_unauthenticated)) +
                              " connections may wait for their hello");
        compact();
    }
}

int Coordinator::unauthenticated_count() const {
    return static_cast<int>(std::count_if(connections_.begin(), connections_.end(), [](auto &c) {
        return !c->closed && c->stranger && c->pid < 0;
    }));
}

bool Coordinator::evict_oldest_stranger(const std::string &why) {
    Connection *oldest = nullptr;
    for (auto &c : connections_) {
        if (!c->closed && c->stranger && c->pid < 0 && (!oldest || c->since < oldest->since)) {
            oldest = c.get();
        }
    }
    if (oldest == nullptr) {
        return false;
    }
    drop_stranger(*oldest, why);
    return true;
}

void Coordinator::drop_stranger(Connection &c, const std::string &why) {
    c.closed = true;
    c.fd.reset();
    report_refusal("refused a control connection that is not from this job (" + why + ")");
}

// One line for the first refusal, then at most one per report_interval; the others are
// counted and summed up in the next line or at close_all(). A stranger cannot flood the
// user's terminal.
void Coordinator::report_refusal(const std::string &line) {
    ++refused_;
    auto now = Clock::now();
    if (last_report_ && now - *last_report_ < options_.report_interval) {
        ++unreported_;
        return;
    }
    std::string text;
    if (unreported_ > 0) {
        text = options_.name + ": refused " + std::to_string(unreported_) + " more control " +
               (unreported_ == 1 ? "connection that is" : "connections that are") +
               " not from this job\n";
        unreported_ = 0;
    }
    text += options_.name + ": " + line + "\n";
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    last_report_ = now;
}

void Coordinator::append_pollfds(std::vector<pollfd> &fds) const {
    // After a teardown the listener stays open: a late process is told at once
    // instead of retrying until its join time-out. Out of descriptors, it is not watched
    // for a while (accept would fail at once, again and again).
    if (listener_ && !listen_paused_until_) {
        fds.push_back({listener_.get(), POLLIN, 0});
    }
    for (const auto &c : connections_) {
        if (!c->closed) {
            fds.push_back({c->fd.get(), POLLIN, 0});
        }
    }
}

bool Coordinator::handle(const pollfd &ready) {
    if (listener_ && ready.fd == listener_.get()) {
        if (ready.revents & POLLIN) {
            accept_new();
        }
        return true;
    }
    for (std::size_t i = 0; i < connections_.size(); ++i) {
        Connection &c = *connections_[i];
        if (!c.closed && c.fd.get() == ready.fd) {
            if (ready.revents & (POLLIN | POLLHUP | POLLERR)) {
                read_from(c);
            }
            compact();
            return true;
        }
    }
    return false;
}

void Coordinator::accept_new() {
    for (int attempt = 0; attempt < 2; ++attempt) {
        UniqueFd fd = accept_connection(listener_.get());
        if (fd) {
            backoff_ = std::chrono::milliseconds(0);
            add(std::move(fd), true);
            return;
        }
        int err = errno;
        if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) {
            return;  // nothing waiting (EAGAIN), or that connection is gone already
        }
        // Out of descriptors: a waiting stranger makes room, else back off (10 ms doubling
        // to 1 s) instead of being woken by the same pending connection for ever.
        if (attempt == 0 && evict_oldest_stranger("closed to make room: out of file "
                                                  "descriptors")) {
            compact();
            continue;
        }
        ++accept_backoffs_;
        backoff_ = std::clamp(backoff_ * 2, std::chrono::milliseconds(10),
                              std::chrono::milliseconds(1000));
        listen_paused_until_ = Clock::now() + backoff_;
        return;
    }
}

void Coordinator::read_from(Connection &c) {
    for (;;) {
        auto r = c.reader.fill(c.fd.get());
        if (r == wire::Reader::Fill::would_block) {
            return;
        }
        if (r == wire::Reader::Fill::eof || r == wire::Reader::Fill::error) {
            lost(c);
            return;
        }
        try {
            while (auto m = c.reader.next()) {
                dispatch(c, *m);
                if (c.closed) {
                    return;
                }
            }
        } catch (const std::exception &e) {
            if (c.pid < 0 && c.stranger) {
                drop_stranger(c, e.what());
                return;
            }
            if (c.pid >= 0 && state_ == State::running) {
                tear_down_internal({c.pid, 1,
                                    options_.name + ": process " + std::to_string(c.pid) +
                                        " broke the control protocol: " + e.what()},
                                   nullptr);
            }
            c.closed = true;
            c.fd.reset();
            return;
        }
    }
}

void Coordinator::dispatch(Connection &c, wire::Message &m) {
    if (c.pid < 0) {
        if (m.type != wire::Type::hello) {
            throw std::runtime_error("first message is not a hello");
        }
        on_hello(c, m);
        return;
    }
    switch (m.type) {
        case wire::Type::allgather:
            on_allgather(c, m);
            break;
        case wire::Type::finish:
            on_finish(c);
            break;
        case wire::Type::abort:
            on_abort(c, m);
            break;
        default:
            throw std::runtime_error("unexpected message type " +
                                     std::to_string(static_cast<unsigned>(m.type)));
    }
}

void Coordinator::refuse(Connection &c, wire::Refusal why, const std::string &reason) {
    auto body = wire::Encoder().u32(static_cast<std::uint32_t>(why)).string(reason).data();
    wire::send_message(c.fd.get(), wire::Type::refused, body);
    c.closed = true;
    c.fd.reset();
}

void Coordinator::on_hello(Connection &c, const wire::Message &m) {
    wire::Decoder d(m.body);
    std::uint32_t version = d.u32();
    if (version != wire::kVersion) {
        report_refusal("refused a control connection of protocol version " +
                       std::to_string(version));
        refuse(c, wire::Refusal::version,
               "it speaks control protocol version " + std::to_string(wire::kVersion) +
                   ", this process version " + std::to_string(version));
        return;
    }
    std::uint32_t pid = d.u32();
    std::uint32_t nprocs = d.u32();
    std::string token = d.string();
    if (!same_token(token, options_.token)) {
        // Not a process of this job (a stray or stale process, or another job that
        // reached the same address): refuse it, this job goes on.
        report_refusal("refused a control connection that is not from this job");
        refuse(c, wire::Refusal::other_job,
               "it is the coordinator of another job (job token mismatch)");
        return;
    }
    std::string problem;
    if (static_cast<int>(nprocs) != options_.nprocs) {
        problem = "process " + std::to_string(pid) + " believes the job has " +
                  std::to_string(nprocs) + " processes, not " + std::to_string(options_.nprocs);
    } else if (pid >= nprocs) {
        problem = "a process joined with pid " + std::to_string(pid) + " outside 0.." +
                  std::to_string(options_.nprocs - 1);
    } else if (joined_[pid]) {
        problem = "two processes joined with the same pid " + std::to_string(pid);
    }
    if (!problem.empty()) {
        refuse(c, wire::Refusal::membership, problem);
        if (state_ == State::running) {
            tear_down_internal({-1, 1, options_.name + ": " + problem}, nullptr);
        }
        return;
    }
    c.pid = static_cast<int>(pid);
    c.reader.limit(wire::kMaxBody);
    joined_[pid] = true;
    if (!first_join_) {
        first_join_ = Clock::now();
    }
    wire::send_message(c.fd.get(), wire::Type::welcome, {});
    if (state_ == State::torn_down) {
        std::vector<std::byte> body = wire::Encoder().u32(outcome_->status).data();
        wire::send_message(c.fd.get(), wire::Type::teardown, body);
    }
}

void Coordinator::on_allgather(Connection &c, wire::Message &m) {
    if (state_ != State::running) {
        return;
    }
    auto &slot = round_[static_cast<std::size_t>(c.pid)];
    if (slot) {
        throw std::runtime_error("two allgather contributions in one round");
    }
    if (finishing_[static_cast<std::size_t>(c.pid)]) {
        throw std::runtime_error("allgather after finish");
    }
    slot = std::move(m.body);
    ++contributed_;
    check_mismatch();
    if (state_ == State::running && contributed_ == options_.nprocs) {
        complete_round();
    }
}

void Coordinator::complete_round() {
    wire::Encoder e;
    e.u32(static_cast<std::uint32_t>(options_.nprocs));
    for (auto &slot : round_) {
        e.bytes(*slot);
        slot.reset();
    }
    contributed_ = 0;
    broadcast(wire::Type::gathered, e.data(), nullptr);
}

void Coordinator::on_finish(Connection &c) {
    if (state_ != State::running) {
        return;
    }
    if (finishing_[static_cast<std::size_t>(c.pid)]) {
        throw std::runtime_error("finish called twice");
    }
    finishing_[static_cast<std::size_t>(c.pid)] = true;
    ++finishing_count_;
    check_mismatch();
    if (state_ == State::running && finishing_count_ == options_.nprocs) {
        state_ = State::finished;
        broadcast(wire::Type::finished, {}, nullptr);
        listener_.reset();
    }
}

// Collectives are matched by order: a process in finish() while another waits in an
// allgather round can never complete; say so instead of hanging.
void Coordinator::check_mismatch() {
    if (contributed_ == 0 || finishing_count_ == 0) {
        return;
    }
    std::vector<int> in_finish, in_gather;
    for (int p = 0; p < options_.nprocs; ++p) {
        if (finishing_[static_cast<std::size_t>(p)]) {
            in_finish.push_back(p);
        }
        if (round_[static_cast<std::size_t>(p)]) {
            in_gather.push_back(p);
        }
    }
    tear_down_internal(
        {in_finish.front(), 1,
         options_.name + ": processes disagree on the next collective: process(es) " +
             pid_list(in_finish) + " ended the job (finish) while process(es) " +
             pid_list(in_gather) + " wait in an allgather (collective calls must match)"},
        nullptr);
}

void Coordinator::on_abort(Connection &c, const wire::Message &m) {
    wire::Decoder d(m.body);
    int status = static_cast<int>(d.u32());
    std::string message = d.string();
    while (!message.empty() && message.back() == '\n') {
        message.pop_back();
    }
    if (message.empty()) {
        message = options_.name + ": process " + std::to_string(c.pid) + " aborted";
    }
    if (state_ == State::running) {
        tear_down_internal({c.pid, status, message}, &c);
        return;
    }
    // Already over: this abort is not the first, so it prints nothing.
    int final_status = outcome_ ? outcome_->status : status;
    std::vector<std::byte> body =
        wire::Encoder().u32(static_cast<std::uint32_t>(final_status)).data();
    wire::send_message(c.fd.get(), wire::Type::abort_ack, body);
}

void Coordinator::lost(Connection &c) {
    if (c.pid < 0 && c.stranger && state_ == State::running) {
        drop_stranger(c, "it closed the connection before its hello");
        return;
    }
    // Once the job is over, a connection that closes before its hello is most likely
    // one of the job's own processes, ended by the teardown while it was joining: it
    // is closed without a report (the job's outcome is already decided).
    c.closed = true;
    c.fd.reset();
    if (c.pid < 0 || state_ != State::running) {
        return;
    }
    tear_down_internal(options_.describe_loss(c.pid), nullptr);
}

void Coordinator::tear_down(const Outcome &outcome) {
    if (state_ == State::running) {
        tear_down_internal(outcome, nullptr);
        compact();
    }
}

void Coordinator::tear_down_internal(const Outcome &outcome, Connection *aborter) {
    if (state_ != State::running) {
        return;
    }
    state_ = State::torn_down;
    outcome_ = outcome;
    if (options_.on_teardown) {
        options_.on_teardown(*outcome_);
    }
    std::vector<std::byte> body =
        wire::Encoder().u32(static_cast<std::uint32_t>(outcome.status)).data();
    broadcast(wire::Type::teardown, body, aborter);
}

// Highest pid first: in-process clients (spawn_local, Slurm rank 0) are pid 0 and may
// exit as soon as they are told, so everybody else is told before them. The aborting
// process (if any) gets abort_ack instead of the broadcast message.
void Coordinator::broadcast(wire::Type type, const std::vector<std::byte> &body,
                            Connection *aborter) {
    std::vector<Connection *> order;
    for (auto &c : connections_) {
        if (!c->closed && c->pid >= 0) {
            order.push_back(c.get());
        }
    }
    std::sort(order.begin(), order.end(),
              [](const Connection *a, const Connection *b) { return a->pid > b->pid; });
    for (Connection *c : order) {
        wire::send_message(c->fd.get(), c == aborter ? wire::Type::abort_ack : type, body);
    }
}

std::optional<Coordinator::Clock::time_point> Coordinator::join_deadline() const {
    if (options_.join_timeout && state_ == State::running && first_join_ &&
        joined_count() < options_.nprocs) {
        return *first_join_ + *options_.join_timeout;
    }
    return std::nullopt;
}

std::optional<Coordinator::Clock::time_point> Coordinator::next_deadline() const {
    auto deadline = join_deadline();
    auto consider = [&deadline](Clock::time_point t) {
        if (!deadline || t < *deadline) {
            deadline = t;
        }
    };
    if (listen_paused_until_) {
        consider(*listen_paused_until_);
    }
    for (const auto &c : connections_) {
        if (!c->closed && c->stranger && c->pid < 0) {
            consider(c->since + options_.hello_timeout);
        }
    }
    return deadline;
}

void Coordinator::on_time(Clock::time_point now) {
    if (listen_paused_until_ && now >= *listen_paused_until_) {
        listen_paused_until_.reset();
    }
    bool dropped = false;
    for (auto &c : connections_) {
        if (!c->closed && c->stranger && c->pid < 0 && now >= c->since + options_.hello_timeout) {
            auto ms = options_.hello_timeout.count();
            drop_stranger(*c,
                          "no hello within " + (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s"
                                                               : std::to_string(ms) + " ms"));
            dropped = true;
        }
    }
    if (dropped) {
        compact();
    }
    auto deadline = join_deadline();
    if (!deadline || now < *deadline) {
        return;
    }
    std::vector<int> missing;
    for (int p = 0; p < options_.nprocs; ++p) {
        if (!joined_[static_cast<std::size_t>(p)]) {
            missing.push_back(p);
        }
    }
    std::string secs = std::to_string(options_.join_timeout->count() / 1000);
    if (auto ms = options_.join_timeout->count() % 1000; ms != 0) {
        std::string frac = std::to_string(1000 + ms).substr(1);
        frac.erase(frac.find_last_not_of('0') + 1);
        secs += "." + frac;
    }
    tear_down({-1, 1,
               options_.name + ": only " + std::to_string(joined_count()) + " of " +
                   std::to_string(options_.nprocs) + " processes joined the job within " + secs +
                   " s (missing: " + pid_list(missing) + ")"});
}

bool Coordinator::has_joined(int pid) const {
    return pid >= 0 && pid < options_.nprocs && joined_[static_cast<std::size_t>(pid)];
}

int Coordinator::joined_count() const {
    return static_cast<int>(std::count(joined_.begin(), joined_.end(), true));
}

bool Coordinator::finish_called(int pid) const {
    return pid >= 0 && pid < options_.nprocs && finishing_[static_cast<std::size_t>(pid)];
}

Coordinator::Connection *Coordinator::by_pid(int pid) const {
    for (const auto &c : connections_) {
        if (!c->closed && c->pid == pid) {
            return c.get();
        }
    }
    return nullptr;
}

bool Coordinator::connected(int pid) const {
    return by_pid(pid) != nullptr;
}

bool Coordinator::quiet() const {
    // Strangers still waiting for their hello do not keep the job's coordinator alive.
    return std::none_of(connections_.begin(), connections_.end(),
                        [](const auto &c) { return !c->closed && !(c->stranger && c->pid < 0); });
}

void Coordinator::close_all() {
    listener_.reset();
    for (const auto &c : connections_) {
        if (!c->closed && c->stranger && c->pid < 0) {
            ++refused_;
            ++unreported_;
        }
    }
    connections_.clear();
    if (unreported_ > 0) {
        std::string text = options_.name + ": refused " + std::to_string(unreported_) +
                           (last_report_ ? " more" : "") + " control connection" +
                           (unreported_ == 1 ? "" : "s") + " that " +
                           (unreported_ == 1 ? "is" : "are") + " not from this job\n";
        std::fputs(text.c_str(), stderr);
        std::fflush(stderr);
        unreported_ = 0;
    }
}

void Coordinator::compact() {
    std::erase_if(connections_, [](const auto &c) { return c->closed; });
}

}  // namespace bsp::launch
