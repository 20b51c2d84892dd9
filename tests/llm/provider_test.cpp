// Each provider against the fake model server: the request it sends (path, auth, schema,
// roles) and how it reads the reply, errors included.
#include <catch2/catch.hpp>

#include <regex>

#include "common/json_access.h"
#include "tests/llm/harness.h"
#include "tests/llm/no_text_bodies.h"
#include "tests/test_util.h"

using namespace dispatchd;
using fakes::FakeReply;
using llm::ErrorClass;
using llm::ProviderKind;

namespace {

constexpr const char* k_reply =
    R"({"action":"send_message","recipient":"15551234567","content":"On its way","priority":"medium"})";

std::vector<std::string> roles(const rapidjson::Value& list) {
  std::vector<std::string> out;
  for (const auto& item : list.GetArray()) out.emplace_back(item["role"].GetString());
  return out;
}

// The action enum of a schema: every action of the catalog, the model cannot pick another.
std::vector<std::string> action_enum(const rapidjson::Value& schema) {
  std::vector<std::string> out;
  for (const auto& v : schema["properties"]["action"]["enum"].GetArray()) out.emplace_back(v.GetString());
  return out;
}

const std::vector<std::string> k_actions = {"send_message", "query_status", "escalate_to_human"};

}  // namespace

TEST_CASE("OpenAI-compatible provider: request shape and reply") {
  test::Harness h(ProviderKind::openai);
  h.fake.push(FakeReply::text(k_reply));
  const auto result = h.call();

  const auto request = h.fake.requests().at(0);
  CHECK(request.target == "/v1/chat/completions");
  CHECK(request.header("authorization") == std::string("Bearer ") + test::k_test_key);
  CHECK(request.header("content-type") == "application/json");
  const auto body = h.last_body();
  CHECK(std::string(body["model"].GetString()) == "test-model");
  CHECK(roles(body["messages"]) == std::vector<std::string>{"system", "user", "assistant", "user"});
  CHECK(std::string(body["messages"][0]["content"].GetString()) == "SYSTEM PROMPT");
  CHECK(std::string(body["messages"][2]["content"].GetString()) == "not json");
  const auto& format = body["response_format"];
  CHECK(std::string(format["type"].GetString()) == "json_schema");
  CHECK(format["json_schema"]["strict"].GetBool());
  CHECK(std::string(format["json_schema"]["name"].GetString()) == "dispatchd_action");
  CHECK(action_enum(format["json_schema"]["schema"]) == k_actions);

  REQUIRE(result.has_value());
  CHECK(result->output == k_reply);
  CHECK(result->finish_reason == "stop");
  CHECK(result->usage.input_tokens == 11);
  CHECK(result->usage.output_tokens == 7);
  CHECK(result->info.provider == "openai");
  CHECK(result->info.model == "test-model");
  CHECK(result->info.http_attempts == 1);
  CHECK(result->info.request_summary.starts_with("POST /v1/chat/completions model=test-model turns=3"));
  CHECK(result->info.request_summary.find(test::k_test_key) == std::string::npos);
}

TEST_CASE("Gemini provider: request shape and reply") {
  test::Harness h(ProviderKind::gemini);
  h.fake.push(FakeReply::text(k_reply));
  const auto result = h.call();

  const auto request = h.fake.requests().at(0);
  CHECK(request.target == "/v1beta/models/test-model:generateContent");
  CHECK(request.header("x-goog-api-key") == test::k_test_key);
  CHECK(request.header("authorization").empty());
  const auto body = h.last_body();
  CHECK(std::string(body["systemInstruction"]["parts"][0]["text"].GetString()) == "SYSTEM PROMPT");
  CHECK(roles(body["contents"]) == std::vector<std::string>{"user", "model", "user"});
  CHECK(std::string(body["contents"][1]["parts"][0]["text"].GetString()) == "not json");
  const auto& config = body["generationConfig"];
  CHECK(std::string(config["responseMimeType"].GetString()) == "application/json");
  CHECK(std::string(config["responseSchema"]["type"].GetString()) == "OBJECT");
  CHECK(action_enum(config["responseSchema"]) == k_actions);

  REQUIRE(result.has_value());
  CHECK(result->output == k_reply);
  CHECK(result->finish_reason == "STOP");
  CHECK(result->usage.input_tokens == 11);
  CHECK(result->usage.output_tokens == 7);
  CHECK(result->info.provider == "gemini");
}

