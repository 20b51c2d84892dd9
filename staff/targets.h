#pragma once
// Response-time targets for escalations (docs/staff.md, "Response-time targets").
//
// A case's due time is created_at + the target of its reason (staff.response_target_minutes).
// The clock runs while the case is open (unclaimed); a claim or a decision stops it. A case
// still open at its due time has breached its target: the daemon records that once
// (store::notice_breach, within seconds: its check runs on the tick) and the case keeps the
// mark when it is claimed or closed later. A claimed or closed case without the mark met
// its target. A release puts the case back on its original clock: the due time never moves.
//
// read_target() is pure (no store, no clock): tested as a table.

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/escalation_feed.h"
#include "store/inbox.h"
#include "store/states.h"

namespace dispatchd::staff {

// Default staff.response_target_minutes for every reason.
inline constexpr std::chrono::minutes k_default_response_target{60};

// The target of each reason, indexed by the reason's enum value.
class ResponseTargets {
 public:
  ResponseTargets() { m_minutes.fill(k_default_response_target); }
  std::chrono::minutes of(store::EscalationReason reason) const {
    return m_minutes.at(static_cast<std::size_t>(reason));
  }
  void set(store::EscalationReason reason, std::chrono::minutes target) {
    m_minutes.at(static_cast<std::size_t>(reason)) = target;
  }
  void set_all(std::chrono::minutes target) { m_minutes.fill(target); }

 private:
  std::array<std::chrono::minutes, store::SqlNames<store::EscalationReason>::table.size()> m_minutes{};
};

// The targets of staff.response_target_minutes as config/ reads them: `default_minutes` for
// every reason not in `by_name` (reason name -> minutes). Names that are not reasons are
// ignored (config/ refuses them).
ResponseTargets response_targets(int default_minutes, const std::map<std::string, int>& by_name);

// Where a case stands against its target.
enum class TargetState {
  running,  // open and before its due time
  overdue,  // open at or past its due time: the target is breached and the clock still runs
  met,      // claimed or closed without a recorded breach
  missed,   // claimed or closed after its breach was recorded
};

struct TargetReading {
  store::Time due_at{};
  TargetState state = TargetState::running;
  // Open cases only: whole minutes to the due time, rounded up; 0 or less when overdue
  // (-5: five minutes past it). Nullopt once the clock has stopped.
  std::optional<std::int64_t> minutes_left;
  bool breached() const { return state == TargetState::overdue || state == TargetState::missed; }
};

struct CaseClock {
  store::Time created_at{};
  store::EscalationReason reason = store::EscalationReason::contract_failed;
  store::EscalationStatus status = store::EscalationStatus::open;
  bool breach_noticed = false;  // the breach was recorded while it was open (breach_noticed_at)
};

TargetReading read_target(const CaseClock& c, const ResponseTargets& targets, store::Time now);

// The open cases past their target: those whose breach is not yet recorded (for
// store::notice_breach, with their due time), and how many are overdue by reason (for the
// dispatchd_escalations_breached gauge), indexed by the reason's enum value.
struct Breaches {
  struct Unnoticed {
    std::int64_t escalation_id = 0;
    store::Time due_at{};
  };
  std::vector<Unnoticed> unnoticed;
  std::array<std::int64_t, store::SqlNames<store::EscalationReason>::table.size()> overdue{};
};
Breaches find_breaches(const std::vector<store::OpenClock>& open, const ResponseTargets& targets, store::Time now);

// The reading in a few words, for listings: "due in 12 min", "overdue 5 min", "met", "missed".
std::string target_text(const TargetReading& reading);

}  // namespace dispatchd::staff
