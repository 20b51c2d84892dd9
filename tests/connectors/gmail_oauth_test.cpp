#include <catch2/catch.hpp>

#include "connectors/gmail/oauth.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"

using namespace dispatchd;
using namespace dispatchd::gmail;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;
using TokenResult = std::expected<std::string, OAuthError>;

const OAuthCredentials k_oauth_credentials{"http://127.0.0.1:9/token", "1234-abc.apps.googleusercontent.com",
                                           "GOCSPX-s3cr3t+/=&", "1//0g-refresh_TOKEN"};

std::string token_body(std::string_view token, int expires_in) {
  return R"({"access_token":")" + std::string(token) + R"(","expires_in":)" + std::to_string(expires_in) +
         R"(,"scope":"https://www.googleapis.com/auth/gmail.modify","token_type":"Bearer"})";
}

net::HttpResult oauth_response(int status, std::string body) { return net::HttpResponse{status, {}, std::move(body)}; }

// Nothing in `text` that could leak a secret.
void check_no_secret(const std::string& text) {
  INFO(text);
  CHECK(text.find(k_oauth_credentials.client_secret) == std::string::npos);
  CHECK(text.find(k_oauth_credentials.refresh_token) == std::string::npos);
  CHECK(text.find("ya29") == std::string::npos);
}

struct OAuthFixture {
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  Clock::time_point now{Clock::duration{1'000'000s}};
  TokenSource tokens{transport, k_oauth_credentials, [this] { return now; },
                     [this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }};

  // get(), checking that the answer is not given from inside it, then run until answered.
  TokenResult get() {
    std::optional<TokenResult> result;
    tokens.get([&](TokenResult r) { result = std::move(r); });
    CHECK_FALSE(result.has_value());
    test::run_until(io, [&] { return result.has_value(); });
    return std::move(*result);
  }
};

}  // namespace

TEST_CASE("oauth: the refresh-token grant request", "[gmail]") {
  const auto request = refresh_request(k_oauth_credentials);
  CHECK(request.method == "POST");
  CHECK(request.url == "http://127.0.0.1:9/token");
  CHECK(request.headers.get("Content-Type") == "application/x-www-form-urlencoded");
  CHECK(request.body ==
        "client_id=1234-abc.apps.googleusercontent.com&client_secret=GOCSPX-s3cr3t%2B%2F%3D%26"
        "&refresh_token=1%2F%2F0g-refresh_TOKEN&grant_type=refresh_token");
  CHECK(request.connect_timeout == 10s);
  CHECK(request.timeout == 30s);
}

