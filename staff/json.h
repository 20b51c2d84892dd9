#pragma once
// The escalation queue as JSON, the same for `dispatchctl queue ... --json` and the staff
// API (and the catalog, for the page's action form): stored JSON columns (proposed_action, detail, errors, arguments)
// embedded as JSON.

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "store/views.h"

namespace dispatchd::staff {

std::string escalations_json(const std::vector<store::EscalationRow>& rows);
std::string case_json(const store::EscalationCase& c);

// The catalog as the staff page builds its action form from it: actions with the fields
// they require and allow, fields with their constraints (enum, lengths, pattern, range,
// date, grounding).
std::string catalog_json(const catalog::Catalog& catalog);

}  // namespace dispatchd::staff
