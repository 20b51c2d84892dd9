#include "tests/connectors/channel_contract.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <variant>

#include "tests/io_run.h"

namespace dispatchd::test::contract {
namespace {

using namespace std::chrono_literals;

// Time for a second call of `done`, or a resend, to show after the first outcome.
constexpr auto k_contract_settle = 300ms;

// Watches one SendDone: how often it was called, whether from inside the call that
// received it, and whether it still exists.
struct DoneWatch {
  int calls = 0;
  bool inside = false;  // set around send() / resolve_unknown()
  bool called_inside = false;
  bool called_off_loop = false;  // from a thread other than the one running the loop (the test's)
  std::optional<connectors::SendOutcome> outcome;
  std::weak_ptr<int> alive;    // expired once the SendDone is destroyed
  std::function<void()> then;  // run inside the call, after the outcome is recorded
};

connectors::SendDone watched(DoneWatch& watch) {
  auto token = std::make_shared<int>(0);
  watch.alive = token;
  return [&watch, token, loop = std::this_thread::get_id()](connectors::SendOutcome outcome) {
    ++watch.calls;
    if (watch.inside) watch.called_inside = true;
    if (std::this_thread::get_id() != loop) watch.called_off_loop = true;
    watch.outcome = std::move(outcome);
    if (watch.then) watch.then();
  };
}

std::string kind_of(const connectors::SendOutcome& outcome) {
  if (const auto* sent = std::get_if<connectors::Sent>(&outcome)) return "Sent{" + sent->provider_message_id + "}";
  if (const auto* retry = std::get_if<connectors::RetryAfter>(&outcome))
    return "RetryAfter{" + std::to_string(retry->after.count()) + " ms, " + retry->why + "}";
  if (const auto* failed = std::get_if<connectors::Failed>(&outcome)) return "Failed{" + failed->why + "}";
  return "Unknown{" + std::get<connectors::Unknown>(outcome).why + "}";
}

void send(Harness& h, const store::OutboxItem& item, DoneWatch& watch) {
  REQUIRE(h.channel() != nullptr);
  watch.inside = true;
  h.channel()->send(item, watched(watch));
  watch.inside = false;
  CHECK(watch.calls == 0);  // never from inside send()
}

// The one outcome `watch` gets: called once, not from inside, nothing more after a while.
connectors::SendOutcome outcome_of(Harness& h, DoneWatch& watch) {
  h.run_until([&] { return watch.calls > 0; });
  h.run_for(k_contract_settle);
  CHECK(watch.calls == 1);
  CHECK_FALSE(watch.called_inside);
  CHECK_FALSE(watch.called_off_loop);
  REQUIRE(watch.outcome);
  return *watch.outcome;
}

template <typename Kind>
void require_kind(const connectors::SendOutcome& outcome) {
  INFO("outcome: " << kind_of(outcome));
  REQUIRE(std::holds_alternative<Kind>(outcome));
}

// The harness with message 1 delivered, and a reply to it. The watches of its sends live
// as long as the harness: a stray late call of a `done` still finds its watch.
struct Ready {
  std::deque<DoneWatch> watches;
  std::unique_ptr<Harness> h;
  store::OutboxItem item;

