// The read-ahead's gate (connectors/read_ahead_gate.h) and the WhatsApp channel reading a
// round ahead while storing is slow (connectors/whatsapp/channel.cpp).
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "connectors/read_ahead_gate.h"
#include "connectors/whatsapp/channel.h"
#include "tests/connectors/whatsapp_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using connectors::ReadAheadGate;

TEST_CASE("read-ahead gate: opens on a slow step for its hold, and only slow steps extend it", "[read_ahead]") {
  const ReadAheadGate::Clock::time_point t0{};
  ReadAheadGate gate({.slow_per_event = 500us, .hold = 10s});
  CHECK_FALSE(gate.wanted(t0));  // nothing seen yet: a warm start reads nothing ahead
  struct Row {
    std::chrono::nanoseconds took;
    std::size_t events;
    std::chrono::seconds at;  // when the step ended, from t0
    std::chrono::seconds asked;
    bool wanted;
  };
  const std::vector<Row> rows{
      {100us, 1, 0s, 0s, false},     // fast: a warm insert
      {7ms, 16, 0s, 0s, false},      // 16 events in 7 ms: 0.44 ms each, under the bound
      {9ms, 16, 1s, 1s, true},       // 0.56 ms each: slow
      {1ms, 1, 1s, 10s, true},       // a slow step by itself: open until 11 s
      {100us, 1, 2s, 10s, true},     // a fast one does not close it
      {100us, 1, 2s, 11s, false},    // the hold ran out
      {600us, 0, 12s, 12s, true},    // no events counts as one
      {0ns, 0, 12s, 22s, false},     // 0 ns for none: fast
  };
  for (const auto& row : rows) {
    INFO("took " << row.took.count() << " ns for " << row.events << " at " << row.at.count() << " s");
    gate.observe(row.took, row.events, t0 + row.at);
    CHECK(gate.wanted(t0 + row.asked) == row.wanted);
  }
}

namespace {

// The channel with a read-ahead the test answers: each call's keys, and its `then` held.
struct ReadAheadFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  test::HoldingTransport transport{io};
  std::vector<connectors::InboundEvents> asked;
  std::vector<std::move_only_function<void(std::chrono::nanoseconds)>> held;
  std::vector<int> statuses;
  whatsapp::WhatsAppChannel channel;

  explicit ReadAheadFixture(ReadAheadGate::Settings gate)
      : channel({[this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); }, db, transport,
                 [] { return test::k_t0; }, [] {}, {},
                 [this](connectors::InboundEvents keys, std::move_only_function<void(std::chrono::nanoseconds)> then) {
                   asked.push_back(std::move(keys));
                   held.push_back(std::move(then));
                 }},
                settings(gate)) {}

  static whatsapp::ChannelSettings settings(ReadAheadGate::Settings gate) {
    auto s = test::whatsapp_settings();
    s.read_ahead = gate;
    return s;
  }
  void post(int n) {
    const auto webhook = test::signed_post(test::text_webhook(n));
    channel.handle(webhook.request(), [this](connectors::WebhookResponse r) { statuses.push_back(r.status); });
  }
  void run() {
    io.run();
    io.restart();
  }
  std::vector<std::string> stored() {
    std::vector<std::string> ids;
    for (std::int64_t id = 1;; ++id) {
      auto m = store::stored_inbound(db, id);
      if (!m) return ids;
      ids.push_back(m->provider_message_id);
    }
  }
};

}  // namespace

TEST_CASE("whatsapp channel: while storing is fast, webhooks go straight to the store", "[whatsapp][read_ahead]") {
  ReadAheadFixture f({.slow_per_event = std::chrono::hours(1), .hold = 10s});
  for (int n = 1; n <= 3; ++n) {
    f.post(n);
    f.run();
  }
  CHECK(f.asked.empty());
  CHECK(f.channel.counters().rounds_read_ahead == 0);
  CHECK(f.statuses == std::vector<int>{200, 200, 200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1", "wamid.read2", "wamid.read3"});
}

TEST_CASE("whatsapp channel: after a slow store step, rounds are read ahead first, stored in the order they came",
          "[whatsapp][read_ahead]") {
  // Every step counts as slow here: the first webhook is stored at once (nothing was slow
  // yet) and opens the gate.
  ReadAheadFixture f({.slow_per_event = 0us, .hold = 10s});
  f.post(1);
  f.run();
  REQUIRE(f.asked.empty());
  REQUIRE(f.statuses == std::vector<int>{200});

  f.post(2);
  f.run();
  REQUIRE(f.asked.size() == 1);  // read ahead, not stored yet
  CHECK(f.statuses.size() == 1);
  REQUIRE(f.asked[0].messages.size() == 1);
  const auto& key = f.asked[0].messages[0];
  CHECK(key.provider_message_id == "wamid.read2");
  CHECK(key.conversation_id == "5215510000002");
  CHECK(key.sender == "5215510000002");
  CHECK(key.text.empty());  // keys only: the text and the raw payload stay with the channel
  CHECK(key.raw_payload.empty());

  f.post(3);  // comes while the round is read: waits its turn
  f.post(4);
  f.run();
  CHECK(f.asked.size() == 1);

  auto then = std::move(f.held[0]);
  then(2ms);  // the reads were slow too: the next round is read ahead as well
  f.run();
  CHECK(f.statuses == std::vector<int>{200, 200});
  REQUIRE(f.asked.size() == 2);
  CHECK(f.asked[1].messages.size() == 2);

  auto next = std::move(f.held[1]);
  next(0ns);
  f.run();
  CHECK(f.statuses == std::vector<int>{200, 200, 200, 200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1", "wamid.read2", "wamid.read3", "wamid.read4"});
  CHECK(f.channel.counters().rounds_read_ahead == 2);
}

TEST_CASE("whatsapp channel: a round whose read-ahead never answers is not answered either", "[whatsapp][read_ahead]") {
  // At shutdown the read-ahead thread drops what it holds: those webhooks get no 200, so Meta
  // delivers them again; nothing was stored, nothing is lost.
  auto f = std::make_unique<ReadAheadFixture>(ReadAheadGate::Settings{.slow_per_event = 0us, .hold = 10s});
  f->post(1);
  f->run();
  f->post(2);
  f->run();
  REQUIRE(f->asked.size() == 1);
  f->held.clear();  // dropped uncalled
  f->run();
  CHECK(f->statuses == std::vector<int>{200});
  CHECK(f->stored() == std::vector<std::string>{"wamid.read1"});
}
