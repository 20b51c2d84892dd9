// The read-ahead's gate (connectors/read_ahead_gate.h) and the WhatsApp channel reading a
// round ahead while storing is slow (connectors/whatsapp/channel.cpp).
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "connectors/read_ahead_gate.h"
#include "connectors/whatsapp/channel.h"
#include "tests/connectors/whatsapp_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using connectors::ReadAheadGate;

TEST_CASE("read-ahead gate: a step that read from the disk opens it for its hold, and only such steps extend it",
          "[read_ahead]") {
  const ReadAheadGate::Clock::time_point t0{};
  ReadAheadGate gate({.hold = 10s});
  CHECK_FALSE(gate.wanted(t0));  // nothing seen yet: a warm start reads nothing ahead
  struct Row {
    std::int64_t blocks;      // read from storage by the step
    std::chrono::seconds at;  // when the step ended, from t0
    std::chrono::seconds asked;
    bool wanted;
  };
  const std::vector<Row> rows{
      {0, 0s, 0s, false},     // all from memory
      {8, 1s, 1s, true},      // one page from disk: open until 11 s
      {0, 2s, 10s, true},     // a step from memory does not close it
      {0, 2s, 11s, false},    // the hold ran out
      {1, 12s, 12s, true},    // any read counts
      {8, 15s, 24s, true},    // extended to 25 s
      {-3, 30s, 30s, false},  // a count that went back (it cannot) reads as none
  };
  for (const auto& row : rows) {
    INFO(row.blocks << " blocks at " << row.at.count() << " s, asked at " << row.asked.count() << " s");
    gate.observe(row.blocks, t0 + row.at);
    CHECK(gate.wanted(t0 + row.asked) == row.wanted);
  }
}

namespace {

// The loop thread's disk reads as the channel sees them: none, or more at every look (every
// store step reads from the disk).
std::int64_t no_reads() { return 0; }
std::int64_t reads_growing() {
  static std::int64_t blocks = 0;
  return blocks += 8;
}

// Reads from the disk only while `disk` is set.
bool disk = false;
std::int64_t reads_while_disk() {
  static std::int64_t blocks = 0;
  return disk ? blocks += 8 : blocks;
}

// The channel with a read-ahead the test answers: each call's keys, and its `then` held.
struct ReadAheadFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  test::HoldingTransport transport{io};
  std::vector<connectors::InboundEvents> asked;
  std::vector<std::move_only_function<void(std::int64_t)>> held;
  std::vector<int> statuses;
  whatsapp::WhatsAppChannel channel;

  explicit ReadAheadFixture(std::int64_t (*blocks_read)(), std::chrono::milliseconds hold = 2s)
      : channel({[this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); },
                 db,
                 transport,
                 [] { return test::k_t0; },
                 [] {},
                 {},
                 [this](connectors::InboundEvents keys, std::move_only_function<void(std::int64_t)> then) {
                   asked.push_back(std::move(keys));
                   held.push_back(std::move(then));
                 }},
                settings(blocks_read, hold)) {}

  static whatsapp::ChannelSettings settings(std::int64_t (*blocks_read)(), std::chrono::milliseconds hold) {
    auto s = test::whatsapp_settings();
    s.blocks_read = blocks_read;
    s.read_ahead.hold = hold;
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

TEST_CASE("whatsapp channel: while storing reads nothing from the disk, webhooks go straight to the store",
          "[whatsapp][read_ahead]") {
  ReadAheadFixture f(no_reads);
  for (int n = 1; n <= 3; ++n) {
    f.post(n);
    f.run();
  }
  CHECK(f.asked.empty());
  CHECK(f.channel.counters().rounds_read_ahead == 0);
  CHECK(f.statuses == std::vector<int>{200, 200, 200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1", "wamid.read2", "wamid.read3"});
}

TEST_CASE("whatsapp channel: after a store step read from the disk, rounds are read ahead first, stored in order",
          "[whatsapp][read_ahead]") {
  // Every store step reads from the disk here: the first webhook is stored at once (nothing
  // had read from the disk yet) and opens the gate.
  ReadAheadFixture f(reads_growing);
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
  then(16);  // the reads went to the disk too: the next round is read ahead as well
  f.run();
  CHECK(f.statuses == std::vector<int>{200, 200});
  REQUIRE(f.asked.size() == 2);
  CHECK(f.asked[1].messages.size() == 2);

  auto next = std::move(f.held[1]);
  next(0);
  f.run();
  CHECK(f.statuses == std::vector<int>{200, 200, 200, 200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1", "wamid.read2", "wamid.read3", "wamid.read4"});
  CHECK(f.channel.counters().rounds_read_ahead == 2);
}

TEST_CASE("whatsapp channel: once nothing has read from the disk for the hold, what waits goes straight to the store",
          "[whatsapp][read_ahead]") {
  ReadAheadFixture f(reads_while_disk, 50ms);
  disk = true;
  f.post(1);  // its store step reads from the disk: the gate opens for 50 ms
  f.run();
  disk = false;
  f.post(2);
  f.run();
  REQUIRE(f.asked.size() == 1);
  f.post(3);  // waits behind the round being read
  f.run();
  std::this_thread::sleep_for(100ms);  // the hold runs out meanwhile
  auto then = std::move(f.held[0]);
  then(0);  // and the reads ahead read nothing from the disk
  f.run();
  CHECK(f.asked.size() == 1);  // 3 was not read ahead
  CHECK(f.statuses == std::vector<int>{200, 200, 200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1", "wamid.read2", "wamid.read3"});
  CHECK(f.channel.counters().rounds_read_ahead == 1);
}

TEST_CASE("whatsapp channel: a round whose read-ahead never answers is not answered either", "[whatsapp][read_ahead]") {
  // At shutdown the read-ahead thread drops what it holds: those webhooks get no 200, so Meta
  // delivers them again; nothing was stored, nothing is lost.
  ReadAheadFixture f(reads_growing);
  f.post(1);
  f.run();
  f.post(2);
  f.run();
  REQUIRE(f.asked.size() == 1);
  f.held.clear();  // dropped uncalled
  f.run();
  CHECK(f.statuses == std::vector<int>{200});
  CHECK(f.stored() == std::vector<std::string>{"wamid.read1"});
}
