#pragma once
// The escalation queue as JSON, the same for `dispatchctl queue ... --json` and the staff
// API: stored JSON columns (proposed_action, detail, errors, arguments) embedded as JSON.

#include <string>
#include <vector>

#include "store/views.h"

namespace dispatchd::staff {

std::string escalations_json(const std::vector<store::EscalationRow>& rows);
std::string case_json(const store::EscalationCase& c);

}  // namespace dispatchd::staff
