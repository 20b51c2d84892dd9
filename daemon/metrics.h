#pragma once
// /metrics in the Prometheus text format (version 0.0.4). Counters come from the store (see
// store/metrics.h), so they survive restarts; gauges describe this process.

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/handler_timing.h"
#include "common/histogram.h"
#include "connectors/channel.h"
#include "daemon/media_fetcher.h"
#include "daemon/transcriber.h"
#include "llm/breaker_provider.h"
#include "store/inbox.h"
#include "store/metrics.h"
#include "store/round.h"
#include "store/spend.h"

namespace dispatchd::daemon {

// One channel as the running process sees it.
struct ChannelGauges {
  std::string name;  // "whatsapp", …
  std::int64_t sends_in_flight = 0;
  std::int64_t writes_retried = 0;                      // send outcomes written again (a lost round, a busy store)
  std::int64_t writes_failed = 0;                       // send outcomes that could not be written (logged)
  std::optional<connectors::WebhookCounters> webhooks;  // when the provider pushes webhooks
  std::optional<connectors::PollCounters> polls;        // when the channel polls
  bool paused = false;                                  // Channel::health()
};

// Upper bounds of the tool-call duration histogram's buckets, in microseconds.
inline constexpr std::array<std::int64_t, 9> k_tool_call_bounds_us = {5'000,   10'000,    25'000,    50'000,    100'000,
                                                                      250'000, 1'000'000, 5'000'000, 30'000'000};

// Catalog tool calls since start (http and mcp), and the MCP servers and pins now.
struct ToolGauges {
  struct CallKey {
    std::string kind;    // "http" | "mcp"
    std::string action;  // the catalog action
    std::string server;  // mcp: the configured server; http: ""
    std::string tool;    // mcp: the tool's name; http: ""
    std::string outcome;
    auto operator<=>(const CallKey&) const = default;
  };
  std::map<CallKey, std::int64_t> calls;
  common::Histogram<k_tool_call_bounds_us> durations;
  struct Server {
    std::string name;
    bool up = false;
  };
  std::vector<Server> servers;  // mcp.servers
  struct Pin {
    std::string action, server, tool;
    bool pinned = false;
  };
  std::vector<Pin> pins;  // the catalog's mcp actions
};

struct ProcessGauges {
  std::int64_t in_flight = 0;   // messages the agent is working on
  bool sending_paused = false;  // some channel's sending is paused (e.g. the WhatsApp token was refused)
  std::int64_t http_connections = 0;
  std::vector<ChannelGauges> channels;  // the enabled ones
  struct StoreFailures {
    std::int64_t commits = 0;      // group commits that failed (e.g. a full disk)
    std::int64_t syncs = 0;        // WAL syncs that failed
    std::int64_t checkpoints = 0;  // WAL checkpoints SQLite refused (the WAL keeps growing)
  };
  std::optional<StoreFailures> store_failures;  // when group commit runs
  // How long effects that leave the process waited for their round's COMMIT and sync
  // (store::Round::Stats::durable_waits), when group commit runs.
  std::optional<common::Histogram<store::k_durable_wait_bounds_us>> durable_waits;
  // How long the WAL's fdatasync took (store::Round::Stats::sync_times), when group commit
  // runs on SQLite.
  std::optional<common::Histogram<store::k_sync_bounds_us>> sync_times;
  struct Notifications {
    std::int64_t sent = 0;  // since start (daemon/escalation_notifier.h)
    std::int64_t retried = 0;
    std::int64_t failed = 0;
    std::int64_t pending = 0;  // escalations not yet notified
  };
  std::optional<Notifications> notifications;     // when escalation.notify_url is set
  std::optional<MediaCounters> media;             // the media fetcher's, when media.enabled
  std::optional<TranscriptCounters> transcripts;  // the transcriber's, when media.transcription is set
  // Open escalations past their response-time target (staff/targets.h), by reason name;
  // every reason has an entry. Empty when the store could not be read.
  std::map<std::string, std::int64_t> breached;
  // How long the event loop's steps held it (common/handler_timing.h), when they are timed.
  std::optional<common::HandlerTimes::Snapshot> loop_handlers;
  ToolGauges tools;
  // llm.budget.daily_usd: the deployment's spend today (store/spend.h) against it.
  struct Budget {
    double limit_usd = 0;
    store::Spend today;
    bool closed = false;  // spent, or its spend unknown (agent/budget.h): model calls are stopped
  };
  std::optional<Budget> budget;  // when a daily budget is set
  // The model providers' circuit breakers (llm/breaker_provider.h), the primary first.
  struct Breaker {
    llm::ProviderModel provider;
    llm::BreakerStats stats;
  };
  std::vector<Breaker> breakers;
};

std::string render_metrics(const store::MetricsSnapshot& snapshot, const ProcessGauges& gauges, store::Time now);

}  // namespace dispatchd::daemon
