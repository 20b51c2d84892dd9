#include "daemon/wiring.h"

#include "config/secrets.h"
#include "llm/providers.h"
#include "llm/retry.h"

namespace dispatchd::daemon {
namespace {

agent::TypeAction type_action(common::TypeAction action) {
  switch (action) {
    case common::TypeAction::model: return agent::TypeAction::model;
    case common::TypeAction::escalate: return agent::TypeAction::escalate;
    case common::TypeAction::reply: return agent::TypeAction::reply;
    case common::TypeAction::ignore: return agent::TypeAction::ignore;
  }
  return agent::TypeAction::model;
}

}  // namespace

namespace {

// One provider's route: LimitedProvider(BreakerProvider(its HTTP provider)).
struct RouteSpec {
  std::string key;  // the configuration key, for errors: "llm" or "llm.fallbacks/0"
  std::string provider, base_url, model, api_key_env;
  int timeout_ms = 0;
};

std::expected<llm::Route, std::string> build_route(const RouteSpec& spec, const config::Llm& llm,
                                                   net::Transport& transport, boost::asio::io_context& io,
                                                   llm::Limiter& limiter, std::chrono::milliseconds hold,
                                                   BreakerListener on_change) {
  const auto kind = llm::parse_provider_kind(spec.provider);
  if (!kind) return std::unexpected(spec.key + ".provider: unknown provider " + spec.provider);
  auto key = config::read_secret(spec.api_key_env);
  if (!key) return std::unexpected(spec.key + ".api_key_env: " + key.error());
  llm::ProviderConfig provider;
  provider.kind = *kind;
  provider.base_url = spec.base_url;
  provider.model = spec.model;
  provider.api_key = std::move(*key);
  provider.timeout = std::chrono::milliseconds(spec.timeout_ms);
  provider.connect_timeout = std::chrono::milliseconds(llm.connect_timeout_ms);
  provider.max_output_tokens = llm.max_output_tokens;
  // The prompt cache key is OpenAI's: a fallback of another dialect has no such field.
  provider.prompt_cache_key = llm.prompt_cache_key && *kind == llm::ProviderKind::openai;
  const llm::BreakerSettings breaker{.failure_threshold = llm.breaker.failures,
                                     .probe_min = std::chrono::milliseconds(llm.breaker.probe_min_ms),
                                     .probe_max = std::chrono::milliseconds(llm.breaker.probe_max_ms)};
  llm::ProviderModel answers{std::string(llm::to_string(*kind)), spec.model};
  auto guarded = std::make_unique<llm::BreakerProvider>(
      llm::make_provider(std::move(provider), transport), breaker, hold, io,
      llm::BreakerDeps{.on_change = [on_change = std::move(on_change), answers](llm::BreakerChange change,
                                                                                const llm::BreakerStats& stats) {
        if (on_change) on_change(answers, change, stats);
      }});
  llm::BreakerProvider* watched = guarded.get();
  return llm::Route{std::make_unique<llm::LimitedProvider>(std::move(guarded), limiter), watched, std::move(answers)};
}

}  // namespace

std::expected<BuiltProvider, std::string> build_provider(const config::Llm& llm, net::Transport& transport,
                                                         boost::asio::io_context& io, llm::Limiter& limiter,
                                                         std::chrono::milliseconds hold, BreakerListener on_change) {
  BuiltProvider built;
  std::vector<llm::Route> routes;
  auto primary = build_route({"llm", llm.provider, llm.base_url, llm.model, llm.api_key_env, llm.timeout_ms}, llm,
                             transport, io, limiter, hold, on_change);
  if (!primary) return std::unexpected(primary.error());
  routes.push_back(std::move(*primary));
  for (std::size_t i = 0; i < llm.fallbacks.size(); ++i) {
    const auto& f = llm.fallbacks[i];
    // Each fallback has its own concurrency: its slots are not the primary's.
    built.limiters.push_back(std::make_unique<llm::Limiter>(
        io, static_cast<std::size_t>(f.max_concurrency > 0 ? f.max_concurrency : llm.max_concurrency)));
    auto route = build_route({"llm.fallbacks/" + std::to_string(i), f.provider, f.base_url, f.model, f.api_key_env,
                              f.timeout_ms > 0 ? f.timeout_ms : llm.timeout_ms},
                             llm, transport, io, *built.limiters.back(), hold, on_change);
    if (!route) return std::unexpected(route.error());
    routes.push_back(std::move(*route));
  }
  llm::RetryPolicy policy;
  // The retries of one call stay well inside the time a message may wait for a provider.
  policy.deadline = std::chrono::milliseconds(llm.timeout_ms) * 4;
  auto router = std::make_unique<llm::RouterProvider>(std::move(routes));
  built.router = router.get();
  built.provider = std::make_unique<llm::RetryingProvider>(std::move(router), policy, io);
  return built;
}

agent::Budget budget_settings(const config::Budget& b) {
  agent::Budget out{.daily_usd = b.daily_usd, .conversation_daily_usd = b.conversation_daily_usd};
  out.when_spent = b.when_spent == config::WhenSpent::escalate ? agent::WhenSpent::escalate : agent::WhenSpent::wait;
  out.unknown_cost =
      b.unknown_cost == config::UnknownCost::allow ? agent::UnknownCost::allow : agent::UnknownCost::stop;
  return out;
}

agent::Settings agent_settings(const config::Config& config, const std::vector<connectors::Configured>& channels,
                               const std::string& worker) {
  agent::Settings settings;
  settings.max_retries = config.llm.max_retries;
  settings.max_tool_steps = config.llm.max_tool_steps;
  settings.history_messages = static_cast<std::size_t>(config.llm.history_messages);
  settings.max_in_flight = static_cast<std::size_t>(config.llm.max_concurrency);
  settings.provider_deadline = std::chrono::seconds(config.llm.provider_deadline_s);
  settings.burst_quiet = std::chrono::milliseconds(config.agent.burst_quiet_ms);
  if (config.media.enabled) settings.media_wait = std::chrono::seconds(config.media.wait_s);
  settings.burst_max = std::chrono::milliseconds(config.agent.burst_max_ms);
  if (const auto& a = config.agent; a.limits_enabled) {
    settings.runaway = agent::RunawayLimits{a.replies_per_10_minutes, a.replies_per_day, a.repeats, a.bot_cadence_turns,
                                            std::chrono::milliseconds(a.bot_cadence_ms)};
  }
  // A lease outlives every call the message can make: its retries, re-asks and tool steps.
  const auto per_call = std::chrono::milliseconds(config.llm.timeout_ms) * 4;
  // A turn may start over (Settings::max_turn_restarts), each time with the whole budget.
  const auto calls = (1 + config.llm.max_retries + config.llm.max_tool_steps) * (1 + settings.max_turn_restarts);
  settings.lease = std::max(settings.lease, std::chrono::ceil<std::chrono::seconds>(per_call * calls));
  settings.worker = worker;
  for (const auto& [model, price] : config.llm.prices)
    settings.prices[model] = {price.input, price.output, price.cached_input, price.cache_write};
  settings.budget = budget_settings(config.llm.budget);
  // A router may send any call to any of them: files go when all of them read them.
  if (auto primary = llm::parse_provider_kind(config.llm.provider)) settings.model_dialects.push_back(*primary);
  for (const auto& fallback : config.llm.fallbacks) {
    if (auto kind = llm::parse_provider_kind(fallback.provider)) settings.model_dialects.push_back(*kind);
  }
  for (const auto& [kind, section] : channels) {
    auto& rules = settings.type_rules[std::string(kind->name)];
    for (const auto& [type, handling] : section->message_types())
      rules[type] = {type_action(handling.action), handling.reply_text};
  }
  return settings;
}

std::expected<std::vector<std::unique_ptr<connectors::Channel>>, std::string> build_channels(
    const std::vector<connectors::Configured>& configured, const connectors::ChannelDeps& deps) {
  std::vector<std::unique_ptr<connectors::Channel>> channels;
  for (const auto& [kind, section] : configured) {
    if (!section->enabled()) continue;
    auto channel = section->make(deps);
    if (!channel) return std::unexpected(channel.error());
    channels.push_back(std::move(*channel));
  }
  return channels;
}

std::vector<std::string> lookup_channels(const std::vector<connectors::Configured>& channels) {
  std::vector<std::string> names;
  for (const auto& [kind, section] : channels) {
    if (section->enabled() && kind->resolves_unknown) names.emplace_back(kind->name);
  }
  return names;
}

void serve_webhook(connectors::WebhookEndpoint& endpoint, const Request& request, Respond respond) {
  auto reply = [respond = std::move(respond)](connectors::WebhookResponse answer) {
    respond(Response{answer.status, std::move(answer.body), "text/plain; charset=utf-8", std::move(answer.headers)});
  };
  endpoint.handle({request.method, request.query, request.headers, request.body}, std::move(reply));
}

agent::ReplyWindowLookup reply_windows(const std::vector<std::unique_ptr<connectors::Channel>>& channels) {
  return [&channels](const std::string& channel, const std::string& counterpart,
                     store::Time now) -> std::optional<ReplyWindow> {
    for (const auto& c : channels) {
      if (c->name() == channel) return c->reply_window(counterpart, now);
    }
    return std::nullopt;
  };
}

}  // namespace dispatchd::daemon
