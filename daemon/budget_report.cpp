#include "daemon/budget_report.h"

#include "common/json_out.h"
#include "store/spend.h"

namespace dispatchd::daemon {

store::Result<std::optional<agent::BudgetStatus>> daily_budget(store::Database& db, const agent::Budget& budget,
                                                               store::Time now) {
  if (!budget.daily_usd) return std::nullopt;
  auto day = store::read_day_spend(db, store::utc_day(now));
  if (!day) return std::unexpected(std::move(day.error()));
  return agent::check_budget(budget, *day, std::nullopt, now);
}

std::string budget_json(const agent::Budget& budget, const std::optional<agent::BudgetStatus>& status) {
  JsonOut out;
  out.begin_object().field("daily_usd", budget.daily_usd);
  if (!status) {
    return out.field("state", nullptr)
        .field("spent_usd", 0.0)
        .field("unpriced_attempts", 0)
        .field("until", nullptr)
        .field("text", nullptr)
        .end_object()
        .str();
  }
  out.field("state", agent::to_string(status->state))
      .field("spent_usd", status->day.cost_usd)
      .field("unpriced_attempts", status->day.unpriced);
  if (status->open()) {
    out.field("until", nullptr);
  } else {
    out.field("until", store::format_time(status->until));
  }
  return out.field("text", agent::describe(budget, *status)).end_object().str();
}

std::optional<std::string> BudgetLog::change(const agent::Budget& budget, const agent::BudgetStatus& status) {
  if (m_last == status.state) return std::nullopt;
  m_last = status.state;
  return agent::describe(budget, status);
}

}  // namespace dispatchd::daemon