TEST_CASE("Anthropic provider: request shape and reply") {
  test::Harness h(ProviderKind::anthropic);
  h.fake.push(FakeReply::text(k_reply));
  const auto result = h.call();

  const auto request = h.fake.requests().at(0);
  CHECK(request.target == "/v1/messages");
  CHECK(request.header("x-api-key") == test::k_test_key);
  CHECK(request.header("anthropic-version") == "2023-06-01");
  CHECK(request.header("authorization").empty());
  const auto body = h.last_body();
  REQUIRE(body["system"].Size() == 1);  // one block, marked for the prompt cache
  CHECK(std::string(body["system"][0]["text"].GetString()) == "SYSTEM PROMPT");
  CHECK(std::string(body["system"][0]["cache_control"]["type"].GetString()) == "ephemeral");
  CHECK(roles(body["messages"]) == std::vector<std::string>{"user", "assistant", "user"});
  CHECK(body["max_tokens"].GetInt() == 1024);
  REQUIRE(body["tools"].Size() == 1);
  const auto& tool = body["tools"][0];
  CHECK(std::string(tool["name"].GetString()) == "dispatchd_action");
  CHECK(std::string(tool["input_schema"]["type"].GetString()) == "object");
  CHECK_FALSE(tool["input_schema"]["additionalProperties"].GetBool());
  CHECK(action_enum(tool["input_schema"]) == k_actions);
  CHECK(std::string(body["tool_choice"]["type"].GetString()) == "tool");
  CHECK(std::string(body["tool_choice"]["name"].GetString()) == "dispatchd_action");

  REQUIRE(result.has_value());
  CHECK(test::parse_json(result->output) == test::parse_json(k_reply));  // the tool input, as JSON text
  CHECK(result->finish_reason == "tool_use");
  CHECK(result->usage.input_tokens == 11);
  CHECK(result->usage.output_tokens == 7);
  CHECK(result->info.provider == "anthropic");
}

TEST_CASE("Anthropic provider: a text reply (tool not used) is passed on for the validator") {
  test::Harness h(ProviderKind::anthropic);
  h.fake.push(FakeReply::text("```json\n{\"action\":\"x\"}\n```"));
  const auto result = h.call();
  REQUIRE(result.has_value());
  CHECK(result->output == "```json\n{\"action\":\"x\"}\n```");
  CHECK(result->finish_reason == "end_turn");
}

TEST_CASE("Every provider classes a length finish reason as truncated, with the partial output") {
  const auto [kind, finish] = GENERATE(table<ProviderKind, std::string>({{ProviderKind::openai, "length"},
                                                                         {ProviderKind::gemini, "MAX_TOKENS"},
                                                                         {ProviderKind::anthropic, "max_tokens"}}));
  CAPTURE(llm::to_string(kind));
  test::Harness h(kind);
  h.fake.push(FakeReply::truncated_text(R"({"action":"send_mes)"));
  const auto result = h.call_with_retries();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().error_class == ErrorClass::truncated);
  CHECK(result.error().finish_reason == finish);
  CHECK(result.error().output == R"({"action":"send_mes)");
  CHECK(result.error().usage.output_tokens == 7);
  CHECK(result.error().info.http_attempts == 1);  // never retried
  CHECK(h.fake.request_count() == 1);
}

TEST_CASE("Every provider: 401 is a client error, not retried, and the key never shows") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  CAPTURE(llm::to_string(kind));
  test::Harness h(kind);
  h.fake.push(FakeReply::raw(
      401, std::string(R"({"error":{"message":"Incorrect API key provided: )") + test::k_test_key + "\"}}"));
  const auto result = h.call_with_retries();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().error_class == ErrorClass::client);
  CHECK(result.error().http_status == 401);
  CHECK(result.error().message.find("Incorrect API key provided") != std::string::npos);
  CHECK(result.error().message.find(test::k_test_key) == std::string::npos);
  CHECK(result.error().info.http_attempts == 1);
  CHECK(h.fake.request_count() == 1);
}

TEST_CASE("Every provider: the dialect's own error body gives the message") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  test::Harness h(kind);
  h.fake.push(FakeReply::error(400));
  const auto result = h.call();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().error_class == ErrorClass::client);
  CHECK(result.error().message == R"(HTTP 400: "fake error 400")");
}

TEST_CASE("Every provider: a 200 body that is not the documented JSON is bad_response") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  const std::string body =
      GENERATE(std::string("<html>oops</html>"), std::string(R"({"unexpected":true})"), std::string("{\"a\":"));
  CAPTURE(llm::to_string(kind), body);
  test::Harness h(kind);
  h.fake.push(FakeReply::raw(200, body));
  const auto result = h.call_with_retries();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().error_class == ErrorClass::bad_response);
  CHECK(h.fake.request_count() == 1);
}

