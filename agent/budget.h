#pragma once
// The model's spend budget (llm.budget; docs/agent.md, "The spend budget") as a pure
// function: from a day's spend (store/spend.h: the whole deployment's, and the turn's
// conversation's) to whether the model may be called. No I/O, no clock: the Run reads the
// spend and `now`, asks check_budget() before each model call and carries a closed budget
// out (the turn waits until the next UTC day, or escalates budget_exhausted); the daemon
// asks it for /readyz, /metrics, its log and the staff page.
// tests/agent/budget_test.cpp holds it to its table.
//
//   spend on the UTC day of `now`                                  state
//   -------------------------------------------------------------  -------
//   no budget configured                                           open
//   daily_usd set, the day's priced cost >= daily_usd              spent   (scope daily)
//   conversation_daily_usd set, the conversation's cost >= it      spent   (scope conversation)
//   else, attempts of unknown cost in a budgeted scope's day,      unknown (that scope)
//     unknown_cost stop
//   else                                                           open
//
// A spent or unknown budget opens again at the next UTC midnight (`until`): the counters of
// a new day start empty. Unknown costs (store::Spend::unpriced) are never counted as 0:
// under unknown_cost stop they close the budget, since it cannot be held; under allow the
// priced cost alone is compared, and the unknown attempts are still reported.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/inbox.h"
#include "store/spend.h"

namespace dispatchd::agent {

// What a turn whose budget is closed does (llm.budget.when_spent).
enum class WhenSpent {
  wait,      // the turn is postponed to the next UTC midnight and taken again then
  escalate,  // the turn is escalated budget_exhausted; staff decide it
};
// What attempts of unknown cost do to the budget (llm.budget.unknown_cost).
enum class UnknownCost {
  stop,   // the budget is closed (state unknown) until the next UTC day
  allow,  // only the priced cost is compared; the unknown attempts are reported
};

struct Budget {
  std::optional<double> daily_usd;               // the deployment's, per UTC day; none: no limit
  std::optional<double> conversation_daily_usd;  // each conversation's, per UTC day; none: no limit
  WhenSpent when_spent = WhenSpent::wait;
  UnknownCost unknown_cost = UnknownCost::stop;

  bool any() const { return daily_usd || conversation_daily_usd; }
};

enum class BudgetState {
  open,     // the model may be called
  spent,    // a budget's priced cost reached its limit
  unknown,  // attempts of unknown cost under unknown_cost stop
};
std::string_view to_string(BudgetState state);

enum class BudgetScope { daily, conversation };
std::string_view to_string(BudgetScope scope);

struct BudgetStatus {
  BudgetState state = BudgetState::open;
  BudgetScope scope = BudgetScope::daily;    // the budget that closed (daily when open)
  store::Spend day;                          // the deployment's spend today
  std::optional<store::Spend> conversation;  // the conversation's, when asked about one
  store::Time until{};                       // the next UTC midnight: when a closed budget opens

  bool open() const { return state == BudgetState::open; }
};

// The budget's state on the UTC day of `now`. `conversation`: the turn's conversation's
// spend today, or none when no conversation is asked about (the daemon's view of the
// deployment, which leaves conversation_daily_usd out). The daily budget is checked first.
BudgetStatus check_budget(const Budget& budget, const store::Spend& day,
                          const std::optional<store::Spend>& conversation, store::Time now);

// The first instant of the UTC day after `now`'s.
store::Time next_utc_day(store::Time now);

// One line for logs, /readyz and decisions: "daily budget spent: 5.0200 of 5.0000 USD today
// (2 attempts of unknown cost); model calls wait until 2026-12-01T00:00:00Z". For an open
// budget: "daily budget open: 1.2000 of 5.0000 USD today".
std::string describe(const Budget& budget, const BudgetStatus& status);

}  // namespace dispatchd::agent
