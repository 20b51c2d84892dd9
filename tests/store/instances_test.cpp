// Several dispatchd instances on one database (store/instances.h): two or three Database
// connections to one database stand in for the instances, with threads where a race must
// be shown. Runs on both backends (store_tests is registered twice): on SQLite the one
// writer lock serializes the instances, on PostgreSQL the store's row and advisory locks do.

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/instances.h"
#include "store/metrics.h"
#include "store/outbox.h"
#include "store/transaction.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

store::Database connection(const test::TempDir& dir) {
  auto db = test::open_db(dir, store::Database::Mode::existing);
  if (!db) FAIL("cannot open a second connection: " << db.error().message);
  return std::move(*db);
}

std::int64_t insert_message(store::Database& db, const std::string& id, const std::string& conversation,
                            const std::string& channel = "whatsapp") {
  auto result = store::insert_inbound(db, {channel, id, conversation, conversation, "hola " + id, "{}"}, k_t0);
  REQUIRE(result);
  return result->id;
}

std::int64_t take(store::Database& db, const std::string& instance, store::Time now = k_t0) {
  auto taken = store::take_next(db, instance, now, 300s);
  REQUIRE(taken);
  REQUIRE(*taken);
  return (*taken)->id;
}

// A recipient of its own for message `id`'s reply: these tests claim several sends at once,
// which is about the instances, not about one customer's replies.
std::string counterpart_of(std::int64_t id) { return "1555000" + std::to_string(1000 + id); }

// Takes message `id` for `instance`, queues its reply and claims the send: an action in
// 'sending' claimed by `instance`, as when the instance died during the provider call.
std::int64_t send_in_flight(store::Database& db, std::int64_t id, const std::string& instance,
                            const std::string& channel = "") {
  REQUIRE(take(db, instance) == id);
  auto action = store::queue_reply(db, {id, "enviar_mensaje", "{}", counterpart_of(id), "hola"}, k_t0);
  REQUIRE(action);
  auto claimed = store::begin_send(db, k_t0, channel, instance);
  REQUIRE(claimed);
  REQUIRE(*claimed);
  REQUIRE((*claimed)->id == *action);
  return *action;
}

std::int64_t count_of(store::Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

// Instances a and b started at t0, and four messages in conversations c1 to c4, the third
// on `third_channel`.
struct TwoInstances {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::array<std::int64_t, 4> messages{};

  explicit TwoInstances(const std::string& third_channel) {
    REQUIRE(store::start_instance(db, "a", k_t0));
    REQUIRE(store::start_instance(db, "b", k_t0));
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const std::string n = std::to_string(i + 1);
      const std::string channel = i == 2 ? third_channel : "whatsapp";
      messages[i] = insert_message(db, channel + "." + n, "c" + n, channel);
    }
  }
};

// Runs `body(db, i)` on `n` threads at once, each on a connection of its own to `dir`'s
// database (instance i); returns what each one reported, "" for nothing wrong.
template <typename Body>
std::vector<std::string> run_instances(const test::TempDir& dir, std::size_t n, Body body) {
  std::vector<store::Database> dbs;
  for (std::size_t i = 0; i < n; ++i) dbs.push_back(connection(dir));
  std::vector<std::string> errors(n);
  std::latch go(static_cast<std::ptrdiff_t>(n));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      errors[i] = body(dbs[i], i);
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

// Three instances claim `lane`'s sends at once (begin_send) until none is left for them;
// what each claimed, in order.
std::vector<std::vector<store::OutboxItem>> claim_at_once(const test::TempDir& dir, const std::string& lane = "") {
  std::vector<std::vector<store::OutboxItem>> claimed(3);
  const auto errors = run_instances(dir, claimed.size(), [&](store::Database& mine, std::size_t i) -> std::string {
    while (true) {
      auto item = store::begin_send(mine, k_t0, lane, "instance-" + std::to_string(i));
      if (!item) return item.error().message;
      if (!*item) return "";
      claimed[i].push_back(std::move(**item));
    }
  });
  CHECK(errors == std::vector<std::string>(claimed.size()));
  return claimed;
}

bool chain_ok(store::Database& db) {
  auto check = store::verify_audit(db);
  REQUIRE(check);
  if (check->first_broken) UNSCOPED_INFO("broken at " << *check->first_broken << ": " << check->reason);
  return !check->first_broken;
}

}  // namespace

