// Cost end to end: the fake model reports each provider's usage fields over HTTP, the
// provider reads them, the agent prices each attempt with llm.prices as it records it, and
// v_attempts / v_messages show it.
#include <catch2/catch.hpp>

#include "tests/agent/harness.h"

using namespace dispatchd;
using fakes::FakeReply;
using test::AgentHarness;
using test::k_customer;
using test::send_message;

namespace {

FakeReply with_usage(FakeReply reply, bool cache_writes) {
  reply.input_tokens = 30;
  reply.output_tokens = 20;
  reply.cached_input_tokens = 400;
  reply.cache_write_tokens = cache_writes ? 600 : 0;
  reply.reasoning_tokens = 50;
  return reply;
}

}  // namespace

TEST_CASE("agent: each attempt's cost is recorded at the configured price, the message's is their sum",
          "[agent][cost]") {
  const auto kind = GENERATE(llm::ProviderKind::openai, llm::ProviderKind::gemini, llm::ProviderKind::anthropic);
  CAPTURE(llm::to_string(kind));
  const bool anthropic = kind == llm::ProviderKind::anthropic;
  agent::Settings settings;
  settings.prices["test-model"] = {.input = 1.0, .output = 2.0, .cached_input = 0.5, .cache_write = 1.25};
  AgentHarness h(settings, kind);
  const auto id = h.receive("wamid.1", "Where is my order?");
  h.fake.push(with_usage(FakeReply::text(R"({"action":"reply"})"), anthropic));  // invalid: re-asked
  h.fake.push(with_usage(FakeReply::text(send_message(k_customer, "Tomorrow.")), anthropic));
  h.decide(1);
  REQUIRE(h.decisions[0].outcome == agent::Outcome::queued);

  // Per million: 30 input x 1 + 400 cached x 0.5 + (20 output + 50 reasoning) x 2, and
  // Anthropic's 600 cache-write tokens x 1.25 (the others have no such count).
  const double per_attempt = (30 + 200 + 140 + (anthropic ? 750 : 0)) / 1e6;
  const std::string reasoning = anthropic ? "0" : "50";  // Anthropic reports thinking inside output_tokens
  const std::string output = anthropic ? "70" : "20";
  CHECK(h.count("SELECT count(*) FROM v_attempts WHERE message_id = " + std::to_string(id) +
                " AND input_tokens = 30 AND cached_input_tokens = 400 AND output_tokens = " + output +
                " AND reasoning_tokens = " + reasoning + " AND cache_write_tokens = " + (anthropic ? "600" : "0") +
                " AND abs(cost_usd - " + std::to_string(per_attempt) + ") < 1e-12") == 2);
  CHECK(h.count("SELECT abs(cost_usd - " + std::to_string(2 * per_attempt) +
                ") < 1e-12 FROM v_messages WHERE message_id = " + std::to_string(id)) == 1);
}

TEST_CASE("agent: a model without a price records no cost, and the message's cost is unknown", "[agent][cost]") {
  agent::Settings settings;
  settings.prices["another-model"] = {.input = 1.0, .output = 2.0};
  AgentHarness h(settings);
  const auto id = h.receive("wamid.1", "hello");
  h.fake.push(FakeReply::text(send_message(k_customer, "Hi!")));
  h.decide(1);
  REQUIRE(h.decisions[0].outcome == agent::Outcome::queued);
  CHECK(h.count("SELECT count(*) FROM v_attempts WHERE cost_usd IS NULL AND input_tokens = 11") == 1);
  CHECK(h.count("SELECT cost_usd IS NULL FROM v_messages WHERE message_id = " + std::to_string(id)) == 1);
}

TEST_CASE("agent: cached input without a cached_input rate is an unknown cost, not a cheaper one", "[agent][cost]") {
  agent::Settings settings;
  settings.prices["test-model"] = {.input = 1.0, .output = 2.0};
  AgentHarness h(settings);
  h.receive("wamid.1", "hello");
  h.fake.push(with_usage(FakeReply::text(send_message(k_customer, "Hi!")), false));
  h.decide(1);
  CHECK(h.count("SELECT count(*) FROM v_attempts WHERE cost_usd IS NULL AND cached_input_tokens = 400") == 1);
}
