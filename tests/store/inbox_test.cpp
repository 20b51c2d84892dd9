#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/outbox.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

store::Database migrated(const test::TempDir& dir) { return test::migrated_db(dir); }

store::InboundMessage message(const std::string& id, const std::string& conversation) {
  return {"whatsapp", id, conversation, "15551234567", "hola " + id, R"({"id":")" + id + "\"}"};
}

std::int64_t insert(store::Database& db, const std::string& id, const std::string& conversation) {
  auto result = store::insert_inbound(db, message(id, conversation), k_t0);
  REQUIRE(result);
  return result->id;
}

}  // namespace

TEST_CASE("format_time writes the store's one timestamp format", "[inbox]") {
  CHECK(store::format_time(k_t0) == "2026-11-30T12:00:00Z");
}

TEST_CASE("inbox: a redelivered message is stored once", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  auto first = store::insert_inbound(db, message("wamid.A", "c1"), k_t0);
  auto again = store::insert_inbound(db, message("wamid.A", "c1"), k_t0 + 5s);
  REQUIRE(first);
  REQUIRE(again);
  CHECK_FALSE(first->duplicate);
  CHECK(again->duplicate);
  CHECK(again->id == first->id);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'received'").value() == 1);
  auto gmail = message("wamid.A", "c1");
  gmail.channel = "gmail";  // the same id on another channel is another message
  REQUIRE(store::insert_inbound(db, gmail, k_t0));
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages").value() == 2);
  CHECK(store::verify_audit(db)->first_broken == std::nullopt);
}

TEST_CASE("inbox: a lease hides a message until it expires, then it is taken again", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto id = insert(db, "wamid.A", "c1");
  auto taken = store::take_next(db, "worker-1", k_t0, 60s);
  REQUIRE(taken);
  REQUIRE(*taken);
  CHECK((*taken)->id == id);
  CHECK((*taken)->text == "hola wamid.A");
  CHECK_FALSE(*store::take_next(db, "worker-2", k_t0 + 59s, 60s));   // still leased
  auto retaken = store::take_next(db, "worker-2", k_t0 + 60s, 60s);  // worker-1 died
  REQUIRE(retaken);
  REQUIRE(*retaken);
  CHECK((*retaken)->id == id);
  CHECK(test::query_int(db, "SELECT count(*) FROM inbox WHERE lease_owner = 'worker-2'").value() == 1);
  REQUIRE(store::finish(db, id, store::Outcome::replied, k_t0 + 61s));
  CHECK_FALSE(*store::take_next(db, "worker-3", k_t0 + 3600s, 60s));
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages WHERE outcome = 'replied' AND state = 'done'").value() ==
        1);
  CHECK_FALSE(store::finish(db, id, store::Outcome::replied, k_t0 + 62s));  // not twice
}

TEST_CASE("inbox: the message type is stored, leased and shown, none is NULL", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  auto image = message("wamid.A", "c1");
  image.type = "image";
  const auto id = store::insert_inbound(db, image, k_t0).value().id;
  insert(db, "wamid.B", "c2");
  auto taken = store::take_next(db, "w", k_t0, 60s);
  REQUIRE(taken);
  REQUIRE(*taken);
  CHECK((*taken)->id == id);
  CHECK((*taken)->type == "image");
  CHECK((*store::take_next(db, "w", k_t0, 60s))->type.empty());
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages WHERE message_type = 'image'").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_messages WHERE message_type IS NULL").value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'received' AND " +
                                test::json_text("detail", "type") +
                                " = "
                                "'image'")
            .value() == 1);
  REQUIRE(store::finish(db, id, store::Outcome::ignored, k_t0, "a reason"));
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'done' AND " +
                                test::json_text("detail", "why") +
                                " = "
                                "'a reason' AND " +
                                test::json_text("detail", "outcome") + " = 'ignored'")
            .value() == 1);
}

TEST_CASE("inbox: one conversation in order, different conversations in parallel", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto a1 = insert(db, "m1", "conversation-a");
  const auto a2 = insert(db, "m2", "conversation-a");
  const auto b1 = insert(db, "m3", "conversation-b");
  auto first = store::take_next(db, "w1", k_t0, 60s);
  auto second = store::take_next(db, "w2", k_t0, 60s);
  REQUIRE(first);
  REQUIRE(second);
  CHECK((*first)->id == a1);
  CHECK((*second)->id == b1);  // a2 waits behind a1
  CHECK_FALSE(*store::take_next(db, "w3", k_t0, 60s));
  REQUIRE(store::finish(db, a1, store::Outcome::replied, k_t0 + 1s));
  auto third = store::take_next(db, "w3", k_t0 + 1s, 60s);
  REQUIRE(third);
  CHECK((*third)->id == a2);
}

