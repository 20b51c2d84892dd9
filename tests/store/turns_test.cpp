// Turns (store/turns.h): a conversation's burst taken as one lead with the messages that
// joined it, and every state change of the lead made on the whole turn.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/outbox.h"
#include "store/turns.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;
const store::Instant k_i0 = k_t0;

const store::TurnRule k_rule{1500ms, 6000ms};

std::int64_t insert(store::Database& db, const std::string& id, const std::string& conversation, store::Instant at,
                    const std::string& type = "") {
  store::InboundMessage m{"whatsapp", id, conversation, "1555" + conversation, "text " + id, "{}", type};
  auto result = store::insert_inbound(db, m, at);
  REQUIRE(result);
  return result->id;
}

std::vector<std::int64_t> joined_ids(const store::Leased& lead) {
  std::vector<std::int64_t> out;
  for (const auto& m : lead.joined) out.push_back(m.id);
  return out;
}

std::int64_t count(store::Database& db, const std::string& sql) { return test::query_int(db, sql).value(); }

}  // namespace

TEST_CASE("turns: ready a quiet time after the last message or a max time after the first", "[turns]") {
  struct Row {
    std::chrono::milliseconds first, last, quiet, max, ready;
  };
  // clang-format off
  const Row rows[] = {
      //  first  last   quiet   max     ready
      {0ms,    0ms,    1500ms, 6000ms, 1500ms},  // one message: its quiet time
      {0ms,    600ms,  1500ms, 6000ms, 2100ms},  // the last one's
      {0ms,    5000ms, 1500ms, 6000ms, 6000ms},  // the max time comes first
      {0ms,    9000ms, 1500ms, 6000ms, 6000ms},  // long past it: at once
      {0ms,    300ms,  1500ms, 0ms,    1500ms},  // a max below the quiet time is the quiet time
      {0ms,    300ms,  0ms,    0ms,    0ms},     // no bursts: at once
  };
  // clang-format on
  for (const auto& row : rows) {
    CAPTURE(row.first.count(), row.last.count(), row.quiet.count(), row.max.count());
    const store::TurnRule rule{row.quiet, row.max};
    CHECK(store::turn_ready_at(k_i0 + row.first, k_i0 + row.last, rule) == k_i0 + row.ready);
  }
}

TEST_CASE("turns: three messages 300 ms apart are taken once, as one turn, after the quiet time", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto a = insert(db, "A", "c1", k_i0);
  const auto b = insert(db, "B", "c1", k_i0 + 300ms);
  const auto c = insert(db, "C", "c1", k_i0 + 600ms);

  auto early = store::take_turn(db, "w", k_i0 + 2000ms, 60s, k_rule);
  REQUIRE(early);
  CHECK_FALSE(early->taken);
  REQUIRE(early->wake_at);
  CHECK(*early->wake_at == k_i0 + 2100ms);  // the last one's quiet time
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE state = 'received'") == 3);

  auto taken = store::take_turn(db, "w", k_i0 + 2100ms, 60s, k_rule);
  REQUIRE(taken);
  REQUIRE(taken->taken);
  CHECK(taken->taken->id == a);
  CHECK(joined_ids(*taken->taken) == std::vector<std::int64_t>{b, c});
  CHECK(taken->taken->joined[1].text == "text C");
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE state = 'processing' AND lease_owner = 'w'") == 3);
  CHECK(count(db, "SELECT count(*) FROM v_messages WHERE turn_id = " + std::to_string(a)) == 3);

  auto nothing = store::take_turn(db, "w", k_i0 + 3000ms, 60s, k_rule);
  REQUIRE(nothing);
  CHECK_FALSE(nothing->taken);
  CHECK_FALSE(nothing->wake_at);  // nothing waits

  // The lead's decision is the turn's: each message decided, then done, with its events.
  const auto now = store::whole_seconds(k_i0 + 3s);
  REQUIRE(store::queue_reply(
      db, {.message_id = a, .action = "reply", .arguments = "{}", .recipient = "1555c1", .body = "one answer"}, now));
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE state = 'decided'") == 3);
  CHECK(count(db, "SELECT count(*) FROM v_audit WHERE event = 'decided'") == 3);
  auto send = store::begin_send(db, now);
  REQUIRE(send);
  REQUIRE(*send);
  REQUIRE(store::complete_send(db, (*send)->id, "wamid.out", now));
  CHECK(count(db, "SELECT count(*) FROM v_messages WHERE state = 'done' AND outcome = 'replied'") == 3);
  CHECK(count(db, "SELECT count(*) FROM v_audit WHERE event = 'done'") == 3);
  CHECK(store::verify_audit(db)->first_broken == std::nullopt);
}

