// The outbox pump against a scripted channel: each outcome becomes its store transition,
// a write that fails is written again, sends are bounded, and no row leaves twice.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/outbox_pump.h"
#include "store/instances.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/round.h"
#include "tests/io_run.h"
#include "tests/store/disk_full.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// A channel whose sends wait until the test answers them (through the loop, as the
// contract says). `resolves` makes it look up unknown sends, answered the same way.
class ScriptedChannel final : public connectors::Channel {
 public:
  ScriptedChannel(boost::asio::io_context& io, std::string name) : m_io(io), m_name(std::move(name)) {}

  std::string_view name() const override { return m_name; }
  void send(const store::OutboxItem& item, connectors::SendDone done) override {
    sent.push_back(item.id);
    held.push_back({item.id, std::move(done)});
  }
  bool resolve_unknown(const store::OutboxItem& item, connectors::SendDone& done) override {
    if (!resolves) return false;
    looked_up.push_back(item.id);
    held.push_back({item.id, std::move(done)});
    return true;
  }
  connectors::Health health() const override { return {}; }
  connectors::WebhookEndpoint* webhook() override { return nullptr; }
  void stop() override {}

  // Answers the oldest held send (or lookup).
  void answer(connectors::SendOutcome outcome) {
    REQUIRE_FALSE(held.empty());
    auto done = std::move(held.front().done);
    held.pop_front();
    boost::asio::post(m_io,
                      [done = std::move(done), outcome = std::move(outcome)]() mutable { done(std::move(outcome)); });
  }

  struct Held {
    std::int64_t id;
    connectors::SendDone done;
  };
  std::vector<std::int64_t> sent;       // every send() by action id, in order
  std::vector<std::int64_t> looked_up;  // every resolve_unknown() taken
  std::deque<Held> held;
  bool resolves = false;

 private:
  boost::asio::io_context& m_io;
  std::string m_name;
};

struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  ScriptedChannel channel{io, "whatsapp"};
  int writes = 0;
  std::vector<store::ErrorKind> write_failures;  // the next writes fail with these, in order
  daemon::OutboxPump pump{{io, db, [] { return test::k_t0; },
                           [this](store::Database& d, std::int64_t id, const connectors::SendOutcome& outcome,
                                  store::Time now) -> store::Result<void> {
                             ++writes;
                             if (!write_failures.empty()) {
                               const auto kind = write_failures.front();
                               write_failures.erase(write_failures.begin());
                               return std::unexpected(store::Error{kind, "injected"});
                             }
                             return daemon::write_outcome(d, id, outcome, now);
                           }},
                          {.max_in_flight = 4, .store_retry = 10ms}};
  int messages = 0;

  Fixture() { pump.add(channel); }

  // An approved reply on `channel`, as the agent queues one, to `to` (by default a
  // counterpart of its own: most tests here are about the channel, not one customer).
  std::int64_t approve(const std::string& on = "whatsapp", std::string to = "") {
    ++messages;
    if (to.empty()) to = "1555000" + std::to_string(1000 + messages);
    auto message = store::insert_inbound(
        db, {on, "m" + std::to_string(messages), "c" + std::to_string(messages), to, "hola", "{}", ""}, test::k_t0);
    REQUIRE(message);
    auto id = store::add_action(
        db, {.message_id = message->id, .action = "reply", .arguments = "{}", .recipient = to, .body = "hola"},
        test::k_t0);
    REQUIRE(id);
    return *id;
  }
  // The action's status, as v_actions shows it.
  std::string status(std::int64_t id) {
    for (const auto& [e, name] : store::SqlNames<store::ActionStatus>::table) {
      if (count("SELECT count(*) FROM actions WHERE id = " + std::to_string(id) + " AND status = '" +
                std::string(name) + "'") == 1)
        return std::string(name);
    }
    return "none";
  }
  std::int64_t count(const std::string& sql) { return test::query_int(db, sql).value(); }
  // Runs the loop until the channel holds `n` sends, and a little more (to see no more come).
  void until_held(ScriptedChannel& c, std::size_t n) {
    test::run_until(io, [&] { return c.held.size() >= n; });
    settle();
  }
  void settle() {
    io.restart();
    io.run_for(30ms);
  }
};

}  // namespace