TEST_CASE("instances: the advisory lock key of a name never changes", "[instances]") {
  // sha256("dispatchd/<scope>/<name>"), first 8 bytes big-endian, signed: the values any
  // version must keep (Python: int.from_bytes(hashlib.sha256(b"...").digest()[:8], "big", signed=True)).
  CHECK(store::advisory_lock_key("mailbox", "support@example.com") == -2585100249882934220);
  CHECK(store::advisory_lock_key("audit", "tail") == 1679164326755614749);
  CHECK(store::advisory_lock_key("conversation", "15551234567") == -6212821248892098650);
  CHECK(store::advisory_lock_key("mailbox", "a") != store::advisory_lock_key("conversation", "a"));
}

TEST_CASE("instances: a deployment's limit is shared among the live instances, rounded up", "[instances]") {
  struct Row {
    std::int64_t limit, live, share;
  };
  for (const Row& row : {Row{8, 1, 8}, Row{8, 2, 4}, Row{8, 3, 3}, Row{10, 3, 4}, Row{1, 3, 1}, Row{8, 0, 8}}) {
    INFO(row.limit << " among " << row.live);
    CHECK(store::instance_share(row.limit, row.live) == row.share);
  }
}

TEST_CASE("instances: heartbeats tell the live instances from the dead", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  CHECK(store::heartbeat(db, "a", k_t0).value());
  CHECK(store::heartbeat(db, "b", k_t0 + 10s).value());
  CHECK(store::heartbeat(db, "c", k_t0 + 20s).value());
  CHECK(store::live_instances(db, k_t0 + 20s, 30s).value() == 3);
  // At t0+35 a's heartbeat is 35 s old: dead after 30 s.
  CHECK(store::live_instances(db, k_t0 + 35s, 30s).value() == 2);
  CHECK(store::dead_instances(db, k_t0 + 35s, 30s).value() == std::vector<std::string>{"a"});
  CHECK(store::heartbeat(db, "a", k_t0 + 36s).value());  // not taken over yet: alive again
  CHECK(store::dead_instances(db, k_t0 + 36s, 30s).value().empty());
  CHECK(store::dead_instances(db, k_t0 + 60s, 30s).value() == std::vector<std::string>{"b", "c"});
}

TEST_CASE("instances: a takeover makes the dead one's sends unknown and frees its leases", "[instances]") {
  TwoInstances cluster("gmail");
  auto& db = cluster.db;
  const auto [m1, m2, m3, m4] = cluster.messages;
  const auto a_send = send_in_flight(db, m1, "a");
  REQUIRE(take(db, "a") == m2);  // a holds m2's lease for 300 s
  const auto a_mail = send_in_flight(db, m3, "a", "gmail");
  const auto b_send = send_in_flight(db, m4, "b");
  REQUIRE(store::heartbeat(db, "b", k_t0 + 40s).value());

  const std::vector<std::string> lookup{"gmail"};
  auto taken = store::take_over_dead(db, "b", k_t0 + 40s, 30s, lookup);
  REQUIRE(taken);
  CHECK(taken->instances == std::vector<std::string>{"a"});
  CHECK(taken->work.unknown_actions == std::vector<std::int64_t>{a_send});
  CHECK(taken->work.to_resolve == std::vector<std::int64_t>{a_mail});
  CHECK(taken->work.released_leases == 1);
  CHECK(count_of(db, "SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown' AND message_id = " +
                         std::to_string(m1)) == 1);
  CHECK(count_of(db, "SELECT count(*) FROM actions WHERE status = 'unknown' AND id = " + std::to_string(a_send)) == 1);
  // Gmail's send waits for b's lookup; b's own send is untouched.
  CHECK(count_of(db, "SELECT count(*) FROM actions WHERE status = 'sending' AND claimed_by = 'b' AND id IN (" +
                         std::to_string(a_mail) + ", " + std::to_string(b_send) + ")") == 2);
  // m2 is taken again at once, long before a's lease would have ended.
  CHECK(take(db, "b", k_t0 + 41s) == m2);
  // a wakes up: it learns it was taken over, and no one takes it over twice.
  CHECK_FALSE(store::heartbeat(db, "a", k_t0 + 42s).value());
  CHECK(store::live_instances(db, k_t0 + 42s, 30s).value() == 1);
  auto again = store::take_over_dead(db, "c", k_t0 + 90s, 30s, lookup);
  REQUIRE(again);
  CHECK(again->instances == std::vector<std::string>{"b"});  // b went quiet too; a is done
  CHECK(again->work.unknown_actions == std::vector<std::int64_t>{b_send});
  // A restart brings a back.
  REQUIRE(store::start_instance(db, "a", k_t0 + 95s));
  CHECK(store::heartbeat(db, "a", k_t0 + 96s).value());
  CHECK(store::live_instances(db, k_t0 + 96s, 30s).value() == 1);
  CHECK(chain_ok(db));
}

