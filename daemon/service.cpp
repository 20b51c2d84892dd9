#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "daemon/service.h"

#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/agent.h"
#include "common/handler_timing.h"
#include "common/json_out.h"
#include "config/secrets.h"
#include "connectors/registry.h"
#include "daemon/budget_report.h"
#include "daemon/cluster.h"
#include "daemon/escalation_events.h"
#include "daemon/escalation_notifier.h"
#include "daemon/http_front.h"
#include "daemon/mcp_servers.h"
#include "daemon/metrics.h"
#include "daemon/outbox_pump.h"
#include "daemon/provider_report.h"
#include "daemon/read_ahead.h"
#include "daemon/read_thread.h"
#include "daemon/staff_api.h"
#include "daemon/startup.h"
#include "daemon/systemd_notify.h"
#include "daemon/tool_lane.h"
#include "daemon/wiring.h"
#include "llm/limiter.h"
#include "mcp/fleet.h"
#include "net/threaded_transport.h"
#include "staff/targets.h"
#include "store/audit.h"
#include "store/escalation_feed.h"
#include "store/instances.h"
#include "store/metrics.h"
#include "store/round.h"
#include "store/staff.h"
#include "store/unit_of_work.h"

namespace dispatchd::daemon {
namespace {

constexpr std::chrono::seconds k_tick{1};
// Slow event loop steps are logged once per this many ticks at most.
constexpr std::int64_t k_slow_steps_ticks = 10;
constexpr std::chrono::seconds k_connection_grace{1};  // see shutdown()
constexpr int k_keepalive_ticks = 15;                  // an SSE comment this often keeps streams open
constexpr int k_session_sweep_ticks = 3600;            // expired staff sessions deleted this often
constexpr int k_breach_check_ticks = 5;                // open escalations checked against their targets this often

// The staff API's settings without the admin token (read from its secret at start).
StaffApiSettings staff_settings(const config::Config& config) {
  return {"",
          {std::chrono::minutes(config.staff.session_idle_minutes), std::chrono::hours(config.staff.session_max_hours)},
          config.staff.secure_cookies,
          static_cast<std::size_t>(config.llm.history_messages),
          budget_settings(config.llm.budget),
          std::chrono::minutes(config.staff.claim_idle_minutes),
          staff::response_targets(config.staff.response_target_default_minutes, config.staff.response_target_minutes)};
}

store::Time wall_now() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }
store::Instant wall_now_ms() { return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now()); }

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// The lease owner and claimer of sends. On PostgreSQL several instances may share the
// database: instance.id (default host:port, docs/configuration.md). On SQLite the one machine's
// name, as always (its leases from an earlier run are released by that name at start).
std::string worker_of(const config::Config& config) {
  if (store::backend_of(config.database) != store::Backend::postgresql) return "dispatchd@" + host_name();
  if (!config.instance.id.empty()) return config.instance.id;
  return host_name() + ":" + std::to_string(config.http.port);
}

// The catalog and the prompt file, read together: both or neither (reload is atomic).
std::expected<std::shared_ptr<const agent::Setup>, std::string> load_setup(const config::Config& config) {
  auto catalog = catalog::Catalog::load_file(config.catalog);
  if (!catalog) return std::unexpected("catalog: " + catalog.error().front().to_string());
  std::string prompt;
  if (config.system_prompt_file) {
    std::ifstream in(*config.system_prompt_file, std::ios::binary);
    if (!in) return std::unexpected("system_prompt_file: cannot read " + *config.system_prompt_file);
    std::ostringstream text;
    text << in.rdbuf();
    prompt = text.str();
  }
  return agent::make_setup(std::move(*catalog), prompt, config.holding_reply);
}

}  // namespace

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
  std::unique_ptr<ToolLane> tool_lane;  // the outbox's tool calls (mcp acts), when MCP servers run
  std::unique_ptr<OutboxPump> pump;     // after `channels` and `tool_lane`: gone before them
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

  Parts(config::Config c, boost::asio::io_context& io_, StoreReady ready)
      : config(std::move(c)),
        io(io_),
        worker(worker_of(config)),
        store(std::move(ready)),
        // Every model permit may hold a connection, besides the channels' and the notifier's.
        transport(io_, {.max_idle_connections = config.llm.max_concurrency + 256}),
        limiter(io_, static_cast<std::size_t>(config.llm.max_concurrency)),
        tick(io_),
        watchdog(io_) {}

  void route(const Request& request, Respond respond);
  void count_tool_call(const store::ToolCallRecord& call) {
    ++tool_calls.calls[{std::string(store::to_sql(call.kind)), call.action, call.server.value_or(""),
                        call.kind == store::ToolKind::mcp ? call.tool : "", std::string(store::to_sql(call.outcome))}];
    tool_calls.durations.add(call.duration_ms * 1000);
  }
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

