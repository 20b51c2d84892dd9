#include <catch2/catch.hpp>

#include "store/cursor.h"
#include "store/inbox.h"
#include "store/outbox.h"
#include "store/transaction.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

using test::k_t0;

TEST_CASE("cursor: absent at first, then set, started_at stays the first write's time", "[store][cursor]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  CHECK(store::read_cursor(db, "gmail", "support@example.com").value() == std::nullopt);
  REQUIRE(store::write_cursor(db, "gmail", "support@example.com", "1000", k_t0));
  REQUIRE(store::write_cursor(db, "gmail", "support@example.com", "1042", k_t0 + 60s));
  const auto cursor = store::read_cursor(db, "gmail", "support@example.com").value();
  REQUIRE(cursor);
  CHECK(cursor->value == "1042");
  CHECK(cursor->started_at == k_t0);
  CHECK(store::read_cursor(db, "gmail", "other@example.com").value() == std::nullopt);
}

TEST_CASE("cursor: moves with the inbox rows in one transaction, or not at all", "[store][cursor]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::write_cursor(db, "gmail", "me@example.com", "10", k_t0));
  auto failed = store::transaction<void>(db, [&]() -> store::Result<void> {
    auto row = store::insert_inbound(db, {"gmail", "18c1", "t1", "ana@example.com", "hola", "raw"}, k_t0);
    if (!row) return std::unexpected(row.error());
    if (auto moved = store::write_cursor(db, "gmail", "me@example.com", "11", k_t0); !moved) return moved;
    return std::unexpected(store::Error::internal("the poll's commit failed"));
  });
  REQUIRE_FALSE(failed);
  CHECK(store::read_cursor(db, "gmail", "me@example.com").value()->value == "10");
  CHECK(test::query_int(db, "SELECT count(*) FROM inbox").value() == 0);
}

TEST_CASE("stored_inbound: the raw payload and thread of a message, not_found for none", "[store][inbox]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  auto row =
      store::insert_inbound(db, {"gmail", "18c1", "thread-9", "ana@example.com", "hola", "From: a\r\n\r\nhi"}, k_t0);
  REQUIRE(row);
  const auto stored = store::stored_inbound(db, row->id);
  REQUIRE(stored);
  CHECK(stored->channel == "gmail");
  CHECK(stored->provider_message_id == "18c1");
  CHECK(stored->conversation_id == "thread-9");
  CHECK(stored->raw_payload == "From: a\r\n\r\nhi");
  CHECK(store::stored_inbound(db, row->id + 1).error().kind == store::ErrorKind::not_found);
}

TEST_CASE("recover_sending: a lookup channel's rows stay 'sending' for its lookup, others become unknown",
          "[store][outbox]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const auto wa = store::insert_inbound(db, {"whatsapp", "wamid.1", "c", "15551234567", "hi", "{}"}, k_t0).value().id;
  const auto gm = store::insert_inbound(db, {"gmail", "18c1", "t1", "ana@example.com", "hola", "raw"}, k_t0).value().id;
  const auto add = [&](std::int64_t message, const char* to) {
    return store::add_action(
               db, {.message_id = message, .action = "send_message", .arguments = "{}", .recipient = to, .body = "ok"},
               k_t0)
        .value();
  };
  const auto wa_action = add(wa, "15551234567");
  const auto gm_action = add(gm, "ana@example.com");
  REQUIRE(store::begin_send(db, k_t0).value());
  REQUIRE(store::begin_send(db, k_t0).value());
  const std::string lookup[] = {"gmail"};
  const auto unknown = store::recover_sending(db, k_t0 + 60s, lookup);
  REQUIRE(unknown);
  CHECK(*unknown == std::vector<std::int64_t>{wa_action});
  const auto waiting = store::sending_items(db, "gmail");
  REQUIRE(waiting);
  REQUIRE(waiting->size() == 1);
  CHECK(waiting->front().id == gm_action);
  CHECK(waiting->front().conversation_id == "t1");
  CHECK(waiting->front().recipient == "ana@example.com");
  CHECK(store::sending_items(db, "whatsapp").value().empty());
}

TEST_CASE("not_stored: the ids a poll still has to fetch, in order", "[store][inbox]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::insert_inbound(db, {"gmail", "b", "t", "ana@example.com", "hola", "raw"}, k_t0));
  REQUIRE(store::insert_inbound(db, {"whatsapp", "c", "t", "1555", "hola", "{}"}, k_t0));
  const auto fresh = store::not_stored(db, "gmail", {"a", "b", "c", "d"});
  REQUIRE(fresh);
  CHECK(*fresh == std::vector<std::string>{"a", "c", "d"});  // "c" is another channel's
  CHECK(store::not_stored(db, "gmail", {}).value().empty());
}
