// Outbox rows that call an MCP tool (an mcp action with "use": "act"): their own lane,
// whatever their message's channel; sent, then their follow-up reply queued; failed, a
// tool_failed escalation; left 'sending' by a crash, unknown. And migration 0021, which
// rebuilds SQLite's escalations table for the new reason with every row and reference kept.
#include <catch2/catch.hpp>

#include "store/migrations.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

struct ToolRowFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::int64_t message_id = 0;

  ToolRowFixture() {
    auto message = store::insert_inbound(db, {"whatsapp", "wamid.t", "c", "15551234567", "book a table", "{}"}, k_t0);
    REQUIRE(message);
    message_id = message->id;
  }

  // The agent's decision: the message taken, the tool call queued and the message decided.
  std::int64_t queue_tool(std::optional<std::string> follow_up) {
    REQUIRE(store::take_next(db, "w", k_t0, 60s).value());
    auto id = store::queue_reply(db,
                                 store::with_tool({.message_id = message_id,
                                                   .action = "book",
                                                   .arguments = R"({"action":"book"})",
                                                   .recipient = "15551234567"},
                                                  "bookings", "create_booking", R"({"party":2})", std::move(follow_up)),
                                 k_t0);
    REQUIRE(id);
    return *id;
  }

  long long scalar(const std::string& sql) { return test::query_int(db, sql).value(); }
};

}  // namespace

