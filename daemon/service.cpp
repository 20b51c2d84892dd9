// Service (daemon/service.h): its Parts (daemon/internal/service_parts.h) built in start-up
// order, then start, reload and shutdown. Requests are answered in service_routes.cpp; the
// tick and the loop's callbacks are in service_tick.cpp.
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
#include "common/json_out.h"
#include "config/secrets.h"
#include "connectors/registry.h"
#include "daemon/cluster.h"
#include "daemon/escalation_events.h"
#include "daemon/escalation_notifier.h"
#include "daemon/http_front.h"
#include "daemon/internal/service_parts.h"
#include "daemon/mcp_servers.h"
#include "daemon/outbox_pump.h"
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
#include "store/audit.h"
#include "store/inbox.h"
#include "store/round.h"
#include "store/unit_of_work.h"

namespace dispatchd::daemon {
namespace {

constexpr std::chrono::seconds k_connection_grace{1};  // see shutdown()

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

// The setup's catalog, shared with the setup's lifetime.
std::shared_ptr<const catalog::Catalog> catalog_of(const std::shared_ptr<const agent::Setup>& setup) {
  return {setup, &setup->catalog};
}

// media.*: the media fetcher's caps, attempts and retention.
MediaFetcherSettings media_settings(const Service::Parts& p) {
  const config::Media& m = p.config.media;
  MediaFetcherSettings s;
  s.max_bytes[static_cast<int>(store::MediaKind::image)] = m.max_image_bytes;
  s.max_bytes[static_cast<int>(store::MediaKind::audio)] = m.max_audio_bytes;
  s.max_bytes[static_cast<int>(store::MediaKind::video)] = m.max_video_bytes;
  s.max_bytes[static_cast<int>(store::MediaKind::document)] = m.max_document_bytes;
  s.max_bytes[static_cast<int>(store::MediaKind::sticker)] = m.max_sticker_bytes;
  s.max_total_bytes = m.max_total_mib * 1024 * 1024;
  s.fetch_attempts = m.fetch_attempts;
  s.fetch_timeout = std::chrono::milliseconds(m.fetch_timeout_ms);
  s.retention_days = m.retention_days;
  s.worker = p.worker;
  s.transcribe_audio = m.transcription.has_value();
  return s;
}

// media.transcription: the transcriber's endpoint, with its key read from its secret.
std::expected<TranscriberSettings, std::string> transcriber_settings(const Service::Parts& p) {
  const config::Transcription& t = *p.config.media.transcription;
  auto key = config::read_secret(t.api_key_env);
  if (!key) return std::unexpected("media.transcription.api_key_env: " + key.error());
  TranscriberSettings s;
  s.client = {t.base_url,
              t.model,
              std::move(*key),
              std::chrono::milliseconds(t.timeout_ms),
              std::chrono::milliseconds(std::min(t.timeout_ms, 10'000)),
              t.attempts};
  s.max_bytes = p.config.media.max_audio_bytes;
  s.worker = p.worker;
  return s;
}

// A file of a message is final (kept or refused) or its transcript ended: a turn waiting
// for its files is taken again now (media.wait_s).
std::function<void(std::int64_t)> media_settled(Service::Parts& p) {
  return [&p](std::int64_t message_id) {
    if (!p.agent) return;
    auto woken = p.agent->media_settled(message_id);
    if (!woken) spdlog::warn("media: message {} waits out media.wait_s: {}", message_id, woken.error().message);
  };
}

// The media fetcher finds a file's channel by the name the store recorded.
MediaFetcherDeps media_fetcher_deps(Service::Parts& p) {
  return {p.store.db, [] { return store::whole_seconds(wall_now_ms()); },
          [&p](std::string_view name) -> connectors::Channel* {
            for (const auto& channel : p.channels)
              if (channel->name() == name) return channel.get();
            return nullptr;
          },
          media_settled(p)};
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

Service::Parts::Parts(config::Config c, boost::asio::io_context& io_, StoreReady ready)
    : config(std::move(c)),
      io(io_),
      worker(worker_of(config)),
      store(std::move(ready)),
      // Every model permit may hold a connection, besides the channels' and the notifier's.
      transport(io_, {.max_idle_connections = config.llm.max_concurrency + 256}),
      limiter(io_, static_cast<std::size_t>(config.llm.max_concurrency)),
      tick(io_),
      watchdog(io_) {}

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
  // A stored message pokes the agent, and the media fetcher when it may hold files.
  const auto on_inbound = [&p] {
    p.agent->poke();
    if (p.media) p.media->poke();
  };
  auto channels = build_channels(
      p.configured, {[&io](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }, p.store.db,
                     p.transport, wall_now_ms, on_inbound, after, std::move(read_ahead), p.config.media.enabled});
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
  if (p.config.media.enabled && p.config.media.transcription) {
    auto settings = transcriber_settings(p);
    if (!settings) return std::unexpected(settings.error());
    p.transcriber = std::make_unique<Transcriber>(
        TranscriberDeps{p.store.db, p.transport, [] { return store::whole_seconds(wall_now_ms()); }, media_settled(p)},
        std::move(*settings));
  }
  if (p.config.media.enabled) {
    MediaFetcherDeps deps = media_fetcher_deps(p);
    if (p.transcriber) deps.kept = [&p] { p.transcriber->poke(); };
    p.media = std::make_unique<MediaFetcher>(std::move(deps), media_settings(p));
  }
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
  if (p.media) p.media->stop();
  if (p.transcriber) p.transcriber->stop();
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
