// Fallback providers (llm/router.h): the route a call takes by the breakers' states, as a
// table, and the router over scripted providers behind real breakers.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <deque>

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
  std::unique_ptr<llm::RouterProvider> router;

  Routes() {
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
                           .wait = [](auto, auto) {},
                           .on_change = {}});
      const auto* watched = guarded.get();
      routes.push_back({std::move(guarded), watched, {name, model}});
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

  void call(std::optional<llm::ProviderModel> prefer = std::nullopt) {
    router->complete({.system = "", .turns = {}, .schema = nullptr, .prefer = std::move(prefer)},
                     [](llm::CompletionResult) {});
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

}  // namespace
