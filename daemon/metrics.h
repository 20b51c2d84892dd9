#pragma once
// /metrics in the Prometheus text format (version 0.0.4). Counters come from the store (see
// store/metrics.h), so they survive restarts; gauges describe this process.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/inbox.h"
#include "store/metrics.h"

namespace dispatchd::daemon {

// What the WhatsApp channel counted since this process started (not stored: Prometheus
// takes a restart's reset of a counter in its stride).
struct WhatsAppCounters {
  std::int64_t webhooks = 0;        // POSTs received, whatever became of them
  std::int64_t accepted = 0;        // answered 200 after the commit
  std::int64_t bad_signatures = 0;  // 401
  std::int64_t malformed = 0;       // 400/413: signed, but not a webhook we can read
  std::int64_t not_stored = 0;      // 500: the commit failed; Meta delivers again
  std::int64_t messages_stored = 0;
  std::int64_t duplicates = 0;             // redelivered messages, stored once
  std::int64_t read_receipts_dropped = 0;  // beyond the backlog of read receipts not yet sent
};

struct ProcessGauges {
  std::int64_t in_flight = 0;   // messages the agent is working on
  bool sending_paused = false;  // e.g. the WhatsApp token was refused
  std::int64_t http_connections = 0;
  std::optional<WhatsAppCounters> whatsapp;  // when the channel is enabled
  struct StoreFailures {
    std::int64_t commits = 0;  // group commits that failed (e.g. a full disk)
    std::int64_t syncs = 0;    // WAL syncs that failed
  };
  std::optional<StoreFailures> store_failures;  // when group commit runs
};

std::string render_metrics(const store::MetricsSnapshot& snapshot, const ProcessGauges& gauges, store::Time now);

}  // namespace dispatchd::daemon
