// Transport retries: what is retried, how long the waits are, and the budget.
#include <catch2/catch.hpp>

#include "tests/llm/harness.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using fakes::FakeReply;
using llm::ErrorClass;
using llm::ProviderKind;
using std::chrono::milliseconds;

namespace {

constexpr const char* k_retry_reply = R"({"action":"escalate_to_human"})";

}  // namespace

TEST_CASE("backoff_delay: full jitter under an exponential ceiling, or the Retry-After") {
  llm::RetryPolicy policy;
  policy.base_delay = 500ms;
  policy.max_delay = 4000ms;
  struct Row {
    int failures;
    double random;
    std::optional<milliseconds> retry_after;
    milliseconds expected;
  };
  const Row rows[] = {
      {1, 0.0, {}, 0ms},        {1, 0.5, {}, 250ms},        {1, 0.999, {}, 499ms}, {2, 0.5, {}, 500ms},
      {3, 0.5, {}, 1000ms},     {4, 1.0, {}, 4000ms},       {5, 1.0, {}, 4000ms},  {60, 0.5, {}, 2000ms},
      {1, 0.5, 3000ms, 3000ms}, {3, 0.0, 10000ms, 10000ms},
  };
  for (const Row& row : rows) {
    CAPTURE(row.failures, row.random);
    CHECK(llm::backoff_delay(policy, row.failures, row.random, row.retry_after) == row.expected);
  }
}

TEST_CASE("429 with Retry-After then success is one logical call with two HTTP requests") {
  const auto kind = GENERATE(ProviderKind::openai, ProviderKind::gemini, ProviderKind::anthropic);
  CAPTURE(llm::to_string(kind));
  test::Harness h(kind);
  h.fake.push(FakeReply::error(429).with_header("Retry-After", "1"));
  h.fake.push(FakeReply::text(k_retry_reply));
  const auto result = h.call_with_retries();
  REQUIRE(result.has_value());
  CHECK(test::parse_json(result->output) == test::parse_json(k_retry_reply));
  CHECK(result->info.http_attempts == 2);
  CHECK(h.fake.request_count() == 2);
  CHECK(h.waits == std::vector<milliseconds>{1000ms});  // the server's delay, not the backoff's
  const auto requests = h.fake.requests();
  CHECK(requests[0].body == requests[1].body);  // the same request again
}

TEST_CASE("Retry-After is waited out on a real timer") {
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  fakes::FakeModelServer fake;
  fake.push(FakeReply::error(429).with_header("Retry-After", "1"));
  fake.push(FakeReply::text(k_retry_reply));
  llm::ProviderConfig config{
      .kind = ProviderKind::openai, .base_url = fake.base_url(fakes::Dialect::openai), .model = "m"};
  llm::RetryingProvider provider(llm::make_provider(config, transport), {}, io);
  std::optional<llm::CompletionResult> result;
  const auto start = std::chrono::steady_clock::now();
  provider.complete(test::reask_request(), [&](llm::CompletionResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); });
  REQUIRE(result->has_value());
  CHECK(std::chrono::steady_clock::now() - start >= 1000ms);
  CHECK((*result)->info.elapsed >= 1000ms);
  CHECK((*result)->info.http_attempts == 2);
}

TEST_CASE("5xx is retried with growing jittered backoff until it succeeds") {
  test::Harness h(ProviderKind::openai);
  h.fake.push(FakeReply::error(500));
  h.fake.push(FakeReply::error(503));
  h.fake.push(FakeReply::text(k_retry_reply));
  const auto result = h.call_with_retries();
  REQUIRE(result.has_value());
  CHECK(result->info.http_attempts == 3);
  CHECK(h.waits == std::vector<milliseconds>{50ms, 100ms});  // random 0.5 of 100 ms, 200 ms
}

TEST_CASE("The retry budget ends the call with the last error") {
  SECTION("max attempts") {
    test::Harness h(ProviderKind::anthropic, {.max_attempts = 3});
    h.fake.set_fallback(FakeReply::error(529));
    const auto result = h.call_with_retries();
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().error_class == ErrorClass::server);
    CHECK(result.error().http_status == 529);
    CHECK(result.error().info.http_attempts == 3);
    CHECK(h.fake.request_count() == 3);
  }
  SECTION("a Retry-After past the deadline is not waited for") {
    test::Harness h(ProviderKind::gemini, {.deadline = 5000ms});
    h.fake.push(FakeReply::error(429).with_header("Retry-After", "30"));
    const auto result = h.call_with_retries();
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().error_class == ErrorClass::rate_limited);
    CHECK(result.error().retry_after == milliseconds(30'000));  // the caller can park the message that long
    CHECK(h.fake.request_count() == 1);
    CHECK(h.waits.empty());
  }
  SECTION("a Retry-After over max_retry_after is not waited for") {
    test::Harness h(ProviderKind::openai, {.max_retry_after = 10'000ms});
    h.fake.push(FakeReply::error(503).with_header("Retry-After", "120"));
    const auto result = h.call_with_retries();
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().error_class == ErrorClass::server);
    CHECK(h.fake.request_count() == 1);
  }
}

TEST_CASE("Connection refused is retried as a transport error") {
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  llm::ProviderConfig config{.kind = ProviderKind::openai, .model = "m"};
  {
    fakes::FakeModelServer gone;
    config.base_url = gone.base_url(fakes::Dialect::openai);
  }
  int waits = 0;
  llm::RetryDeps deps{{}, {}, [&](milliseconds, std::move_only_function<void()> then) {
                        ++waits;
                        boost::asio::post(io, std::move(then));
                      }};
  llm::RetryingProvider provider(llm::make_provider(config, transport), {.max_attempts = 2}, io, std::move(deps));
  std::optional<llm::CompletionResult> result;
  provider.complete(test::reask_request(), [&](llm::CompletionResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); });
  REQUIRE_FALSE(result->has_value());
  CHECK(result->error().error_class == ErrorClass::transport);
  CHECK(result->error().info.http_attempts == 2);
  CHECK(waits == 1);
}
