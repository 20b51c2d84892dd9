#pragma once
// dispatchctl queue's tables: escalations as `queue list` and `queue search` print them (a
// table, or the staff API's JSON with --json), with their response-time targets.

#include <cstddef>
#include <string>
#include <vector>

#include "cli/target.h"
#include "staff/json.h"
#include "store/views.h"

namespace dispatchd::cli {

// At most `n` code points of `text` on one line, for tables.
std::string preview(const std::string& text, std::size_t n);

// staff.response_target_minutes of the configuration; the defaults with --db and none.
staff::TargetClock target_clock(const Target& target, store::Time at);

// The rows as a table (ID, STATUS, REASON, ... TARGET, TEXT) or as JSON.
void print_escalations(const std::vector<store::EscalationRow>& rows, const staff::TargetClock& clock, bool json);

}  // namespace dispatchd::cli