TEST_CASE("turns: a conversation that keeps writing is taken at the max time", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto first = insert(db, "m0", "c1", k_i0);
  for (int i = 1; i <= 6; ++i) insert(db, "m" + std::to_string(i), "c1", k_i0 + i * 1000ms);
  auto before = store::take_turn(db, "w", k_i0 + 5999ms, 60s, k_rule);
  REQUIRE(before);
  CHECK_FALSE(before->taken);
  CHECK(*before->wake_at == k_i0 + 6000ms);
  auto at_max = store::take_turn(db, "w", k_i0 + 6000ms, 60s, k_rule);
  REQUIRE(at_max);
  REQUIRE(at_max->taken);
  CHECK(at_max->taken->id == first);
  CHECK(at_max->taken->joined.size() == 6);
}

TEST_CASE("turns: other conversations are taken meanwhile, a blocked one waits for its lead", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto busy = insert(db, "A", "c1", k_i0);
  const auto other = insert(db, "B", "c2", k_i0 + 100ms);
  insert(db, "A2", "c1", k_i0 + 1000ms);  // c1 not quiet until 2500 ms
  auto taken = store::take_turn(db, "w", k_i0 + 1700ms, 60s, k_rule);
  REQUIRE(taken);
  REQUIRE(taken->taken);
  CHECK(taken->taken->id == other);
  CHECK(taken->taken->joined.empty());
  auto lead = store::take_turn(db, "w", k_i0 + 2500ms, 60s, k_rule);
  REQUIRE(lead);
  REQUIRE(lead->taken);
  CHECK(lead->taken->id == busy);
  // A message after the turn was taken waits for its decision, then leads its own.
  const auto late = insert(db, "A3", "c1", k_i0 + 2600ms);
  auto blocked = store::take_turn(db, "w", k_i0 + 9000ms, 60s, k_rule);
  REQUIRE(blocked);
  CHECK_FALSE(blocked->taken);
  REQUIRE(store::finish(db, busy, store::Outcome::ignored, store::whole_seconds(k_i0 + 9s)));
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE state = 'done'") == 2);
  auto own = store::take_turn(db, "w", k_i0 + 9000ms, 60s, k_rule);
  REQUIRE(own);
  REQUIRE(own->taken);
  CHECK(own->taken->id == late);
}

TEST_CASE("turns: a message that comes while the turn is decided joins it, up to the turn's size", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto a = insert(db, "A", "c1", k_i0);
  auto taken = store::take_turn(db, "w", k_i0 + 2000ms, 60s, k_rule);
  REQUIRE(taken);
  REQUIRE(taken->taken);
  store::Leased lead = *taken->taken;
  auto none = store::join_turn(db, lead, "w", k_rule);
  REQUIRE(none);
  CHECK(none->empty());
  const auto b = insert(db, "B", "c1", k_i0 + 2500ms);
  const auto c = insert(db, "C", "c1", k_i0 + 2600ms);
  auto joined = store::join_turn(db, lead, "w", k_rule);
  REQUIRE(joined);
  CHECK(joined->size() == 2);
  CHECK(joined_ids(lead) == std::vector<std::int64_t>{b, c});
  CHECK(store::hold_lease(db, lead, "w").value());
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE turn_id = " + std::to_string(a) + " AND state = 'processing'") ==
        3);

  store::TurnRule small = k_rule;
  small.max_messages = 4;
  insert(db, "D", "c1", k_i0 + 2700ms);
  const auto e = insert(db, "E", "c1", k_i0 + 2800ms);
  auto capped = store::join_turn(db, lead, "w", small);
  REQUIRE(capped);
  CHECK(capped->size() == 1);  // D: four in all
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE id = " + std::to_string(e) + " AND state = 'received'") == 1);
}

