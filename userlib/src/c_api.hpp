// The BSPlib calls that have sizes, shared by the int entry points of bsp.h (api.cpp) and
// the BSP_WIDE_TYPES ones (api_wide.cpp: bsp_put_wide, ...). Each runs one call, named as
// the program wrote it ("bsp_put" for both), and ends the program on misuse. Sizes arrive
// as 64-bit values, so both entry points share every check; results go back in the
// caller's type T (int or std::int64_t), and a value that T cannot hold ends the program
// instead of being truncated.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "bsp.h"  // BSP_ADDRESS_ONLY
#include "misuse.hpp"

namespace bsp::capi {

// ident and src are compared, never read (as in bsp.h).
void push_reg(const char *call, const void *ident, std::int64_t size) BSP_ADDRESS_ONLY(2);
void put(const char *call, int pid, const void *src, void *dst, std::int64_t offset,
         std::int64_t nbytes, bool hp);
void get(const char *call, int pid, const void *src, std::int64_t offset, void *dst,
         std::int64_t nbytes) BSP_ADDRESS_ONLY(3);
void send(const char *call, int pid, const void *tag, const void *payload, std::int64_t nbytes);
void move(const char *call, void *payload, std::int64_t reception_nbytes);

// For the collectives library (bsc.cpp), on top of the calls above:
// a bsp_sync that contributes `ready` (bsc_sync(bsc_flush)); returns whether every
// process contributed it, i.e. the epoch of the collectives ends here.
bool sync_ready(const char *call, bool ready);
int pid(const char *call);
int nprocs(const char *call);
// Ends the program with "BSPlib error: <call> on process <pid>: <reason>".
[[noreturn]] void misuse(const char *call, const std::string &reason);

// Instantiated in api.cpp for int and std::int64_t.
template <typename T>
void set_tagsize(const char *call, T *tag_nbytes);
template <typename T>
void qsize(const char *call, T *nmessages, T *accum_nbytes);
template <typename T>
void get_tag(const char *call, T *status, void *tag);
template <typename T>
T hpmove(const char *call, void **tag_ptr, void **payload_ptr);

// value as T, or Misuse when T (the int of the 1998 API) cannot hold it; the reason reads
// "<before> <value> <after>", e.g. "the queue holds 3000000000 payload bytes, ...".
template <typename T>
T reported(const char *call, int pid, std::int64_t value, const char *before, const char *after) {
    if (value > std::numeric_limits<T>::max()) {
        throw rt::Misuse(call, pid,
                         std::string(before) + " " + std::to_string(value) + " " + after +
                             ", more than an int can report (compile the program with "
                             "-DBSP_WIDE_TYPES for 64-bit sizes)");
    }
    return static_cast<T>(value);
}

}  // namespace bsp::capi
