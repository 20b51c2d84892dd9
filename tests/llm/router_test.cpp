// Fallback providers (llm/router.h): the route a call takes by the breakers' states, as a
// table, and the router over scripted providers behind real breakers.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <deque>

#include "llm/limiter.h"
#include "llm/router.h"

namespace llm = dispatchd::llm;
using namespace std::chrono_literals;

namespace {

TEST_CASE("router: the route a call takes", "[router]") {
  struct Row {
    const char* what;
    std::vector<bool> closed;
    std::optional<std::size_t> preferred;
    std::size_t want;
  };
  const Row rows[] = {
      {"the primary answers: the primary", {true, true}, std::nullopt, 0},
      {"the primary fails: the first fallback that answers", {false, true, true}, std::nullopt, 1},
      {"the primary and the first fallback fail: the second", {false, false, true}, std::nullopt, 2},
      {"every one fails: the primary's breaker holds the call", {false, false}, std::nullopt, 0},
      {"a re-ask stays on the fallback that answered", {true, true}, 1, 1},
      {"a re-ask whose provider fails now goes to the first that answers", {true, false}, 1, 0},
      {"a re-ask's provider unknown to the router: by order", {true, true}, 7, 0},
      {"only the primary, failing: the primary", {false}, std::nullopt, 0},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    CHECK(llm::pick_route(row.closed, row.preferred) == row.want);
  }
}

// A provider whose calls wait until the test answers them; it names itself as a route does.
class Scripted final : public llm::Provider {
 public:
  Scripted(std::string name, std::string model) : m_name(std::move(name)), m_model(std::move(model)) {}
  void complete(llm::CompletionRequest, llm::CompletionCallback done) override { held.push_back(std::move(done)); }
  const std::string& name() const override { return m_name; }
  const std::string& model() const override { return m_model; }
  void fail() {
    REQUIRE_FALSE(held.empty());
    auto done = std::move(held.front());
    held.pop_front();
    llm::ProviderError e;
    e.error_class = llm::ErrorClass::server;
    done(std::unexpected(e));
  }
  std::deque<llm::CompletionCallback> held;

 private:
  std::string m_name, m_model;
};

struct Routes {
  boost::asio::io_context io;
  std::chrono::steady_clock::time_point clock = std::chrono::steady_clock::time_point{} + 1000s;
  Scripted* primary = nullptr;
  Scripted* fallback = nullptr;
  // The breakers' hold limits, run by the test (the probe timers are not needed here).
  std::vector<std::move_only_function<void()>> hold_limits;
  // With primary_slots: the primary's concurrency, a LimitedProvider outside its breaker.
  std::optional<llm::Limiter> primary_limiter;
  std::unique_ptr<llm::RouterProvider> router;

  explicit Routes(std::size_t primary_slots = 0) {
    if (primary_slots > 0) primary_limiter.emplace(io, primary_slots);
    std::vector<llm::Route> routes;
    for (auto [name, model, out] :
         {std::tuple{"openai", "gpt", &primary}, std::tuple{"anthropic", "claude", &fallback}}) {
      auto scripted = std::make_unique<Scripted>(name, model);
      *out = scripted.get();
      auto guarded = std::make_unique<llm::BreakerProvider>(
          std::move(scripted), llm::BreakerSettings{.failure_threshold = 1, .probe_min = 10s, .probe_max = 10s}, 30s,
          io,
          llm::BreakerDeps{.random = [] { return 0.0; },
                           .now = [this] { return clock; },
                           .wait =
                               [this](std::chrono::milliseconds delay, std::move_only_function<void()> then) {
                                 if (delay == 30s) hold_limits.push_back(std::move(then));
                               },
                           .on_change = {}});
      auto* watched = guarded.get();
      std::unique_ptr<llm::Provider> route = std::move(guarded);
      if (out == &primary && primary_limiter)
        route = std::make_unique<llm::LimitedProvider>(std::move(route), *primary_limiter);
      routes.push_back({std::move(route), watched, {name, model}});
    }
    router = std::make_unique<llm::RouterProvider>(std::move(routes));
  }
  // A held call's callback keeps its breaker's state alive (the state owns the provider):
  // every one is answered before the end, as a real provider answers or fails each.
  ~Routes() {
    for (auto* scripted : {primary, fallback}) {
      while (!scripted->held.empty()) {
        auto done = std::move(scripted->held.front());
        scripted->held.pop_front();
        done(llm::Completion{});
      }
    }
  }