TEST_CASE("tool rows: a lane of their own, sent, then the follow-up reply to the customer", "[outbox][mcp]") {
  ToolRowFixture f;
  const auto tool = f.queue_tool("Booked: a table for two.");
  CHECK(f.scalar("SELECT count(*) FROM v_actions WHERE tool_server = 'bookings' AND tool_name = 'create_booking'"
                 " AND body = '{\"party\":2}' AND follow_up = 'Booked: a table for two.' AND status = 'approved'") ==
        1);

  // The message's channel does not take it: the tool lane does.
  auto none = store::begin_send(f.db, k_t0 + 1s, "whatsapp");
  REQUIRE(none);
  CHECK_FALSE(*none);
  auto item = store::begin_send(f.db, k_t0 + 1s, std::string(store::k_tool_lane));
  REQUIRE(item);
  REQUIRE(*item);
  CHECK((*item)->id == tool);
  CHECK((*item)->action == "book");
  CHECK((*item)->tool_server == "bookings");
  CHECK((*item)->tool_name == "create_booking");
  CHECK((*item)->body == R"({"party":2})");
  CHECK((*item)->channel == "whatsapp");

  REQUIRE(store::complete_send(f.db, tool, "", k_t0 + 2s));
  CHECK(f.scalar("SELECT count(*) FROM v_actions WHERE action_id = " + std::to_string(tool) +
                 " AND status = 'sent' AND provider_message_id IS NULL") == 1);
  // The message waits for its reply, which the channel's lane sends.
  CHECK(f.scalar("SELECT count(*) FROM v_messages WHERE state = 'decided'") == 1);
  auto reply = store::begin_send(f.db, k_t0 + 3s, "whatsapp");
  REQUIRE(reply);
  REQUIRE(*reply);
  CHECK((*reply)->recipient == "15551234567");
  CHECK((*reply)->body == "Booked: a table for two.");
  CHECK((*reply)->tool_server.empty());
  REQUIRE(store::complete_send(f.db, (*reply)->id, "wamid.out", k_t0 + 4s));
  CHECK(f.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'replied'") == 1);
}

TEST_CASE("tool rows: without a follow-up the message is replied once the tool answered", "[outbox][mcp]") {
  ToolRowFixture f;
  const auto tool = f.queue_tool(std::nullopt);
  CHECK(f.scalar("SELECT count(*) FROM v_actions WHERE recipient IS NULL AND follow_up IS NULL") == 1);
  REQUIRE(store::begin_send(f.db, k_t0 + 1s, std::string(store::k_tool_lane)).value().has_value());
  REQUIRE(store::complete_send(f.db, tool, "", k_t0 + 2s));
  CHECK(f.scalar("SELECT count(*) FROM v_actions") == 1);
  CHECK(f.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'replied'") == 1);
}

TEST_CASE("tool rows: a tool that failed opens tool_failed, one left sending is unknown", "[outbox][mcp]") {
  ToolRowFixture f;
  const auto failed = f.queue_tool("never sent");
  REQUIRE(store::begin_send(f.db, k_t0 + 1s, std::string(store::k_tool_lane)).value().has_value());
  auto escalation = store::fail_send(f.db, failed, "the tool answered with an error: no table free", k_t0 + 2s);
  REQUIRE(escalation);
  CHECK(f.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'tool_failed' AND detail LIKE '%no table free%'") ==
        1);
  CHECK(f.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'escalated'") == 1);
  CHECK(f.scalar("SELECT count(*) FROM v_actions WHERE body = 'never sent'") == 0);  // no follow-up

  // A second message's call left 'sending' by a crash: unknown at the next start, even where
  // its message's channel can look its own sends up.
  auto other = store::insert_inbound(f.db, {"whatsapp", "wamid.u", "c", "15551234567", "again", "{}"}, k_t0);
  REQUIRE(other);
  f.message_id = other->id;
  const auto lost = f.queue_tool(std::nullopt);
  REQUIRE(store::begin_send(f.db, k_t0 + 3s, std::string(store::k_tool_lane)).value().has_value());
  const std::string lookups[] = {"whatsapp"};
  auto recovered = store::recover_sending(f.db, k_t0 + 4s, lookups);
  REQUIRE(recovered);
  CHECK(*recovered == std::vector<std::int64_t>{lost});
  CHECK(f.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'") == 1);
}

TEST_CASE("migration 0021: escalations rebuilt with every row, id and reference, foreign keys on after",
          "[migrations][mcp][sqlite]") {
  test::TempDir dir;
  auto db = test::db_before_migration(dir, 21);
  auto message = store::insert_inbound(db, {"whatsapp", "wamid.m", "c", "15551234567", "hi", "{}"}, k_t0);
  REQUIRE(message);
  auto escalation =
      store::open_escalation(db, {message->id, store::EscalationReason::needs_approval, "{}", {}, {}}, k_t0);
  REQUIRE(escalation);
  // A proposal that points at it, written with the columns of schema 20 (today's store writes
  // 0021's columns too).
  REQUIRE(test::exec(db,
                     "INSERT INTO actions (message_id, escalation_id, action, arguments, recipient, body, status,"
                     " created_by, idempotency_key, created_at, updated_at) VALUES (" +
                         std::to_string(message->id) + ", " + std::to_string(*escalation) +
                         ", 'say', '{}', '15551234567', 'hola', 'proposed', 'dispatchd', 'k-1', 'x', 'x')"));
  const auto before = test::query_int(db, "SELECT count(*) FROM metric_counts WHERE metric = 'escalations'").value();
  test::migrate_all(db, k_t0 + 1s);

  CHECK(test::query_int(db, "SELECT count(*) FROM escalations WHERE id = " + std::to_string(*escalation) +
                                " AND reason = 'needs_approval'")
            .value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM actions WHERE escalation_id = " + std::to_string(*escalation))
            .value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM pragma_foreign_key_check").value() == 0);
  CHECK(test::query_int(db, "PRAGMA foreign_keys").value() == 1);
  // The new reason is allowed, the indexes and the metric triggers are back.
  auto failed =
      store::open_escalation(db, {message->id, store::EscalationReason::tool_failed, "{}", {}, {}}, k_t0 + 2s);
  REQUIRE(failed);
  CHECK(
      test::query_int(db, "SELECT count(*) FROM metric_counts WHERE metric = 'escalations' AND label1 = 'tool_failed'")
          .value() == 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM metric_counts WHERE metric = 'escalations'").value() == before + 1);
  CHECK(test::query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'escalations'")
            .value() == 3);
  // A reference to a row that does not exist is still refused.
  CHECK_FALSE(test::exec(db, "UPDATE actions SET escalation_id = 999999"));
}
