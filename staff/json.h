#pragma once
// The escalation queue as JSON, the same for `dispatchctl queue ... --json` and the staff
// API (and the catalog, for the page's action form): stored JSON columns (proposed_action, detail, errors, arguments)
// embedded as JSON.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "store/views.h"

namespace dispatchd::staff {

std::string escalations_json(const std::vector<store::EscalationRow>& rows);
// When a take-over is allowed, for a case shown at `now` with staff.claim_idle_minutes.
struct DeskClock {
  store::Time now{};
  std::chrono::minutes idle_limit{};
};
// The case, with its notes and hand-overs; with `clock`, also "takeover_in_minutes": 0 when
// someone other than the holder may take the claim over now, the whole minutes left
// otherwise, null when nobody holds it.
std::string case_json(const store::EscalationCase& c, const std::optional<DeskClock>& clock = std::nullopt);

// The catalog as the staff page builds its action form from it: actions with the fields
// they require and allow, fields with their constraints (enum, lengths, pattern, range,
// date, grounding).
std::string catalog_json(const catalog::Catalog& catalog);

}  // namespace dispatchd::staff