  // `ended`, when given, counts the call's end.
  void call(std::optional<llm::ProviderModel> prefer = std::nullopt, int* ended = nullptr) {
    router->complete({.system = "", .turns = {}, .schema = nullptr, .prefer = std::move(prefer)},
                     [ended](llm::CompletionResult) {
                       if (ended) ++*ended;
                     });
  }
};

TEST_CASE("router: the fallback answers only while the primary fails", "[router]") {
  Routes r;
  r.call();
  CHECK(r.primary->held.size() == 1);
  r.primary->fail();  // threshold 1: the primary's breaker opens
  r.call();
  r.call();
  CHECK(r.fallback->held.size() == 2);
  CHECK(r.primary->held.empty());
  CHECK(r.router->routed() == std::vector<std::int64_t>{1, 2});
  const auto stats = r.router->stats();
  REQUIRE(stats.size() == 2);
  CHECK(stats[0].first == llm::ProviderModel{"openai", "gpt"});
  CHECK(stats[0].second.state == llm::BreakerState::open);
  CHECK(stats[1].second.state == llm::BreakerState::closed);
  CHECK(r.router->name() == "openai");  // the primary's
}

TEST_CASE("router: the primary routed around is still probed, and back once it answers", "[router]") {
  Routes r;
  r.call();
  r.primary->fail();
  r.call();
  CHECK(r.fallback->held.size() == 1);
  r.clock += 10s;  // the primary's probe is due: the next call is it
  r.call();
  CHECK(r.primary->held.size() == 1);
  r.call();  // the probe is out: the fallback meanwhile
  CHECK(r.fallback->held.size() == 2);
  auto probe = std::move(r.primary->held.front());
  r.primary->held.pop_front();
  probe(llm::Completion{});  // it answers: closed
  r.call();
  CHECK(r.primary->held.size() == 1);
  CHECK(r.router->routed() == std::vector<std::int64_t>{3, 2});
}

TEST_CASE("router: a re-ask goes to the provider whose answer it quotes", "[router]") {
  Routes r;
  r.call(llm::ProviderModel{"anthropic", "claude"});
  CHECK(r.fallback->held.size() == 1);
  r.call(llm::ProviderModel{"openai", "gpt"});
  CHECK(r.primary->held.size() == 1);
  r.call(llm::ProviderModel{"anthropic", "other-model"});  // not a route: by order
  CHECK(r.primary->held.size() == 2);
}

TEST_CASE("router: a call that reaches the primary's breaker after it opened goes to the fallback", "[router]") {
  Routes r(1);  // one slot: the second call waits for it outside the breaker
  int ended = 0;
  r.call();
  r.call(std::nullopt, &ended);
  r.io.poll();
  REQUIRE(r.primary->held.size() == 1);
  r.primary->fail();  // the breaker opens; the slot goes to the waiting call
  r.io.restart();
  r.io.poll();
  CHECK(r.primary->held.empty());  // not held in the open breaker: handed back
  CHECK(r.fallback->held.size() == 1);
  CHECK(ended == 0);  // on its way, not ended
  CHECK(r.router->routed() == std::vector<std::int64_t>{2, 1});
  const auto stats = r.router->stats();
  CHECK(stats[0].second.handed_back == 1);
  CHECK(stats[0].second.waiting == 0);
  CHECK(stats[1].second.handed_back == 0);
}

TEST_CASE("router: with every provider failing the call waits in the primary, then goes to the first back",
          "[router]") {
  Routes r;
  int ended = 0;
  r.call();
  r.primary->fail();
  r.call();
  r.fallback->fail();  // both open now
  r.call(std::nullopt, &ended);
  CHECK(r.router->stats()[0].second.waiting == 1);  // the primary's breaker holds it
  r.clock += 10s;                                   // the fallback's probe is due
  REQUIRE(r.hold_limits.size() == 1);
  r.hold_limits.front()();  // the hold limit: the fallback admits it, as its probe
  CHECK(r.fallback->held.size() == 1);
  CHECK(r.router->stats()[1].second.probes == 1);
  CHECK(ended == 0);
  CHECK(r.router->stats()[0].second.held_out == 1);
}

TEST_CASE("router: with one provider a call the open breaker holds ends circuit_open at its hold limit", "[router]") {
  boost::asio::io_context io;
  std::vector<std::move_only_function<void()>> limits;
  auto scripted = std::make_unique<Scripted>("openai", "gpt");
  auto* provider = scripted.get();
  auto guarded = std::make_unique<llm::BreakerProvider>(
      std::move(scripted), llm::BreakerSettings{.failure_threshold = 1, .probe_min = 10s, .probe_max = 10s}, 30s, io,
      llm::BreakerDeps{.random = [] { return 0.0; },
                       .now = [] { return std::chrono::steady_clock::time_point{} + 1000s; },
                       .wait =
                           [&limits](std::chrono::milliseconds delay, std::move_only_function<void()> then) {
                             if (delay == 30s) limits.push_back(std::move(then));
                           },
                       .on_change = {}});
  auto* watched = guarded.get();
  std::vector<llm::Route> routes;
  routes.push_back({std::move(guarded), watched, {"openai", "gpt"}});
  llm::RouterProvider router(std::move(routes));
  std::optional<llm::ErrorClass> ended;
  const auto call = [&] {
    router.complete({.system = "", .turns = {}, .schema = nullptr}, [&ended](llm::CompletionResult result) {
      ended = result ? std::nullopt : std::optional(result.error().error_class);
    });
  };
  call();
  provider->fail();
  CHECK(ended == llm::ErrorClass::server);
  ended.reset();
  call();
  CHECK_FALSE(ended);  // held: no other provider to hand it to
  REQUIRE(limits.size() == 1);
  limits.front()();
  CHECK(ended == llm::ErrorClass::circuit_open);
}

}  // namespace
