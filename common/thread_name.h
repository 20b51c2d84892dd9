#pragma once
// Names the calling thread, so that `top -H`, `ps -L`, perf, gdb and /proc/PID/task/*/comm
// tell dispatchd's threads apart (the benchmarks split CPU per message by these names).
//
// Linux keeps at most 15 bytes of a name: a longer one is cut to its first 15. A name is a
// diagnostic aid and nothing depends on it, so a failure to set one is not reported.

#include <string>
#include <string_view>

namespace dispatchd::common {

inline constexpr std::size_t kMaxThreadName = 15;

void name_this_thread(std::string_view name);

// The calling thread's name as the kernel holds it ("" if it cannot be read).
std::string this_thread_name();

}  // namespace dispatchd::common
