#pragma once
// Shared by the replay reports (offline, online, eval): Markdown table cells and rows.

#include <string>
#include <string_view>

namespace dispatchd::replay {

// A table cell: the text on one line, with the characters that would end the cell or start
// markup escaped. Values come from outside (provider ids, model output).
std::string cell(std::string_view text);

struct RunSummary;
// The summary rows both online replay and eval report (replay/online.h RunSummary): validity
// on the first attempt, re-asks, escalations, attempts, tokens, cost, latency percentiles.
void run_rows(std::string& md, const RunSummary& s);

}  // namespace dispatchd::replay
