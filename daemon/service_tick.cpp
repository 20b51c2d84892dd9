// Service::Parts (daemon/internal/service_parts.h) keeping house: the once-a-second tick
// (the status, the staff feed, the database's reach, the cluster, the providers' pauses, the
// budget, sessions, response targets, slow loop steps, checkpoints), the systemd watchdog,
// and the callbacks of the store's health, the providers' breakers and the tool calls.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/internal/service_parts.h"

#include <spdlog/spdlog.h>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/handler_timing.h"
#include "daemon/budget_report.h"
#include "daemon/cluster.h"
#include "daemon/systemd_notify.h"
#include "staff/accounts.h"
#include "staff/targets.h"
#include "store/escalation_feed.h"
#include "store/inbox.h"
#include "store/instances.h"
#include "store/round.h"
#include "store/staff.h"
#include "store/tool_calls.h"

namespace dispatchd::daemon {
namespace {

constexpr std::chrono::seconds k_tick{1};
// Slow event loop steps are logged once per this many ticks at most.
constexpr std::int64_t k_slow_steps_ticks = 10;
constexpr int k_keepalive_ticks = 15;        // an SSE comment this often keeps streams open
constexpr int k_session_sweep_ticks = 3600;  // expired staff sessions deleted this often
constexpr int k_breach_check_ticks = 5;      // open escalations checked against their targets this often

}  // namespace

void Service::Parts::on_tick() {
  if (stopping) return;
  // Postponed messages come back by time; approved actions may wait for a retry.
  agent->poke();
  pump->pump();
  if (media) media->tick();
  if (transcriber) transcriber->tick();
  if (notifier) notifier->poke();
  notify_status(status());
  ++ticks;
  poll_events();
  log_checkpoint_failures();
  check_reachable();
  if (cluster) cluster->tick(ticks, wall_now());
  follow_holds();
  follow_budget();
  if (ticks % k_session_sweep_ticks == 0) sweep_sessions();
  if (ticks % k_breach_check_ticks == 0) notice_breaches();
  if (ticks % k_slow_steps_ticks == 0) log_slow_steps();
  tick.expires_after(k_tick);
  tick.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_tick();
  });
}

// The staff page's feed reads committed audit rows only: what a failed round rolled back
// never reaches a page.
void Service::Parts::poll_events() {
  if (events->subscribers() == 0) return;
  store::after_commit(store.db, [this](bool committed) {
    if (!committed || stopping) return;
    events->poll();
    if (ticks % k_keepalive_ticks == 0) events->keepalive();
  });
}

void Service::Parts::sweep_sessions() {
  const auto now = wall_now();
  const staff::SessionPolicy policy = staff_settings(config).sessions;
  if (auto swept = store::delete_sessions(store.db, now - policy.max, now - policy.idle); !swept)
    spdlog::warn("cannot delete expired staff sessions: {}", swept.error().message);
}

void Service::Parts::on_watchdog() {
  // From the event loop itself: a stuck loop stops the pings and systemd restarts us.
  notify_watchdog();
  watchdog.expires_after(*watchdog_interval);
  watchdog.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_watchdog();
  });
}

void Service::Parts::on_store_health(bool ok, const std::string& why) {
  if (ok) {
    spdlog::info("store: rounds are stored again, after {} failure(s)", store_failures_in_a_row);
    store_failure.reset();
    store_failures_in_a_row = 0;
    return;
  }
  store_failure = why;
  // A full disk fails every round, many a second: the first failure and every 100th.
  if (++store_failures_in_a_row == 1 || store_failures_in_a_row % 100 == 0)
    spdlog::error("store: {} ({} failure(s) in a row); webhooks are answered 500 and decisions taken again", why,
                  store_failures_in_a_row);
}

// PostgreSQL out of reach: the front answers 503 by itself (webhooks are sent again by
// their provider, /readyz turns the load balancer away) until a connection is made again.
// The loop keeps trying, paced by the Database (store/database.h).
void Service::Parts::check_reachable() {
  std::optional<std::string> reason;
  if (store.db.unreachable()) {
    if (auto probe = store.db.ping(); !probe) reason = probe.error().message;
  }
  if (reason) {
    if (!refusing) spdlog::error("store: the database is unreachable, requests are answered 503: {}", *reason);
    refusing = true;
    http->set_unavailable(std::move(reason));
  } else if (refusing) {
    spdlog::info("store: the database is reachable again");
    refusing = false;
    http->set_unavailable(std::nullopt);
  }
}

