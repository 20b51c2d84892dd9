#include "common/thread_reads.h"

#include <sys/resource.h>

namespace dispatchd::common {

std::int64_t blocks_read_by_this_thread() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return usage.ru_inblock;
}

}  // namespace dispatchd::common
