// BreakerProvider (llm/breaker_provider.h) carrying out the breaker's decisions over a scripted
// provider, with a manual clock and timers: calls wait while it is open, one probe goes at the
// probe time, its success releases every waiting call at once, and a call that waited its hold
// limit ends circuit_open without being sent.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <deque>
#include <map>

#include "llm/breaker_provider.h"

namespace llm = dispatchd::llm;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

// A provider whose calls wait until the test answers them.
class HeldProvider final : public llm::Provider {
 public:
  void complete(llm::CompletionRequest request, llm::CompletionCallback done) override {
    sent.push_back(request.system);
    held.push_back(std::move(done));
  }
  const std::string& name() const override { return m_name; }
  const std::string& model() const override { return m_name; }

  void answer(llm::CompletionResult result) {
    REQUIRE_FALSE(held.empty());
    auto done = std::move(held.front());
    held.pop_front();
    done(std::move(result));
  }

  std::vector<std::string> sent;  // each request's system text, in the order sent
  std::deque<llm::CompletionCallback> held;

 private:
  std::string m_name = "openai";
};

llm::CompletionResult ok() { return llm::Completion{.output = "{}", .finish_reason = "stop", .usage = {}, .info = {}}; }

llm::CompletionResult down(llm::ErrorClass error_class = llm::ErrorClass::transport,
                           std::optional<milliseconds> retry_after = std::nullopt) {
  llm::ProviderError e;
  e.error_class = error_class;
  e.message = "down";
  e.retry_after = retry_after;
  return std::unexpected(e);
}

struct Fixture {
  boost::asio::io_context io;
  std::chrono::steady_clock::time_point clock = std::chrono::steady_clock::time_point{} + 1000s;
  std::multimap<std::chrono::steady_clock::time_point, std::move_only_function<void()>> timers;
  std::vector<llm::BreakerChange> changes;
  HeldProvider* inner = nullptr;
  std::unique_ptr<llm::BreakerProvider> provider;
  std::map<std::string, llm::CompletionResult> results;  // by the call's system text

  Fixture() {
    auto held = std::make_unique<HeldProvider>();
    inner = held.get();
    provider = std::make_unique<llm::BreakerProvider>(
        std::move(held), llm::BreakerSettings{.failure_threshold = 2, .probe_min = 1000ms, .probe_max = 4000ms}, 30s,
        io,
        llm::BreakerDeps{
            .random = [] { return 0.0; },
            .now = [this] { return clock; },
            .wait = [this](milliseconds delay,
                           std::move_only_function<void()> then) { timers.emplace(clock + delay, std::move(then)); },
            .on_change = [this](llm::BreakerChange c, const llm::BreakerStats&) { changes.push_back(c); }});
  }

  // A call held by the scripted provider keeps the breaker's state alive (its callback holds
  // it, and the state owns the provider): every one is answered before the end, as a real
  // provider answers or fails each.
  ~Fixture() {
    while (!inner->held.empty()) inner->answer(ok());
  }

  void call(const std::string& name) {
    provider->complete({.system = name, .turns = {}, .schema = nullptr},
                       [this, name](llm::CompletionResult r) { results.insert_or_assign(name, std::move(r)); });
  }

  // Two calls (a, b) fail: the breaker opens (threshold 2).
  void open() {
    call("a");
    call("b");
    inner->answer(down());
    inner->answer(down());
  }

  // Moves the clock on by `by`, firing the timers due meanwhile in order.
  void advance(milliseconds by) {
    const auto until = clock + by;
    while (!timers.empty() && timers.begin()->first <= until) {
      auto node = timers.extract(timers.begin());
      clock = node.key();
      node.mapped()();
    }
    clock = until;
  }
};

}  // namespace

TEST_CASE("breaker provider: open after the threshold, then calls wait and nothing is sent", "[breaker]") {
  Fixture f;
  f.call("a");
  f.call("b");
  f.inner->answer(down());
  f.inner->answer(down(llm::ErrorClass::server));
  CHECK(f.changes == std::vector{llm::BreakerChange::opened});
  CHECK(f.provider->stats().state == llm::BreakerState::open);
  for (const char* name : {"c", "d", "e"}) f.call(name);
  CHECK(f.inner->sent.size() == 2);  // c, d and e wait
  CHECK(f.provider->stats().waiting == 3);
  CHECK(f.results.size() == 2);
}

TEST_CASE("breaker provider: one probe at the probe time, its success releases every waiting call", "[breaker]") {
  Fixture f;
  f.open();
  for (const char* name : {"c", "d", "e"}) f.call(name);
  f.advance(999ms);
  CHECK(f.inner->sent.size() == 2);
  f.advance(1ms);  // the probe time: the oldest waiting call goes, alone
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c"});
  f.advance(5s);
  CHECK(f.inner->sent.size() == 3);
  // It fails (503, Retry-After 3 s): the next probe no sooner than that.
  f.inner->answer(down(llm::ErrorClass::server, 3000ms));
  CHECK(f.results.at("c").error().error_class == llm::ErrorClass::server);
  f.advance(2999ms);
  CHECK(f.inner->sent.size() == 3);
  f.advance(1ms);
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c", "d"});
  // d's success closes it: e goes at once, and new calls are sent.
  f.inner->answer(ok());
  CHECK(f.changes == std::vector{llm::BreakerChange::opened, llm::BreakerChange::closed});
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c", "d", "e"});
  f.call("f");
  CHECK(f.inner->sent.size() == 6);
  const auto stats = f.provider->stats();
  CHECK(stats.state == llm::BreakerState::closed);
  CHECK(stats.opened == 1);
  CHECK(stats.probes == 2);
  CHECK(stats.failed_probes == 1);
  CHECK(stats.waiting == 0);
  CHECK(stats.open_time == 9000ms);  // opened at +0, closed at +9 s
}

TEST_CASE("breaker provider: a call that waited its hold limit ends circuit_open, never sent", "[breaker]") {
  Fixture f;
  f.open();
  f.call("c");
  f.advance(1000ms);  // c is the probe
  f.call("d");        // waits behind it
  f.advance(29999ms);
  CHECK_FALSE(f.results.contains("d"));
  f.advance(1ms);
  REQUIRE(f.results.contains("d"));
  CHECK(f.results.at("d").error().error_class == llm::ErrorClass::circuit_open);
  CHECK(f.results.at("d").error().message.find("breaker is open") != std::string::npos);
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c"});
  CHECK(f.provider->stats().held_out == 1);
}

TEST_CASE("breaker provider: an answer that is not a failure (a 4xx, an unreadable body) counts as up", "[breaker]") {
  Fixture f;
  for (const auto error_class : {llm::ErrorClass::client, llm::ErrorClass::bad_response, llm::ErrorClass::refused}) {
    f.call("x");
    f.call("y");
    f.inner->answer(down());
    f.inner->answer(down(error_class));  // the provider answered: the row of failures ends
  }
  CHECK(f.changes.empty());
  CHECK(f.provider->stats().state == llm::BreakerState::closed);
}

TEST_CASE("breaker provider: with no call waiting at the probe time, the next call is the probe", "[breaker]") {
  Fixture f;
  f.open();
  f.advance(5s);
  CHECK(f.inner->sent.size() == 2);
  f.call("c");  // the probe
  f.call("d");  // waits
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c"});
  f.inner->answer(ok());
  CHECK(f.inner->sent == std::vector<std::string>{"a", "b", "c", "d"});
}
