#pragma once
// The model's spend per UTC day, as llm.budget counts it (docs/agent.md, "The spend budget"):
// triggers on attempts keep it (migration 0025), so each read is a few rows whatever the
// size of the history, and it survives restarts and is shared by every instance on one
// database. An attempt counts on the UTC day of its created_at.

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>

#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"

namespace dispatchd::store {

// One day's attempts: the cost of the priced ones, and how many had no known cost (no price
// for the model, no rate for a kind of token they used, no usage reported). Those are
// counted apart, never added as 0.
struct Spend {
  double cost_usd = 0;
  std::int64_t priced = 0;
  std::int64_t unpriced = 0;

  bool operator==(const Spend&) const = default;
};

// The UTC day that `t` falls on.
std::chrono::sys_days utc_day(Time t);

// The deployment's spend on `day` (every instance, every conversation); all zero for a day
// without attempts.
[[nodiscard]] Result<Spend> read_day_spend(Database& db, std::chrono::sys_days day);

// The spend of one conversation (inbox.conversation_id) on `day`.
[[nodiscard]] Result<Spend> read_conversation_spend(Database& db, const std::string& conversation_id,
                                                    std::chrono::sys_days day);

}  // namespace dispatchd::store
