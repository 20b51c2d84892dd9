// Service::Parts (daemon/internal/service_parts.h) answering: the routing of requests to
// the channels' webhooks and the staff API, the probes (/healthz, /readyz), /metrics, and
// the status line systemd shows.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/internal/service_parts.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "agent/budget.h"
#include "connectors/channel.h"
#include "connectors/registry.h"
#include "daemon/budget_report.h"
#include "daemon/http_server.h"
#include "daemon/metrics.h"
#include "daemon/provider_report.h"
#include "daemon/read_thread.h"
#include "daemon/staff_api.h"
#include "daemon/wiring.h"
#include "mcp/fleet.h"
#include "staff/targets.h"
#include "store/escalation_feed.h"
#include "store/metrics.h"
#include "store/round.h"
#include "store/states.h"

namespace dispatchd::daemon {

connectors::WebhookEndpoint* Service::Parts::webhook(std::string_view path) const {
  for (const auto& channel : channels) {
    if (auto* endpoint = channel->webhook(); endpoint && endpoint->path() == path) return endpoint;
  }
  return nullptr;
}

// 503 naming the first channel whose sending is paused, for /readyz.
std::optional<Response> Service::Parts::paused_channel() const {
  for (const auto& channel : channels) {
    if (auto health = channel->health(); health.paused)
      return Response{503, std::string(channel->name()) + " sending paused: " + health.reason + "\n"};
  }
  return std::nullopt;
}

std::vector<ChannelGauges> Service::Parts::channel_gauges() const {
  std::vector<ChannelGauges> out;
  for (const auto& lane : pump->stats()) {
    ChannelGauges gauges{lane.channel, static_cast<std::int64_t>(lane.in_flight), lane.writes_retried,
                         lane.writes_failed, std::nullopt};
    for (const auto& channel : channels) {
      if (channel->name() != lane.channel) continue;
      if (channel->webhook()) gauges.webhooks = channel->webhook()->counters();
      if (const auto* polls = channel->poll_counters()) gauges.polls = *polls;
      gauges.paused = channel->health().paused;
    }
    out.push_back(std::move(gauges));
  }
  return out;
}

void Service::Parts::route(const Request& r, Respond respond) {
  // A webhook answers when its channel says (a POST after its group commit), a staff
  // decision after its commit, a staff read from the read thread; everything else at once.
  if (auto* endpoint = webhook(r.path)) return serve_webhook(*endpoint, r, std::move(respond));
  if (StaffApi::owns(r) && r.method == "GET") {
    // Listings, cases and trails read on the read thread; the rest answers at once.
    auto routed = staff->prepare(r);
    if (auto* read = std::get_if<Read>(&routed)) return reads->run(std::move(*read), std::move(respond));
    return respond(std::move(std::get<Response>(routed)));
  }
  if (StaffApi::owns(r)) {
    // A staff decision is on disk before the page hears it was taken.
    return store::after_commit(store.db, [this, respond, answered = staff->handle(r)](bool committed) {
      respond(committed ? answered : Response{500, "cannot store the decision; nothing was changed\n"});
      if (committed) events->poll();
    });
  }
  respond(answer(r));
}

Response Service::Parts::answer(const Request& r) {
  if (r.path == "/healthz") return Response{200, "ok\n"};
  if (r.path == "/readyz") {
    if (stopping) return Response{503, "stopping\n"};
    if (!store.db.ping()) return Response{503, "database unavailable\n"};
    if (store_failure) return Response{503, "the database refuses writes: " + *store_failure + "\n"};
    if (auto paused = paused_channel()) return std::move(*paused);
    // A disabled MCP action is named, but the instance stays ready: every instance shares
    // the server, and the agent tells the model the tool is unavailable meanwhile.
    std::string disabled;
    if (mcp) {
      for (const auto& pin : mcp->pins())
        if (pin.state != mcp::PinState::pinned) disabled += "; disabled: mcp " + mcp::describe(pin);
    }
    // A closed budget is named, but the instance stays ready: the budget is the deployment's,
    // and messages are still taken in and wait (or escalate) until the next UTC day.
    std::string budget_note;
    if (auto daily = daily_budget(store.db, budget, wall_now()); daily && *daily && !(*daily)->open())
      budget_note = "; " + agent::describe(budget, **daily);
    // An open breaker is named, but the instance stays ready: webhooks are still stored and
    // answered, and the messages wait for the provider.
    std::string breaker_note;
    if (auto note = provider_note(provider_states())) breaker_note = "; " + *note;
    return Response{200, "ready" + disabled + budget_note + breaker_note + "\n"};
  }
  if (r.path == "/metrics") {
    auto snapshot = store::read_metrics(store.db);
    if (!snapshot) return Response{500, snapshot.error().message + "\n"};
    ProcessGauges gauges{static_cast<std::int64_t>(agent->in_flight()), paused_channel().has_value(),
                         static_cast<std::int64_t>(http->connections()), channel_gauges(), std::nullopt};
    if (round) {
      const auto stats = round->stats();
      gauges.store_failures = {stats.failed_commits, stats.failed_syncs, stats.failed_checkpoints};
      gauges.durable_waits = stats.durable_waits;
      if (store.db.backend() == store::Backend::sqlite) gauges.sync_times = stats.sync_times;
    }
    if (loop_times) gauges.loop_handlers = loop_times->snapshot();
    gauges.tools = tool_calls;
    if (mcp) {
      for (const auto& server : mcp->servers()) gauges.tools.servers.push_back({server.name, server.status.up});
      for (const auto& pin : mcp->pins())
        gauges.tools.pins.push_back({pin.action, pin.server, pin.tool, pin.state == mcp::PinState::pinned});
    }
    if (auto daily = daily_budget(store.db, budget, wall_now()); daily && *daily)
      gauges.budget = {*budget.daily_usd, (*daily)->day, !(*daily)->open()};
    for (auto& [who, stats] : provider_states()) gauges.breakers.push_back({who, stats});
    if (media) gauges.media = media->counters();
    if (transcriber) gauges.transcripts = transcriber->counters();
    if (notifier) {
      const auto stats = notifier->stats();
      gauges.notifications = {stats.sent, stats.retried, stats.failed, notifier->pending().value_or(-1)};
    }
    if (auto open = store::open_clocks(store.db)) {
      const auto found = staff::find_breaches(*open, targets, wall_now());
      for (const auto& [reason, name] : store::SqlNames<store::EscalationReason>::table)
        gauges.breached[std::string(name)] = found.overdue.at(static_cast<std::size_t>(reason));
    }
    return Response{200, render_metrics(*snapshot, gauges, wall_now()), "text/plain; version=0.0.4; charset=utf-8", {}};
  }
  for (const connectors::Kind* kind : connectors::kinds()) {
    if (!kind->webhook_path.empty() && r.path == kind->webhook_path)
      return Response{404, std::string(kind->name) + " is not enabled\n"};
  }
  return Response{404, "not found\n"};
}

std::string Service::Parts::status() const {
  std::string text =
      "serving; " + std::to_string(agent->in_flight()) + " in progress, " + std::to_string(decided) + " decided";
  for (const auto& channel : channels) {
    if (channel->health().paused) text += "; " + std::string(channel->name()) + " sending PAUSED";
  }
  return text + (store_failure ? "; NOT STORING: " + *store_failure : "");
}

}  // namespace dispatchd::daemon