TEST_CASE("turns: a message whose type may not join ends the turn before it", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  store::TurnRule rule = k_rule;
  rule.joins = [](std::string_view, std::string_view type) { return type != "sticker"; };
  const auto a = insert(db, "A", "c1", k_i0);
  const auto b = insert(db, "B", "c1", k_i0 + 100ms);
  const auto sticker = insert(db, "S", "c1", k_i0 + 200ms, "sticker");
  const auto after = insert(db, "C", "c1", k_i0 + 300ms);
  auto taken = store::take_turn(db, "w", k_i0 + 2000ms, 60s, rule);
  REQUIRE(taken);
  REQUIRE(taken->taken);
  CHECK(taken->taken->id == a);
  CHECK(joined_ids(*taken->taken) == std::vector<std::int64_t>{b});
  REQUIRE(store::finish(db, a, store::Outcome::ignored, k_t0));
  auto alone = store::take_turn(db, "w", k_i0 + 2000ms, 60s, rule);
  REQUIRE(alone);
  REQUIRE(alone->taken);
  CHECK(alone->taken->id == sticker);
  CHECK(alone->taken->joined.empty());  // it leads no turn either
  REQUIRE(store::finish(db, sticker, store::Outcome::ignored, k_t0));
  auto last = store::take_turn(db, "w", k_i0 + 2000ms, 60s, rule);
  REQUIRE(last);
  REQUIRE(last->taken);
  CHECK(last->taken->id == after);
}

TEST_CASE("turns: a lead taken again after its lease ran out comes back with its turn", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto a = insert(db, "A", "c1", k_i0);
  const auto b = insert(db, "B", "c1", k_i0 + 100ms);
  auto first = store::take_turn(db, "w1", k_i0 + 2000ms, 60s, k_rule);
  REQUIRE(first);
  REQUIRE(first->taken);
  const auto c = insert(db, "C", "c1", k_i0 + 3000ms);  // came while w1 was gone
  // w1 died; its lease runs out. The turn is taken again, whole, with what came since,
  // and neither later message is ever taken alone; with bursts off too.
  for (const auto& rule : {k_rule, store::TurnRule{}}) {
    REQUIRE(store::release_leases(db, "w1"));
    REQUIRE(store::release_leases(db, "w2"));
    auto again = store::take_turn(db, "w2", k_i0 + 70'000ms, 60s, rule);
    REQUIRE(again);
    REQUIRE(again->taken);
    CHECK(again->taken->id == a);
    CHECK(joined_ids(*again->taken) == std::vector<std::int64_t>{b, c});
    CHECK(count(db, "SELECT count(*) FROM inbox WHERE lease_owner = 'w2'") == 3);
  }
  // A postponement and a release are the turn's too.
  auto lead = store::take_turn(db, "w3", k_i0 + 200'000ms, 60s, k_rule);
  REQUIRE(lead);
  REQUIRE(lead->taken);
  REQUIRE(store::postpone(db, a, store::whole_seconds(k_i0 + 300s)));
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE lease_owner IS NULL AND state = 'processing'") == 3);
}

TEST_CASE("turns: with bursts off every message is its own turn, taken at once", "[turns]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto a = insert(db, "A", "c1", k_i0);
  insert(db, "B", "c1", k_i0 + 100ms);
  auto taken = store::take_turn(db, "w", k_i0, 60s, {});
  REQUIRE(taken);
  REQUIRE(taken->taken);
  CHECK(taken->taken->id == a);
  CHECK(taken->taken->joined.empty());
  CHECK_FALSE(taken->wake_at);
  CHECK(count(db, "SELECT count(*) FROM inbox WHERE turn_id IS NOT NULL") == 0);
}

TEST_CASE("turns: two instances, one turn: the lease of its first message covers every message of it", "[turns]") {
  test::TempDir dir;
  auto one = test::migrated_db(dir);
  auto other = test::open_db(dir);  // another instance's connection to the same database
  REQUIRE(other);
  const auto a = insert(one, "A", "c1", k_i0);
  const auto b = insert(one, "B", "c1", k_i0 + 200ms);
  auto first = store::take_turn(one, "instance-1", k_i0 + 2000ms, 60s, k_rule);
  REQUIRE(first);
  REQUIRE(first->taken);
  CHECK(joined_ids(*first->taken) == std::vector<std::int64_t>{b});
  // While the lease holds, the other instance finds nothing of the conversation, however late.
  insert(one, "C", "c1", k_i0 + 2100ms);
  auto nothing = store::take_turn(*other, "instance-2", k_i0 + 30'000ms, 60s, k_rule);
  REQUIRE(nothing);
  CHECK_FALSE(nothing->taken);
  // Past it (instance-1 stalled), instance-2 takes the whole turn, with what came since, and
  // instance-1's writes are fenced off.
  auto taken = store::take_turn(*other, "instance-2", k_i0 + 63'000ms, 60s, k_rule);
  REQUIRE(taken);
  REQUIRE(taken->taken);
  CHECK(taken->taken->id == a);
  CHECK(taken->taken->joined.size() == 2);
  CHECK_FALSE(store::hold_lease(one, *first->taken, "instance-1").value());
  CHECK(store::hold_lease(*other, *taken->taken, "instance-2").value());
}