TEST_CASE("instances: a restarted instance takes back its own leases and sends, and only its own", "[instances]") {
  TwoInstances cluster("whatsapp");
  auto& db = cluster.db;
  const auto [m1, m2, m3, m4] = cluster.messages;
  const auto a_send = send_in_flight(db, m1, "a");
  REQUIRE(take(db, "a") == m2);
  const auto b_send = send_in_flight(db, m3, "b");
  REQUIRE(take(db, "b") == m4);

  auto restarted = store::start_instance(db, "a", k_t0 + 5s);
  REQUIRE(restarted);
  CHECK(restarted->unknown_actions == std::vector<std::int64_t>{a_send});
  CHECK(restarted->released_leases == 1);
  CHECK(count_of(db, "SELECT count(*) FROM actions WHERE status = 'sending' AND id = " + std::to_string(b_send)) == 1);
  // m2 is free again; m4 stays b's.
  CHECK(take(db, "a", k_t0 + 6s) == m2);
  auto none = store::take_next(db, "a", k_t0 + 6s, 300s);
  REQUIRE(none);
  CHECK_FALSE(*none);
  CHECK(chain_ok(db));
}

TEST_CASE("instances: two instances taking over one dead instance at once take it over once", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::start_instance(db, "dead", k_t0));
  constexpr int k_sends = 20;
  for (int i = 0; i < k_sends; ++i)
    send_in_flight(db, insert_message(db, "wamid.s" + std::to_string(i), "s" + std::to_string(i)), "dead");
  for (int i = 0; i < 5; ++i) {
    const auto id = insert_message(db, "wamid.l" + std::to_string(i), "l" + std::to_string(i));
    REQUIRE(take(db, "dead") == id);
  }
  std::vector<store::Takeover> results(3);
  const auto errors = run_instances(dir, results.size(), [&](store::Database& mine, std::size_t i) -> std::string {
    auto taken = store::take_over_dead(mine, "live" + std::to_string(i), k_t0 + 60s, 30s);
    if (!taken) return taken.error().message;
    results[i] = std::move(*taken);
    return "";
  });
  CHECK(errors == std::vector<std::string>(results.size()));
  int takers = 0;
  std::size_t unknown = 0;
  std::int64_t released = 0;
  for (const auto& result : results) {
    takers += result.instances.empty() ? 0 : 1;
    unknown += result.work.unknown_actions.size();
    released += result.work.released_leases;
  }
  CHECK(takers == 1);
  CHECK(unknown == k_sends);
  CHECK(released == 5);
  CHECK(count_of(db, "SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'") == k_sends);
  // Each send's message ended once, as escalated.
  CHECK(count_of(db, "SELECT count(*) FROM v_messages WHERE outcome = 'escalated'") == k_sends);
  CHECK(chain_ok(db));
}

