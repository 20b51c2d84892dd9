#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/queue.h"
#include "store/views.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::int64_t escalation = 0;
  std::int64_t message_id = 0;

  Fixture() {
    auto message = store::insert_inbound(db, {"whatsapp", "wamid.1", "c", "15551234567", "refund please", "{}"}, k_t0);
    REQUIRE(message);
    message_id = message->id;
    store::NewAction proposal{
        .message_id = message->id,
        .action = "send_message",
        .arguments = R"({"action":"send_message","recipient":"15551234567","content":"Refunded."})",
        .recipient = "15551234567",
        .body = "Refunded."};
    auto opened = store::open_escalation(
        db, {message->id, store::EscalationReason::needs_approval, "{}", std::nullopt, proposal}, k_t0 + 1s);
    REQUIRE(opened);
    escalation = *opened;
  }
};

}  // namespace

TEST_CASE("queue: open -> claimed -> resolved, each step audited", "[queue]") {
  Fixture f;
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_escalations WHERE status = 'open' AND reason = 'needs_approval'")
            .value() == 1);
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 2s));
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_escalations WHERE status = 'claimed' AND assignee = 'ana'")
            .value() == 1);
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 3s));  // claiming again is harmless
  REQUIRE(store::close_escalation(f.db, f.escalation, "ana", store::EscalationStatus::resolved, "approved as proposed",
                                  k_t0 + 4s));
  CHECK(
      test::query_int(f.db, "SELECT count(*) FROM v_escalations WHERE status = 'resolved' AND resolved_at IS NOT NULL")
          .value() == 1);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_audit WHERE event IN ('escalation', 'staff_claim', 'staff_resolved')")
            .value() == 4);
  CHECK_FALSE(store::verify_audit(f.db)->first_broken);
}

TEST_CASE("queue: a claim by another names the holder", "[queue]") {
  Fixture f;
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 2s));
  auto taken = store::claim_escalation(f.db, f.escalation, "luis", k_t0 + 3s);
  REQUIRE_FALSE(taken);
  CHECK(taken.error().message == "escalation " + std::to_string(f.escalation) + " is claimed by ana");
  auto closed_by_other =
      store::close_escalation(f.db, f.escalation, "luis", store::EscalationStatus::dismissed, "spam", k_t0 + 4s);
  REQUIRE_FALSE(closed_by_other);
  CHECK(closed_by_other.error().message.ends_with("is claimed by ana"));
}

TEST_CASE("queue: a resolved item cannot be resolved, dismissed or claimed again", "[queue]") {
  Fixture f;
  REQUIRE(
      store::close_escalation(f.db, f.escalation, "ana", store::EscalationStatus::dismissed, "duplicate", k_t0 + 2s));
  for (const auto status : {store::EscalationStatus::resolved, store::EscalationStatus::dismissed}) {
    auto again = store::close_escalation(f.db, f.escalation, "ana", status, "again", k_t0 + 3s);
    REQUIRE_FALSE(again);
    CHECK(again.error().message.ends_with("is already dismissed"));
  }
  CHECK_FALSE(store::claim_escalation(f.db, f.escalation, "luis", k_t0 + 4s));
  CHECK_FALSE(store::close_escalation(f.db, f.escalation, "ana", store::EscalationStatus::claimed, "x", k_t0 + 5s));
  CHECK_FALSE(store::claim_escalation(f.db, 999, "ana", k_t0));
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_audit WHERE event LIKE 'staff_%'").value() == 1);
}

TEST_CASE("queue: a proposal waits as a 'proposed' outbox row shown on the escalation", "[queue][outbox]") {
  Fixture f;
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE status = 'proposed' AND escalation_id IS NOT NULL")
            .value() == 1);
  CHECK(test::query_int(f.db,
                        "SELECT " + test::json_text("proposed_action", "content") + " = 'Refunded.' FROM v_escalations")
            .value() == 1);
  CHECK_FALSE(store::begin_send(f.db, k_t0 + 2s).value());  // nothing is sent before approval
}