// Open escalations past their response-time target (staff/targets.h): each one's breach is
// recorded once (store::notice_breach: an audit event the notifier announces). Several
// instances may check at once: the store's conditional UPDATE records each breach once.
void Service::Parts::notice_breaches() {
  if (store.db.unreachable()) return;  // check_reachable says so
  const store::Time now = wall_now();
  auto open = store::open_clocks(store.db);
  if (!open) {
    if (!std::exchange(breaches_unread, true))
      spdlog::warn("targets: cannot read the open escalations: {}", open.error().message);
    return;
  }
  breaches_unread = false;
  for (const auto& breach : staff::find_breaches(*open, targets, now).unnoticed) {
    auto noticed = store::notice_breach(store.db, breach.escalation_id, breach.due_at, now);
    if (!noticed) {
      spdlog::warn("targets: cannot record the breach of escalation {}: {}", breach.escalation_id,
                   noticed.error().message);
      return;
    }
    if (*noticed)
      spdlog::info("targets: escalation {} is past its response target (due {})", breach.escalation_id,
                   store::format_time(breach.due_at));
  }
  if (notifier) notifier->poke();
}

// One log line when the daily budget closes (spent, or its spend unknown) and one when it
// opens again; the store's counters are read each tick (a few rows).
void Service::Parts::follow_budget() {
  if (store.db.unreachable()) return;  // check_reachable says so
  auto daily = daily_budget(store.db, budget, wall_now());
  if (!daily) {
    // Once while it fails, not every second.
    if (!std::exchange(budget_unread, true))
      spdlog::warn("budget: cannot read today's spend: {}", daily.error().message);
    return;
  }
  budget_unread = false;
  if (!*daily) return;
  const auto line = budget_log.change(budget, **daily);
  if (!line) return;
  if ((*daily)->open()) {
    spdlog::info("budget: {}", *line);
  } else {
    spdlog::warn("budget: {}", *line);
  }
}

// Several instances: a provider's pause another instance stored (store::hold_channel) holds
// this instance's sends of that channel too, from the next tick (a second at most).
void Service::Parts::follow_holds() {
  if (store.db.backend() != store::Backend::postgresql || store.db.unreachable()) return;
  const auto now = wall_now();
  auto holds = store::channel_holds(store.db, now);
  if (!holds) {
    spdlog::warn("cluster: cannot read the providers' pauses: {}", holds.error().message);
    return;
  }
  for (const auto& hold : *holds) {
    if (hold.held_by == worker) continue;  // our own runs already
    pump->hold_channel(hold.channel, std::chrono::duration_cast<std::chrono::milliseconds>(hold.until - now));
  }
}

// Steps that held the loop over 10 ms since the last report: everything waited behind them.
void Service::Parts::log_slow_steps() {
  if (!loop_times) return;
  const auto slow = loop_times->take_slow();
  if (!slow) return;
  spdlog::warn("event loop: {} step(s) held it over {} ms in the last {} s; the longest {:.1f} ms, in {}", slow->count,
               common::HandlerTimes::k_slow_us / 1000, k_slow_steps_ticks * k_tick.count(),
               static_cast<double>(slow->longest_us) / 1000.0, common::describe_handler(slow->type));
}

// Checkpoints fail on their own thread and lose nothing (the WAL grows until one succeeds),
// so they are logged at the tick, once a tick at most, with the newest reason.
void Service::Parts::log_checkpoint_failures() {
  if (!round) return;
  const auto stats = round->stats();
  if (stats.failed_checkpoints == checkpoint_failures_logged) return;
  spdlog::warn("store: {} WAL checkpoint(s) failed ({}); the WAL grows until one succeeds",
               stats.failed_checkpoints - checkpoint_failures_logged, stats.last_checkpoint_error);
  checkpoint_failures_logged = stats.failed_checkpoints;
}

// The provider's breaker opened or closed: a log line, and on closing the messages the
// outage postponed are taken again at once.
void Service::Parts::on_breaker(const llm::ProviderModel& who, llm::BreakerChange change,
                                const llm::BreakerStats& stats) {
  const auto name = who.provider + "/" + who.model;
  if (change == llm::BreakerChange::opened) {
    spdlog::warn(
        "llm: {} is failing ({} failures in a row): its breaker is open; one probe every {} to {} ms until "
        "it answers, messages wait",
        name, config.llm.breaker.failures, config.llm.breaker.probe_min_ms, config.llm.breaker.probe_max_ms);
    return;
  }
  if (change != llm::BreakerChange::closed) return;
  spdlog::info("llm: {} answers again after {} ms: its breaker is closed ({} probe(s))", name, stats.open_time.count(),
               stats.probes);
  if (!agent) return;
  auto released = agent->provider_recovered();
  if (!released) {
    spdlog::warn("llm: the messages postponed for {} wait out their pause: {}", name, released.error().message);
  } else if (*released > 0) {
    spdlog::info("llm: {} postponed message(s) taken again now", *released);
  }
}

void Service::Parts::count_tool_call(const store::ToolCallRecord& call) {
  ++tool_calls.calls[{std::string(store::to_sql(call.kind)), call.action, call.server.value_or(""),
                      call.kind == store::ToolKind::mcp ? call.tool : "", std::string(store::to_sql(call.outcome))}];
  tool_calls.durations.add(call.duration_ms * 1000);
}

}  // namespace dispatchd::daemon