TEST_CASE("instances: several instances take from one inbox one message of a conversation at a time, in order",
          "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  constexpr int k_conversations = 6;
  constexpr int k_per_conversation = 8;
  std::map<std::string, std::vector<std::int64_t>> inserted;
  for (int n = 0; n < k_per_conversation; ++n) {
    for (int c = 0; c < k_conversations; ++c) {
      const std::string conversation = "c" + std::to_string(c);
      inserted[conversation].push_back(
          insert_message(db, "wamid." + std::to_string(c) + "." + std::to_string(n), conversation));
    }
  }
  constexpr int k_total = k_conversations * k_per_conversation;

  std::mutex mutex;  // guards the four below
  std::set<std::string> in_progress;
  std::map<std::string, std::vector<std::int64_t>> taken_order;
  std::vector<std::string> overlaps;
  std::multiset<std::int64_t> taken_ids;
  std::atomic<int> finished{0};
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  const auto errors = run_instances(dir, 3, [&](store::Database& mine, std::size_t i) -> std::string {
    const std::string self = "instance-" + std::to_string(i);
    while (finished.load() < k_total && std::chrono::steady_clock::now() < deadline) {
      auto next = store::take_next(mine, self, k_t0, 300s);
      if (!next) return "take_next: " + next.error().message;
      if (!*next) {
        std::this_thread::sleep_for(1ms);  // the rest is blocked behind messages in progress
        continue;
      }
      const auto& m = **next;
      {
        const std::lock_guard lock(mutex);
        if (!in_progress.insert(m.conversation_id).second)
          overlaps.push_back(self + " took " + std::to_string(m.id) + " while " + m.conversation_id +
                             " was in progress");
        taken_order[m.conversation_id].push_back(m.id);
        taken_ids.insert(m.id);
      }
      std::this_thread::sleep_for(2ms);  // the model call
      {
        // Out of the set before the message is done: the next one cannot be taken before.
        const std::lock_guard lock(mutex);
        in_progress.erase(m.conversation_id);
      }
      if (auto done = store::finish(mine, m.id, store::Outcome::ignored, k_t0); !done)
        return "finish: " + done.error().message;
      ++finished;
    }
    return "";
  });
  CHECK(errors == std::vector<std::string>(3));
  CHECK(overlaps.empty());
  for (const auto& o : overlaps) UNSCOPED_INFO(o);
  CHECK(finished.load() == k_total);
  CHECK(taken_ids.size() == static_cast<std::size_t>(k_total));
  CHECK(std::set<std::int64_t>(taken_ids.begin(), taken_ids.end()).size() == taken_ids.size());  // none twice
  CHECK(taken_order == inserted);  // each conversation in id (commit) order
  CHECK(count_of(db, "SELECT count(*) FROM inbox WHERE state = 'done'") == k_total);
  CHECK(chain_ok(db));
}

TEST_CASE("instances: each send is claimed by exactly one instance", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  constexpr int k_actions = 30;
  std::set<std::int64_t> queued;
  for (int i = 0; i < k_actions; ++i) {
    const auto id = insert_message(db, "wamid." + std::to_string(i), "c" + std::to_string(i));
    REQUIRE(take(db, "taker") == id);
    auto action = store::queue_reply(db, {id, "enviar_mensaje", "{}", counterpart_of(id), "hola"}, k_t0);
    REQUIRE(action);
    queued.insert(*action);
  }
  const auto claimed = claim_at_once(dir);
  std::multiset<std::int64_t> all;
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    for (const auto& item : claimed[i]) {
      all.insert(item.id);
      CHECK(count_of(db, "SELECT count(*) FROM actions WHERE status = 'sending' AND claimed_by = 'instance-" +
                             std::to_string(i) + "' AND id = " + std::to_string(item.id)) == 1);
    }
  }
  CHECK(std::set<std::int64_t>(all.begin(), all.end()) == queued);
  CHECK(all.size() == queued.size());  // none twice
  CHECK(chain_ok(db));
}

