#include "heap_policy.hpp"

#include <malloc.h>

#include <cstdlib>
#include <initializer_list>

namespace bsp::rt {

// The messaging layer allocates and frees its large buffers (put buffers, units, received
// messages of up to 256 KiB) every superstep. With glibc's default policy those come from
// mmap or from a heap top that is trimmed as soon as they are freed, so every superstep
// faults its pages in again and the kernel zeroes them: a tenth (UDP, 64 KiB per pair) to a
// fifth (shared memory, 512 KiB) of the CPU time of a total exchange. The thresholds are where
// glibc's own dynamic policy ends for a program that frees large blocks (mmap from 32 MiB,
// trim above 64 MiB).
void keep_heap_memory() {
    for (const char *v : {"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}) {
        if (std::getenv(v)) {
            return;
        }
    }
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace bsp::rt
