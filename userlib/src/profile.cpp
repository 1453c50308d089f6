#include "profile.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <stdexcept>

namespace bsp::rt {

Profile::Profile(const std::string &path, int pid, int nprocs) {
    f_ = std::fopen(path.c_str(), "w");
    if (f_ == nullptr) {
        throw std::runtime_error("BSP_PROFILE: cannot write " + path + ": " + std::strerror(errno));
    }
    std::fprintf(f_, "# bspprof trace 1 pid %d nprocs %d\n", pid, nprocs);
    std::fprintf(f_,
                 "# superstep begin enter_sync barrier_done end (s) out: put_bytes put_n "
                 "send_bytes send_n reply_bytes reply_n in: put_bytes put_n send_bytes send_n "
                 "reply_bytes reply_n location\n");
}

Profile::~Profile() {
    close();
}

void Profile::close() {
    if (f_) {
        std::fclose(f_);
    }
    f_ = nullptr;
}

// A location as module+offset (tools/bspprof resolves it with addr2line).
std::string Profile::describe(const void *location) {
    Dl_info info;
    if (location == nullptr || !dladdr(location, &info) || info.dli_fname == nullptr) {
        return "?";
    }
    char off[32];
    // The return address is after the call: one byte back is inside it.
    std::snprintf(off, sizeof off, "+0x%" PRIxPTR,
                  reinterpret_cast<std::uintptr_t>(location) - 1 -
                      reinterpret_cast<std::uintptr_t>(info.dli_fbase));
    return std::string(info.dli_fname) + off;
}

void Profile::write(std::uint64_t superstep, const SuperstepProfile &s) {
    if (f_ == nullptr) {
        return;
    }
    auto it = names_.find(location_);
    if (it == names_.end()) {
        it = names_.emplace(location_, describe(location_)).first;
    }
    const std::string &where = it->second;
    std::fprintf(
        f_,
        "%" PRIu64 " %.9f %.9f %.9f %.9f %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
        " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n",
        superstep, s.begin, s.enter_sync, s.barrier_done, s.end, s.out_put_bytes, s.out_put_n,
        s.out_send_bytes, s.out_send_n, s.out_reply_bytes, s.out_reply_n, s.in_put_bytes,
        s.in_put_n, s.in_send_bytes, s.in_send_n, s.in_reply_bytes, s.in_reply_n, where.c_str());
}

}  // namespace bsp::rt