TEST_CASE("instances: each MCP act's tool call is claimed by exactly one instance", "[instances][mcp]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  constexpr int k_calls = 30;
  std::set<std::int64_t> queued;
  for (int i = 0; i < k_calls; ++i) {
    const auto id = insert_message(db, "wamid.t" + std::to_string(i), "c" + std::to_string(i));
    REQUIRE(take(db, "taker") == id);
    auto action = store::queue_reply(
        db, store::with_tool({id, "reservar", "{}", "15551234567"}, "reservas", "book", "{}", std::nullopt), k_t0);
    REQUIRE(action);
    queued.insert(*action);
  }
  std::multiset<std::int64_t> all;
  for (const auto& mine : claim_at_once(dir, std::string(store::k_tool_lane)))
    for (const auto& item : mine) all.insert(item.id);
  CHECK(std::set<std::int64_t>(all.begin(), all.end()) == queued);
  CHECK(all.size() == queued.size());  // none twice
}

TEST_CASE("instances: sends to one counterpart leave one at a time, whichever instance claims them", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  constexpr int k_customers = 4;
  constexpr int k_replies = 24;
  std::map<std::string, std::vector<std::int64_t>> queued;  // per recipient, in the order queued
  for (int i = 0; i < k_replies; ++i) {
    const auto id = insert_message(db, "wamid.o" + std::to_string(i), "o" + std::to_string(i));
    REQUIRE(take(db, "taker") == id);
    const std::string to = counterpart_of(i % k_customers);
    auto action = store::queue_reply(db, {id, "enviar_mensaje", "{}", to, "hola"}, k_t0);
    REQUIRE(action);
    queued[to].push_back(*action);
  }
  // Rounds: three instances claim all they may at once, then every claimed send is sent.
  std::map<std::string, std::vector<std::int64_t>> left;
  for (int round = 0; round <= k_replies; ++round) {
    std::map<std::string, int> per_recipient;
    for (const auto& mine : claim_at_once(dir)) {
      for (const auto& item : mine) {
        ++per_recipient[item.recipient];
        left[item.recipient].push_back(item.id);
        REQUIRE(store::complete_send(db, item.id, "out." + std::to_string(item.id), k_t0));
      }
    }
    if (per_recipient.empty()) break;
    CHECK(per_recipient.size() == static_cast<std::size_t>(k_customers));  // each customer's next at once
    for (const auto& [to, n] : per_recipient) CHECK(n == 1);               // and one each
  }
  CHECK(left == queued);
  CHECK(chain_ok(db));
}

TEST_CASE("instances: concurrent writers append one audit chain that verifies", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto before = store::verify_audit(db)->events;
  constexpr int k_events = 200;
  const auto errors = run_instances(dir, 3, [&](store::Database& mine, std::size_t i) -> std::string {
    for (int n = 0; n < k_events; ++n) {
      const store::AuditEvent event{store::format_time(k_t0), store::AuditKind::config_reload, std::nullopt,
                                    "instance-" + std::to_string(i), "{\"n\":" + std::to_string(n) + "}"};
      if (auto ok = store::record_event(mine, event); !ok) return ok.error().message;
    }
    return "";
  });
  CHECK(errors == std::vector<std::string>(3));
  auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
  CHECK(check->events == before + 3 * k_events);
  // One chain, no fork and no gap: ids run on without a hole.
  CHECK(count_of(db, "SELECT max(id) - min(id) + 1 - count(*) FROM audit") == 0);
}

