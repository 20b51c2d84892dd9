#pragma once
// When a channel reads a round of inbound events ahead (ChannelDeps::read_ahead,
// store/read_ahead.h) before storing them on the event loop: only while storing them has
// lately been slow, which on a warm daemon it never is, so a warm daemon pays nothing (no
// hop to the reading thread and back, no second lookup of every key).
//
// Slow means pages read from disk: a store step, or a read-ahead, that took at least
// `slow_per_event` per event (a warm insert takes tens of microseconds, a page from disk a
// tenth of a millisecond to several). Reading ahead then goes on for `hold` after the last
// slow one: while the reads ahead are slow the pages are still coming from disk; once they
// have been fast for `hold`, the round goes straight to the store again.
//
// Pure: the caller measures and passes the time in.

#include <chrono>
#include <cstddef>
#include <optional>

namespace dispatchd::connectors {

class ReadAheadGate {
 public:
  using Clock = std::chrono::steady_clock;
  struct Settings {
    std::chrono::microseconds slow_per_event{500};
    std::chrono::milliseconds hold{10'000};
  };

  ReadAheadGate() = default;
  explicit ReadAheadGate(Settings settings) : m_settings(settings) {}

  // A store step or a read-ahead of `events` events (at least one is assumed) took `took`
  // and ended at `now`.
  void observe(std::chrono::nanoseconds took, std::size_t events, Clock::time_point now);
  // Whether the next round should be read ahead.
  bool wanted(Clock::time_point now) const { return m_until && now < *m_until; }

 private:
  Settings m_settings;
  std::optional<Clock::time_point> m_until;
};

}  // namespace dispatchd::connectors
