#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/escalation_feed.h"
#include "store/queue.h"
#include "store/transaction.h"
#include "tests/store/escalate_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

using store::EscalationReason;
using test::k_t0;

TEST_CASE("notify cursor: the first start points at the newest audit event, later starts keep it", "[store][notify]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  CHECK(store::read_notify_cursor(db).value() == std::nullopt);
  // History before the first start with a notify_url is never announced.
  test::escalate(db, "wamid.old", "5215500000001", "old", EscalationReason::contract_failed, k_t0);
  const auto newest = test::query_int(db, "SELECT max(id) FROM audit").value();
  REQUIRE(newest > 0);
  const auto first = store::init_notify_cursor(db, k_t0 + 1h);
  REQUIRE(first);
  CHECK(first->last_audit_id == newest);
  CHECK(first->started_at == k_t0 + 1h);
  CHECK(store::pending_escalations(db, first->last_audit_id, 10).value().empty());
  CHECK(store::count_pending_escalations(db, first->last_audit_id).value() == 0);

  test::escalate(db, "wamid.new", "5215500000002", "new", EscalationReason::undecodable, k_t0 + 2h);
  const auto again = store::init_notify_cursor(db, k_t0 + 3h);  // a restart: nothing moves
  REQUIRE(again);
  CHECK(again->last_audit_id == newest);
  CHECK(again->started_at == k_t0 + 1h);
  CHECK(store::count_pending_escalations(db, again->last_audit_id).value() == 1);
}

TEST_CASE("notify cursor: on an empty trail it starts at 0", "[store][notify]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  // The migrations write no audit events: everything from the first escalation on is new.
  REQUIRE(test::query_int(db, "SELECT count(*) FROM audit").value() == 0);
  CHECK(store::init_notify_cursor(db, k_t0).value().last_audit_id == 0);
}

TEST_CASE("notify feed: escalation events after the cursor, in audit order, with the message's first words",
          "[store][notify]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::init_notify_cursor(db, k_t0));
  const auto a = test::escalate(db, "wamid.1", "5215512345678", "\n\n  Necesito mi factura\ndel mes pasado",
                                EscalationReason::contract_failed, k_t0 + 1s);
  // Other audit events between the escalations are not part of the feed.
  REQUIRE(store::claim_escalation(db, a, "ana", k_t0 + 2s));
  const auto b = test::escalate(db, "18c1", "ana@example.com", std::string(5000, 'x'), EscalationReason::undecodable,
                                k_t0 + 3s, "gmail");

  const auto feed = store::pending_escalations(db, 0, 10);
  REQUIRE(feed);
  REQUIRE(feed->size() == 2);
  const auto& first = (*feed)[0];
  CHECK(first.escalation_id == a);
  CHECK(first.reason == EscalationReason::contract_failed);
  CHECK(first.channel == "whatsapp");
  CHECK(first.sender == "5215512345678");
  CHECK(first.text == "Necesito mi factura\ndel mes pasado");  // leading blank lines trimmed
  CHECK(first.created_at == store::format_time(k_t0 + 1s));
  const auto& second = (*feed)[1];
  CHECK(second.escalation_id == b);
  CHECK(second.reason == EscalationReason::undecodable);
  CHECK(second.channel == "gmail");
  CHECK(second.text.size() == 1000);  // bounded in the query
  CHECK(second.audit_id > first.audit_id);

  CHECK(store::pending_escalations(db, 0, 1).value().size() == 1);  // LIMIT
  CHECK(store::pending_escalations(db, first.audit_id, 10).value().front().escalation_id == b);
  CHECK(store::count_pending_escalations(db, 0).value() == 2);
  CHECK(store::count_pending_escalations(db, first.audit_id).value() == 1);
  CHECK(store::count_pending_escalations(db, second.audit_id).value() == 0);
}

TEST_CASE("notify cursor: advances, never moves back, and needs init first", "[store][notify]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  CHECK(store::advance_notify_cursor(db, 5, k_t0).error().kind == store::ErrorKind::not_found);
  REQUIRE(store::init_notify_cursor(db, k_t0));
  REQUIRE(store::advance_notify_cursor(db, 7, k_t0 + 1s));
  REQUIRE(store::advance_notify_cursor(db, 4, k_t0 + 2s));  // an older write landing late
  const auto cursor = store::read_notify_cursor(db).value();
  REQUIRE(cursor);
  CHECK(cursor->last_audit_id == 7);
  CHECK(cursor->started_at == k_t0);
}

TEST_CASE("notify cursor: moves with its transaction, or not at all", "[store][notify]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::init_notify_cursor(db, k_t0));
  auto failed = store::transaction<void>(db, [&]() -> store::Result<void> {
    if (auto moved = store::advance_notify_cursor(db, 3, k_t0); !moved) return moved;
    return std::unexpected(store::Error::internal("the round was lost"));
  });
  REQUIRE_FALSE(failed);
  CHECK(store::read_notify_cursor(db).value()->last_audit_id == 0);
}