TEST_CASE("outbox pump: each send outcome becomes its store transition", "[pump]") {
  struct Row {
    const char* what;
    connectors::SendOutcome outcome;
    const char* status;      // the action's, after the write
    const char* escalation;  // the escalation opened, "" for none
  };
  const std::vector<Row> table{
      {"sent", connectors::Sent{"wamid.OUT"}, "sent", ""},
      {"retry after", connectors::RetryAfter{1h, "rate limit"}, "approved", ""},
      {"failed", connectors::Failed{"undeliverable"}, "failed", "send_failed"},
      {"failed: the window closed", connectors::Failed{"(#131047) window closed", store::SendFailure::window_closed},
       "failed", "window_closed"},
      {"unknown", connectors::Unknown{"timed out"}, "unknown", "delivery_unknown"},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      Fixture f;
      const auto id = f.approve();
      f.pump.pump();
      f.until_held(f.channel, 1);
      CHECK(f.status(id) == "sending");
      f.channel.answer(row.outcome);
      test::run_until(f.io, [&] { return f.status(id) != "sending"; });
      f.settle();
      CHECK(f.status(id) == row.status);
      CHECK(f.count("SELECT count(*) FROM escalations") == (*row.escalation ? 1 : 0));
      if (*row.escalation)
        CHECK(f.count(std::string("SELECT count(*) FROM v_escalations WHERE reason = '") + row.escalation + "'") == 1);
      CHECK(f.channel.sent == std::vector<std::int64_t>{id});  // a retry waits its hour: sent once
      CHECK(f.pump.in_flight() == 0);
      CHECK(f.writes == 1);
    }
  }
  SECTION("sent: the provider's id is kept") {
    Fixture f;
    const auto id = f.approve();
    f.pump.pump();
    f.until_held(f.channel, 1);
    f.channel.answer(connectors::Sent{"wamid.OUT"});
    test::run_until(f.io, [&] { return f.status(id) == "sent"; });
    CHECK(f.count("SELECT count(*) FROM actions WHERE provider_message_id = 'wamid.OUT'") == 1);
  }
}

TEST_CASE("outbox pump: a channel that can look up an unknown send resolves it first", "[pump]") {
  struct Row {
    const char* what;
    connectors::SendOutcome found;
    const char* status;
  };
  const std::vector<Row> table{
      {"found: sent", connectors::Sent{"gmail-1"}, "sent"},
      {"certainly not sent: in line again", connectors::RetryAfter{1h, "not in the sent mail"}, "approved"},
      {"still unknown: escalated", connectors::Unknown{"lookup failed"}, "unknown"},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      Fixture f;
      f.channel.resolves = true;
      const auto id = f.approve();
      f.pump.pump();
      f.until_held(f.channel, 1);
      f.channel.answer(connectors::Unknown{"timed out"});
      f.until_held(f.channel, 1);  // the lookup
      CHECK(f.channel.looked_up == std::vector<std::int64_t>{id});
      CHECK(f.status(id) == "sending");
      CHECK(f.pump.in_flight() == 1);
      f.channel.answer(row.found);
      test::run_until(f.io, [&] { return f.status(id) != "sending"; });
      CHECK(f.status(id) == row.status);
      CHECK(f.channel.looked_up.size() == 1);  // the lookup's own Unknown is final
      CHECK(f.channel.sent == std::vector<std::int64_t>{id});
    }
  }
}

TEST_CASE("outbox pump: at start, a lookup channel's rows left 'sending' are looked up, never sent blindly", "[pump]") {
  struct Row {
    const char* what;
    bool resolves;
    std::optional<connectors::SendOutcome> found;  // the lookup's answer
    const char* status;
    std::size_t sends;  // send() calls after the lookup
  };
  const std::vector<Row> table{
      {"found in the sent mail: sent, not sent again", true, connectors::Sent{"gmail-1"}, "sent", 0},
      {"certainly not sent: sent again", true, connectors::RetryAfter{0ms, "not found on two searches"}, "sent", 1},
      {"the lookup cannot tell: unknown, escalated", true, connectors::Unknown{"search failed"}, "unknown", 0},
      {"a channel that cannot look up: unknown, escalated", false, std::nullopt, "unknown", 0},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      Fixture f;
      const auto id = f.approve("gmail");
      REQUIRE(store::begin_send(f.db, test::k_t0, "gmail").value());  // the last run died here
      ScriptedChannel gmail{f.io, "gmail"};
      gmail.resolves = row.resolves;
      f.pump.add(gmail);
      if (row.found) {
        f.until_held(gmail, 1);
        CHECK(gmail.looked_up == std::vector<std::int64_t>{id});
        CHECK(gmail.sent.empty());
        gmail.answer(*row.found);
      }
      if (row.sends > 0) {  // "certainly not sent": in line again, then sent; that send answers
        f.until_held(gmail, 1);
        CHECK(f.status(id) == "sending");
        gmail.answer(connectors::Sent{"gmail-2"});
      }
      test::run_until(f.io, [&] { return f.status(id) != "sending"; });
      f.settle();
      CHECK(f.status(id) == row.status);
      CHECK(gmail.sent.size() == row.sends);
      CHECK(f.count("SELECT count(*) FROM escalations WHERE reason = 'delivery_unknown'") ==
            (std::string(row.status) == "unknown" ? 1 : 0));
    }
  }
}

