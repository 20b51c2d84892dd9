#pragma once
// Shared by the replay reports (offline, online, eval): Markdown rows (cells escaped by
// common/markdown.h).

#include <string>

namespace dispatchd::replay {

struct RunSummary;
// The summary rows both online replay and eval report (replay/online.h RunSummary): validity
// on the first attempt, re-asks, escalations, attempts, tokens, cost, latency percentiles.
void run_rows(std::string& md, const RunSummary& s);

}  // namespace dispatchd::replay