  DoneWatch& watch() { return watches.emplace_back(); }
  // One send of `what` with `answer` scripted: its one outcome.
  connectors::SendOutcome send_once(const store::OutboxItem& what, Answer answer) {
    INFO("the fake's answer: " << to_string(answer));
    h->script_next_send(answer);
    auto& w = watch();
    send(*h, what, w);
    return outcome_of(*h, w);
  }
  connectors::SendOutcome send_once(Answer answer) { return send_once(item, answer); }
  // One send of `item` whose answer the fake holds, once it holds it.
  DoneWatch& send_held() {
    h->script_next_send(Answer::hold);
    auto& w = watch();
    send(*h, item, w);
    h->run_until([&] { return h->sends_held() == 1; });
    return w;
  }
};

Ready ready(const MakeHarness& make, const std::string& key = "contract-1") {
  Ready r{{}, make(), {}};
  r.h->deliver(1);
  r.item = r.h->reply_to(1, key);
  return r;
}

void check_dedupe(const MakeHarness& make) {
  auto h = make();
  const int pokes_before = h->inbound_pokes();
  h->deliver(1);
  CHECK(h->inbox_rows() == 1);
  const int pokes = h->inbound_pokes();
  CHECK(pokes > pokes_before);  // the agent hears of the new row
  h->redeliver(1);
  CHECK(h->inbox_rows() == 1);
  CHECK(h->inbound_pokes() == pokes);  // nothing new was written: nothing to hear of
  h->deliver(2);
  CHECK(h->inbox_rows() == 2);
  CHECK(h->inbound_pokes() > pokes);
}

// `answer` scripted, one send: done once, never inside, the outcome `Kind`.
template <typename Kind>
void check_done_once(const MakeHarness& make, Answer answer) {
  auto r = ready(make);
  const auto outcome = r.send_once(answer);
  require_kind<Kind>(outcome);
  if (const auto* sent = std::get_if<connectors::Sent>(&outcome)) CHECK_FALSE(sent->provider_message_id.empty());
}

void check_done(const MakeHarness& make) {
  SECTION("accepted: Sent with the provider's id") { check_done_once<connectors::Sent>(make, Answer::accept); }
  SECTION("refused for good: Failed") { check_done_once<connectors::Failed>(make, Answer::refuse); }
  SECTION("a rate limit: RetryAfter") { check_done_once<connectors::RetryAfter>(make, Answer::rate_limit); }
  SECTION("a refused credential: RetryAfter") {
    check_done_once<connectors::RetryAfter>(make, Answer::refuse_credential);
  }
  SECTION("a refused connection: RetryAfter") {
    check_done_once<connectors::RetryAfter>(make, Answer::refuse_connection);
  }
  SECTION("the connection dropped after the request left: Unknown") {
    check_done_once<connectors::Unknown>(make, Answer::drop_after_request);
  }
  SECTION("refused before any request: Failed, posted") {
    auto r = ready(make);
    require_kind<connectors::Failed>(r.send_once(r.h->unsendable("contract-unsendable"), Answer::accept));
    CHECK(r.h->sends_received() == 0);
  }
  SECTION("done may call send() again") {
    auto r = ready(make);
    const auto second_item = r.h->reply_to(1, "contract-2");
    auto& first = r.watch();
    auto& second = r.watch();
    bool again = false;
    first.then = [&] {
      if (std::exchange(again, true)) return;
      send(*r.h, second_item, second);
    };
    send(*r.h, r.item, first);
    require_kind<connectors::Sent>(outcome_of(*r.h, first));
    require_kind<connectors::Sent>(outcome_of(*r.h, second));
    CHECK(r.h->messages_delivered() == 2);
  }
}

void check_retry(const MakeHarness& make) {
  SECTION("a refused connection reached nothing: RetryAfter") {
    auto r = ready(make);
    require_kind<connectors::RetryAfter>(r.send_once(Answer::refuse_connection));
    CHECK(r.h->sends_received() == 0);
    CHECK(r.h->messages_delivered() == 0);
  }
  SECTION("a refused credential delivered nothing: RetryAfter") {
    auto r = ready(make);
    require_kind<connectors::RetryAfter>(r.send_once(Answer::refuse_credential));
    CHECK(r.h->messages_delivered() == 0);
  }
  SECTION("an answer lost after the request reached the fake: Unknown, not RetryAfter") {
    auto r = ready(make);
    require_kind<connectors::Unknown>(r.send_once(Answer::drop_after_request));
    CHECK(r.h->sends_received() == 1);
    CHECK(r.h->messages_delivered() == 1);
  }
}

// resolve_unknown(item): false with `done` left alone, or one outcome through it; nothing
// sent either way. Returns the outcome, nullopt when the channel declined.
std::optional<connectors::SendOutcome> resolve(Ready& r) {
  Harness& h = *r.h;
  const auto sends = h.sends_received();
  auto& watch = r.watch();
  connectors::SendDone done = watched(watch);
  watch.inside = true;
  const bool took = h.channel()->resolve_unknown(r.item, done);
  watch.inside = false;
  CHECK(watch.calls == 0);
  std::optional<connectors::SendOutcome> outcome;
  if (!took) {
    CHECK(static_cast<bool>(done));  // left to the caller, who escalates
    h.run_for(k_contract_settle);
    CHECK(watch.calls == 0);
  } else {
    outcome = outcome_of(h, watch);
  }
  CHECK(h.sends_received() == sends);  // looked up, never sent again
  return outcome;
}

void check_unknown(const MakeHarness& make) {
  SECTION("the lost answer's message is never sent again; a lookup finds it Sent") {
    auto r = ready(make);
    require_kind<connectors::Unknown>(r.send_once(Answer::drop_after_request));
    r.h->run_for(k_contract_settle);
    CHECK(r.h->sends_received() == 1);
    REQUIRE(r.h->messages_delivered() == 1);
    if (const auto outcome = resolve(r)) require_kind<connectors::Sent>(*outcome);
    CHECK(r.h->sends_received() == 1);
    CHECK(r.h->messages_delivered() == 1);
  }
  SECTION("a message that never left is not found: never Sent") {
    auto r = ready(make, "contract-never-sent");
    if (const auto outcome = resolve(r)) require_kind<connectors::RetryAfter>(*outcome);
    CHECK(r.h->sends_received() == 0);
    CHECK(r.h->messages_delivered() == 0);
  }
}

void check_health(const MakeHarness& make) {
  auto r = ready(make);
  CHECK_FALSE(r.h->channel()->health().paused);
  require_kind<connectors::RetryAfter>(r.send_once(Answer::refuse_credential));
  const auto paused = r.h->channel()->health();
  CHECK(paused.paused);
  CHECK_FALSE(paused.reason.empty());

  r.h->restore_credential();
  CHECK_FALSE(r.h->channel()->health().paused);
  require_kind<connectors::Sent>(r.send_once(Answer::accept));
  CHECK_FALSE(r.h->channel()->health().paused);
  CHECK(r.h->messages_delivered() == 1);
}

void check_destruction(const MakeHarness& make) {
  SECTION("destroyed with a send held at the fake: done is destroyed, never called") {
    auto r = ready(make);
    auto& watch = r.send_held();
    CHECK(watch.calls == 0);
    r.h->destroy_channel();
    CHECK(r.h->channel() == nullptr);
    r.h->release_held();  // the answer comes after the channel is gone
    r.h->run_for(k_contract_settle);
    CHECK(watch.calls == 0);
    CHECK(watch.alive.expired());
  }
  SECTION("stopped with a send held at the fake: it still answers") {
    auto r = ready(make);
    auto& watch = r.send_held();
    r.h->channel()->stop();
    r.h->release_held();
    require_kind<connectors::Sent>(outcome_of(*r.h, watch));
  }
}

}  // namespace

std::string_view to_string(Answer answer) {
  switch (answer) {
    case Answer::accept: return "accept";
    case Answer::refuse: return "refuse";
    case Answer::rate_limit: return "rate_limit";
    case Answer::refuse_credential: return "refuse_credential";
    case Answer::refuse_connection: return "refuse_connection";
    case Answer::drop_after_request: return "drop_after_request";
    case Answer::hold: return "hold";
  }
  return "?";
}

void Harness::run_until(const std::function<bool()>& done) { test::run_until(io(), done); }

connectors::ChannelDeps polling_deps(boost::asio::io_context& io, store::Database& db, net::Transport& transport,
                                     int& pokes, std::chrono::milliseconds tick) {
  return {[&io](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); },
          db,
          transport,
          [] { return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now()); },
          [&pokes] { ++pokes; },
          [&io, tick](std::chrono::milliseconds delay, std::move_only_function<void()> f) {
            auto timer = std::make_shared<boost::asio::steady_timer>(io, std::min(delay, tick));
            timer->async_wait([timer, f = std::move(f)](const boost::system::error_code& ec) mutable {
              if (!ec) f();
            });
          }};
}

void Harness::run_for(std::chrono::milliseconds how_long) {
  auto& loop = io();
  const auto end = std::chrono::steady_clock::now() + how_long;
  for (auto now = std::chrono::steady_clock::now(); now < end; now = std::chrono::steady_clock::now()) {
    loop.restart();
    // Nothing queued at all: nothing can happen on this loop but what another thread posts.
    if (loop.run_one_for(end - now) == 0 && loop.stopped()) std::this_thread::sleep_for(5ms);
  }
}

void check_channel_contract(const MakeHarness& make) {
  SECTION("dedupe: a message delivered twice is stored once, and the agent hears of it once") { check_dedupe(make); }
  SECTION("done: called once per send, on the loop, never from inside send()") { check_done(make); }
  SECTION("retry: RetryAfter only when nothing left") { check_retry(make); }
  SECTION("unknown: never resent by the channel itself") { check_unknown(make); }
  SECTION("health: a refused credential pauses, the fix resumes") { check_health(make); }
  SECTION("destruction: a send in flight when the channel goes") { check_destruction(make); }
}

}  // namespace dispatchd::test::contract
