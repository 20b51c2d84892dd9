#pragma once
// When a channel reads a round of inbound events ahead (ChannelDeps::read_ahead,
// store/read_ahead.h) before storing them on the event loop: only while storing them has
// lately read from the disk, which on a warm daemon it never does, so a warm daemon pays
// nothing (no hop to the reading thread and back, no second lookup of every key).
//
// The signal is the blocks the thread read from storage during the step (the kernel's count,
// common/thread_reads.h), not the step's duration: on a busy machine a step also takes long
// when its thread waits for a CPU, and reading ahead cannot help that. A store step, or a
// read-ahead, that read anything opens the gate for `hold`: while the reads ahead still read
// from the disk the pages are still coming in; once they have read nothing for `hold`, the
// rounds go straight to the store again.
//
// Pure: the caller counts and passes the time in. SQLite's reads are the thread's own; on
// PostgreSQL the server reads, the count stays 0 and the gate stays shut.

#include <chrono>
#include <cstdint>

namespace dispatchd::connectors {

class ReadAheadGate {
 public:
  using Clock = std::chrono::steady_clock;
  struct Settings {
    std::chrono::milliseconds hold{2'000};
  };

  ReadAheadGate() = default;
  explicit ReadAheadGate(Settings settings) : m_settings(settings) {}

  // A store step or a read-ahead read `blocks` blocks from storage and ended at `now`.
  void observe(std::int64_t blocks, Clock::time_point now) {
    if (blocks > 0) m_until = now + m_settings.hold;
  }
  // Whether the next round should be read ahead.
  bool wanted(Clock::time_point now) const { return now < m_until; }

 private:
  Settings m_settings;
  Clock::time_point m_until = Clock::time_point::min();  // shut until a step reads from the disk
};

}  // namespace dispatchd::connectors
