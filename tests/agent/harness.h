#pragma once
// The agent loop wired as the daemon wires it, against the fake model server on 127.0.0.1
// through the real CurlTransport, on a migrated SQLite file in a temp folder. Read-only
// tools go through a scripted FakeTransport. Driven from the test thread.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "llm/limiter.h"
#include "llm/providers.h"
#include "llm/retry.h"
#include "net/curl_transport.h"
#include "tests/fakes/fake_model_server.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

namespace dispatchd::test {

inline constexpr const char* k_customer = "15551234567";

inline std::string send_message(const std::string& to, const std::string& content,
                                const std::string& priority = "medium") {
  return R"({"action":"send_message","recipient":")" + to + R"(","content":")" + content + R"(","priority":")" +
         priority + "\"}";
}

using Turns = std::vector<std::pair<std::string, std::string>>;

// The conversation turns of a request body in any of the three dialects, as (role, text)
// with roles "user" and "assistant"; the system text is left out (see system_of).
inline Turns turns_of(const rapidjson::Document& body, llm::ProviderKind kind) {
  Turns out;
  if (kind == llm::ProviderKind::gemini) {
    for (const auto& c : body["contents"].GetArray()) {
      std::string text;
      for (const auto& part : c["parts"].GetArray()) {
        if (part.HasMember("text")) text += part["text"].GetString();  // a file's part has none
      }
      out.emplace_back(std::string(c["role"].GetString()) == "model" ? "assistant" : "user", text);
    }
    return out;
  }
  for (const auto& m : body["messages"].GetArray()) {
    if (std::string(m["role"].GetString()) == "system") continue;
    if (m["content"].IsString()) {
      out.emplace_back(m["role"].GetString(), m["content"].GetString());
      continue;
    }
    // A turn with files: its text parts (OpenAI's and Anthropic's type "text").
    std::string text;
    for (const auto& part : m["content"].GetArray()) {
      if (std::string_view(part["type"].GetString()) == "text") text += part["text"].GetString();
    }
    out.emplace_back(m["role"].GetString(), text);
  }
  return out;
}

inline std::string system_of(const rapidjson::Document& body, llm::ProviderKind kind) {
  switch (kind) {
    case llm::ProviderKind::openai: return body["messages"][0]["content"].GetString();
    case llm::ProviderKind::gemini: return body["systemInstruction"]["parts"][0]["text"].GetString();
    case llm::ProviderKind::anthropic: break;
  }
  return body["system"][0]["text"].GetString();
}

struct AgentHarness {
  explicit AgentHarness(agent::Settings settings = {}, llm::ProviderKind provider_kind = llm::ProviderKind::openai,
                        const catalog::Catalog& catalog = support_en())
      : kind(provider_kind), limiter(io, settings.max_in_flight) {
    llm::ProviderConfig config;
    config.kind = provider_kind;
    config.base_url = fake.base_url(provider_kind == llm::ProviderKind::openai   ? fakes::Dialect::openai
                                    : provider_kind == llm::ProviderKind::gemini ? fakes::Dialect::gemini
                                                                                 : fakes::Dialect::anthropic);
    config.model = "test-model";
    config.api_key = "sk-test";
    config.timeout = std::chrono::seconds(20);
    // Backoff waits are recorded and run at once: tests check what was asked, not the clock.
    llm::RetryDeps deps{[] { return 0.5; },
                        {},
                        [this](std::chrono::milliseconds delay, std::move_only_function<void()> then) {
                          waits.push_back(delay);
                          boost::asio::post(io, std::move(then));
                        }};
    llm::RetryPolicy policy;
    policy.max_attempts = 3;
    provider = std::make_unique<llm::RetryingProvider>(
        std::make_unique<llm::LimitedProvider>(llm::make_provider(config, transport), limiter), policy, io,
        std::move(deps));
    settings.worker = "test-worker";
    agent = std::make_unique<agent::Agent>(
        io, db, *provider, tools, settings, [this] { return clock; },
        [this] { return monotonic.value_or(std::chrono::steady_clock::now()); });
    agent->set_setup(agent::make_setup(catalog, "You work for ACME."));
    agent->on_decision([this](const agent::Decision& d) { decisions.push_back(d); });
  }

  std::int64_t receive(const std::string& id, const std::string& text, const std::string& sender = k_customer,
                       std::string conversation = "", const std::string& type = "") {
    if (conversation.empty()) conversation = sender;
    auto inserted = store::insert_inbound(db, {"whatsapp", id, conversation, sender, text, "{}", type}, clock);
    REQUIRE(inserted);
    return inserted->id;
  }

  // Pokes the agent and runs the loop until `n` decisions in all were made.
  void decide(std::size_t n) {
    agent->poke();
    run_until(io, [&] { return decisions.size() >= n; });
  }

  long long count(const std::string& sql) { return test::query_int(db, sql).value(); }

  Turns turns(std::size_t request) const { return turns_of(bodies()[request], kind); }
  std::string system(std::size_t request) const { return system_of(bodies()[request], kind); }

  // The parsed bodies of every model request, in arrival order.
  std::vector<rapidjson::Document> bodies() const {
    std::vector<rapidjson::Document> out;
    for (const auto& r : fake.requests()) out.push_back(parse_json(r.body));
    return out;
  }

  llm::ProviderKind kind;
  TempDir dir;
  store::Database db = migrated_db(dir);
  store::Instant clock = k_t0;  // the agent's wall clock, moved by tests
  // The agent's monotonic clock: the real one unless a test sets it (and then moves it).
  std::optional<std::chrono::steady_clock::time_point> monotonic;
  fakes::FakeModelServer fake;
  boost::asio::io_context io;
  net::CurlTransport transport{io};
  fakes::FakeTransport tools{io};
  llm::Limiter limiter;
  std::vector<std::chrono::milliseconds> waits;
  std::unique_ptr<llm::Provider> provider;
  std::unique_ptr<agent::Agent> agent;
  std::vector<agent::Decision> decisions;
};

}  // namespace dispatchd::test