TEST_CASE("queue: approving sends the proposal as it is, once", "[queue][outbox]") {
  Fixture f;
  auto action = store::approve_escalation(f.db, f.escalation, "ana", k_t0 + 2s);
  REQUIRE(action);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE status = 'approved' AND created_by = 'dispatchd'")
            .value() == 1);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_escalations WHERE status = 'resolved' AND resolution = 'approved'"
                        " AND assignee = 'ana'")
            .value() == 1);
  auto again = store::approve_escalation(f.db, f.escalation, "ana", k_t0 + 3s);
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "escalation " + std::to_string(f.escalation) + " is already resolved");
  auto sending = store::begin_send(f.db, k_t0 + 4s);
  REQUIRE(sending);
  REQUIRE(*sending);
  CHECK((*sending)->id == *action);
  CHECK((*sending)->body == "Refunded.");
}

TEST_CASE("queue: a staff action replaces the proposal, which ends rejected", "[queue][outbox]") {
  Fixture f;
  REQUIRE(store::claim_escalation(f.db, f.escalation, "ana", k_t0 + 2s));
  store::NewAction reply{.action = "staff_reply",
                         .arguments = R"({"text":"Done, sorry for the wait."})",
                         .recipient = "15551234567",
                         .body = "Done, sorry for the wait."};
  auto refused = store::resolve_with_action(f.db, f.escalation, "luis", reply, store::Resolution::replied, k_t0 + 3s);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "escalation " + std::to_string(f.escalation) + " is claimed by ana");
  auto action = store::resolve_with_action(f.db, f.escalation, "ana", reply, store::Resolution::replied, k_t0 + 4s);
  REQUIRE(action);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE status = 'rejected' AND action = 'send_message'")
            .value() == 1);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_actions WHERE status = 'approved' AND action = 'staff_reply'"
                        " AND created_by = 'ana' AND message_id = " +
                            std::to_string(f.message_id))
            .value() == 1);
  CHECK(store::verify_audit(f.db)->first_broken == std::nullopt);
}

TEST_CASE("queue: dismissing rejects the proposal and sends nothing", "[queue][outbox]") {
  Fixture f;
  REQUIRE(store::close_escalation(f.db, f.escalation, "ana", store::EscalationStatus::dismissed,
                                  "customer called instead", k_t0 + 2s));
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE status = 'rejected'").value() == 1);
  CHECK_FALSE(store::begin_send(f.db, k_t0 + 3s).value());
}

TEST_CASE("queue: approving an escalation without a proposal is refused", "[queue]") {
  Fixture f;
  auto plain = store::open_escalation(
      f.db, {f.message_id, store::EscalationReason::contract_failed, "{}", std::nullopt, std::nullopt}, k_t0);
  REQUIRE(plain);
  auto approved = store::approve_escalation(f.db, *plain, "ana", k_t0 + 1s);
  REQUIRE_FALSE(approved);
  CHECK(approved.error().message == "escalation " + std::to_string(*plain) + " has no proposed action to approve");
  CHECK(
      test::query_int(f.db, "SELECT status = 'open' FROM v_escalations WHERE escalation_id = " + std::to_string(*plain))
          .value() == 1);
}

// A state the binary does not know (a newer schema's value, written past this schema's
// CHECK list here) is an `internal` error naming the text, never a guess at a known state.
TEST_CASE("queue: a stored status this dispatchd does not know is an internal error naming it", "[sqlite]") {
  Fixture f;
  REQUIRE(test::exec(f.db, "PRAGMA ignore_check_constraints = ON"));
  REQUIRE(test::exec(f.db, "UPDATE escalations SET status = 'snoozed' WHERE id = " + std::to_string(f.escalation)));
  REQUIRE(test::exec(f.db, "PRAGMA ignore_check_constraints = OFF"));
  auto listed = store::list_escalations(f.db);
  REQUIRE_FALSE(listed);
  CHECK(listed.error().kind == store::ErrorKind::internal);
  CHECK(listed.error().message == "a stored state this dispatchd does not know: snoozed");
  auto shown = store::show_escalation(f.db, f.escalation);
  REQUIRE_FALSE(shown);
  CHECK(shown.error().kind == store::ErrorKind::internal);
}
