// glibc's heap thresholds for a BSPlib process (Documentation/decisions.rst, "Heap thresholds
// of BSPlib processes").
#pragma once

namespace bsp::rt {

// Keeps freed large buffers in the heap: M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 64 MiB,
// unless GLIBC_TUNABLES, MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ is set (the user's
// own settings win). Called once a job's process opens its transport, whichever it is.
void keep_heap_memory();

}  // namespace bsp::rt