TEST_CASE("instances: messages inserted at once get ids in commit order", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto first = connection(dir);
  auto second = connection(dir);
  REQUIRE(test::exec(first, std::string(store::begin_write(first.backend()))));
  auto early = store::insert_inbound(first, {"whatsapp", "wamid.1", "c1", "c1", "one", "{}"}, k_t0);
  REQUIRE(early);
  std::atomic<bool> done{false};
  store::Result<store::InsertResult> late = std::unexpected(store::Error::internal("not run"));
  std::thread writer([&] {
    late = store::insert_inbound(second, {"whatsapp", "wamid.2", "c1", "c1", "two", "{}"}, k_t0);
    done = true;
  });
  if (test::on_postgresql()) {
    // The second waits on the audit tail's advisory lock (not merely slow to start).
    auto watcher = connection(dir);
    bool waiting = false;
    for (int i = 0; i < 200 && !waiting; ++i) {
      waiting = count_of(watcher,
                         "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                         " AND wait_event_type = 'Lock' AND wait_event = 'advisory'") == 1;
      if (!waiting) std::this_thread::sleep_for(50ms);
    }
    CHECK(waiting);
  } else {
    std::this_thread::sleep_for(300ms);  // SQLite's busy handler waits for the writer lock
  }
  CHECK_FALSE(done.load());  // waits for the first one's commit
  REQUIRE(test::exec(first, "COMMIT"));
  writer.join();
  REQUIRE(late);
  CHECK(late->id > early->id);
}

TEST_CASE("instances: a provider's pause is shared, the later hold wins, ended ones are not listed", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto other = connection(dir);
  REQUIRE(store::hold_channel(db, "whatsapp", k_t0 + 60s, "a", k_t0));
  REQUIRE(store::hold_channel(other, "whatsapp", k_t0 + 30s, "b", k_t0 + 1s));  // shorter: kept as it was
  REQUIRE(store::hold_channel(other, "gmail", k_t0 + 10s, "b", k_t0));
  auto holds = store::channel_holds(other, k_t0 + 2s);
  REQUIRE(holds);
  REQUIRE(holds->size() == 2);
  CHECK((*holds)[0].channel == "gmail");
  CHECK((*holds)[0].until == k_t0 + 10s);
  CHECK((*holds)[1].channel == "whatsapp");
  CHECK((*holds)[1].until == k_t0 + 60s);
  CHECK((*holds)[1].held_by == "a");
  REQUIRE(store::hold_channel(other, "whatsapp", k_t0 + 90s, "b", k_t0 + 2s));  // longer: replaces
  holds = store::channel_holds(db, k_t0 + 20s);                                 // gmail's has ended
  REQUIRE(holds);
  REQUIRE(holds->size() == 1);
  CHECK((*holds)[0].until == k_t0 + 90s);
  CHECK((*holds)[0].held_by == "b");
}

TEST_CASE("instances: at start an instance looks up only the sends it claimed", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::start_instance(db, "a", k_t0));
  REQUIRE(store::start_instance(db, "b", k_t0));
  // Two Gmail messages, one send in flight at each instance.
  const auto mine_message = insert_message(db, "gmail.1", "c1", "gmail");
  const auto other_message = insert_message(db, "gmail.2", "c2", "gmail");
  send_in_flight(db, mine_message, "a", "gmail");
  send_in_flight(db, other_message, "b", "gmail");
  const auto ids = [](const std::vector<store::OutboxItem>& items) {
    std::vector<std::int64_t> out;
    for (const auto& item : items) out.push_back(item.message_id);
    return out;
  };
  auto mine = store::sending_items(db, "gmail", "a");
  REQUIRE(mine);
  CHECK(ids(*mine) == std::vector<std::int64_t>{mine_message});
  auto theirs = store::sending_items(db, "gmail", "b");
  REQUIRE(theirs);
  CHECK(ids(*theirs) == std::vector<std::int64_t>{other_message});
  auto all = store::sending_items(db, "gmail");  // one machine: every send left in 'sending'
  REQUIRE(all);
  CHECK(all->size() == 2);
}

