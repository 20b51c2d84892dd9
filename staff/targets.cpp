#include "staff/targets.h"

namespace dispatchd::staff {

ResponseTargets response_targets(int default_minutes, const std::map<std::string, int>& by_name) {
  ResponseTargets out;
  out.set_all(std::chrono::minutes(default_minutes));
  for (const auto& [name, minutes] : by_name) {
    if (const auto reason = store::from_sql<store::EscalationReason>(name))
      out.set(*reason, std::chrono::minutes(minutes));
  }
  return out;
}

TargetReading read_target(const CaseClock& c, const ResponseTargets& targets, store::Time now) {
  TargetReading out;
  out.due_at = c.created_at + targets.of(c.reason);
  if (c.status == store::EscalationStatus::open) {
    const auto left = out.due_at - now;
    // Rounded up: 30 seconds left is "due in 1 min", not "due in 0 min".
    out.minutes_left = std::chrono::ceil<std::chrono::minutes>(left).count();
    out.state = left > std::chrono::seconds::zero() ? TargetState::running : TargetState::overdue;
    return out;
  }
  out.state = c.breach_noticed ? TargetState::missed : TargetState::met;
  return out;
}

Breaches find_breaches(const std::vector<store::OpenClock>& open, const ResponseTargets& targets, store::Time now) {
  Breaches out;
  for (const auto& c : open) {
    const auto reading =
        read_target({c.created_at, c.reason, store::EscalationStatus::open, c.breach_noticed}, targets, now);
    if (reading.state != TargetState::overdue) continue;
    ++out.overdue.at(static_cast<std::size_t>(c.reason));
    if (!c.breach_noticed) out.unnoticed.push_back({c.escalation_id, reading.due_at});
  }
  return out;
}

std::string target_text(const TargetReading& reading) {
  switch (reading.state) {
    case TargetState::running: return "due in " + std::to_string(reading.minutes_left.value_or(0)) + " min";
    case TargetState::overdue: return "overdue " + std::to_string(-reading.minutes_left.value_or(0)) + " min";
    case TargetState::met: return "met";
    case TargetState::missed: return "missed";
  }
  return "met";
}

}  // namespace dispatchd::staff