TEST_CASE("inbox: release_leases hands a restarted worker's messages back at once", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto id = insert(db, "wamid.A", "c1");
  REQUIRE(store::take_next(db, "host-1", k_t0, 300s).value());
  CHECK_FALSE(store::take_next(db, "host-1", k_t0 + 1s, 300s).value());  // leased for 5 minutes
  REQUIRE(store::release_leases(db, "host-1"));
  auto again = store::take_next(db, "host-1", k_t0 + 2s, 300s);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->id == id);
}

TEST_CASE("inbox: release_lease hands back one message, only the holder's", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto a = insert(db, "wamid.A", "c1");
  const auto b = insert(db, "wamid.B", "c2");
  REQUIRE(store::take_next(db, "host-1", k_t0, 300s).value());
  REQUIRE(store::take_next(db, "host-1", k_t0, 300s).value());
  REQUIRE(store::release_lease(db, a, "host-2"));  // not its lease: nothing changes
  CHECK_FALSE(store::take_next(db, "host-1", k_t0 + 1s, 300s).value());
  REQUIRE(store::release_lease(db, a, "host-1"));
  auto again = store::take_next(db, "host-1", k_t0 + 2s, 300s);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->id == a);
  CHECK_FALSE(store::take_next(db, "host-1", k_t0 + 3s, 300s).value());  // b keeps its lease
  REQUIRE(store::finish(db, b, store::Outcome::replied, k_t0 + 4s));
  REQUIRE(store::release_lease(db, b, "host-1"));  // finished: left as it is
  CHECK(test::query_int(db, "SELECT count(*) FROM inbox WHERE id = " + std::to_string(b) + " AND state = 'done'")
            .value() == 1);
}

TEST_CASE("inbox: audit details are JSON whatever the provider id holds", "[inbox][audit]") {
  test::TempDir dir;
  auto db = migrated(dir);
  REQUIRE(store::insert_inbound(db, message(R"(id "with" \quotes)", "c1"), k_t0));
  // Valid JSON: SQLite's json_valid, PostgreSQL's cast (which fails on anything else).
  CHECK(test::query_int(db, test::on_postgresql() ? "SELECT count(detail::jsonb) FROM audit WHERE event = 'received'"
                                                  : "SELECT json_valid(detail) FROM audit WHERE event = 'received'")
            .value() == 1);
  CHECK(test::query_int(
            db, "SELECT " + test::json_text("detail", "provider_message_id") + R"( = 'id "with" \quotes' FROM audit)")
            .value() == 1);
}

TEST_CASE("store: a failing step inside a transaction rolls back the steps before it", "[store]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto id = insert(db, "wamid.A", "c1");
  REQUIRE(store::take_next(db, "w", k_t0, 60s).value());
  REQUIRE(store::finish(db, id, store::Outcome::replied, k_t0));
  // The UPDATE matched nothing the second time: an error, and no second 'done' event.
  CHECK_FALSE(store::finish(db, id, store::Outcome::replied, k_t0));
  CHECK(test::query_int(db, "SELECT count(*) FROM audit WHERE event = 'done'").value() == 1);
  CHECK(test::query_int(db, "SELECT outcome = 'replied' FROM v_messages").value() == 1);
}

TEST_CASE("inbox: a decided message is never taken again, and lets the next one go", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto first = insert(db, "wamid.A", "c1");
  const auto second = insert(db, "wamid.B", "c1");
  REQUIRE(store::take_next(db, "w", k_t0, 60s).value());
  CHECK_FALSE(store::take_next(db, "w", k_t0 + 1s, 60s).value());  // B waits while A is processed
  REQUIRE(store::decide(db, first, k_t0 + 1s));
  CHECK_FALSE(store::decide(db, first, k_t0 + 2s));  // only from processing
  auto next = store::take_next(db, "w", k_t0 + 3600s, 60s);
  REQUIRE(next);
  REQUIRE(*next);
  CHECK((*next)->id == second);  // A, decided, is not taken again even after its lease time
  CHECK_FALSE(store::take_next(db, "w", k_t0 + 3601s, 60s).value());
  CHECK(test::query_int(db, "SELECT count(*) FROM v_audit WHERE event = 'decided'").value() == 1);
}

