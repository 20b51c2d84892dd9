#pragma once
// From the configuration to the running parts: the provider stack with its key read from
// the environment or systemd credentials, the agent's settings, and the channels
// (connectors/channel.h) with their secrets, and the listener's hand-over to a channel's
// webhook endpoint.

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "config/config.h"
#include "connectors/channel.h"
#include "connectors/registry.h"
#include "daemon/http_server.h"
#include "llm/breaker_provider.h"
#include "llm/limiter.h"
#include "llm/provider.h"
#include "llm/router.h"
#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

// The model providers, primary first, then llm.fallbacks, each
// LimitedProvider(BreakerProvider(provider)), behind a router and the retries:
// RetryingProvider(RouterProvider(routes)) (llm/router.h). A call waiting out a backoff holds
// no slot; a call waiting for a breaker to close holds one of its route's, so at most that
// route's max_concurrency wait, each at most `hold` (llm/breaker_provider.h). The primary uses
// `limiter`; each fallback a limiter of its own (its max_concurrency, else llm's). `on_change`
// hears a breaker open and close, with the provider and model it guards. The API keys come
// from the variables named by the api_key_env keys (or the credentials of those names); their
// values are never logged.
using BreakerListener = std::function<void(const llm::ProviderModel&, llm::BreakerChange, const llm::BreakerStats&)>;
struct BuiltProvider {
  std::vector<std::unique_ptr<llm::Limiter>> limiters;  // the fallbacks': declared first, so they outlive `provider`
  std::unique_ptr<llm::Provider> provider;
  llm::RouterProvider* router = nullptr;  // inside `provider`, for its stats
};
[[nodiscard]] std::expected<BuiltProvider, std::string> build_provider(
    const config::Llm& llm, net::Transport& transport, boost::asio::io_context& io, llm::Limiter& limiter,
    std::chrono::milliseconds hold, BreakerListener on_change);

// `channels`' message types are the agent's type rules (every kind's, enabled or not: a
// replayed or re-taken message of a channel switched off is still decided by its rules).
agent::Settings agent_settings(const config::Config& config, const std::vector<connectors::Configured>& channels,
                               const std::string& worker);
// llm.budget as the agent checks it (agent/budget.h); the daemon reports the same.
agent::Budget budget_settings(const config::Budget& budget);

// The enabled channels of `channels` (connectors/registry.h), their secrets read from the
// variables the configuration names (or the credentials of those names).
[[nodiscard]] std::expected<std::vector<std::unique_ptr<connectors::Channel>>, std::string> build_channels(
    const std::vector<connectors::Configured>& channels, const connectors::ChannelDeps& deps);

// The channels whose interrupted sends are looked up rather than escalated
// (connectors::Kind::resolves_unknown): the enabled ones that can.
std::vector<std::string> lookup_channels(const std::vector<connectors::Configured>& channels);

// The agent's reply-window lookup over `channels` (Agent::set_reply_windows): the channel
// of that name says (Channel::reply_window); a channel not among them has none.
// REQUIRES: `channels` outlives the lookup.
agent::ReplyWindowLookup reply_windows(const std::vector<std::unique_ptr<connectors::Channel>>& channels);

// Hands a listener request to a channel's webhook endpoint and its answer back.
void serve_webhook(connectors::WebhookEndpoint& endpoint, const Request& request, Respond respond);

}  // namespace dispatchd::daemon
