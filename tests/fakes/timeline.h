#pragma once
// An opt-in event timeline for the daemon benchmark's overhead join (bench/overhead.py):
// the load generator and the fakes each keep one, and bench/daemon_bench.py joins them by
// key. Events stay in memory and are written at the end, one line "<ns> <event> <key>", so
// recording costs a clock read and a vector push. ns is std::chrono::steady_clock, which
// on Linux is CLOCK_MONOTONIC: one clock shared by every process on the machine, so the
// files of different processes compare (Python's time.monotonic_ns() reads the same).
//
// Thread-safety: add() and write() may be called from any thread.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace dispatchd::fakes {

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;

  // `event` must outlive the timeline (a literal); `key` must hold no space or newline.
  void add(Clock::time_point at, std::string_view event, std::string key) {
    const std::lock_guard lock(m_mutex);
    m_events.push_back({at.time_since_epoch().count(), event, std::move(key)});
  }

  // Writes every event so far to `path`, replacing it; false when the file cannot be written.
  bool write(const std::string& path) const {
    static_assert(std::is_same_v<Clock::duration, std::chrono::nanoseconds>);
    const std::lock_guard lock(m_mutex);
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (out == nullptr) return false;
    bool ok = true;
    for (const auto& e : m_events) {
      ok = std::fprintf(out, "%lld %.*s %s\n", static_cast<long long>(e.ns), static_cast<int>(e.event.size()),
                        e.event.data(), e.key.c_str()) > 0 &&
           ok;
    }
    return std::fclose(out) == 0 && ok;
  }

 private:
  struct Event {
    std::int64_t ns;
    std::string_view event;
    std::string key;
  };
  mutable std::mutex m_mutex;  // guards m_events
  std::vector<Event> m_events;
};

}  // namespace dispatchd::fakes
