// parse_request: the listener's parser on raw bytes (daemon/http_request.h), the same
// answers as the socket path gives (tests/daemon/http_server_test.cpp).

#include <catch2/catch.hpp>

#include "daemon/http_request.h"

using namespace dispatchd::daemon;

TEST_CASE("a request from bytes: method, path, query, lower-cased headers, body", "[http][request]") {
  const auto request = parse_request(
      "POST /webhooks/whatsapp?a=1&b=%20 HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=ab\r\n"
      "Content-Length: 2\r\n\r\n{}");
  REQUIRE(request);
  CHECK(request->method == "POST");
  CHECK(request->path == "/webhooks/whatsapp");
  CHECK(request->query == "a=1&b=%20");
  CHECK(request->header("x-hub-signature-256") == "sha256=ab");
  CHECK_FALSE(request->header("X-Hub-Signature-256"));
  CHECK(request->body == "{}");
}

TEST_CASE("a chunked body is joined, a pipelined second request is left unread", "[http][request]") {
  const auto chunked = parse_request(
      "POST /api/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  REQUIRE(chunked);
  CHECK(chunked->body == "abcde");
  const auto first = parse_request("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n");
  REQUIRE(first);
  CHECK(first->path == "/healthz");
}

TEST_CASE("refusals carry the listener's statuses", "[http][request]") {
  const HttpLimits limits{.max_header_bytes = 256, .max_body_bytes = 8};
  SECTION("a body over the limit: 413") {
    const auto r = parse_request("POST / HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n{", limits);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == RequestErrorKind::body_too_large);
    CHECK(r.error().http_status() == 413);
  }
  SECTION("headers over the limit: 431") {
    const auto r = parse_request("GET / HTTP/1.1\r\nX-Long: " + std::string(400, 'a') + "\r\n\r\n", limits);
    REQUIRE_FALSE(r);
    CHECK(r.error().http_status() == 431);
  }
  SECTION("garbage: 400") {
    const auto r = parse_request("GET / HTTP/9\r\n\r\n", limits);
    REQUIRE_FALSE(r);
    CHECK(r.error().http_status() == 400);
  }
  SECTION("cut short: incomplete, not answered") {
    for (const std::string cut :
         {"", "GET / HT", "GET / HTTP/1.1\r\nHost: x\r\n", "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n{}"}) {
      const auto r = parse_request(cut, limits);
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == RequestErrorKind::incomplete);
      CHECK(r.error().http_status() == 0);
    }
  }
}
