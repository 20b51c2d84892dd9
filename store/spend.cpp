#include "store/spend.h"

#include <cstdio>

#include "store/internal/sql.h"

namespace dispatchd::store {
namespace {

// The day as the first 10 characters of format_time: what migration 0025's triggers key by.
std::string day_key(std::chrono::sys_days day) {
  const std::chrono::year_month_day ymd{day};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return text;
}

// Sums over the rows `query` selects (a day's shards, or one conversation's row).
Result<Spend> read_spend(Query& query) {
  auto row = query.step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return Spend{};
  return Spend{query.optional_real(0).value_or(0), query.integer(1), query.integer(2)};
}

}  // namespace

std::chrono::sys_days utc_day(Time t) { return std::chrono::floor<std::chrono::days>(t); }

Result<Spend> read_day_spend(Database& db, std::chrono::sys_days day) {
  auto query = Query::prepare(db,
                              "SELECT sum(cost_usd), CAST(coalesce(sum(priced), 0) AS BIGINT),"
                              " CAST(coalesce(sum(unpriced), 0) AS BIGINT) FROM spend_days WHERE day = ?1");
  if (!query) return std::unexpected(query.error());
  query->bind(1, day_key(day));
  return read_spend(*query);
}

Result<Spend> read_conversation_spend(Database& db, const std::string& conversation_id, std::chrono::sys_days day) {
  auto query = Query::prepare(db,
                              "SELECT cost_usd, priced, unpriced FROM spend_conversation_days"
                              " WHERE conversation_id = ?1 AND day = ?2");
  if (!query) return std::unexpected(query.error());
  query->bind(1, conversation_id).bind(2, day_key(day));
  return read_spend(*query);
}

}  // namespace dispatchd::store
