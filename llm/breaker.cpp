#include "llm/breaker.h"

#include <algorithm>

namespace dispatchd::llm {

std::chrono::milliseconds probe_delay(const BreakerSettings& settings, int failed_probes, double random01,
                                      std::optional<std::chrono::milliseconds> retry_after) {
  auto base = settings.probe_min;
  for (int i = 0; i < failed_probes && base < settings.probe_max; ++i) base *= 2;
  base = std::min(base, settings.probe_max);
  const auto jitter =
      std::chrono::milliseconds(static_cast<std::int64_t>(random01 * static_cast<double>(base.count()) / 4));
  auto delay = std::min(base + jitter, std::max(settings.probe_max, settings.probe_min));
  if (retry_after) delay = std::max(delay, *retry_after);
  return delay;
}

Admission Breaker::admit(Time now) {
  if (m_state == BreakerState::closed) return Admission::send;
  if (m_probing || now < m_next_probe) return Admission::hold;
  m_probing = true;
  return Admission::probe;
}

void Breaker::schedule(Time now, double random01, std::optional<std::chrono::milliseconds> retry_after) {
  m_next_probe = now + probe_delay(m_settings, m_failed_probes, random01, retry_after);
}

BreakerChange Breaker::record(CallResult result, bool probe, Time now, double random01,
                              std::optional<std::chrono::milliseconds> retry_after) {
  if (probe) m_probing = false;
  if (result == CallResult::success) {
    m_failures = 0;
    if (m_state == BreakerState::closed) return BreakerChange::none;
    m_state = BreakerState::closed;
    m_failed_probes = 0;
    m_probing = false;
    return BreakerChange::closed;
  }
  if (m_state == BreakerState::open) {
    // Only the probe's failure says something new; the others were sent before it opened.
    if (!probe) return BreakerChange::none;
    ++m_failed_probes;
    schedule(now, random01, retry_after);
    return BreakerChange::none;
  }
  if (++m_failures < m_settings.failure_threshold) return BreakerChange::none;
  m_state = BreakerState::open;
  m_failures = 0;
  m_failed_probes = 0;
  schedule(now, random01, retry_after);
  return BreakerChange::opened;
}

}  // namespace dispatchd::llm