TEST_CASE("outbox pump: a write the store refuses for now is written again, never dropped", "[pump][store]") {
  Fixture f;
  f.write_failures = {store::ErrorKind::busy, store::ErrorKind::full, store::ErrorKind::io};
  const auto id = f.approve();
  f.pump.pump();
  f.until_held(f.channel, 1);
  f.channel.answer(connectors::Sent{"wamid.OUT"});
  test::run_until(f.io, [&] { return f.status(id) == "sent"; });
  CHECK(f.writes == 4);
  CHECK(f.pump.stats().front().writes_retried == 3);
  CHECK(f.pump.stats().front().writes_failed == 0);
  CHECK(f.channel.sent == std::vector<std::int64_t>{id});  // 'sending' meanwhile: never sent again
}

TEST_CASE("outbox pump: a write refused for good is logged and counted, the row stays sending", "[pump][store]") {
  Fixture f;
  f.write_failures = {store::ErrorKind::refused};
  const auto id = f.approve();
  f.pump.pump();
  f.until_held(f.channel, 1);
  f.channel.answer(connectors::Sent{"wamid.OUT"});
  test::run_until(f.io, [&] { return f.writes == 1; });
  f.settle();
  CHECK(f.writes == 1);  // the same write would be refused again
  CHECK(f.status(id) == "sending");
  CHECK(f.pump.stats().front().writes_failed == 1);
  CHECK(f.channel.sent == std::vector<std::int64_t>{id});
}

TEST_CASE("outbox pump: an outcome whose round is lost is written again once the disk has room", "[pump][store]") {
  Fixture f;
  store::Round round(f.db, [&f](std::function<void()> fn) { boost::asio::post(f.io, std::move(fn)); });
  const auto id = f.approve();
  round.commit();
  f.pump.pump();
  f.until_held(f.channel, 1);
  // A deferred constraint fails the COMMIT of the round that writes 'failed', as a full
  // disk fails the WAL write.
  REQUIRE_FALSE(f.db.in_transaction());
  test::fill_disk(f.db, "UPDATE OF status ON actions", "NEW.status = 'failed'");
  f.channel.answer(connectors::Failed{"undeliverable"});
  test::run_until(f.io, [&] { return round.stats().failed_commits >= 2; });
  CHECK(f.status(id) == "sending");
  REQUIRE_FALSE(f.db.in_transaction());
  test::free_disk(f.db, "actions");
  test::run_until(f.io, [&] { return f.status(id) == "failed"; });
  CHECK(f.count("SELECT count(*) FROM v_escalations WHERE reason = 'send_failed'") == 1);
  CHECK(f.pump.stats().front().writes_retried >= 2);
  CHECK(f.channel.sent == std::vector<std::int64_t>{id});
}

TEST_CASE("outbox pump: sends in flight per channel are bounded, and each row leaves once", "[pump]") {
  Fixture f;
  ScriptedChannel gmail{f.io, "gmail"};
  f.pump.add(gmail);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(f.approve());
  for (int i = 0; i < 6; ++i) ids.push_back(f.approve("gmail"));
  f.pump.pump();
  const auto all_sent = [&] { return f.count("SELECT count(*) FROM actions WHERE status = 'sent'") == 16; };
  std::size_t most = 0;
  std::size_t most_gmail = 0;
  while (!all_sent()) {
    test::run_until(f.io, [&] { return !f.channel.held.empty() || !gmail.held.empty() || all_sent(); });
    f.settle();  // no more than the bound come
    most = std::max(most, f.channel.held.size());
    most_gmail = std::max(most_gmail, gmail.held.size());
    CHECK(f.pump.in_flight() == f.channel.held.size() + gmail.held.size());
    while (!f.channel.held.empty()) f.channel.answer(connectors::Sent{"w"});
    while (!gmail.held.empty()) gmail.answer(connectors::Sent{"g"});
    f.settle();
  }
  CHECK(most == 4);
  CHECK(most_gmail == 4);
  std::map<std::int64_t, int> times;
  for (const auto id : f.channel.sent) ++times[id];
  for (const auto id : gmail.sent) ++times[id];
  CHECK(times.size() == ids.size());
  for (const auto& [id, n] : times) CHECK(n == 1);
  CHECK(f.pump.in_flight() == 0);
}