namespace {

// One documented 2xx body and what the provider makes of it.
struct Shape {
  const char* name;
  ProviderKind kind;
  const char* body;
  std::optional<ErrorClass> error;  // nullopt: a Completion for the validator
  std::string finish_reason;
  std::int64_t input_tokens;
  std::int64_t output_tokens;
  std::string output;              // the Completion's text, or the error's (the provider's words)
  std::vector<std::string> named;  // what the error message names
};

// One row per shape, kept as the table it is.
// clang-format off
const std::vector<Shape> k_shapes = {
    {"OpenAI refusal", ProviderKind::openai, test::bodies::k_openai_refusal, ErrorClass::refused, "stop", 812, 11,
     "I'm sorry, I can't help with that request.", {"refused", "I'm sorry, I can't help with that request."}},
    {"OpenAI tool calls only", ProviderKind::openai, test::bodies::k_openai_tool_calls, ErrorClass::no_text,
     "tool_calls", 640, 18, "", {"lookup_order", "ORD-1001"}},
    {"Azure content filter", ProviderKind::openai, test::bodies::k_azure_content_filter, ErrorClass::blocked,
     "content_filter", 530, 24, "", {"content_filter", "violence (medium)"}},
    {"Azure content filter, no message", ProviderKind::openai, test::bodies::k_azure_content_filter_no_message,
     ErrorClass::blocked, "content_filter", 15, 19, "", {"content_filter", "self_harm (high)"}},
    {"Mistral content chunks", ProviderKind::openai, test::bodies::k_mistral_chunks, std::nullopt,
     "stop", 700, 90, k_reply, {}},
    {"Gemini reply blocked", ProviderKind::gemini, test::bodies::k_gemini_safety, ErrorClass::blocked,
     "SAFETY", 845, 9, "", {"SAFETY", "HARM_CATEGORY_HARASSMENT (MEDIUM)"}},
    {"Gemini prompt blocked", ProviderKind::gemini, test::bodies::k_gemini_prompt_blocked, ErrorClass::blocked,
     "SAFETY", 731, 0, "", {"prompt", "SAFETY", "HARM_CATEGORY_HATE_SPEECH (HIGH)"}},
    {"Gemini prompt prohibited", ProviderKind::gemini, test::bodies::k_gemini_prohibited, ErrorClass::blocked,
     "PROHIBITED_CONTENT", 12559, 0, "", {"prompt", "PROHIBITED_CONTENT"}},
    {"Gemini other, no text", ProviderKind::gemini, test::bodies::k_gemini_other, ErrorClass::no_text,
     "OTHER", 845, 0, "", {"OTHER", "The model stopped for an unspecified reason."}},
    {"Anthropic refusal", ProviderKind::anthropic, test::bodies::k_anthropic_refusal, ErrorClass::refused,
     "refusal", 920, 4, "This request was declined because it could enable cyber harm.",
     {"refusal", "cyber", "This request was declined because it could enable cyber harm."}},
    {"Anthropic refusal without details", ProviderKind::anthropic, test::bodies::k_anthropic_bare_refusal,
     ErrorClass::refused, "refusal", 920, 0, "", {"refusal"}},
    {"Anthropic text without the tool", ProviderKind::anthropic, test::bodies::k_anthropic_text_only, std::nullopt,
     "end_turn", 900, 13, "Sure, I can help. What is your order number?", {}},
    {"Anthropic empty turn", ProviderKind::anthropic, test::bodies::k_anthropic_empty, ErrorClass::no_text,
     "end_turn", 900, 3, "", {"end_turn"}},
};
// clang-format on

}  // namespace

TEST_CASE("Every provider: a documented answer without text says why, with its finish reason and tokens") {
  const Shape shape = GENERATE(from_range(k_shapes));
  CAPTURE(shape.name);
  test::Harness h(shape.kind);
  h.fake.push(FakeReply::raw(200, shape.body));
  const auto result = h.call_with_retries();
  CHECK(h.fake.request_count() == 1);  // never retried
  if (!shape.error) {
    REQUIRE(result.has_value());
    CHECK(result->output == shape.output);
    CHECK(result->finish_reason == shape.finish_reason);
    CHECK(result->usage.input_tokens == shape.input_tokens);
    CHECK(result->usage.output_tokens == shape.output_tokens);
    return;
  }
  REQUIRE_FALSE(result.has_value());
  const llm::ProviderError& error = result.error();
  CHECK(error.error_class == *shape.error);
  CHECK_FALSE(llm::is_retryable(error.error_class));
  CHECK(error.http_status == 200);
  CHECK(error.finish_reason == shape.finish_reason);
  CHECK(error.usage.input_tokens == shape.input_tokens);
  CHECK(error.usage.output_tokens == shape.output_tokens);
  CHECK(error.output == shape.output);
  CHECK(error.info.provider == llm::to_string(shape.kind));
  CHECK(error.info.http_attempts == 1);
  for (const auto& name : shape.named) CHECK_THAT(error.message, Catch::Contains(name));
}

