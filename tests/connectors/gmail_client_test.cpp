#include <catch2/catch.hpp>

#include "connectors/gmail/api.h"
#include "connectors/gmail/client.h"
#include "tests/fakes/fake_transport.h"
#include "tests/io_run.h"

using namespace dispatchd;
using namespace dispatchd::gmail;
using namespace std::chrono_literals;

namespace {

using CallResult = std::expected<net::HttpResult, OAuthError>;

const OAuthCredentials k_client_credentials{"http://127.0.0.1:9/token", "client-id", "GOCSPX-client-secret",
                                            "1//refresh-secret"};
constexpr std::string_view k_client_base = "http://127.0.0.1:9";

std::string token_body(std::string_view token) {
  return R"({"access_token":")" + std::string(token) + R"(","expires_in":3599,"token_type":"Bearer"})";
}

const std::string k_invalid_credentials =
    R"({"error":{"code":401,"message":"Invalid Credentials","errors":[{"message":"Invalid Credentials",)"
    R"("domain":"global","reason":"authError","location":"Authorization","locationType":"header"}],)"
    R"("status":"UNAUTHENTICATED"}})";

struct ClientFixture {
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  TokenSource tokens{transport, k_client_credentials, [] { return std::chrono::steady_clock::time_point{}; },
                     [this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }};
  Client client{transport, tokens};

  CallResult profile() {
    std::optional<CallResult> result;
    client.call([](std::string_view token) { return profile_request(k_client_base, token); },
                [&](CallResult r) { result = std::move(r); });
    CHECK_FALSE(result.has_value());
    test::run_until(io, [&] { return result.has_value(); });
    return std::move(*result);
  }

  std::string authorization(std::size_t i) const {
    return std::string(transport.requests().at(i).headers.get("Authorization").value_or(""));
  }
};

}  // namespace

TEST_CASE("client: a token, then the request with it", "[gmail]") {
  ClientFixture f;
  f.transport.push_response(200, token_body("ya29.one"));
  f.transport.push_response(200, R"({"emailAddress":"support@example.com","historyId":"77"})");
  const auto result = f.profile();
  REQUIRE(result.has_value());
  const auto profile = read_profile(*result);
  REQUIRE(profile.has_value());
  CHECK(profile->history_id == "77");
  REQUIRE(f.transport.requests().size() == 2);
  CHECK(f.transport.requests()[0].url == "http://127.0.0.1:9/token");
  CHECK(f.authorization(1) == "Bearer ya29.one");

  SECTION("the next call reuses the cached token") {
    f.transport.push_response(200, R"({"emailAddress":"support@example.com","historyId":"78"})");
    REQUIRE(f.profile().has_value());
    REQUIRE(f.transport.requests().size() == 3);
    CHECK(f.authorization(2) == "Bearer ya29.one");
  }
}

TEST_CASE("client: a 401 refreshes and retries once", "[gmail]") {
  ClientFixture f;
  f.transport.push_response(200, token_body("ya29.old"));
  f.transport.push_response(401, k_invalid_credentials);
  f.transport.push_response(200, token_body("ya29.new"));

  SECTION("the retry succeeds") {
    f.transport.push_response(200, R"({"emailAddress":"support@example.com","historyId":"90"})");
    const auto result = f.profile();
    REQUIRE(result.has_value());
    CHECK(read_profile(*result).has_value());
    REQUIRE(f.transport.requests().size() == 4);
    CHECK(f.authorization(1) == "Bearer ya29.old");
    CHECK(f.transport.requests()[2].url == "http://127.0.0.1:9/token");
    CHECK(f.authorization(3) == "Bearer ya29.new");
  }
  SECTION("a second 401 is returned as it is") {
    f.transport.push_response(401, k_invalid_credentials);
    const auto result = f.profile();
    REQUIRE(result.has_value());
    const auto read = read_profile(*result);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().kind == ApiErrorKind::unauthorized);
    CHECK(read.error().reason == "authError");
    CHECK(describe(read.error()).find("ya29") == std::string::npos);
    CHECK(f.transport.requests().size() == 4);  // no third attempt
  }
}

TEST_CASE("client: errors other than 401 are not retried", "[gmail]") {
  ClientFixture f;
  f.transport.push_response(200, token_body("ya29.one"));
  f.transport.push_response(
      404, R"({"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}})");
  const auto result = f.profile();
  REQUIRE(result.has_value());
  CHECK(read_profile(*result).error().kind == ApiErrorKind::not_found);
  CHECK(f.transport.requests().size() == 2);
}

TEST_CASE("client: a token that cannot be had is the OAuth error, without secrets", "[gmail]") {
  ClientFixture f;
  f.transport.push_response(400, R"({"error":"invalid_grant","error_description":"revoked for 1//refresh-secret"})");
  const auto result = f.profile();
  CHECK(f.transport.requests().size() == 1);  // the API was never called
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().kind == OAuthErrorKind::invalid_grant);
  for (const auto& secret : {k_client_credentials.client_secret, k_client_credentials.refresh_token}) {
    CHECK(result.error().message.find(secret) == std::string::npos);
  }

  SECTION("a refresh that fails after a 401 is the OAuth error too") {
    ClientFixture g;
    g.transport.push_response(200, token_body("ya29.old"));
    g.transport.push_response(401, k_invalid_credentials);
    g.transport.push_error(net::TransportErrorKind::timed_out, "token endpoint timed out");
    const auto again = g.profile();
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().kind == OAuthErrorKind::unavailable);
  }
}

TEST_CASE("client: destroyed with a call in flight, done is dropped uncalled", "[gmail]") {
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  TokenSource tokens{transport, k_client_credentials, [] { return std::chrono::steady_clock::time_point{}; },
                     [&](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }};
  transport.push_response(200, token_body("ya29.one"));
  transport.push_response(200, R"({"emailAddress":"a@b","historyId":"1"})");
  bool called = false;
  {
    Client client{transport, tokens};
    client.call([](std::string_view token) { return profile_request(k_client_base, token); },
                [&](CallResult) { called = true; });
  }
  io.poll();
  CHECK_FALSE(called);
  CHECK(transport.requests().size() == 1);  // the token came, the API call was not made
}
