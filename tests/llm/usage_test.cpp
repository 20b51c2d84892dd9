// Each provider's usage object, as the provider documents it, read into llm::Usage: every
// billed token in exactly one field (llm/provider.h), nothing counted twice.
#include <catch2/catch.hpp>

#include "tests/llm/harness.h"

using namespace dispatchd;
using fakes::FakeReply;
using llm::ProviderKind;
using llm::Usage;

namespace Catch {
template <>
struct StringMaker<Usage> {
  static std::string convert(const Usage& u) {
    return "{input " + std::to_string(u.input_tokens) + ", output " + std::to_string(u.output_tokens) + ", cached " +
           std::to_string(u.cached_input_tokens) + ", cache_write " + std::to_string(u.cache_write_tokens) +
           ", reasoning " + std::to_string(u.reasoning_tokens) + "}";
  }
};
}  // namespace Catch

namespace {

constexpr const char* k_output = R"({"action":"send_message","recipient":"1","content":"x","priority":"low"})";

Usage usage_of(ProviderKind kind, const std::string& body) {
  test::Harness h(kind);
  h.fake.push(FakeReply::raw(200, body));
  const auto result = h.call();
  REQUIRE(result.has_value());
  return result->usage;
}

std::string openai_body(const std::string& usage) {
  return R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-5-mini","choices":[{"index":0,)"
         R"("message":{"role":"assistant","content":")" +
         std::string(R"({\"action\":\"send_message\",\"recipient\":\"1\",\"content\":\"x\",\"priority\":\"low\"})") +
         R"(","refusal":null},"finish_reason":"stop"}],"usage":)" + usage + "}";
}

std::string gemini_body(const std::string& usage) {
  return R"({"candidates":[{"content":{"parts":[{"text":"{\"action\":\"send_message\",\"recipient\":\"1\",)"
         R"(\"content\":\"x\",\"priority\":\"low\"}"}],"role":"model"},"finishReason":"STOP","index":0}],)"
         R"("usageMetadata":)" +
         usage + R"(,"modelVersion":"gemini-2.5-flash"})";
}

std::string anthropic_body(const std::string& usage) {
  return R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"tool_use",)"
         R"("id":"toolu_1","name":"dispatchd_action","input":)" +
         std::string(k_output) + R"(}],"stop_reason":"tool_use","stop_sequence":null,"usage":)" + usage + "}";
}

}  // namespace

TEST_CASE("usage: OpenAI's cached and reasoning tokens are taken out of their totals", "[usage]") {
  // A gpt-5 answer with low reasoning and a warm prompt cache.
  const Usage usage = usage_of(ProviderKind::openai, openai_body(R"({"prompt_tokens":1486,"completion_tokens":651,
    "total_tokens":2137,"prompt_tokens_details":{"cached_tokens":1408,"audio_tokens":0},
    "completion_tokens_details":{"reasoning_tokens":512,"audio_tokens":0,"accepted_prediction_tokens":0,
    "rejected_prediction_tokens":0}})"));
  CHECK(usage == Usage{.input_tokens = 78,
                       .output_tokens = 139,
                       .cached_input_tokens = 1408,
                       .cache_write_tokens = 0,
                       .reasoning_tokens = 512});
  // The fields add up to the provider's total: nothing counted twice.
  CHECK(usage.input_tokens + usage.cached_input_tokens + usage.output_tokens + usage.reasoning_tokens == 2137);
}

TEST_CASE("usage: OpenAI-compatible servers without the details (Ollama, vLLM) keep their totals", "[usage]") {
  CHECK(
      usage_of(ProviderKind::openai, openai_body(R"({"prompt_tokens":40,"completion_tokens":12,"total_tokens":52})")) ==
      Usage{.input_tokens = 40, .output_tokens = 12});
  // Details that are null, or a part larger than its total, never give a negative count.
  CHECK(usage_of(ProviderKind::openai,
                 openai_body(R"({"prompt_tokens":40,"completion_tokens":12,"prompt_tokens_details":null,)"
                             R"("completion_tokens_details":{"reasoning_tokens":99}})")) ==
        Usage{.input_tokens = 40, .output_tokens = 0, .reasoning_tokens = 12});
  CHECK(usage_of(ProviderKind::openai, openai_body(R"({"prompt_tokens":-5,"completion_tokens":"7"})")) == Usage{});
}

