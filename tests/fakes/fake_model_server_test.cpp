#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include "tests/fakes/fake_model_server.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <optional>

#include "net/curl_transport.h"
#include "tests/io_run.h"

// The fake's gate, driven by a real client: tests that claim "N requests at once" rely on it.

using namespace dispatchd;
using namespace std::chrono_literals;
using fakes::Dialect;
using fakes::FakeModelServer;
using fakes::FakeReply;

namespace {

struct Client {
  FakeModelServer& fake;
  boost::asio::io_context io;
  net::CurlTransport transport{io};
  int answered = 0;

  void send() {
    net::HttpRequest request;
    request.method = "POST";
    request.url = fake.base_url(Dialect::openai) + "/chat/completions";
    request.body = "{}";
    transport.send(std::move(request), [this](net::HttpResult r) {
      if (r && r->status == 200) ++answered;
    });
  }

  // Runs the loop for `span` whatever happens, then returns.
  void run_for(std::chrono::milliseconds span) {
    io.restart();
    io.run_for(span);
  }
};

}  // namespace

TEST_CASE("fake model: held requests are answered only once the gate is full, then all at once") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok"));
  fake.hold_until_in_flight(3);
  Client client{fake};
  client.send();
  client.send();
  test::run_until(client.io, [&] { return fake.request_count() == 2; });
  client.run_for(200ms);  // time enough to answer, were they not held
  CHECK(client.answered == 0);

  client.send();
  test::run_until(client.io, [&] { return client.answered == 3; });
  CHECK(fake.max_in_flight() == 3);

  client.send();  // the gate opened for good: no more holding
  test::run_until(client.io, [&] { return client.answered == 4; });
}

TEST_CASE("fake model: a gate that never fills lets its requests go at the cap, and stops holding") {
  FakeModelServer fake;
  fake.set_fallback(FakeReply::raw(200, "ok"));
  fake.hold_until_in_flight(3, 1s);
  Client client{fake};
  const auto start = std::chrono::steady_clock::now();
  client.send();
  client.send();
  test::run_until(client.io, [&] { return client.answered == 2; });
  CHECK(std::chrono::steady_clock::now() - start >= 1s);
  CHECK(fake.max_in_flight() == 2);

  // A serial client pays the cap once, not once per request (a held one would take 1 s).
  const auto later = std::chrono::steady_clock::now();
  client.send();
  test::run_until(client.io, [&] { return client.answered == 3; });
  CHECK(std::chrono::steady_clock::now() - later < 1s);
}

TEST_CASE("fake model: a request carries when it was read, and before_write runs after the delay, once") {
  FakeModelServer fake;
  std::mutex mutex;  // the stamps are taken on the server's thread
  std::chrono::steady_clock::time_point received{};
  std::chrono::steady_clock::time_point written{};
  int writes = 0;
  fake.set_responder([&](const fakes::ReceivedRequest& request) -> std::optional<FakeReply> {
    const std::lock_guard lock(mutex);
    received = request.received;
    FakeReply reply = FakeReply::raw(200, "ok").after(100ms);
    reply.before_write = [&] {
      const std::lock_guard inner(mutex);
      written = std::chrono::steady_clock::now();
      ++writes;
    };
    return reply;
  });
  Client client{fake};
  const auto sent = std::chrono::steady_clock::now();
  client.send();
  test::run_until(client.io, [&] { return client.answered == 1; });
  const auto answered = std::chrono::steady_clock::now();
  const std::lock_guard lock(mutex);
  CHECK(writes == 1);
  CHECK(sent <= received);
  CHECK(written - received >= 100ms);  // the delay lies between the two stamps
  CHECK(written <= answered);
}
