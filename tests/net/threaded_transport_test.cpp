#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "net/threaded_transport.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_model_server.h"
#include "tests/io_run.h"
#include "tests/net/held_stream.h"
#include "tests/support/thread_names.h"

using namespace dispatchd;
using fakes::Dialect;
using fakes::FakeModelServer;
using fakes::FakeReply;

namespace {

net::HttpRequest post(const std::string& url) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.body = "{}";
  return request;
}

}  // namespace

TEST_CASE("ThreadedTransport answers on the caller's loop, never inside send, for many requests at once") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok"));
  fake.hold_until_in_flight(30);
  boost::asio::io_context home;
  net::ThreadedTransport transport(home);
  const auto caller = std::this_thread::get_id();
  int ok = 0;
  int done = 0;
  bool on_home_thread = true;
  bool sending = false;
  bool inside_send = false;
  for (int i = 0; i < 30; ++i) {
    sending = true;
    transport.send(post(fake.base_url(Dialect::openai) + "/chat/completions"), [&](net::HttpResult r) {
      ++done;
      inside_send = inside_send || sending;
      on_home_thread = on_home_thread && std::this_thread::get_id() == caller;
      if (r && r->status == 200 && r->body == "ok") ++ok;
    });
    sending = false;
  }
  test::run_until(home, [&] { return done == 30; });
  CHECK(ok == 30);
  CHECK(on_home_thread);
  CHECK_FALSE(inside_send);
  CHECK(fake.max_in_flight() == 30);
}

TEST_CASE("ThreadedTransport's thread is named http-client, and ends with it") {
  {
    boost::asio::io_context home;
    net::ThreadedTransport transport(home);
    CHECK(test::thread_named_soon("http-client"));
  }
  CHECK(test::threads_named("http-client") == 0);
}

TEST_CASE("ThreadedTransport reports transport errors the same way") {
  boost::asio::io_context home;
  net::ThreadedTransport transport(home);
  std::optional<net::HttpResult> result;
  auto request = post("http://127.0.0.1:9/nothing");  // discard port: nothing listens
  request.connect_timeout = std::chrono::milliseconds(2000);
  transport.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
  test::run_until(home, [&] { return result.has_value(); });
  REQUIRE_FALSE(*result);
  CHECK(result->error().kind == net::TransportErrorKind::connect_failed);
}

TEST_CASE("ThreadedTransport destroyed with requests in flight drops them without calling back") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "late").after(std::chrono::milliseconds(300)));
  boost::asio::io_context home;
  int called = 0;
  {
    net::ThreadedTransport transport(home);
    for (int i = 0; i < 5; ++i)
      transport.send(post(fake.base_url(Dialect::openai) + "/chat/completions"), [&](net::HttpResult) { ++called; });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  home.run_for(std::chrono::milliseconds(400));
  CHECK(called == 0);
}

TEST_CASE("ThreadedTransport spreads many connections over several curl handles and still reuses them all") {
  // 258 connections make three shards of 86 (net/threaded_transport.cpp), and requests go to
  // them in turn, so each burst gives each shard 86: every shard must keep its own
  // connections, or the second burst would open new ones.
  constexpr int k_burst = 258;
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok").after(std::chrono::milliseconds(50)));
  fake.hold_until_in_flight(k_burst);
  boost::asio::io_context home;
  net::ThreadedTransport transport(home, {.max_idle_connections = k_burst});
  int ok = 0;
  int done = 0;
  for (int burst = 1; burst <= 2; ++burst) {
    for (int i = 0; i < k_burst; ++i)
      transport.send(post(fake.base_url(Dialect::openai) + "/chat/completions"), [&](net::HttpResult r) {
        ++done;
        if (r && r->status == 200 && r->body == "ok") ++ok;
      });
    test::run_until(home, [&] { return done == burst * k_burst; });
  }
  CHECK(ok == 2 * k_burst);
  CHECK(fake.max_in_flight() == k_burst);
  CHECK(fake.connections_accepted() == k_burst);
}

TEST_CASE("ThreadedTransport hands a streamed body over on the caller's loop, before the answer") {
  boost::asio::io_context home;
  net::ThreadedTransport transport(home);
  const auto caller = std::this_thread::get_id();

  SECTION("every chunk at home, in order, then the answer without a body") {
    FakeModelServer fake;
    const std::string body(200'000, 'b');
    fake.push(FakeReply::raw(200, body));
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions");
    std::string streamed;
    bool at_home = true;
    request.on_body = [&](const net::HttpResponse& head, std::string_view chunk) {
      at_home = at_home && std::this_thread::get_id() == caller && head.status == 200;
      streamed += chunk;
      return true;
    };
    std::optional<net::HttpResult> result;
    transport.send(std::move(request), [&](net::HttpResult r) {
      CHECK(streamed.size() == body.size());  // every chunk came before the answer
      result = std::move(r);
    });
    test::run_until(home, [&] { return result.has_value(); });
    REQUIRE(result->has_value());
    CHECK((*result)->body.empty());
    CHECK(streamed == body);
    CHECK(at_home);
  }
  SECTION("stopped on a stream that then stays silent: the answer comes at the timeout, as a response") {
    test::HeldStream server;
    net::HttpRequest request;
    request.url = server.url();
    request.timeout = std::chrono::milliseconds(500);
    int chunks = 0;
    request.on_body = [&](const net::HttpResponse&, std::string_view) {
      ++chunks;
      return false;
    };
    std::optional<net::HttpResult> result;
    transport.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
    test::run_until(home, [&] { return result.has_value(); });
    REQUIRE(result->has_value());
    CHECK((*result)->status == 200);
    CHECK(chunks == 1);
  }
}

TEST_CASE("ThreadedTransport waits for a receiver slower than the network, and loses no byte") {
  boost::asio::io_context home;
  net::ThreadedTransport transport(home);
  FakeModelServer fake;
  std::string body(6 * 1024 * 1024, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  fake.push(FakeReply::raw(200, body));
  auto request = post(fake.base_url(Dialect::openai) + "/chat/completions");
  std::string streamed;
  request.on_body = [&](const net::HttpResponse&, std::string_view chunk) {
    streamed += chunk;
    return true;
  };
  std::optional<net::HttpResult> result;
  transport.send(std::move(request), [&](net::HttpResult r) { result = std::move(r); });
  // Home takes nothing for a while: the curl thread stops reading once 1 MiB waits here.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(streamed.empty());
  test::run_until(home, [&] { return result.has_value(); });
  REQUIRE(result->has_value());
  CHECK(streamed == body);
}

TEST_CASE("ThreadedTransport destroyed while a stream waits for its receiver returns at once") {
  boost::asio::io_context home;  // never run: the queued chunks are never taken
  FakeModelServer fake;
  fake.push(FakeReply::raw(200, std::string(4 * 1024 * 1024, 'z')));
  const auto started = std::chrono::steady_clock::now();
  {
    net::ThreadedTransport transport(home);
    auto request = post(fake.base_url(Dialect::openai) + "/chat/completions");
    request.on_body = [](const net::HttpResponse&, std::string_view) { return true; };
    transport.send(std::move(request), [](net::HttpResult) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}
