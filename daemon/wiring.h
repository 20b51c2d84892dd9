#pragma once
// From the configuration to the running parts: the provider stack with its key read from
// the environment or systemd credentials, and the agent's settings.

#include <expected>
#include <memory>
#include <string>

#include "agent/agent.h"
#include "config/config.h"
#include "llm/limiter.h"
#include "llm/provider.h"
#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

// RetryingProvider(LimitedProvider(provider)): a call waiting out a backoff holds no slot
// of `limiter`. The API key comes from the variable named by llm.api_key_env (or the
// credential of that name); its value is never logged.
std::expected<std::unique_ptr<llm::Provider>, std::string> build_provider(const config::Llm& llm,
                                                                          net::Transport& transport,
                                                                          boost::asio::io_context& io,
                                                                          llm::Limiter& limiter);

agent::Settings agent_settings(const config::Config& config, const std::string& worker);

}  // namespace dispatchd::daemon
