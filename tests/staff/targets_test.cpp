#include <catch2/catch.hpp>

#include "staff/targets.h"

using namespace dispatchd;
using namespace std::chrono_literals;

using staff::TargetState;
using store::EscalationReason;
using store::EscalationStatus;

namespace {

const store::Time k_created = std::chrono::sys_days{std::chrono::November / 30 / 2026} + 12h;

}  // namespace

TEST_CASE("targets: time left and breach, as a table", "[targets]") {
  staff::ResponseTargets targets;                        // 60 min for every reason...
  targets.set(EscalationReason::needs_approval, 15min);  // ...but this one
  struct Row {
    const char* what;
    EscalationReason reason;
    EscalationStatus status;
    bool breach_noticed;
    std::chrono::seconds now;  // after creation
    TargetState state;
    std::optional<std::int64_t> minutes_left;
    std::chrono::minutes due;  // after creation
  };
  const auto cf = EscalationReason::contract_failed;
  const auto na = EscalationReason::needs_approval;
  const auto open = EscalationStatus::open;
  const std::vector<Row> rows{
      {"just opened", cf, open, false, 0s, TargetState::running, 60, 60min},
      {"half a minute left rounds up", cf, open, false, 59min + 30s, TargetState::running, 1, 60min},
      {"due now is overdue", cf, open, false, 60min, TargetState::overdue, 0, 60min},
      {"five minutes late", cf, open, false, 65min, TargetState::overdue, -5, 60min},
      {"late and recorded", cf, open, true, 65min, TargetState::overdue, -5, 60min},
      {"the reason's own target", na, open, false, 10min, TargetState::running, 5, 15min},
      {"the reason's own target passed", na, open, false, 16min, TargetState::overdue, -1, 15min},
      {"claimed in time", cf, EscalationStatus::claimed, false, 2h, TargetState::met, {}, 60min},
      {"claimed after the breach was recorded",
       cf,
       EscalationStatus::claimed,
       true,
       2h,
       TargetState::missed,
       {},
       60min},
      {"resolved in time", na, EscalationStatus::resolved, false, 1h, TargetState::met, {}, 15min},
      {"dismissed after the breach", cf, EscalationStatus::dismissed, true, 4h, TargetState::missed, {}, 60min},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    const auto reading =
        staff::read_target({k_created, row.reason, row.status, row.breach_noticed}, targets, k_created + row.now);
    CHECK(reading.state == row.state);
    CHECK(reading.minutes_left == row.minutes_left);
    CHECK(reading.due_at == k_created + row.due);
    CHECK(reading.breached() == (row.state == TargetState::overdue || row.state == TargetState::missed));
  }
}

TEST_CASE("targets: the settings, the listing's words and the open cases past target", "[targets]") {
  const auto targets = staff::response_targets(120, {{"send_failed", 10}, {"not_a_reason", 5}});
  CHECK(targets.of(EscalationReason::send_failed) == 10min);
  CHECK(targets.of(EscalationReason::contract_failed) == 120min);
  CHECK(staff::ResponseTargets().of(EscalationReason::budget_exhausted) == staff::k_default_response_target);

  CHECK(staff::target_text({k_created, TargetState::running, 12}) == "due in 12 min");
  CHECK(staff::target_text({k_created, TargetState::overdue, -5}) == "overdue 5 min");
  CHECK(staff::target_text({k_created, TargetState::met, {}}) == "met");
  CHECK(staff::target_text({k_created, TargetState::missed, {}}) == "missed");

  const std::vector<store::OpenClock> open{
      {1, EscalationReason::send_failed, k_created, false},      // due +10 min
      {2, EscalationReason::send_failed, k_created, true},       // due +10 min, already noticed
      {3, EscalationReason::contract_failed, k_created, false},  // due +120 min
  };
  const auto early = staff::find_breaches(open, targets, k_created + 5min);
  CHECK(early.unnoticed.empty());
  const auto later = staff::find_breaches(open, targets, k_created + 10min);
  REQUIRE(later.unnoticed.size() == 1);
  CHECK(later.unnoticed.front().escalation_id == 1);
  CHECK(later.unnoticed.front().due_at == k_created + 10min);
  CHECK(later.overdue.at(static_cast<std::size_t>(EscalationReason::send_failed)) == 2);
  CHECK(later.overdue.at(static_cast<std::size_t>(EscalationReason::contract_failed)) == 0);
}
