#pragma once
// The escalation queue as JSON, the same for `dispatchctl queue ... --json` and the staff
// API (and the catalog, for the page's action form): stored JSON columns (proposed_action, detail, errors, arguments)
// embedded as JSON.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "staff/case_window.h"
#include "staff/targets.h"
#include "store/views.h"

namespace dispatchd::staff {

// With `clock`, each item also has its response-time target (staff/targets.h): "due_at"
// (ISO 8601 UTC), "breached" (bool) and "minutes_left" (open cases; null once claimed or closed).
struct TargetClock {
  store::Time now{};
  ResponseTargets targets;
};
std::string escalations_json(const std::vector<store::EscalationRow>& rows,
                             const std::optional<TargetClock>& clock = std::nullopt);
// A listed escalation's reading against its target; nullopt for a row whose reason, status
// or times do not read (never written so).
std::optional<TargetReading> row_target(const store::EscalationRow& row, const TargetClock& clock);
// When a take-over is allowed, for a case shown at `now` with staff.claim_idle_minutes.
struct DeskClock {
  store::Time now{};
  std::chrono::minutes idle_limit{};
};
// The case, with its notes and hand-overs; with `clock`, also "takeover_in_minutes": 0 when
// someone other than the holder may take the claim over now, the whole minutes left
// otherwise, null when nobody holds it. With `reach` (staff/case_window.h), also "window":
// {"open","closes_at"} (closes_at null when the customer never wrote), null for a channel
// without one; and "templates": each template action with "action", "template", "language",
// "status" and "category" (null when not stored), "approved", "components" (as stored) and
// "parameters" ({"part","button","name","field"}).
std::string case_json(const store::EscalationCase& c, const std::optional<DeskClock>& clock = std::nullopt,
                      const CaseWindow* reach = nullptr);

// The catalog as the staff page builds its action form from it: actions with the fields
// they require and allow, fields with their constraints (enum, lengths, pattern, range,
// date, grounding).
std::string catalog_json(const catalog::Catalog& catalog);

}  // namespace dispatchd::staff
