#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/curl_transport.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/net/held_stream.h"

#include "tests/fakes/fake_model_server.h"
#include "tests/io_run.h"

using namespace dispatchd;
using fakes::Dialect;
using fakes::FakeModelServer;
using fakes::FakeReply;

namespace {

net::HttpResult exchange(boost::asio::io_context& io, net::Transport& transport, net::HttpRequest request) {
  std::optional<net::HttpResult> result;
  transport.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
  test::run_until(io, [&] { return result.has_value(); });
  return std::move(*result);
}

net::HttpRequest post(const std::string& url, std::string body) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.headers.add("Content-Type", "application/json");
  request.body = std::move(body);
  return request;
}

// A 127.0.0.1 port with nothing listening: bound, then closed.
unsigned short closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

}  // namespace

TEST_CASE("CurlTransport posts a body and returns status, headers and body") {
  FakeModelServer fake;
  fake.push(FakeReply::raw(200, R"({"hello":"world"})").with_header("X-Fake-Id", "abc"));
  boost::asio::io_context io;
  net::CurlTransport transport(io);

  auto request = post(fake.base_url(Dialect::openai) + "/chat/completions", std::string(5000, 'x'));
  request.headers.add("Authorization", "Bearer k");
  const auto result = exchange(io, transport, std::move(request));

  REQUIRE(result.has_value());
  CHECK(result->status == 200);
  CHECK(result->body == R"({"hello":"world"})");
  CHECK(result->headers.get("x-fake-id") == "abc");
  CHECK(result->headers.get("CONTENT-TYPE") == "application/json");
  CHECK_FALSE(result->headers.get("missing").has_value());
  const auto received = fake.requests();
  REQUIRE(received.size() == 1);
  CHECK(received[0].method == "POST");
  CHECK(received[0].target == "/v1/chat/completions");
  CHECK(received[0].header("authorization") == "Bearer k");
  CHECK(received[0].header("expect").empty());  // no 100-continue round trip
  CHECK(received[0].body == std::string(5000, 'x'));
}

TEST_CASE("CurlTransport returns error statuses as responses") {
  FakeModelServer fake;
  fake.push(FakeReply::error(429).with_header("Retry-After", "3"));
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  const auto result = exchange(io, transport, post(fake.base_url(Dialect::anthropic) + "/v1/messages", "{}"));
  REQUIRE(result.has_value());
  CHECK(result->status == 429);
  CHECK(result->headers.get("retry-after") == "3");
}

TEST_CASE("CurlTransport classes transport failures") {
  boost::asio::io_context io;

  SECTION("connection refused is connect_failed") {
    net::CurlTransport transport(io);
    const auto result = exchange(io, transport, post("http://127.0.0.1:" + std::to_string(closed_port()) + "/x", "{}"));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == net::TransportErrorKind::connect_failed);
    CHECK_FALSE(result.error().message.empty());
  }
  SECTION("a reply slower than the total timeout is timed_out") {
    FakeModelServer fake;
    fake.push(FakeReply::text("late").after(std::chrono::seconds(5)));
    net::CurlTransport transport(io);
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions", "{}");
    request.timeout = std::chrono::milliseconds(300);
    const auto result = exchange(io, transport, std::move(request));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == net::TransportErrorKind::timed_out);
  }
  SECTION("a body over the cap is too_large") {
    FakeModelServer fake;
    fake.push(FakeReply::raw(200, std::string(100'000, 'a')));
    net::CurlTransport transport(io, {.max_response_bytes = 1000});
    const auto result = exchange(io, transport, post(fake.base_url(Dialect::openai) + "/chat/completions", "{}"));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == net::TransportErrorKind::too_large);
  }
}

TEST_CASE("CurlTransport runs many requests at once and keeps its connections, also when the load dips") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok").after(std::chrono::milliseconds(50)));
  fake.hold_until_in_flight(20);  // the first burst: 20 at once, however slow the machine
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  int ok = 0;
  int done = 0;
  // After the single request, curl's default would keep only 4 connections (4 per transfer
  // in flight) and open 16 new ones for the next burst.
  for (const int burst : {20, 20, 1, 20}) {
    const int target = done + burst;
    for (int i = 0; i < burst; ++i)
      transport.send(post(fake.base_url(Dialect::openai) + "/chat/completions", "{}"), [&](net::HttpResult r) {
        ++done;
        if (r && r->status == 200 && r->body == "ok") ++ok;
      });
    test::run_until(io, [&] { return done == target; });
  }
  CHECK(ok == 61);
  CHECK(fake.max_in_flight() == 20);
  CHECK(fake.connections_accepted() == 20);
}