connectors::WebhookEndpoint* Service::Parts::webhook(std::string_view path) const {
  for (const auto& channel : channels) {
    if (auto* endpoint = channel->webhook(); endpoint && endpoint->path() == path) return endpoint;
  }
  return nullptr;
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

void Service::Parts::on_tick() {
  if (stopping) return;
  // Postponed messages come back by time; approved actions may wait for a retry.
  agent->poke();
  pump->pump();
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

namespace {

// The setup's catalog, shared with the setup's lifetime.
std::shared_ptr<const catalog::Catalog> catalog_of(const std::shared_ptr<const agent::Setup>& setup) {
  return {setup, &setup->catalog};
}

// The MCP servers, when mcp.servers has any or the catalog has mcp actions: started and
// their tools listed and pinned before anything else runs (daemon/mcp_servers.h).
std::expected<void, std::string> start_mcp(Service::Parts& p) {
  const auto& actions = p.setup->catalog.actions();
  const bool named = std::ranges::any_of(actions, [](const catalog::Action& a) { return a.mcp.has_value(); });
  if (p.config.mcp_servers.empty() && !named) return {};
  auto servers = fleet_servers(p.config);
  if (!servers) return std::unexpected(servers.error());
  p.mcp = std::make_unique<mcp::Fleet>(p.io, p.transport, std::move(*servers),
                                       [](std::string line) { spdlog::info("{}", line); });
  const auto problems = start_and_pin(*p.mcp, p.io, catalog_of(p.setup), mcp_startup_wait(p.config));
  if (problems.empty()) return {};
  std::string text;
  for (const auto& problem : problems) text += (text.empty() ? "" : "; ") + problem;
  return std::unexpected(text);
}

}  // namespace

std::expected<std::unique_ptr<Service>, std::string> Service::create(config::Config config, boost::asio::io_context& io,
                                                                     common::HandlerTimes* loop_times) {
  // Everything --check-config checks, before the database is touched.
  if (const auto problems = check_environment(config); !problems.empty()) {
    std::string text = problems.front();
    if (problems.size() > 1) text += " (and " + std::to_string(problems.size() - 1) + " more; see --check-config)";
    return std::unexpected(text);
  }
  auto configured = connectors::configure(config);
  if (!configured) return std::unexpected(configured.error().front());
  const auto lookup = lookup_channels(*configured);
  auto setup = load_setup(config);
  if (!setup) return std::unexpected(setup.error());
  auto ready = prepare_store(config, worker_of(config), wall_now(), lookup);
  if (!ready) return std::unexpected(ready.error());
  for (const auto& name : ready->applied) spdlog::info("applied migration {}", name);
  for (const auto id : ready->unknown_sends) {
    spdlog::warn("action {} was being sent when the last run stopped: delivery unknown, escalated", id);
  }
  auto parts = std::make_unique<Parts>(std::move(config), io, std::move(*ready));
  auto& p = *parts;
  p.configured = std::move(*configured);
  p.lookup = lookup;
  p.loop_times = loop_times;
  // Group commit (store/round.h): one durable transaction per round of the event loop;
  // acknowledged webhooks, `sending` marks and staff decisions act after it.
  p.round = std::make_unique<store::Round>(
      p.store.db, [&io](std::function<void()> f) { boost::asio::post(io, std::move(f)); },
      std::chrono::milliseconds(p.config.database_commit_interval_ms));
  p.round->watch([&p](bool ok, const std::string& why) { p.on_store_health(ok, why); });
  for (const auto& why : p.round->setting_failures())
    spdlog::warn("store: a group-commit setting failed, running without it: {}", why);
  p.setup = *setup;
  // A call waits for the breaker as long as a message would wait for the provider before it
  // is taken again; the breaker's closing takes the postponed ones again at once.
  auto provider = build_provider(p.config.llm, p.transport, io, p.limiter, agent::Limits{}.provider_wait,
                                 [&p](const llm::ProviderModel& who, llm::BreakerChange change,
                                      const llm::BreakerStats& stats) { p.on_breaker(who, change, stats); });
  if (!provider) return std::unexpected(provider.error());
  p.provider = std::move(provider->provider);
  p.router = provider->router;
  p.fallback_limiters = std::move(provider->limiters);
  if (auto started = start_mcp(p); !started) return std::unexpected(started.error());
  p.agent = std::make_unique<agent::Agent>(io, p.store.db, *p.provider, p.transport,
                                           agent_settings(p.config, p.configured, p.worker), wall_now_ms);
  p.agent->set_setup(p.setup);
  p.cluster =
      std::make_unique<ClusterMember>(p.store.db,
                                      ClusterSettings{p.worker, std::chrono::seconds(p.config.cluster.dead_after_s),
                                                      static_cast<std::size_t>(p.config.llm.max_concurrency), p.lookup},
                                      p.limiter, [&p] { p.agent->poke(); });
  p.agent->set_mcp(p.mcp.get());
  p.agent->on_tool_call([&p](const store::ToolCallRecord& call) { p.count_tool_call(call); });
  p.agent->on_written([&p] { p.pump->pump_now(); });
  p.agent->on_decision([&p](const agent::Decision& d) {
    using agent::Outcome;
    if (d.outcome == Outcome::error)
      spdlog::error("message {}: {}", d.message_id, d.detail);
    else if (d.outcome == Outcome::not_stored || d.outcome == Outcome::handed_over)
      spdlog::warn("message {}: {}", d.message_id, d.detail);
    else if (d.messages > 1)
      spdlog::info("message {} and {} more of its turn: {} ({}), {} attempt(s)", d.message_id, d.messages - 1,
                   agent::to_string(d.outcome), d.detail, d.attempts);
    else
      spdlog::info("message {}: {} ({}), {} attempt(s)", d.message_id, agent::to_string(d.outcome), d.detail,
                   d.attempts);
    if (d.outcome == Outcome::queued || d.outcome == Outcome::escalated || d.outcome == Outcome::ignored)
      p.decided += static_cast<std::int64_t>(d.messages);
    p.pump->pump();
    if (p.notifier) p.notifier->poke();
  });
  // The channels, and the pump that sends their outbox rows.
  const connectors::After after = [&io](std::chrono::milliseconds delay, std::move_only_function<void()> f) {
    auto timer = std::make_shared<boost::asio::steady_timer>(io, delay);
    timer->async_wait([timer, f = std::move(f)](const boost::system::error_code& ec) mutable {
      if (!ec) f();
    });
  };
  // SQLite only: there the loop's own thread reads the pages, and its count of disk reads is
  // the read-ahead's signal (connectors/read_ahead_gate.h); PostgreSQL's server reads them.
  connectors::ReadAhead read_ahead;
  if (p.store.db.backend() == store::Backend::sqlite) {
    auto connection = open_read_connection(p.config);
    if (!connection) return std::unexpected(connection.error());
    p.read_ahead = std::make_unique<ReadThread>(io, std::move(*connection), ReadThread::k_default_queue, "read-ahead");
    read_ahead = read_ahead_on(*p.read_ahead, io, static_cast<std::size_t>(p.config.llm.history_messages));
  }
  auto channels = build_channels(
      p.configured, {[&io](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }, p.store.db,
                     p.transport, wall_now_ms, [&p] { p.agent->poke(); }, after, std::move(read_ahead)});
  if (!channels) return std::unexpected(channels.error());
  p.channels = std::move(*channels);
  // The turn's latest message: a provider that marks it read marks the earlier ones too.
  p.agent->on_started([&p](const store::Leased& m, bool answering) {
    const std::string& latest = m.joined.empty() ? m.provider_message_id : m.joined.back().provider_message_id;
    for (const auto& channel : p.channels) {
      if (channel->name() == m.channel) channel->working_on(latest, answering);
    }
  });
  p.agent->set_reply_windows(reply_windows(p.channels));
  const bool cluster = p.store.db.backend() == store::Backend::postgresql;
  p.pump = std::make_unique<OutboxPump>(PumpDeps{io, p.store.db, wall_now, write_outcome, cluster ? p.worker : ""});
  for (const auto& channel : p.channels) p.pump->add(*channel);
  if (p.mcp) {
    p.tool_lane = std::make_unique<ToolLane>(*p.mcp, p.store.db, wall_now,
                                             [&p](const store::ToolCallRecord& call) { p.count_tool_call(call); });
    p.pump->add(*p.tool_lane);
  }
  if (p.config.notify_url)
    p.notifier = std::make_unique<EscalationNotifier>(
        EscalationNotifierDeps{p.store.db, p.transport, wall_now, after},
        EscalationNotifierSettings{*p.config.notify_url, p.config.staff_public_url,
                                   std::chrono::milliseconds(p.config.notify_timeout_ms)});
  StaffApiSettings staff = staff_settings(p.config);
  staff.providers = [&p] { return p.provider_states(); };
  for (const auto& [kind, section] : p.configured)
    staff.channels.push_back({std::string(kind->name), std::string(kind->label), section->enabled()});
  if (!p.config.staff_token_env.empty()) {
    auto token = config::read_secret(p.config.staff_token_env);
    if (!token) return std::unexpected("staff.token_env: " + token.error());
    staff.admin_token = std::move(*token);
  }
  p.events = std::make_unique<EscalationEvents>(p.store.db);
  p.staff = std::make_unique<StaffApi>(
      p.store.db, std::move(staff),
      [&p] { return std::shared_ptr<const catalog::Catalog>(p.setup, &p.setup->catalog); }, wall_now,
      [&p] { p.pump->pump(); }, *p.events);
  auto read_connection = open_read_connection(p.config);
  if (!read_connection) return std::unexpected(read_connection.error());
  p.reads = std::make_unique<ReadThread>(io, std::move(*read_connection));
  HttpLimits limits;
  limits.max_body_bytes = p.config.http.max_body_bytes;
  limits.max_connections_per_address = p.config.http.max_connections_per_address;
  // On PostgreSQL the loop waits for the server on every store call: the listener gets a
  // thread of its own (daemon/http_front.h), so requests are read and refused meanwhile;
  // http.listener_thread can force either, for a measurement (BENCHMARKS.md).
  const auto front_thread = [&] {
    switch (p.config.http.listener_thread) {
      case config::ListenerThread::own: return FrontThread::own;
      case config::ListenerThread::loop: return FrontThread::loop;
      case config::ListenerThread::automatic: break;
    }
    return p.store.db.backend() == store::Backend::postgresql ? FrontThread::own : FrontThread::loop;
  };
  const FrontThread front = front_thread();
  p.http = std::make_unique<HttpFront>(
      io, limits, [&p](const Request& r, Respond respond) { p.route(r, std::move(respond)); }, front);
  return std::unique_ptr<Service>(new Service(std::move(parts)));
}

Service::Service(std::unique_ptr<Parts> parts) : m_parts(std::move(parts)) {}
Service::~Service() = default;

std::expected<void, std::string> Service::start() {
  auto& p = *m_parts;
  if (auto ok = p.http->listen(p.config.http.host, p.config.http.port); !ok) return ok;
  // Before the agent's first poke: the first start's cursor is set before any escalation.
  if (p.notifier) {
    if (auto ok = p.notifier->start(); !ok) return std::unexpected("notifications: " + ok.error().message);
  }
  spdlog::info("listening on {}:{}; database {} (schema {}); catalog {}", p.config.http.host, p.http->port(),
               p.config.database, p.store.schema_version, p.config.catalog);
  p.agent->poke();
  p.pump->pump();
  p.on_tick();
  if (p.watchdog_interval) p.on_watchdog();
  notify_ready(p.status());
  return {};
}

void Service::reload() {
  auto& p = *m_parts;
  // Credentials first: a channel paused by a refused one resumes with the new one.
  for (const auto& channel : p.channels) channel->reload();
  auto setup = load_setup(p.config);
  if (!setup) {
    spdlog::error("reload refused, the running catalog and prompt stay: {}", setup.error());
    return;
  }
  // Applied once its audit event is on disk: a reload the audit trail cannot record (a full
  // disk) is refused, so the trail never misses a catalog that decided messages.
  const std::string name = (*setup)->catalog.name();
  auto recorded = store::record_event(
      p.store.db, {store::format_time(wall_now()), store::AuditKind::config_reload, std::nullopt, "dispatchd",
                   JsonOut().begin_object().field("catalog", name).end_object().str()});
  if (!recorded) {
    spdlog::error("reload refused, the running catalog and prompt stay: cannot record it: {}",
                  recorded.error().message);
    return;
  }
  // A lost event is not written again: the operator sees the refusal and sends SIGHUP once
  // the disk has room (a reload applied later, unasked, would surprise more than help).
  store::commit_then(
      p.store.db,
      [&p, setup = std::move(*setup), name] {
        p.setup = setup;
        p.agent->set_setup(p.setup);
        if (p.mcp) p.mcp->bind(catalog_of(p.setup));
        spdlog::info("reloaded the catalog ({}) and the system prompt", name);
      },
      [] { spdlog::error("reload refused, the running catalog and prompt stay: its audit event was not stored"); });
}

void Service::shutdown(std::chrono::seconds drain, std::function<void()> done) {
  auto& p = *m_parts;
  if (p.stopping) return;
  p.stopping = true;
  notify_stopping();
  spdlog::info("stopping: {} message(s) in progress, {} send(s) in flight", p.agent->in_flight(), p.pump->in_flight());
  p.http->stop();
  p.agent->stop();
  if (p.mcp) p.mcp->stop();
  p.pump->stop();
  if (p.notifier) p.notifier->stop();
  for (const auto& channel : p.channels) channel->stop();
  p.tick.cancel();
  p.watchdog.cancel();
  const auto stop_at = std::chrono::steady_clock::now();
  const auto deadline = stop_at + drain;
  // A connection accepted just before the listener closed may carry a request not read
  // yet: open connections get this long to send it (then only idle ones are left).
  const auto grace = stop_at + std::min<std::chrono::steady_clock::duration>(k_connection_grace, drain);
  auto wait = std::make_shared<std::function<void()>>();
  *wait = [&p, deadline, grace, done = std::move(done), wait]() {
    // Idle: no message in the agent, no send in flight, every request already read has its
    // answer written (a webhook waits for its commit; the loop keeps committing), and no
    // connection left that may still bring one.
    const auto now = std::chrono::steady_clock::now();
    const bool idle = p.agent->in_flight() == 0 && p.pump->in_flight() == 0 && p.http->answering() == 0 &&
                      (p.http->connections() == 0 || now >= grace);
    if (idle || now >= deadline) {
      // What is left is handed back: the next start takes it again at once.
      if (auto released = store::release_leases(p.store.db, p.worker); !released)
        spdlog::error("cannot hand back the unfinished messages ({}); their leases expire by themselves",
                      released.error().message);
      p.round->commit();
      spdlog::info("stopped ({})", idle ? "drained" : "drain deadline passed; unfinished messages handed back");
      done();
      *wait = nullptr;  // break the self-reference
      return;
    }
    p.tick.expires_after(std::chrono::milliseconds(50));
    p.tick.async_wait([wait](const boost::system::error_code&) {
      if (*wait) (*wait)();
    });
  };
  (*wait)();
}

std::uint16_t Service::port() const { return m_parts->http->port(); }

}  // namespace dispatchd::daemon