TEST_CASE("Connection refused is a transport error") {
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  llm::ProviderConfig config;
  {
    fakes::FakeModelServer gone;  // a port that was just closed
    config.base_url = gone.base_url(fakes::Dialect::openai);
  }
  config.model = "m";
  auto provider = llm::make_provider(config, transport);
  std::optional<llm::CompletionResult> result;
  provider->complete(test::reask_request(), [&](llm::CompletionResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); });
  REQUIRE_FALSE(result->has_value());
  CHECK(result->error().error_class == ErrorClass::transport);
  CHECK(result->error().http_status == 0);
  CHECK(result->error().message.starts_with("connect_failed"));
}

TEST_CASE("A provider destroyed while its call is pending still completes the call") {
  test::Harness h(ProviderKind::gemini);
  h.fake.push(FakeReply::text(k_reply).after(std::chrono::milliseconds(50)));
  std::optional<llm::CompletionResult> result;
  h.provider->complete(test::reask_request(), [&](llm::CompletionResult r) { result = std::move(r); });
  h.provider.reset();
  test::run_until(h.io, [&] { return result.has_value(); });
  REQUIRE(result->has_value());
  CHECK((*result)->output == k_reply);
}

TEST_CASE("Providers run over any Transport: a scripted FakeTransport, no sockets") {
  boost::asio::io_context io;
  fakes::FakeTransport transport(io);
  transport.push_response(
      200,
      R"({"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}})");
  transport.push_response(429, R"({"error":{"message":"slow down"}})", {{"Retry-After", "7"}});
  transport.push_error(net::TransportErrorKind::timed_out, "timeout after 60000 ms");
  auto provider = llm::make_provider(
      {.kind = ProviderKind::openai, .base_url = "https://api.example.test/v1/", .model = "m"}, transport);
  std::vector<llm::CompletionResult> results;
  for (int i = 0; i < 3; ++i)
    provider->complete(test::reask_request(), [&](llm::CompletionResult r) { results.push_back(std::move(r)); });
  test::run_until(io, [&] { return results.size() == 3; });

  CHECK(transport.requests().at(0).url == "https://api.example.test/v1/chat/completions");
  REQUIRE(results[0].has_value());
  CHECK(results[0]->output == "hi");
  CHECK(results[0]->usage.input_tokens == 3);
  REQUIRE_FALSE(results[1].has_value());
  CHECK(results[1].error().error_class == ErrorClass::rate_limited);
  CHECK(results[1].error().retry_after == std::chrono::milliseconds(7000));
  CHECK(results[1].error().message == R"(HTTP 429: "slow down")");
  REQUIRE_FALSE(results[2].has_value());
  CHECK(results[2].error().error_class == ErrorClass::transport);
  CHECK(results[2].error().message == "timed_out: timeout after 60000 ms");
}

namespace {

// A body with every conversation turn's text replaced by "TURN": what is left is what the
// provider sees before the conversation (the tools, the schema, the system text, settings).
std::string without_turns(rapidjson::Document body, ProviderKind kind) {
  const char* list = kind == ProviderKind::gemini ? "contents" : "messages";
  for (auto& turn : body[list].GetArray()) {
    if (turn.HasMember("role") && std::string(turn["role"].GetString()) == "system") continue;
    if (turn.HasMember("content")) turn["content"].SetString("TURN");
    if (turn.HasMember("parts"))
      for (auto& part : turn["parts"].GetArray()) part["text"].SetString("TURN");
  }
  return json::to_string(body);
}

// The body's text before its first turn and after its last.
std::pair<std::string, std::string> around_turns(const std::string& body) {
  const auto first = body.find("\"TURN\"");
  const auto last = body.rfind("\"TURN\"");
  REQUIRE(first != std::string::npos);
  return {body.substr(0, first), body.substr(last + 6)};
}

}  // namespace