TEST_CASE("inbox: a postponed message waits, then is taken again", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto id = insert(db, "wamid.A", "c1");
  REQUIRE(store::take_next(db, "w", k_t0, 60s).value());
  REQUIRE(store::postpone(db, id, k_t0 + 30s));
  CHECK_FALSE(store::take_next(db, "w", k_t0 + 29s, 60s).value());
  auto again = store::take_next(db, "w", k_t0 + 30s, 60s);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->id == id);
}

TEST_CASE("inbox: history is the conversation's earlier messages and the replies sent", "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  const auto first = insert(db, "wamid.A", "c1");
  insert(db, "wamid.X", "other");
  REQUIRE(store::take_next(db, "w", k_t0, 60s).value());
  auto action = store::add_action(db,
                                  {.message_id = first,
                                   .action = "send_message",
                                   .arguments = "{}",
                                   .recipient = "15551234567",
                                   .body = "hello back"},
                                  k_t0 + 1s);
  REQUIRE(action);
  REQUIRE(store::begin_send(db, k_t0 + 2s).value());
  REQUIRE(store::complete_send(db, *action, "wamid.OUT", k_t0 + 3s));
  const auto second = store::insert_inbound(db, message("wamid.B", "c1"), k_t0 + 10s).value().id;
  auto entries = store::history(db, second, 10);
  REQUIRE(entries);
  REQUIRE(entries->size() == 2);
  CHECK((*entries)[0].text == "hola wamid.A");
  CHECK_FALSE((*entries)[0].from_us);
  CHECK((*entries)[1].text == "hello back");
  CHECK((*entries)[1].from_us);
  CHECK(store::history(db, second, 1).value().size() == 1);
  CHECK(store::history(db, second, 1).value()[0].text == "hello back");
  CHECK(store::history(db, first, 10).value().empty());
}

TEST_CASE("inbox: the history of a long conversation is its newest messages and their replies, oldest first",
          "[inbox]") {
  test::TempDir dir;
  auto db = migrated(dir);
  // Thirty messages of one customer, each answered, a minute apart; another conversation
  // in between.
  std::int64_t last = 0;
  for (int i = 0; i < 30; ++i) {
    const auto at = k_t0 + std::chrono::minutes(i);
    const auto id = store::insert_inbound(db, message("wamid.L" + std::to_string(i), "long"), at).value().id;
    insert(db, "wamid.O" + std::to_string(i), "other" + std::to_string(i));
    auto taken = store::take_next(db, "w", at, 60s);
    REQUIRE(taken.value());
    REQUIRE((*taken)->id == id);
    auto action = store::add_action(db,
                                    {.message_id = id,
                                     .action = "send_message",
                                     .arguments = "{}",
                                     .recipient = "15551234567",
                                     .body = "answer " + std::to_string(i)},
                                    at + 1s);
    REQUIRE(action);
    REQUIRE(store::begin_send(db, at + 2s).value());
    REQUIRE(store::complete_send(db, *action, "wamid.OUT" + std::to_string(i), at + 3s));
    REQUIRE(store::finish(db, id, store::Outcome::replied, at + 4s));
    // The other conversation's message is not this one's business: out of the way.
    auto other = store::take_next(db, "w", at, 60s);
    REQUIRE(other.value());
    REQUIRE(store::finish(db, (*other)->id, store::Outcome::ignored, at + 4s));
    last = id;
  }
  const auto next = store::insert_inbound(db, message("wamid.next", "long"), k_t0 + 1h).value().id;
  auto entries = store::history(db, next, 5);
  REQUIRE(entries);
  std::vector<std::string> texts;
  for (const auto& e : *entries) texts.push_back((e.from_us ? "us: " : "them: ") + e.text);
  CHECK(texts == std::vector<std::string>{"us: answer 27", "them: hola wamid.L28", "us: answer 28",
                                          "them: hola wamid.L29", "us: answer 29"});
  // Before the last message: what came before it, not it.
  auto before_last = store::history(db, last, 2);
  REQUIRE(before_last);
  REQUIRE(before_last->size() == 2);
  CHECK((*before_last)[0].text == "hola wamid.L28");
  CHECK((*before_last)[1].text == "answer 28");
}