TEST_CASE("instances: a taker holds the lock of the message it took, and of no other", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto first = insert_message(db, "wamid.1", "c1");
  const auto second = insert_message(db, "wamid.2", "c2");
  REQUIRE(take(db, "a", k_t0) == first);  // leased for 300 s
  // A minute past the lease: the expired first and the received second are both ready, and
  // take_next's two queries each find one. It takes the first; before the savepoint the
  // second stayed locked by the query that found it until the taker's transaction ended.
  auto taker = connection(dir);
  REQUIRE(test::exec(taker, std::string(store::begin_write(taker.backend()))));
  auto taken = store::take_next(taker, "b", k_t0 + 360s, 300s);
  REQUIRE(taken);
  REQUIRE(*taken);
  CHECK((*taken)->id == first);
  if (test::on_postgresql()) {
    auto other = connection(dir);
    const auto lockable = [&](std::int64_t id) {
      return count_of(other, "SELECT count(*) FROM (SELECT id FROM inbox WHERE id = " + std::to_string(id) +
                                 " FOR NO KEY UPDATE SKIP LOCKED) t");
    };
    CHECK(lockable(first) == 0);
    CHECK(lockable(second) == 1);
    // Another instance takes the second meanwhile, without waiting for the first taker.
    REQUIRE(test::exec(other, "SET lock_timeout = '1s'"));
    auto next = store::take_next(other, "c", k_t0 + 360s, 300s);
    REQUIRE(next);
    REQUIRE(*next);
    CHECK((*next)->id == second);
  }
  REQUIRE(test::exec(taker, "COMMIT"));
}

TEST_CASE("instances: two writers count the same metrics at once, and a scrape sums them", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::array<std::int64_t, 2> ids{insert_message(db, "wamid.1", "c1"), insert_message(db, "wamid.2", "c2")};
  auto first = connection(dir);
  auto second = connection(dir);
  // What a decision counts (migration 0008's triggers): an attempt (attempts, latency and
  // usage rows) and an inbox outcome (one 'messages' label set down, another up). Every
  // writer moves the same label sets.
  const auto count_a_decision = [](store::Database& writer, std::int64_t id) {
    return test::exec(writer,
                      "INSERT INTO attempts(message_id, attempt, provider, model, verdict, latency_ms, input_tokens,"
                      " output_tokens, created_at) VALUES (" +
                          std::to_string(id) +
                          ", 1, 'openai', 'gpt-4o-mini', 'valid', 300, 1000, 40, '2026-11-30T12:00:00Z');"
                          " UPDATE inbox SET state = 'decided', outcome = 'replied' WHERE id = " +
                          std::to_string(id));
  };
  if (test::on_postgresql()) {
    // The second writer commits while the first still holds its counts: each connection
    // counts into rows of its own (migration 0015), so neither waits. With one row per label
    // set the second would wait for the first's COMMIT, busy after lock_timeout.
    REQUIRE(test::exec(first, "BEGIN"));
    REQUIRE(count_a_decision(first, ids[0]));
    REQUIRE(test::exec(second, "SET lock_timeout = '1s'"));
    REQUIRE(test::exec(second, "BEGIN"));
    auto counted = count_a_decision(second, ids[1]);
    if (!counted) FAIL("the second writer waited for the first: " << counted.error().message);
    REQUIRE(test::exec(second, "COMMIT"));
    REQUIRE(test::exec(first, "COMMIT"));
  } else {
    // One writer at a time: the rows stay one per label set, in shard 0.
    REQUIRE(count_a_decision(first, ids[0]));
    REQUIRE(count_a_decision(second, ids[1]));
    CHECK(count_of(db, "SELECT count(*) FROM metric_counts WHERE shard <> 0") == 0);
  }
  auto metrics = store::read_metrics(db);
  REQUIRE(metrics);
  const auto count_for = [](const auto& counts, auto matches) {
    const auto found = std::find_if(counts.begin(), counts.end(), matches);
    return found == counts.end() ? std::int64_t{-1} : found->count;
  };
  CHECK(count_for(metrics->attempts, [](const store::AttemptCount& c) {
          return c.verdict == store::Verdict::valid && c.error_class.empty();
        }) == 2);
  CHECK(count_for(metrics->messages, [](const store::MessageCount& c) {
          return c.channel == "whatsapp" && c.outcome == store::Outcome::replied;
        }) == 2);
  // The two messages left 'pending' (as inserted), which the scrape no longer shows at 0.
  CHECK(std::none_of(metrics->messages.begin(), metrics->messages.end(),
                     [](const auto& c) { return c.outcome != store::Outcome::replied; }));
  REQUIRE(metrics->latency.size() == 1);
  CHECK(metrics->latency[0].count == 2);
  CHECK(metrics->latency[0].sum_ms == 600);
  REQUIRE(metrics->usage.size() == 1);
  CHECK(metrics->usage[0].input_tokens == 2000);
  CHECK(metrics->usage[0].unpriced == 2);
}

