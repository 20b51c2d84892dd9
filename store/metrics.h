#pragma once
// Counts for /metrics, read from the store itself: rows are never deleted, so counts over
// them are monotonic counters that survive restarts (Prometheus sees no reset), and a
// scrape shows what auditors see in SQL. Triggers keep them as rows change (migration
// 0008), so reading them costs a few dozen rows whatever the size of the history.

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

// Upper bounds (ms) of the model latency histogram's buckets; +Inf is implicit.
inline constexpr std::array<std::int64_t, 9> k_latency_buckets_ms = {100,  250,   500,   1000, 2500,
                                                                     5000, 10000, 30000, 60000};

// The counts by their labels. A stored state this dispatchd does not know (a newer
// schema's) fails the read, as the views do: a scrape never files it under another.
struct MessageCount {
  std::string channel;
  Outcome outcome = Outcome::pending;
  std::int64_t count = 0;
};
struct AttemptCount {
  Verdict verdict = Verdict::valid;
  std::string error_class;  // "" when none
  std::int64_t count = 0;
};
struct EscalationCount {
  EscalationReason reason = EscalationReason::contract_failed;
  EscalationStatus status = EscalationStatus::open;
  std::int64_t count = 0;
};
struct ActionCount {
  ActionStatus status = ActionStatus::proposed;
  std::int64_t count = 0;
};
struct HoldCount {
  EscalationReason reason = EscalationReason::conversation_limit;
  std::int64_t count = 0;
};

struct LatencyHistogram {
  std::string provider;
  std::string model;
  std::array<std::int64_t, k_latency_buckets_ms.size()> cumulative{};  // attempts <= each bound
  std::int64_t count = 0;
  std::int64_t sum_ms = 0;
};

// Billed tokens and cost per provider and model (migration 0010's metric_usage). The cost
// covers the `priced` attempts only; `unpriced` ones (no price for the model, or no rate for
// a kind of token they used) are counted apart, never added as 0.
struct UsageTotals {
  std::string provider;
  std::string model;
  std::int64_t input_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::int64_t cache_write_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t reasoning_tokens = 0;
  double cost_usd = 0;
  std::int64_t priced = 0;    // attempts with a cost
  std::int64_t unpriced = 0;  // attempts whose cost is unknown
};

struct MetricsSnapshot {
  std::vector<MessageCount> messages;
  std::vector<AttemptCount> attempts;
  std::int64_t reasks = 0;  // attempts after the first of their message
  std::vector<EscalationCount> escalations;
  std::vector<ActionCount> actions;
  std::vector<LatencyHistogram> latency;
  std::vector<UsageTotals> usage;                           // by provider and model
  std::int64_t inbox_waiting = 0;                           // received or processing
  std::optional<std::string> oldest_waiting_since;          // received_at of the oldest waiting one
  std::optional<std::string> oldest_open_escalation_since;  // created_at of the oldest open or claimed escalation
  std::vector<HoldCount> conversations_held;                // conversation_holds by reason
};

[[nodiscard]] Result<MetricsSnapshot> read_metrics(Database& db);

}  // namespace dispatchd::store
