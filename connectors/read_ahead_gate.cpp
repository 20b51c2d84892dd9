#include "connectors/read_ahead_gate.h"

#include <algorithm>
#include <cstdint>

namespace dispatchd::connectors {

void ReadAheadGate::observe(std::chrono::nanoseconds took, std::size_t events, Clock::time_point now) {
  const auto count = static_cast<std::int64_t>(std::max<std::size_t>(events, 1));
  if (took < m_settings.slow_per_event * count) return;
  m_until = now + m_settings.hold;
}

}  // namespace dispatchd::connectors