TEST_CASE("instances: one session owns a mailbox until it lets go or closes", "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto one = connection(dir);
  std::optional<store::Database> two(connection(dir));
  const std::string mailbox = "support@example.com";
  if (!test::on_postgresql()) {
    // One machine: the one instance polls every mailbox.
    CHECK(store::try_own_mailbox(one, mailbox).value());
    CHECK(store::try_own_mailbox(*two, mailbox).value());
    return;
  }
  CHECK(store::try_own_mailbox(one, mailbox).value());
  CHECK_FALSE(store::try_own_mailbox(*two, mailbox).value());
  CHECK(store::try_own_mailbox(one, mailbox).value());  // still one's, and not taken twice
  CHECK(store::try_own_mailbox(*two, "sales@example.com").value());
  REQUIRE(store::release_mailbox(one, mailbox));  // one release frees it
  CHECK(store::try_own_mailbox(*two, mailbox).value());
  CHECK_FALSE(store::try_own_mailbox(one, mailbox).value());
  two.reset();  // the owner's connection ends (its instance died)
  // The server lets the lock go as the ended session's process exits, just after the close.
  bool owned = false;
  for (int i = 0; i < 100 && !owned; ++i) {
    owned = store::try_own_mailbox(one, mailbox).value();
    if (!owned) std::this_thread::sleep_for(50ms);
  }
  CHECK(owned);
}

TEST_CASE("instances: a take holds its message until another take has it (the fence of a paused instance)",
          "[instances]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto id = insert_message(db, "wamid.1", "c1");
  const auto leased = [&](store::Database& on, const std::string& instance, store::Time now) {
    auto taken = store::take_next(on, instance, now, 300s);
    REQUIRE(taken);
    REQUIRE(*taken);
    CHECK((*taken)->lease_token == store::format_time(now + 300s));
    return **taken;
  };
  const auto holds = [](store::Database& on, const store::Leased& taken, const std::string& instance) {
    auto held = store::hold_lease(on, taken, instance);
    REQUIRE(held);
    return *held;
  };
  const auto paused = leased(db, "a", k_t0);
  CHECK(holds(db, paused, "a"));
  CHECK_FALSE(holds(db, paused, "b"));
  // Past its lease and not taken again: still its own (nobody else works on it).
  // Then another instance takes it: "a" is fenced, whatever it still believes.
  auto other = connection(dir);
  const auto taker = leased(other, "b", k_t0 + 301s);
  CHECK_FALSE(holds(db, paused, "a"));
  CHECK(holds(other, taker, "b"));
  // The same instance taking it again after its own lease ran out is another take too.
  const auto again = leased(db, "b", k_t0 + 602s);
  CHECK_FALSE(holds(db, taker, "b"));
  CHECK(holds(db, again, "b"));
  // Decided: no take holds it any more.
  REQUIRE(store::queue_reply(db, {id, "enviar_mensaje", "{}", "15551234567", "hola"}, k_t0 + 603s));
  CHECK_FALSE(holds(db, again, "b"));

  if (test::on_postgresql()) {
    // The check locks the row until its transaction ends: another instance cannot take the
    // message in between, even with its lease long expired.
    const auto second = insert_message(db, "wamid.2", "c2");
    const auto mine = leased(db, "a", k_t0);
    REQUIRE(mine.id == second);
    REQUIRE(test::exec(db, std::string(store::begin_write(db.backend()))));
    CHECK(holds(db, mine, "a"));
    REQUIRE(test::exec(other, "SET lock_timeout = '1s'"));
    auto none = store::take_next(other, "c", k_t0 + 3600s, 300s);
    REQUIRE(none);
    CHECK_FALSE(*none);
    REQUIRE(test::exec(db, "COMMIT"));
    auto now_free = store::take_next(other, "c", k_t0 + 3600s, 300s);
    REQUIRE(now_free);
    REQUIRE(*now_free);
    CHECK((*now_free)->id == second);
  }
}