TEST_CASE("outbox pump: a channel asked to come back later waits, the others do not", "[pump]") {
  Fixture f;
  ScriptedChannel gmail{f.io, "gmail"};
  f.pump.add(gmail);
  const auto first = f.approve();
  f.pump.pump();
  f.until_held(f.channel, 1);
  f.channel.answer(connectors::RetryAfter{300ms, "rate limit"});
  test::run_until(f.io, [&] { return f.status(first) == "approved"; });
  const auto second = f.approve();
  const auto mail = f.approve("gmail");
  f.pump.pump();
  f.until_held(gmail, 1);
  CHECK(gmail.sent == std::vector<std::int64_t>{mail});
  CHECK(f.channel.sent == std::vector<std::int64_t>{first});  // held back, both rows wait
  // After the pause the pump sends again, the retried row first.
  test::run_until(f.io, [&] { return f.channel.held.size() == 2; });
  CHECK(f.channel.sent == std::vector<std::int64_t>{first, first, second});
}

TEST_CASE("outbox pump: sends to one counterpart leave one at a time, in the order queued", "[pump]") {
  struct Row {
    const char* what;
    connectors::SendOutcome outcome;  // the first send's
    const char* status;               // the first's, in the end
    bool retried;                     // sent again, still before the second
  };
  const std::vector<Row> table{
      {"sent", connectors::Sent{"wamid.1"}, "sent", false},
      {"failed", connectors::Failed{"undeliverable"}, "failed", false},
      {"unknown", connectors::Unknown{"timed out"}, "unknown", false},
      {"come back later: sent again before the second", connectors::RetryAfter{100ms, "rate limit"}, "sent", true},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      Fixture f;
      const auto first = f.approve("whatsapp", "15551234567");
      const auto second = f.approve("whatsapp", "15551234567");
      const auto other = f.approve();  // another customer's: not held back
      f.pump.pump();
      f.until_held(f.channel, 2);
      CHECK(f.channel.sent == std::vector<std::int64_t>{first, other});
      CHECK(f.status(second) == "approved");
      f.channel.answer(row.outcome);  // the first's (the oldest held)
      test::run_until(f.io, [&] { return f.status(first) != "sending"; });
      f.channel.answer(connectors::Sent{"wamid.other"});
      std::vector<std::int64_t> expected{first, other};
      if (row.retried) {
        test::run_until(f.io, [&] { return f.channel.sent.size() == 3; });
        f.settle();
        expected.push_back(first);
        CHECK(f.channel.sent == expected);
        CHECK(f.status(second) == "approved");  // still behind the first
        f.channel.answer(connectors::Sent{"wamid.1"});
      }
      test::run_until(f.io, [&] { return f.status(second) == "sending"; });
      f.settle();
      expected.push_back(second);
      CHECK(f.channel.sent == expected);
      CHECK(f.status(first) == row.status);
    }
  }
}

TEST_CASE("outbox pump: the holding reply leaves before staff's answer, approved before it left", "[pump]") {
  Fixture f;
  auto message = store::insert_inbound(f.db, {"whatsapp", "m.e", "c.e", "15551234567", "hola", "{}", ""}, test::k_t0);
  REQUIRE(message);
  REQUIRE(store::take_next(f.db, "w", test::k_t0, 60s).value());
  const auto reply = [&](const std::string& text) {
    return store::NewAction{
        .message_id = message->id, .action = "reply", .arguments = "{}", .recipient = "15551234567", .body = text};
  };
  auto escalation = store::escalate_message(
      f.db, {message->id, store::EscalationReason::needs_approval, "{}", "{}", reply("It ships tomorrow.")},
      reply("A colleague will answer shortly."), test::k_t0);
  REQUIRE(escalation);
  // Staff approve the proposal (stored before the holding reply) before the pump ran.
  const auto answer = store::approve_escalation(f.db, *escalation, "ana", test::k_t0);
  REQUIRE(answer);
  f.pump.pump();
  f.until_held(f.channel, 1);
  REQUIRE(f.channel.sent.size() == 1);
  const auto holding = f.channel.sent.front();
  CHECK(holding != *answer);
  CHECK(f.status(*answer) == "approved");
  f.channel.answer(connectors::Sent{"wamid.holding"});
  test::run_until(f.io, [&] { return f.channel.sent.size() == 2; });
  CHECK(f.channel.sent == std::vector<std::int64_t>{holding, *answer});
}

