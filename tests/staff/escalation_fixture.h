#pragma once
// A WhatsApp message from k_customer escalated for approval with a valid proposal
// (support.en catalog): what the staff decisions and the staff API act on.

#include <cstdint>
#include <string>

#include "store/outbox.h"
#include "store/queue.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

namespace dispatchd::test {

inline constexpr const char* k_customer_wa = "15551234567";

// The model's proposal, addressed to `recipient` as the model wrote it.
inline std::string refund_proposal(const std::string& recipient) {
  return R"({"action":"send_message","recipient":")" + recipient +
         R"(","content":"Your refund is on its way.","priority":"high"})";
}

struct EscalationFixture {
  TempDir dir;
  store::Database db = migrated_db(dir);
  catalog::Catalog catalog = support_en();
  std::int64_t message_id = 0;
  std::int64_t escalation = 0;

  // `stored_recipient` is the proposal's outbox recipient: the customer's wa_id, or another
  // form of it, as proposals were stored before recipients were made canonical.
  explicit EscalationFixture(const std::string& stored_recipient = k_customer_wa) {
    auto message =
        store::insert_inbound(db, {"whatsapp", "wamid.1", "c", k_customer_wa, "I want my refund", "{}"}, k_t0);
    REQUIRE(message);
    message_id = message->id;
    store::NewAction proposal{.message_id = message_id,
                              .action = "send_message",
                              .arguments = refund_proposal(stored_recipient),
                              .recipient = stored_recipient,
                              .body = "Your refund is on its way."};
    auto opened = store::open_escalation(
        db, {message_id, store::EscalationReason::needs_approval, "{}", std::nullopt, proposal}, k_t0);
    REQUIRE(opened);
    escalation = *opened;
  }

  std::int64_t count(const std::string& sql) { return test::query_int(db, sql).value(); }
};

}  // namespace dispatchd::test
