#include "agent/budget.h"

#include <cstdio>

namespace dispatchd::agent {
namespace {

std::string usd(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

// A scope's state from its spend and limit.
BudgetState state_of(const store::Spend& spend, double limit, UnknownCost unknown_cost) {
  if (spend.cost_usd >= limit) return BudgetState::spent;
  if (spend.unpriced > 0 && unknown_cost == UnknownCost::stop) return BudgetState::unknown;
  return BudgetState::open;
}

}  // namespace

std::string_view to_string(BudgetState state) {
  switch (state) {
    case BudgetState::open: return "open";
    case BudgetState::spent: return "spent";
    case BudgetState::unknown: return "unknown";
  }
  return "unknown";
}

std::string_view to_string(BudgetScope scope) {
  switch (scope) {
    case BudgetScope::daily: return "daily";
    case BudgetScope::conversation: return "conversation";
  }
  return "daily";
}

store::Time next_utc_day(store::Time now) {
  return std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::floor<std::chrono::days>(now) +
                                                            std::chrono::days(1));
}

BudgetStatus check_budget(const Budget& budget, const store::Spend& day,
                          const std::optional<store::Spend>& conversation, store::Time now) {
  BudgetStatus status{.day = day, .conversation = conversation, .until = next_utc_day(now)};
  if (budget.daily_usd) {
    status.state = state_of(day, *budget.daily_usd, budget.unknown_cost);
    if (!status.open()) return status;
  }
  if (budget.conversation_daily_usd && conversation) {
    status.state = state_of(*conversation, *budget.conversation_daily_usd, budget.unknown_cost);
    status.scope = BudgetScope::conversation;
    if (status.open()) status.scope = BudgetScope::daily;
  }
  return status;
}

std::string describe(const Budget& budget, const BudgetStatus& status) {
  const bool daily = status.scope == BudgetScope::daily;
  const std::optional<double>& limit = daily ? budget.daily_usd : budget.conversation_daily_usd;
  const store::Spend& spend = daily || !status.conversation ? status.day : *status.conversation;
  std::string text = std::string(daily ? "daily" : "conversation's daily") + " budget " +
                     std::string(to_string(status.state)) + ": " + usd(spend.cost_usd);
  text += limit ? " of " + usd(*limit) + " USD today" : " USD today, no limit";
  if (spend.unpriced > 0) text += " (" + std::to_string(spend.unpriced) + " attempts of unknown cost)";
  if (status.open()) return text;
  return text + (budget.when_spent == WhenSpent::wait ? "; model calls wait until " : "; turns escalate until ") +
         store::format_time(status.until);
}

}  // namespace dispatchd::agent