TEST_CASE("outbox pump: a pause another instance was told of holds this one's sends too", "[pump]") {
  Fixture f;
  f.pump.hold_channel("whatsapp", 300ms);
  f.pump.hold_channel("telegram", 1h);  // a channel this pump does not have: nothing
  const auto first = f.approve();
  f.pump.pump();
  f.settle();
  CHECK(f.channel.sent.empty());
  test::run_until(f.io, [&] { return f.channel.held.size() == 1; });
  CHECK(f.channel.sent == std::vector<std::int64_t>{first});
}

TEST_CASE("outbox pump: with several instances a RetryAfter is stored for the others", "[pump]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  boost::asio::io_context io;
  ScriptedChannel channel{io, "whatsapp"};
  daemon::OutboxPump pump{{io, db, [] { return test::k_t0; }, daemon::write_outcome, "instance-a"},
                          {.max_in_flight = 4, .store_retry = 10ms}};
  pump.add(channel);
  auto message = store::insert_inbound(db, {"whatsapp", "m1", "c1", "s", "hola", "{}", ""}, test::k_t0);
  REQUIRE(message);
  REQUIRE(store::add_action(
      db, {.message_id = message->id, .action = "reply", .arguments = "{}", .recipient = "1", .body = "hola"},
      test::k_t0));
  pump.pump();
  test::run_until(io, [&] { return channel.held.size() == 1; });
  channel.answer(connectors::RetryAfter{2500ms, "rate limit"});
  std::optional<std::vector<store::ChannelHold>> holds;
  test::run_until(io, [&] {
    auto read = store::channel_holds(db, test::k_t0);
    if (read && !read->empty()) holds = *read;
    return holds.has_value();
  });
  REQUIRE(holds->size() == 1);
  CHECK((*holds)[0].channel == "whatsapp");
  CHECK((*holds)[0].until == test::k_t0 + 3s);  // whole seconds, rounded up
  CHECK((*holds)[0].held_by == "instance-a");
  pump.stop();
}

TEST_CASE("outbox pump: once stopped it takes nothing new, outcomes in flight are still written", "[pump]") {
  Fixture f;
  const auto sending = f.approve();
  f.pump.pump();
  f.until_held(f.channel, 1);
  const auto waiting = f.approve();
  f.pump.stop();
  f.pump.pump();
  f.channel.answer(connectors::Sent{"wamid.OUT"});
  test::run_until(f.io, [&] { return f.status(sending) == "sent"; });
  f.settle();
  CHECK(f.status(waiting) == "approved");
  CHECK(f.channel.sent == std::vector<std::int64_t>{sending});
  CHECK(f.pump.in_flight() == 0);
}

TEST_CASE("outbox pump: sends marked sending but waiting for their commit count as in flight", "[pump]") {
  Fixture f;
  store::Round round(f.db, [&](std::function<void()> then) { boost::asio::post(f.io, std::move(then)); });
  const auto id = f.approve();
  round.commit();
  f.pump.pump();
  // One handler at a time: the pump marks it `sending` in the open round, and the request
  // leaves only once that round is committed (and, on SQLite, synced).
  test::run_until(f.io, [&] { return f.status(id) == "sending"; });
  CHECK(f.channel.sent.empty());
  CHECK(f.pump.in_flight() == 1);  // a drain that stopped here would lose its outcome
  f.until_held(f.channel, 1);
  CHECK(f.pump.in_flight() == 1);
  f.channel.answer(connectors::Sent{"wamid.OUT"});
  test::run_until(f.io, [&] { return f.status(id) == "sent"; });
  CHECK(f.pump.in_flight() == 0);
}
