// check_budget() as a table: spent, unknown, per conversation, the next day (agent/budget.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "agent/budget.h"

using namespace dispatchd;
using namespace dispatchd::agent;
using namespace std::chrono_literals;

namespace {

// 2026-11-30T23:59:59Z: one second before the next UTC day.
const store::Time k_late{std::chrono::sys_days{std::chrono::November / 30 / 2026} + 23h + 59min + 59s};

struct BudgetRow {
  std::string name;
  Budget budget;
  store::Spend day;
  std::optional<store::Spend> conversation;
  BudgetState state;
  BudgetScope scope;
};

}  // namespace

TEST_CASE("budget: check_budget, row by row", "[budget]") {
  const Budget per_day{.daily_usd = 5.0};
  const Budget per_talk{.conversation_daily_usd = 0.5};
  const Budget both{.daily_usd = 5.0, .conversation_daily_usd = 0.5};
  const Budget allow{.daily_usd = 5.0, .conversation_daily_usd = 0.5, .unknown_cost = UnknownCost::allow};
  const std::optional<store::Spend> none;  // no conversation asked about (the daemon's view)
  using enum BudgetState;
  using enum BudgetScope;
  using Spend = store::Spend;
  // clang-format off
  const std::vector<BudgetRow> rows = {
      // name                                       budget    day             conversation       state    scope
      {"no budget: open whatever was spent",        Budget{}, {1e6, 10, 3},   Spend{1e6, 10, 3}, open,    daily},
      {"daily, under the limit",                    per_day,  {4.99, 100, 0}, none,              open,    daily},
      {"daily, the limit reached",                  per_day,  {5.0, 100, 0},  none,              spent,   daily},
      {"daily, past the limit",                     per_day,  {7.5, 100, 0},  none,              spent,   daily},
      {"daily, unknown costs under it close it",    per_day,  {0.1, 3, 1},    none,              unknown, daily},
      {"daily, spent wins over unknown",            per_day,  {5.1, 3, 2},    none,              spent,   daily},
      {"unknown allowed: the priced cost alone",    allow,    {4.0, 3, 9},    Spend{0.1, 1, 4},  open,    daily},
      {"unknown allowed, spent all the same",       allow,    {5.0, 3, 9},    none,              spent,   daily},
      {"conversation, under its limit",             per_talk, {100, 1000, 0}, Spend{0.49, 5, 0}, open,    daily},
      {"conversation, its limit reached",           per_talk, {1, 10, 0},     Spend{0.5, 5, 0},  spent,   conversation},
      {"conversation, its unknown costs",           per_talk, {1, 10, 4},     Spend{0.1, 1, 1},  unknown, conversation},
      {"conversation, others' unknown costs",       per_talk, {1, 10, 4},     Spend{0.1, 1, 0},  open,    daily},
      {"conversation, none asked about",            per_talk, {1, 10, 4},     none,              open,    daily},
      {"both, the daily one first",                 both,     {5.0, 10, 0},   Spend{0.5, 5, 0},  spent,   daily},
      {"both, the conversation's alone",            both,     {1.0, 10, 0},   Spend{0.6, 5, 0},  spent,   conversation},
      {"both, unknown allowed in the conversation", allow,    {1.0, 10, 2},   Spend{0.2, 5, 2},  open,    daily},
      {"the next day: its counters are empty",      both,     {},             Spend{},           open,    daily},
  };
  // clang-format on
  for (const auto& row : rows) {
    INFO(row.name);
    const auto status = check_budget(row.budget, row.day, row.conversation, k_late);
    CHECK(status.state == row.state);
    CHECK(status.scope == row.scope);
    CHECK(status.day == row.day);
    CHECK(status.conversation == row.conversation);
    CHECK(status.until == k_late + 1s);
  }
}

TEST_CASE("budget: a closed budget opens at the next UTC midnight", "[budget]") {
  const store::Time midnight{std::chrono::sys_days{std::chrono::December / 1 / 2026}};
  CHECK(next_utc_day(k_late) == midnight);
  CHECK(next_utc_day(midnight - 24h) == midnight);
  CHECK(next_utc_day(midnight) == midnight + 24h);
  CHECK(store::format_time(next_utc_day(midnight + 13h)) == "2026-12-02T00:00:00Z");
}

TEST_CASE("budget: describe names the scope, the spend, the unknown attempts and until when", "[budget]") {
  const Budget wait{.daily_usd = 5.0};
  const Budget escalate{.conversation_daily_usd = 0.5, .when_spent = WhenSpent::escalate};
  CHECK(describe(wait, check_budget(wait, {5.02, 10, 2}, std::nullopt, k_late)) ==
        "daily budget spent: 5.0200 of 5.0000 USD today (2 attempts of unknown cost); model calls wait until "
        "2026-12-01T00:00:00Z");
  CHECK(describe(wait, check_budget(wait, {1.2, 10, 0}, std::nullopt, k_late)) ==
        "daily budget open: 1.2000 of 5.0000 USD today");
  CHECK(describe(escalate, check_budget(escalate, {3, 10, 0}, store::Spend{0.75, 2, 0}, k_late)) ==
        "conversation's daily budget spent: 0.7500 of 0.5000 USD today; turns escalate until 2026-12-01T00:00:00Z");
}
