// The environment contract between bsprun and the processes it starts
// (Documentation/launch.rst, "Environment").
#pragma once

#include <chrono>

namespace bsp::launch::env {

inline constexpr const char *kPid = "BSP_PID";                   // 0..nprocs-1
inline constexpr const char *kNprocs = "BSP_NPROCS";             // number of processes
inline constexpr const char *kRendezvous = "BSP_RENDEZVOUS";     // unix:/path or tcp:host:port
inline constexpr const char *kJob = "BSP_JOB";                   // job token (hex)
inline constexpr const char *kHost = "BSP_HOST";                 // host-list entry (informative)
inline constexpr const char *kVerbose = "BSP_VERBOSE";           // "1": runtime reports transport
inline constexpr const char *kJoinTimeout = "BSP_JOIN_TIMEOUT";  // seconds, default 60
inline constexpr const char *kTeardownGrace = "BSP_TEARDOWN_GRACE";  // seconds, default 0.25

// BSP_JOIN_TIMEOUT (seconds, may be fractional) or 60 s. Throws std::runtime_error on a
// malformed value.
std::chrono::milliseconds join_timeout();
// BSP_TEARDOWN_GRACE (seconds, may be fractional or 0) or the given default. Throws
// std::runtime_error on a malformed value.
std::chrono::milliseconds teardown_grace(std::chrono::milliseconds fallback);

// The largest job: the UDP transport's limit (its protocol channels are 16-bit numbers).
// AF_BSP groups are smaller still (BSP_GROUP_MAX, 4096), checked by the kernel.
inline constexpr int kMaxProcesses = 65535;

}  // namespace bsp::launch::env