TEST_CASE("Every provider: requests for one catalog share everything but the conversation, byte for byte") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  CAPTURE(llm::to_string(kind));
  test::Harness h(kind);
  // Two customers at two times: nothing of either may reach the part before the conversation.
  llm::CompletionRequest first = test::reask_request();
  first.turns = {{llm::Role::user, "New whatsapp message from 15551234567:\nwhere is my order?"}};
  llm::CompletionRequest second = test::reask_request();
  second.turns = {{llm::Role::user,
                   "Conversation so far:\n[customer] hi\n\nNew gmail message from ana@example.com:\n"
                   "it has not arrived"},
                  {llm::Role::assistant, "not json"},
                  {llm::Role::user, "Your previous reply was rejected"}};
  h.fake.push(FakeReply::text(k_reply));
  h.fake.push(FakeReply::text(k_reply));
  REQUIRE(h.call(*h.provider, first));
  REQUIRE(h.call(*h.provider, second));
  const auto requests = h.fake.requests();
  REQUIRE(requests.size() == 2);
  const auto a = test::parse_json(requests[0].body);
  const auto b = test::parse_json(requests[1].body);
  rapidjson::Document a_copy, b_copy;
  a_copy.CopyFrom(a, a_copy.GetAllocator());
  b_copy.CopyFrom(b, b_copy.GetAllocator());
  // The conversation differs (one turn against three): what surrounds it may not.
  const auto [a_before, a_after] = around_turns(without_turns(std::move(a_copy), kind));
  const auto [b_before, b_after] = around_turns(without_turns(std::move(b_copy), kind));
  CHECK(a_before == b_before);
  CHECK(a_after == b_after);
  CHECK((a_before + a_after).find("SYSTEM PROMPT") != std::string::npos);
}

namespace {

// The prompt_cache_key of a request body; "" when it has none.
std::string cache_key_of(const std::string& body) {
  const auto doc = test::parse_json(body);
  return doc.HasMember("prompt_cache_key") ? doc["prompt_cache_key"].GetString() : "";
}

// A request for `catalog` under `system`, from `sender`, saying `text`.
llm::CompletionRequest customer_request(const std::string& system, const catalog::Catalog& catalog,
                                        const std::string& sender, const std::string& text) {
  return {
      system, {{llm::Role::user, "New whatsapp message from " + sender + ":\n" + text}}, llm::output_schema(catalog)};
}

}  // namespace

TEST_CASE("OpenAI provider: prompt_cache_key, one per system text and schema, only when configured") {
  SECTION("off: no such field") {
    test::Harness h(ProviderKind::openai);
    h.fake.push(FakeReply::text(k_reply));
    REQUIRE(h.call());
    CHECK_FALSE(h.last_body().HasMember("prompt_cache_key"));
  }
  SECTION("on: the same key for one catalog whoever writes, another for another prompt or catalog") {
    test::Harness h(ProviderKind::openai, {}, [](llm::ProviderConfig& c) { c.prompt_cache_key = true; });
    h.fake.set_fallback(FakeReply::text(k_reply));
    const std::string system = "SYSTEM PROMPT";
    // Two customers, then a re-ask of three turns: the fake accepts the field.
    REQUIRE(h.call(*h.provider, customer_request(system, test::support_en(), "15551234567", "where is order 4411?")));
    REQUIRE(h.call(*h.provider, customer_request(system, test::support_en(), "ana@example.com", "it never came")));
    REQUIRE(h.call(*h.provider, test::reask_request()));
    // Another provider instance (another dispatchd) makes the same key.
    REQUIRE(h.call(*h.retrying, customer_request(system, test::support_en(), "34600111222", "hola")));
    REQUIRE(h.call(*h.provider, customer_request(system, test::support_es(), "15551234567", "where is order 4411?")));
    REQUIRE(h.call(*h.provider, customer_request("OTHER PROMPT", test::support_en(), "15551234567", "hi")));
    const auto requests = h.fake.requests();
    REQUIRE(requests.size() == 6);
    std::vector<std::string> keys;
    for (const auto& request : requests) keys.push_back(cache_key_of(request.body));
    // A hash of the prefix and nothing else: no sender, no text, no time can be in it.
    for (const auto& key : keys) {
      CAPTURE(key);
      CHECK(std::regex_match(key, std::regex("dispatchd-[0-9a-f]{16}")));
    }
    CHECK(keys[1] == keys[0]);
    CHECK(keys[2] == keys[0]);
    CHECK(keys[3] == keys[0]);
    CHECK(keys[4] != keys[0]);  // another catalog
    CHECK(keys[5] != keys[0]);  // another system text
    CHECK(keys[5] != keys[4]);
  }
}