TEST_CASE("usage: Gemini's thoughts are billed beside the candidates, its cache inside the prompt", "[usage]") {
  // gemini-2.5-flash with thinking on and an implicit cache hit.
  const Usage usage = usage_of(ProviderKind::gemini, gemini_body(R"({"promptTokenCount":2148,
    "candidatesTokenCount":60,"totalTokenCount":2548,"cachedContentTokenCount":2048,"thoughtsTokenCount":340,
    "promptTokensDetails":[{"modality":"TEXT","tokenCount":2148}],
    "cacheTokensDetails":[{"modality":"TEXT","tokenCount":2048}]})"));
  CHECK(usage == Usage{.input_tokens = 100, .output_tokens = 60, .cached_input_tokens = 2048, .reasoning_tokens = 340});
  CHECK(usage.input_tokens + usage.cached_input_tokens + usage.output_tokens + usage.reasoning_tokens == 2548);
  // A model without thinking or cache: the fields are absent.
  CHECK(usage_of(ProviderKind::gemini,
                 gemini_body(R"({"promptTokenCount":900,"candidatesTokenCount":25,"totalTokenCount":925})")) ==
        Usage{.input_tokens = 900, .output_tokens = 25});
}

TEST_CASE("usage: Anthropic's cache reads and writes are beside input_tokens", "[usage]") {
  const Usage write = usage_of(ProviderKind::anthropic, anthropic_body(R"({"input_tokens":20,
    "cache_creation_input_tokens":3000,"cache_read_input_tokens":0,"output_tokens":80,
    "cache_creation":{"ephemeral_5m_input_tokens":3000,"ephemeral_1h_input_tokens":0},"service_tier":"standard"})"));
  CHECK(write == Usage{.input_tokens = 20, .output_tokens = 80, .cache_write_tokens = 3000});
  const Usage read = usage_of(ProviderKind::anthropic, anthropic_body(R"({"input_tokens":25,
    "cache_creation_input_tokens":0,"cache_read_input_tokens":3000,"output_tokens":90})"));
  CHECK(read == Usage{.input_tokens = 25, .output_tokens = 90, .cached_input_tokens = 3000});
  // Older API versions leave the cache fields out.
  CHECK(usage_of(ProviderKind::anthropic, anthropic_body(R"({"input_tokens":7,"output_tokens":3})")) ==
        Usage{.input_tokens = 7, .output_tokens = 3});
}

TEST_CASE("usage: the fake model reports each dialect's fields as the provider would", "[usage]") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  CAPTURE(llm::to_string(kind));
  test::Harness h(kind);
  FakeReply reply = FakeReply::text(k_output);
  reply.input_tokens = 30;
  reply.output_tokens = 20;
  reply.cached_input_tokens = 400;
  reply.cache_write_tokens = kind == ProviderKind::anthropic ? 600 : 0;
  reply.reasoning_tokens = 50;
  h.fake.push(reply);
  const auto result = h.call();
  REQUIRE(result.has_value());
  // Anthropic reports thinking inside output_tokens, not apart.
  const bool split_reasoning = kind != ProviderKind::anthropic;
  CHECK(result->usage == Usage{.input_tokens = 30,
                               .output_tokens = split_reasoning ? 20 : 70,
                               .cached_input_tokens = 400,
                               .cache_write_tokens = reply.cache_write_tokens,
                               .reasoning_tokens = split_reasoning ? 50 : 0});
}
