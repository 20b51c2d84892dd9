#pragma once
// A provider wired to a fake model server through the real CurlTransport, driven from the
// test thread.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llm/providers.h"
#include "llm/retry.h"
#include "net/curl_transport.h"
#include "tests/fakes/fake_model_server.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"
#include "tests/test_util.h"

namespace dispatchd::test {

inline constexpr const char* k_test_key = "sk-test-secret-123";

inline fakes::Dialect fake_dialect(llm::ProviderKind kind) {
  switch (kind) {
    case llm::ProviderKind::openai: return fakes::Dialect::openai;
    case llm::ProviderKind::gemini: return fakes::Dialect::gemini;
    case llm::ProviderKind::anthropic: break;
  }
  return fakes::Dialect::anthropic;
}

// The request the agent loop sends on a re-ask: first message, the failed output, feedback.
inline llm::CompletionRequest reask_request() {
  return {"SYSTEM PROMPT",
          {{llm::Role::user, "hello, where is my order?"},
           {llm::Role::assistant, "not json"},
           {llm::Role::user, "Your previous reply was rejected"}},
          llm::output_schema(support_en())};
}

struct Harness {
  // `configure` may change the provider's settings before the providers are made.
  explicit Harness(llm::ProviderKind provider_kind, llm::RetryPolicy policy = {},
                   const std::function<void(llm::ProviderConfig&)>& configure = {}) {
    llm::ProviderConfig config;
    config.kind = provider_kind;
    config.base_url = fake.base_url(fake_dialect(provider_kind));
    config.model = "test-model";
    config.api_key = k_test_key;
    config.timeout = std::chrono::seconds(20);
    if (configure) configure(config);
    policy.base_delay = std::chrono::milliseconds(100);
    // Backoff waits are recorded and then run at once: tests check the delays asked for
    // without sleeping through them.
    llm::RetryDeps deps{[] { return 0.5; },
                        {},
                        [this](std::chrono::milliseconds delay, std::move_only_function<void()> then) {
                          waits.push_back(delay);
                          boost::asio::post(io, std::move(then));
                        }};
    provider = llm::make_provider(config, transport);
    retrying =
        std::make_unique<llm::RetryingProvider>(llm::make_provider(config, transport), policy, io, std::move(deps));
  }

  llm::CompletionResult call(llm::Provider& p, llm::CompletionRequest request = reask_request()) {
    std::optional<llm::CompletionResult> result;
    p.complete(std::move(request), [&](llm::CompletionResult r) { result = std::move(r); });
    run_until(io, [&] { return result.has_value(); });
    return std::move(*result);
  }
  llm::CompletionResult call() { return call(*provider); }
  llm::CompletionResult call_with_retries() { return call(*retrying); }

  // The body of the only (or the last) request the fake received, parsed.
  rapidjson::Document last_body() const { return parse_json(fake.requests().back().body); }

  fakes::FakeModelServer fake;
  boost::asio::io_context io;
  net::CurlTransport transport{io};
  std::vector<std::chrono::milliseconds> waits;
  std::unique_ptr<llm::Provider> provider;
  std::unique_ptr<llm::Provider> retrying;
};

}  // namespace dispatchd::test