TEST_CASE("oauth: reading the token endpoint's answers", "[gmail]") {
  const auto read = [](net::HttpResult result) { return read_refresh_response(result, k_oauth_credentials); };
  SECTION("a token") {
    const auto token = read(oauth_response(200, token_body("ya29.a0Af-xyz", 3599)));
    REQUIRE(token.has_value());
    CHECK(token->token == "ya29.a0Af-xyz");
    CHECK(token->expires_in == 3599s);
  }
  struct Row {
    const char* name;
    net::HttpResult result;
    OAuthErrorKind kind;
  };
  const Row rows[] = {
      {"invalid_grant",
       oauth_response(400, R"({"error":"invalid_grant","error_description":"Token has been expired or revoked."})"),
       OAuthErrorKind::invalid_grant},
      {"invalid_client",
       oauth_response(401, R"({"error":"invalid_client","error_description":"The OAuth client was not found."})"),
       OAuthErrorKind::invalid_client},
      {"unauthorized_client",
       oauth_response(400, R"({"error":"unauthorized_client","error_description":"Unauthorized"})"),
       OAuthErrorKind::invalid_client},
      {"500", oauth_response(500, R"({"error":"internal_failure"})"), OAuthErrorKind::unavailable},
      {"503 html", oauth_response(503, "<html>unavailable</html>"), OAuthErrorKind::unavailable},
      {"429", oauth_response(429, R"({"error":"rate_limit_exceeded"})"), OAuthErrorKind::unavailable},
      {"404 from a wrong token_url", oauth_response(404, "Not Found"), OAuthErrorKind::unavailable},
      {"connect failed", std::unexpected(net::TransportError{net::TransportErrorKind::connect_failed, "refused"}),
       OAuthErrorKind::unavailable},
      {"timed out", std::unexpected(net::TransportError{net::TransportErrorKind::timed_out, "30 s"}),
       OAuthErrorKind::unavailable},
      {"2xx garbage", oauth_response(200, "<html>"), OAuthErrorKind::malformed},
      {"no access_token", oauth_response(200, R"({"expires_in":3599})"), OAuthErrorKind::malformed},
      {"no expires_in", oauth_response(200, R"({"access_token":"ya29.x","token_type":"Bearer"})"),
       OAuthErrorKind::malformed},
      {"expires_in 0", oauth_response(200, token_body("ya29.x", 0)), OAuthErrorKind::malformed},
      {"a token that would break the header", oauth_response(200, token_body("ya29.x\\r\\nX-Evil: 1", 3599)),
       OAuthErrorKind::malformed},
      {"not a bearer token", oauth_response(200, R"({"access_token":"ya29.x","expires_in":3599,"token_type":"MAC"})"),
       OAuthErrorKind::malformed},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto token = read(row.result);
    REQUIRE_FALSE(token.has_value());
    CHECK(token.error().kind == row.kind);
    CHECK(permanent(token.error().kind) ==
          (row.kind == OAuthErrorKind::invalid_grant || row.kind == OAuthErrorKind::invalid_client));
    check_no_secret(token.error().message);
  }
  SECTION("Google's description is in the message") {
    CHECK(read(rows[0].result).error().message ==
          "oauth token refresh: \"invalid_grant\" (http 400): \"Token has been expired or revoked.\"");
  }
  SECTION("a secret echoed back by the server is redacted") {
    const auto token = read(oauth_response(
        400,
        R"({"error":"invalid_request","error_description":"bad refresh_token 1//0g-refresh_TOKEN for GOCSPX-s3cr3t+/=&"})"));
    REQUIRE_FALSE(token.has_value());
    check_no_secret(token.error().message);
    CHECK(token.error().message.find("[redacted]") != std::string::npos);
  }
}

TEST_CASE("oauth: a token is used until shortly before it expires", "[gmail]") {
  const Clock::time_point t0{Clock::duration{100s}};
  CHECK(usable_until(t0, 3599s) == t0 + 3539s);
  CHECK(usable_until(t0, 600s) == t0 + 540s);
  CHECK(usable_until(t0, 300s) == t0 + 270s);
  CHECK(usable_until(t0, 30s) == t0 + 27s);
  CHECK(usable_until(t0, 1s) == t0 + 1s);
}

TEST_CASE("oauth: the token source caches, refreshes and coalesces", "[gmail]") {
  OAuthFixture f;
  f.transport.push_response(200, token_body("ya29.first", 3600));
  CHECK(f.get() == "ya29.first");
  CHECK(f.transport.requests().size() == 1);

  SECTION("cached while valid, answered through post") {
    f.now += 3539s;
    CHECK(f.get() == "ya29.first");
    CHECK(f.transport.requests().size() == 1);
  }
  SECTION("refreshed once the margin is reached (expiry mid-run)") {
    f.now += 3540s;
    f.transport.push_response(200, token_body("ya29.second", 3600));
    CHECK(f.get() == "ya29.second");
    CHECK(f.transport.requests().size() == 2);
  }
  SECTION("invalidate() forces a refresh; invalidate(other token) does not") {
    f.tokens.invalidate("ya29.not-the-cached-one");
    CHECK(f.get() == "ya29.first");
    CHECK(f.transport.requests().size() == 1);
    f.tokens.invalidate("ya29.first");
    f.transport.push_response(200, token_body("ya29.second", 3600));
    CHECK(f.get() == "ya29.second");
    f.tokens.invalidate();
    f.transport.push_response(200, token_body("ya29.third", 3600));
    CHECK(f.get() == "ya29.third");
    CHECK(f.transport.requests().size() == 3);
  }
  SECTION("concurrent get()s share one refresh") {
    f.tokens.invalidate();
    f.transport.push_response(200, token_body("ya29.shared", 3600));
    std::vector<TokenResult> results;
    for (int i = 0; i < 3; ++i) f.tokens.get([&](TokenResult r) { results.push_back(std::move(r)); });
    CHECK(results.empty());
    test::run_until(f.io, [&] { return results.size() == 3; });
    for (const auto& r : results) CHECK(r == "ya29.shared");
    CHECK(f.transport.requests().size() == 2);
  }
  SECTION("a failed refresh answers every waiter, and the next get() tries again") {
    f.tokens.invalidate();
    f.transport.push_error(net::TransportErrorKind::connect_failed, "connection refused");
    std::vector<TokenResult> results;
    for (int i = 0; i < 2; ++i) f.tokens.get([&](TokenResult r) { results.push_back(std::move(r)); });
    test::run_until(f.io, [&] { return results.size() == 2; });
    for (const auto& r : results) CHECK(r.error().kind == OAuthErrorKind::unavailable);
    CHECK_FALSE(f.tokens.last_permanent_error().has_value());
    f.transport.push_response(200, token_body("ya29.back", 3600));
    CHECK(f.get() == "ya29.back");
    CHECK(f.transport.requests().size() == 3);
  }
}

TEST_CASE("oauth: invalid_grant is permanent until reset()", "[gmail]") {
  OAuthFixture f;
  f.transport.push_response(400,
                            R"({"error":"invalid_grant","error_description":"Token has been expired or revoked."})");
  const auto first = f.get();
  REQUIRE_FALSE(first.has_value());
  CHECK(first.error().kind == OAuthErrorKind::invalid_grant);
  REQUIRE(f.tokens.last_permanent_error().has_value());
  CHECK(f.tokens.last_permanent_error()->kind == OAuthErrorKind::invalid_grant);
  check_no_secret(first.error().message);

  // No request is made while paused, however often it is asked.
  const auto again = f.get();
  CHECK(again.error().kind == OAuthErrorKind::invalid_grant);
  CHECK(f.transport.requests().size() == 1);

  OAuthCredentials renewed = k_oauth_credentials;
  renewed.refresh_token = "1//0g-new-refresh";
  f.tokens.reset(renewed);
  CHECK_FALSE(f.tokens.last_permanent_error().has_value());
  f.transport.push_response(200, token_body("ya29.renewed", 3600));
  CHECK(f.get() == "ya29.renewed");
  REQUIRE(f.transport.requests().size() == 2);
  CHECK(f.transport.requests()[1].body.find("refresh_token=1%2F%2F0g-new-refresh") != std::string::npos);
}

TEST_CASE("oauth: reset() during a refresh abandons it for one with the new credentials", "[gmail]") {
  OAuthFixture f;
  f.transport.push_response(400, R"({"error":"invalid_grant"})");  // the old credentials' answer
  f.transport.push_response(200, token_body("ya29.new", 3600));
  std::optional<TokenResult> result;
  f.tokens.get([&](TokenResult r) { result = std::move(r); });
  OAuthCredentials renewed = k_oauth_credentials;
  renewed.refresh_token = "1//0g-new-refresh";
  f.tokens.reset(renewed);
  test::run_until(f.io, [&] { return result.has_value(); });
  f.io.poll();  // let the abandoned answer arrive too: it must change nothing
  REQUIRE(result->has_value());
  CHECK(**result == "ya29.new");
  CHECK_FALSE(f.tokens.last_permanent_error().has_value());
  CHECK(f.transport.requests().size() == 2);
  CHECK(f.get() == "ya29.new");
}

TEST_CASE("oauth: destroying the source with a refresh in flight drops the waiter", "[gmail]") {
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  transport.push_response(200, token_body("ya29.late", 3600));
  bool called = false;
  {
    TokenSource tokens{transport, k_oauth_credentials, [] { return Clock::now(); },
                       [&](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }};
    tokens.get([&](TokenResult) { called = true; });
  }
  io.poll();
  CHECK_FALSE(called);
}
