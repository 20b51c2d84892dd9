#include <catch2/catch.hpp>

#include "staff/decisions.h"
#include "store/audit.h"
#include "store/queue.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

using Fixture = test::EscalationFixture;

TEST_CASE("staff: approve re-validates the proposal and queues it for sending", "[staff]") {
  Fixture f;
  auto action = staff::approve(f.db, f.catalog, f.escalation, "ana", k_t0 + 1s, nullptr);
  REQUIRE(action);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'approved' AND body = 'Your refund is on its way.'") ==
        1);
}

TEST_CASE("staff: an edited action with an invalid enum is refused with the validator's message", "[staff]") {
  Fixture f;
  const std::string edited =
      R"({"action":"send_message","recipient":"15551234567","content":"Refund sent.","priority":"urgent"})";
  auto refused = staff::edit(f.db, f.catalog, f.escalation, "ana", edited, k_t0 + 1s, nullptr);
  REQUIRE_FALSE(refused);
  REQUIRE(refused.error().verdict);
  const auto& verdict = *refused.error().verdict;
  REQUIRE(verdict.errors.size() == 1);
  CHECK(verdict.errors[0].code == "enum");
  CHECK(verdict.errors[0].path == "/priority");
  // The refusal carries the validator's own message, naming the allowed values.
  CHECK_THAT(refused.error().message, Catch::Contains("/priority: " + verdict.errors[0].message));
  CHECK_THAT(refused.error().message, Catch::Contains("\"high\""));
  // Nothing changed: the escalation is open and its proposal still waits.
  CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'open'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'proposed'") == 1);
}

TEST_CASE("staff: an edit to another recipient is refused by the same policy as the model", "[staff]") {
  Fixture f;
  const std::string edited =
      R"({"action":"send_message","recipient":"15559999999","content":"Refund sent.","priority":"high"})";
  auto refused = staff::edit(f.db, f.catalog, f.escalation, "ana", edited, k_t0 + 1s, nullptr);
  REQUIRE_FALSE(refused);
  REQUIRE(refused.error().verdict);
  CHECK(refused.error().verdict->errors.at(0).code == "recipient");
}

TEST_CASE("staff: a valid edit replaces the proposal, what changed stays queryable", "[staff]") {
  Fixture f;
  const std::string edited =
      R"({"action":"send_message","recipient":"15551234567","content":"Refund sent today.","priority":"high"})";
  auto action = staff::edit(f.db, f.catalog, f.escalation, "ana", edited, k_t0 + 1s, nullptr);
  REQUIRE(action);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE created_by = 'ana' AND status = 'approved'"
                " AND body = 'Refund sent today.'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_escalations WHERE resolution = 'edited'"
                " AND " +
                test::json_text("proposed_action", "content") + " = 'Your refund is on its way.'") == 1);
}

TEST_CASE("staff: edit refuses actions that send nothing", "[staff]") {
  Fixture f;
  const std::string escalate =
      R"({"action":"escalate_to_human","recipient":"15551234567","content":"needs a manager","priority":"high"})";
  auto refused = staff::edit(f.db, f.catalog, f.escalation, "ana", escalate, k_t0 + 1s, nullptr);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("only a reply action or a tool call can be sent"));
}

TEST_CASE("staff: reply sends the text to the message's sender, limits are checked", "[staff]") {
  Fixture f;
  CHECK_FALSE(staff::reply(f.db, f.escalation, "ana", "", k_t0, nullptr));
  CHECK_FALSE(staff::reply(f.db, f.escalation, "ana", std::string(4097, 'x'), k_t0, nullptr));
  CHECK_FALSE(staff::reply(f.db, f.escalation, "ana", "bad \xff utf8", k_t0, nullptr));
  auto action = staff::reply(f.db, f.escalation, "ana", "Hola, \"ya está\".", k_t0 + 1s, nullptr);
  REQUIRE(action);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply' AND recipient = '15551234567'"
                " AND " +
                test::json_text("arguments", "text") + " = 'Hola, \"ya está\".'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'rejected'") == 1);
}

TEST_CASE("staff: dismiss needs a note, a dismissed item takes no more decisions", "[staff]") {
  Fixture f;
  CHECK_FALSE(staff::dismiss(f.db, f.escalation, "ana", "", k_t0));
  REQUIRE(staff::dismiss(f.db, f.escalation, "ana", "spam", k_t0 + 1s));
  auto late = staff::approve(f.db, f.catalog, f.escalation, "luis", k_t0 + 2s, nullptr);
  REQUIRE_FALSE(late);
  CHECK(late.error().message == "escalation " + std::to_string(f.escalation) + " is already dismissed");
  CHECK(store::verify_audit(f.db)->first_broken == std::nullopt);
}

TEST_CASE("staff: an edit that writes the customer's number in another form is sent to the number as stored",
          "[staff]") {
  const auto written = GENERATE(as<std::string>{}, "+15551234567", "+1 (555) 123-4567", "15551234567 ");
  CAPTURE(written);
  Fixture f;
  const std::string edited =
      R"({"action":"send_message","recipient":")" + written + R"(","content":"Refund sent.","priority":"high"})";
  REQUIRE(staff::edit(f.db, f.catalog, f.escalation, "ana", edited, k_t0 + 1s, nullptr));
  // The outbox row goes to the wa_id (the 24-hour window and Graph look it up); the
  // arguments keep what staff wrote.
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'approved' AND created_by = 'ana'"
                " AND recipient = '15551234567' AND " +
                test::json_text("arguments", "recipient") + " = '" + written + "'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_audit WHERE event = 'action' AND actor = 'ana'"
                " AND " +
                test::json_text("detail", "recipient") +
                " = '15551234567'"
                " AND " +
                test::json_text("detail", "recipient_written") + " = '" + written + "'") == 1);
}

TEST_CASE("staff: approving a proposal stored with the model's written recipient sends to the number as stored",
          "[staff]") {
  Fixture f("+1 555-123-4567");
  REQUIRE(staff::approve(f.db, f.catalog, f.escalation, "ana", k_t0 + 1s, nullptr));
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status IN ('approved', 'sending', 'sent')"
                " AND recipient <> '15551234567'") == 0);
  CHECK(f.count("SELECT count(*) FROM v_actions WHERE status = 'approved' AND recipient = '15551234567'"
                " AND body = 'Your refund is on its way.'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'resolved' AND resolution = 'approved'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_audit WHERE event = 'action'"
                " AND " +
                test::json_text("detail", "recipient_written") + " = '+1 555-123-4567'") == 1);
}

TEST_CASE("staff: approving a proposal already addressed to the number as stored approves that row", "[staff]") {
  Fixture f;
  auto action = staff::approve(f.db, f.catalog, f.escalation, "ana", k_t0 + 1s, nullptr);
  REQUIRE(action);
  CHECK(f.count("SELECT count(*) FROM v_actions") == 1);
  CHECK(f.count("SELECT action_id FROM v_actions WHERE status = 'approved' AND created_by = 'dispatchd'") == *action);
}