TEST_CASE("CurlTransport leaves no timer or wait behind once every answer is in") {
  // The loop must run out of work: a daemon's shutdown and a load generator's exit wait
  // for that.
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok"));
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  int done = 0;
  for (int i = 0; i < 20; ++i) {
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions", "{}");
    request.timeout = std::chrono::seconds(30);
    transport.send(std::move(request), [&](net::HttpResult r) { done += r && r->status == 200; });
  }
  test::run_until(io, [&] { return done == 20; });
  // Only what is ready runs: a timer still armed or a socket still watched would keep the
  // loop from running out of work.
  io.restart();
  io.poll();
  CHECK(io.stopped());
}

TEST_CASE("CurlTransport destroyed with requests in flight drops them without calling back") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "late").after(std::chrono::milliseconds(300)));
  boost::asio::io_context io;
  int called = 0;
  {
    net::CurlTransport transport(io);
    for (int i = 0; i < 5; ++i)
      transport.send(post(fake.base_url(Dialect::openai) + "/chat/completions", "{}"),
                     [&](net::HttpResult) { ++called; });
    test::run_until(io, [&] { return fake.request_count() == 5; });
  }
  io.restart();
  io.run_for(std::chrono::milliseconds(500));  // whatever was pending drains harmlessly
  CHECK(called == 0);
}

TEST_CASE("CurlTransport may be destroyed from inside a callback") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok"));
  boost::asio::io_context io;
  auto transport = std::make_unique<net::CurlTransport>(io);
  bool called = false;
  transport->send(post(fake.base_url(Dialect::openai) + "/chat/completions", "{}"), [&](net::HttpResult result) {
    called = result.has_value();
    transport.reset();
  });
  test::run_until(io, [&] { return transport == nullptr; });
  CHECK(called);
}

TEST_CASE("CurlTransport hands a streamed body over as it arrives, and ends the exchange when told") {
  boost::asio::io_context io;
  net::CurlTransport transport(io);

  SECTION("a stream the server holds open: the first event while it is open, then closed by us") {
    test::HeldStream server;
    net::HttpRequest request;
    request.url = server.url();
    std::vector<std::string> chunks;
    int status_seen = 0;
    request.on_body = [&](const net::HttpResponse& head, std::string_view chunk) {
      status_seen = head.status;
      CHECK(head.headers.get("content-type") == "text/event-stream");
      CHECK(head.body.empty());
      chunks.emplace_back(chunk);
      return false;  // enough: the server would hold the stream for 10 s
    };
    const auto result = exchange(io, transport, std::move(request));
    REQUIRE(result.has_value());  // stopping is not an error
    CHECK(result->status == 200);
    CHECK(result->body.empty());
    CHECK(result->headers.get("content-type") == "text/event-stream");
    CHECK(status_seen == 200);
    CHECK(chunks == std::vector<std::string>{"data: one\n\n"});
    CHECK(server.wait_closed_by_client());
  }
  SECTION("a body that ends by itself: every byte handed over, in order, none in the answer") {
    FakeModelServer fake;
    std::string body;
    for (int i = 0; body.size() < 300'000; ++i) body += std::to_string(i) + ",";
    fake.push(FakeReply::raw(200, body));
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions", "{}");
    std::string streamed;
    request.on_body = [&](const net::HttpResponse&, std::string_view chunk) {
      streamed += chunk;
      return true;
    };
    const auto result = exchange(io, transport, std::move(request));
    REQUIRE(result.has_value());
    CHECK(result->status == 200);
    CHECK(result->body.empty());
    CHECK(streamed == body);
  }
  SECTION("the size cap counts the bytes handed over") {
    FakeModelServer fake;
    fake.push(FakeReply::raw(200, std::string(100'000, 'a')));
    net::CurlTransport capped(io, {.max_response_bytes = 1000});
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions", "{}");
    std::size_t streamed = 0;
    request.on_body = [&](const net::HttpResponse&, std::string_view chunk) {
      streamed += chunk.size();
      return true;
    };
    const auto result = exchange(io, capped, std::move(request));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == net::TransportErrorKind::too_large);
    CHECK(streamed <= 1000);
  }
}
