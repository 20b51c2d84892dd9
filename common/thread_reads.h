#pragma once
// How much the calling thread has read from storage since it started: the kernel's count
// (getrusage RUSAGE_THREAD, ru_inblock) of 512-byte blocks that missed the page cache. Reads
// served from memory count nothing, so the difference across a step says whether the step
// waited for the disk, which its duration alone cannot tell from waiting for a CPU.
// 0 when the count cannot be read.

#include <cstdint>

namespace dispatchd::common {

std::int64_t blocks_read_by_this_thread();

}  // namespace dispatchd::common
