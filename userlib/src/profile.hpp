// BSP_PROFILE=FILE: per superstep, every process records its times in computation,
// synchronisation and communication, the h-relation it sent and received (bytes and
// messages of puts, sends and get replies) and where the superstep ended in the program,
// one line per superstep in FILE.<pid> (Documentation/bsplib.rst, "Profiling"; read by
// tools/bspprof). The runtime counts only when a Profile is attached: nothing is done per
// put, get or send, and a sync without profiling tests one pointer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace bsp::rt {

struct SuperstepProfile {
    double begin = 0, enter_sync = 0, barrier_done = 0, end = 0;  // seconds since bsp_begin
    // Sent to other processes: puts, sends (tag + payload), replies to their gets.
    std::uint64_t out_put_bytes = 0, out_put_n = 0, out_send_bytes = 0, out_send_n = 0,
                  out_reply_bytes = 0, out_reply_n = 0;
    // Received from other processes: the same three kinds.
    std::uint64_t in_put_bytes = 0, in_put_n = 0, in_send_bytes = 0, in_send_n = 0,
                  in_reply_bytes = 0, in_reply_n = 0;
};

class Profile {
  public:
    // Opens path (truncated); throws std::runtime_error with the reason.
    Profile(const std::string &path, int pid, int nprocs);
    ~Profile();
    Profile(const Profile &) = delete;
    Profile &operator=(const Profile &) = delete;

    // The code location of the bsp_sync or bsp_end being run (a return address).
    void set_location(const void *return_address) { location_ = return_address; }
    void write(std::uint64_t superstep, const SuperstepProfile &s);
    void close();

  private:
    std::string describe(const void *location);

    std::FILE *f_ = nullptr;
    const void *location_ = nullptr;
    std::unordered_map<const void *, std::string> names_;  // describe's results
};

}  // namespace bsp::rt
