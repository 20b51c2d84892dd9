#pragma once
// /metrics in the Prometheus text format (version 0.0.4). Counters come from the store (see
// store/metrics.h), so they survive restarts; gauges describe this process.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/inbox.h"
#include "store/metrics.h"

namespace dispatchd::daemon {

struct ProcessGauges {
  std::int64_t in_flight = 0;   // messages the agent is working on
  bool sending_paused = false;  // e.g. the WhatsApp token was refused
  std::int64_t http_connections = 0;
};

std::string render_metrics(const store::MetricsSnapshot& snapshot, const ProcessGauges& gauges, store::Time now);

}  // namespace dispatchd::daemon
