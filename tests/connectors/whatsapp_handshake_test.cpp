#include <catch2/catch.hpp>

#include "connectors/whatsapp/handshake.h"

using dispatchd::whatsapp::answer_handshake;
using dispatchd::whatsapp::parse_query;
using dispatchd::whatsapp::QueryParams;
using dispatchd::whatsapp::single_value;

TEST_CASE("query: pairs are split and percent-decoded") {
  const auto params = parse_query("?a=1&b=hello+world&c=%C2%BFs%C3%AD%3F&d&&e=&f=%2b%26");
  REQUIRE(params.has_value());
  const QueryParams expected = {{"a", "1"}, {"b", "hello world"}, {"c", "\xC2\xBFs\xC3\xAD?"}, {"d", ""},
                                {"e", ""},  {"f", "+&"}};
  CHECK(*params == expected);
  CHECK(parse_query("").value().empty());
  CHECK(parse_query("hub.mode=subscribe").value() == QueryParams{{"hub.mode", "subscribe"}});
}

TEST_CASE("query: bad escapes, NUL bytes and oversized input are errors") {
  const auto error = [](std::string_view query) {
    const auto result = parse_query(query, {.max_length = 64, .max_params = 3});
    REQUIRE_FALSE(result.has_value());
    return result.error();
  };
  CHECK(error("a=%").find("two hex digits") != std::string::npos);
  CHECK(error("a=%4").find("two hex digits") != std::string::npos);
  CHECK(error("a=%zz").find("two hex digits") != std::string::npos);
  CHECK(error("a%=1").find("two hex digits") != std::string::npos);
  CHECK(error("a=x%00y").find("NUL") != std::string::npos);
  CHECK(error(std::string(65, 'a')).find("longer than 64") != std::string::npos);
  CHECK(error("a=1&b=2&c=3&d=4").find("more than 3") != std::string::npos);
  CHECK(parse_query("a=1&b=2&c=3", {.max_length = 64, .max_params = 3}).has_value());
}

TEST_CASE("query: single_value refuses a repeated name") {
  const QueryParams params = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  CHECK_FALSE(single_value(params, "a").has_value());
  CHECK(single_value(params, "b") == "2");
  CHECK_FALSE(single_value(params, "c").has_value());
}

TEST_CASE("handshake: the challenge is echoed only for subscribe with the configured token") {
  const std::string token = "s3cr3t-verify";
  const auto ok = answer_handshake("hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=s3cr3t-verify", token);
  REQUIRE(ok.has_value());
  CHECK(*ok == "1158201444");

  const auto refused = [&](std::string_view query, std::string_view configured = "s3cr3t-verify") {
    const auto result = answer_handshake(query, configured);
    REQUIRE_FALSE(result.has_value());
    return result.error();
  };
  CHECK(refused("hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong").status == 403);
  CHECK(refused("hub.mode=subscribe&hub.challenge=1&hub.verify_token=s3cr3t-verif").status == 403);
  CHECK(refused("hub.mode=subscribe&hub.challenge=1").status == 403);
  CHECK(refused("hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=s3cr3t-verify").status == 403);
  CHECK(refused("hub.challenge=1&hub.verify_token=s3cr3t-verify").status == 403);
  CHECK(refused("hub.mode=subscribe&hub.verify_token=s3cr3t-verify").status == 403);
  // Repeated parameters are ambiguous.
  CHECK(refused("hub.mode=subscribe&hub.challenge=1&hub.verify_token=x&hub.verify_token=s3cr3t-verify").status == 403);
  // The challenge is echoed into a response body: only short printable text.
  CHECK(refused("hub.mode=subscribe&hub.challenge=%3Cscript%3E%20x&hub.verify_token=s3cr3t-verify").status == 403);
  CHECK(
      refused("hub.mode=subscribe&hub.challenge=" + std::string(257, '7') + "&hub.verify_token=s3cr3t-verify").status ==
      403);
  // An empty configured token matches nothing, not even an empty one.
  CHECK(refused("hub.mode=subscribe&hub.challenge=1&hub.verify_token=", "").status == 403);
  // An unparseable query is a bad request.
  CHECK(refused("hub.mode=subscribe&hub.challenge=%G1&hub.verify_token=s3cr3t-verify").status == 400);
}

TEST_CASE("handshake: the token may be percent-encoded like any value") {
  const auto ok = answer_handshake("hub.mode=subscribe&hub.verify_token=a%2Bb%20c&hub.challenge=42", "a+b c");
  REQUIRE(ok.has_value());
  CHECK(*ok == "42");
}
