#include "output_relay.hpp"

#include <unistd.h>

#include <cerrno>

namespace bsprun {

void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
}

OutputRelay::OutputRelay(bsp::launch::UniqueFd from, int to, std::string prefix, bool early_partial)
    : from_(std::move(from)), to_(to), prefix_(std::move(prefix)), early_partial_(early_partial) {}

void OutputRelay::emit(std::string_view text) {
    std::string out;
    while (!text.empty()) {
        if (at_line_start_) {
            out += prefix_;
        }
        auto nl = text.find('\n');
        std::string_view piece = nl == std::string_view::npos ? text : text.substr(0, nl + 1);
        out += piece;
        at_line_start_ = nl != std::string_view::npos;
        text.remove_prefix(piece.size());
    }
    write_all(to_, out);
}

void OutputRelay::on_readable() {
    char buf[65536];
    ssize_t n;
    do {
        n = ::read(from_.get(), buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) {
        return;
    }
    if (n <= 0) {
        close();
        return;
    }
    bool was_empty = pending_.empty();
    pending_.append(buf, static_cast<std::size_t>(n));
    auto last_nl = pending_.rfind('\n');
    if (last_nl != std::string::npos) {
        emit(std::string_view(pending_).substr(0, last_nl + 1));
        pending_.erase(0, last_nl + 1);
        was_empty = true;
    }
    if (!pending_.empty() && was_empty) {
        pending_since_ = Clock::now();
    }
}

bool OutputRelay::partial_due(Clock::time_point &when) const {
    if (!early_partial_ || pending_.empty()) {
        return false;
    }
    when = pending_since_ + kPartialLineDelay;
    return true;
}

void OutputRelay::flush_partial() {
    if (!pending_.empty()) {
        emit(pending_);
        pending_.clear();
    }
}

void OutputRelay::close() {
    flush_partial();
    if (!prefix_.empty() && !at_line_start_) {
        emit("\n");
    }
    from_.reset();
}

}  // namespace bsprun
