#pragma once
#ifndef DISPATCHD_INTERNAL_DAEMON
#error "daemon/internal/ is private to daemon/: include the module's public headers instead"
#endif
// Internal: what the running daemon (daemon/service.h) holds, Service::Parts, and the
// helpers its files share. Only daemon/service*.cpp include it: service.cpp builds, starts,
// reloads and stops it, service_routes.cpp answers requests and the probes, and
// service_tick.cpp holds the once-a-second housekeeping and the loop's callbacks.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/agent.h"
#include "common/handler_timing.h"
#include "config/config.h"
#include "connectors/channel.h"
#include "connectors/registry.h"
#include "daemon/budget_report.h"
#include "daemon/cluster.h"
#include "daemon/escalation_events.h"
#include "daemon/escalation_notifier.h"
#include "daemon/http_front.h"
#include "daemon/http_server.h"
#include "daemon/media_fetcher.h"
#include "daemon/metrics.h"
#include "daemon/outbox_pump.h"
#include "daemon/provider_report.h"
#include "daemon/read_thread.h"
#include "daemon/service.h"
#include "daemon/staff_api.h"
#include "daemon/startup.h"
#include "daemon/systemd_notify.h"
#include "daemon/tool_lane.h"
#include "daemon/transcriber.h"
#include "daemon/wiring.h"
#include "llm/breaker_provider.h"
#include "llm/limiter.h"
#include "llm/provider.h"
#include "llm/router.h"
#include "mcp/fleet.h"
#include "net/threaded_transport.h"
#include "staff/targets.h"
#include "store/inbox.h"
#include "store/round.h"
#include "store/tool_calls.h"

namespace dispatchd::daemon {

// The staff API's settings without the admin token (read from its secret at start).
inline StaffApiSettings staff_settings(const config::Config& config) {
  return {"",
          {std::chrono::minutes(config.staff.session_idle_minutes), std::chrono::hours(config.staff.session_max_hours)},
          config.staff.secure_cookies,
          static_cast<std::size_t>(config.llm.history_messages),
          budget_settings(config.llm.budget),
          std::chrono::minutes(config.staff.claim_idle_minutes),
          staff::response_targets(config.staff.response_target_default_minutes, config.staff.response_target_minutes)};
}

inline store::Time wall_now() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

struct Service::Parts {
  config::Config config;
  std::vector<connectors::Configured> configured;             // every channel kind's section (connectors/registry.h)
  std::vector<std::string> lookup;                            // the channels whose unknown sends are looked up
  agent::Budget budget = budget_settings(config.llm.budget);  // llm.budget, as the agent checks it
  BudgetLog budget_log;                                       // one line per change of the daily budget
  // staff.response_target_minutes, as the staff API reads them.
  staff::ResponseTargets targets = staff_settings(config).targets;
  bool breaches_unread = false;  // the last breach check failed (logged once per streak)
  bool budget_unread = false;    // the last tick could not read today's spend
  boost::asio::io_context& io;
  std::string worker;
  StoreReady store;
  net::ThreadedTransport transport;  // curl on its own thread; callbacks back on `io`
  llm::Limiter limiter;
  std::vector<std::unique_ptr<llm::Limiter>> fallback_limiters;  // declared first: they outlive `provider`
  std::unique_ptr<llm::Provider> provider;
  llm::RouterProvider* router = nullptr;  // inside `provider`
  std::unique_ptr<mcp::Fleet> mcp;        // after `transport`, before `agent`: mcp.servers, when any
  ToolGauges tool_calls;                  // catalog tool calls since start (the servers and pins are read live)
  std::unique_ptr<agent::Agent> agent;
  std::unique_ptr<ClusterMember> cluster;  // after `agent`, which it pokes
  std::shared_ptr<const agent::Setup> setup;
  std::unique_ptr<ReadThread> read_ahead;  // before `channels`: they call it (daemon/read_ahead.h)
  std::vector<std::unique_ptr<connectors::Channel>> channels;
  std::unique_ptr<ToolLane> tool_lane;       // the outbox's tool calls (mcp acts), when MCP servers run
  std::unique_ptr<OutboxPump> pump;          // after `channels` and `tool_lane`: gone before them
  std::unique_ptr<MediaFetcher> media;       // after `channels`: when media.enabled
  std::unique_ptr<Transcriber> transcriber;  // when media.enabled and media.transcription
  std::unique_ptr<EscalationEvents> events;
  std::unique_ptr<StaffApi> staff;
  std::unique_ptr<ReadThread> reads;             // after `staff`, before `http`: see daemon/read_thread.h
  std::unique_ptr<EscalationNotifier> notifier;  // when escalation.notify_url is set
  std::unique_ptr<HttpFront> http;
  std::unique_ptr<store::Round> round;         // after `store`: commits before the database closes
  common::HandlerTimes* loop_times = nullptr;  // the loop's steps, when main times them
  boost::asio::steady_timer tick;
  boost::asio::steady_timer watchdog;
  std::optional<std::chrono::microseconds> watchdog_interval = watchdog_ping_interval();
  bool stopping = false;
  std::int64_t ticks = 0;
  std::int64_t decided = 0;
  std::optional<std::string> store_failure;  // why the last round was not stored, while failing
  std::int64_t store_failures_in_a_row = 0;
  std::int64_t checkpoint_failures_logged = 0;
  bool refusing = false;  // the front answers 503: the database is out of reach

  Parts(config::Config c, boost::asio::io_context& io_, StoreReady ready);

  void route(const Request& request, Respond respond);
  void count_tool_call(const store::ToolCallRecord& call);
  Response answer(const Request& request);
  connectors::WebhookEndpoint* webhook(std::string_view path) const;
  std::optional<Response> paused_channel() const;
  void on_breaker(const llm::ProviderModel& who, llm::BreakerChange change, const llm::BreakerStats& stats);
  ProviderStates provider_states() const { return router ? router->stats() : ProviderStates{}; }
  std::vector<ChannelGauges> channel_gauges() const;
  void on_tick();
  void poll_events();
  void sweep_sessions();
  void on_watchdog();
  void on_store_health(bool ok, const std::string& why);
  void check_reachable();
  void follow_holds();
  void follow_budget();
  void notice_breaches();
  void log_checkpoint_failures();
  void log_slow_steps();
  std::string status() const;
};

}  // namespace dispatchd::daemon
