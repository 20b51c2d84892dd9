#pragma once
// The deployment's daily spend budget (llm.budget.daily_usd; agent/budget.h) as the daemon
// reports it: /readyz's body, /metrics, one log line per change of its state, and the staff
// page (GET /api/budget). Read from the store's spend counters (store/spend.h), so every
// instance on one database reports the same. The per-conversation budget is not here: it is
// a turn's, and shows in that turn's decision (postponed, or escalated budget_exhausted).

#include <optional>
#include <string>

#include "agent/budget.h"
#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

// The daily budget on the UTC day of `now`; nullopt when llm.budget.daily_usd is not set.
[[nodiscard]] store::Result<std::optional<agent::BudgetStatus>> daily_budget(store::Database& db,
                                                                             const agent::Budget& budget,
                                                                             store::Time now);

// GET /api/budget's body: {"daily_usd": N|null, "state": "open"|"spent"|"unknown"|null,
// "spent_usd": N, "unpriced_attempts": N, "until": "..."|null, "text": "..."|null}; the
// nulls when there is no daily budget ("until" also while it is open).
std::string budget_json(const agent::Budget& budget, const std::optional<agent::BudgetStatus>& status);

// Remembers the last state logged, to log one line per change (and the first state seen).
class BudgetLog {
 public:
  // The line to log when `status` differs from the last state seen; nullopt otherwise.
  std::optional<std::string> change(const agent::Budget& budget, const agent::BudgetStatus& status);

 private:
  std::optional<agent::BudgetState> m_last;
};

}  // namespace dispatchd::daemon
