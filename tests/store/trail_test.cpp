// store/trail.h on the seeded history (tests/support/seed.cpp, written through the store's
// own functions): a replied, an escalated and a staff-edited message; delivery reports; the
// audit chain's segment check.
#include "store/trail.h"

#include <catch2/catch.hpp>

#include "staff/trail_render.h"
#include "store/outbox.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/support/seed.h"

namespace dispatchd::test {
namespace {

// Seed ids (tests/support/seed.cpp): 1 replied, 2 model escalated, 3 contract_failed, 4 a
// review escalation that "ana" edited and sent.
struct Seeded {
  TempDir dir;
  store::Database db = migrated_db(dir);
  Seeded() { REQUIRE(seed_history(db, k_t0)); }

  store::Trail trail(std::int64_t id, std::size_t history = 10) {
    auto t = store::load_trail(db, id, history);
    INFO((t ? std::string() : t.error().message));
    REQUIRE(t);
    return std::move(*t);
  }
};

std::vector<std::string> events(const store::Trail& t) {
  std::vector<std::string> out;
  for (const auto& row : t.audit) out.push_back(row.event + "/" + row.actor);
  return out;
}

}  // namespace

TEST_CASE("trail of a replied message: the attempt, the sent action and its events", "[trail]") {
  Seeded s;
  const auto t = s.trail(1);
  CHECK(t.message.provider_message_id == "wamid.seed1");
  CHECK(t.message.outcome == store::Outcome::replied);
  CHECK(t.history.empty());
  REQUIRE(t.attempts.size() == 1);
  CHECK(t.attempts[0].row.verdict == store::Verdict::valid);
  CHECK(t.attempts[0].row.raw_output->find("ORD-1001 ships tomorrow.") != std::string::npos);
  CHECK(t.attempts[0].request_summary == R"({"turns":2})");
  REQUIRE(t.actions.size() == 1);
  CHECK(t.actions[0].row.status == store::ActionStatus::sent);
  CHECK(t.actions[0].row.provider_message_id == "out.dispatchd-1-1");
  CHECK(t.actions[0].row.body == "ORD-1001 ships tomorrow.");
  CHECK(t.escalations.empty());
  CHECK(events(t) == std::vector<std::string>{"received/dispatchd", "attempt/dispatchd", "action/dispatchd",
                                              "action/dispatchd", "action/dispatchd", "done/dispatchd"});
  REQUIRE(t.chain);
  CHECK(t.chain->from == t.audit.front().id);
  CHECK(t.chain->to == t.audit.back().id);
  CHECK_FALSE(t.chain->check.first_broken);
  CHECK(t.chain->check.events == t.chain->to - t.chain->from + 1);
}

TEST_CASE("trail of an escalated message: three rejected attempts and the open escalation", "[trail]") {
  Seeded s;
  const auto t = s.trail(3);
  CHECK(t.message.outcome == store::Outcome::escalated);
  REQUIRE(t.attempts.size() == 3);
  CHECK(t.attempts[0].row.error_class == "recipient");
  CHECK(t.attempts[2].row.error_class == "truncated");
  CHECK(t.attempts[2].row.errors.find("the reply ends before the JSON object does") != std::string::npos);
  CHECK(t.actions.empty());
  REQUIRE(t.escalations.size() == 1);
  CHECK(t.escalations[0].reason == store::EscalationReason::contract_failed);
  CHECK(t.escalations[0].status == store::EscalationStatus::open);
  CHECK_FALSE(t.escalations[0].assignee);
}

TEST_CASE("trail of a staff-edited message: the rejected proposal, the edit, who did it", "[trail]") {
  Seeded s;
  const auto t = s.trail(4);
  // The conversation before it: message 1 and the reply sent to it.
  REQUIRE(t.history.size() == 2);
  CHECK_FALSE(t.history[0].from_us);
  CHECK(t.history[1].from_us);
  CHECK(t.history[1].text == "ORD-1001 ships tomorrow.");
  CHECK(s.trail(4, 1).history.size() == 1);
  REQUIRE(t.actions.size() == 2);
  CHECK(t.actions[0].row.status == store::ActionStatus::rejected);
  CHECK(t.actions[0].row.created_by == "dispatchd");
  CHECK(t.actions[1].row.status == store::ActionStatus::sent);
  CHECK(t.actions[1].row.created_by == "ana");
  CHECK(t.actions[1].row.body == "Your refund for ORD-1001 is on its way (3-5 days).");
  CHECK(t.actions[1].escalation_id == t.escalations.at(0).id);
  REQUIRE(t.escalations.size() == 1);
  CHECK(t.escalations[0].status == store::EscalationStatus::resolved);
  CHECK(t.escalations[0].resolution == "edited");
  CHECK(t.escalations[0].assignee == "ana");
  const auto e = events(t);
  CHECK(std::count(e.begin(), e.end(), "staff_claim/ana") == 1);
  CHECK(std::count(e.begin(), e.end(), "staff_resolved/ana") == 1);
  CHECK_FALSE(t.chain->check.first_broken);
}

TEST_CASE("trail: delivery reports are listed under their action", "[trail]") {
  Seeded s;
  auto delivered = store::apply_delivery(s.db, {"out.dispatchd-1-1", "", store::DeliveryStatus::delivered, ""},
                                         k_t0 + std::chrono::hours(72));
  REQUIRE(delivered);
  auto read = store::apply_delivery(s.db, {"out.dispatchd-1-1", "", store::DeliveryStatus::read, ""},
                                    k_t0 + std::chrono::hours(73));
  REQUIRE(read);
  const auto t = s.trail(1);
  REQUIRE(t.actions.size() == 1);
  REQUIRE(t.actions[0].deliveries.size() == 2);
  CHECK(t.actions[0].deliveries[0].status == store::DeliveryStatus::delivered);
  CHECK(t.actions[0].deliveries[0].reported == "delivered");
  CHECK(t.actions[0].deliveries[1].status == store::DeliveryStatus::read);
  CHECK(t.actions[0].deliveries[1].provider_message_id == "out.dispatchd-1-1");
  // The segment now reaches the reports, past other messages' events, and still verifies.
  CHECK(t.chain->to == t.audit.back().id);
  CHECK(t.chain->check.events > static_cast<std::int64_t>(t.audit.size()));
  CHECK_FALSE(t.chain->check.first_broken);
}

TEST_CASE("trail: what the channel billed is shown under its action", "[trail][pricing]") {
  Seeded s;
  CHECK_FALSE(s.trail(1).actions.at(0).pricing.has_value());
  const store::SendPricing billed{store::PricingCategory::marketing,
                                  true,
                                  store::PricingModel::pmp,
                                  store::PricingType::regular,
                                  "marketing",
                                  0.0436,
                                  "USD"};
  REQUIRE(store::apply_delivery(s.db,
                                {"out.dispatchd-1-1", "", store::DeliveryStatus::delivered, "", billed, "marketing"},
                                k_t0 + std::chrono::hours(72)));
  auto t = s.trail(1);
  REQUIRE(t.actions.at(0).pricing.has_value());
  CHECK(*t.actions[0].pricing == billed);
  CHECK(staff::trail_markdown(t).find("- billed as marketing (PMP, regular): 0.0436 USD") != std::string::npos);
  CHECK(staff::trail_json(t).find(R"("pricing":{"category":"marketing","billable":true,"pricing_model":"PMP",)"
                                  R"("pricing_type":"regular","cost":0.0436,"currency":"USD"})") != std::string::npos);

  // A later report replaces it; each shape of pricing has its line.
  store::SendPricing unpriced = billed;
  unpriced.cost.reset();
  unpriced.type.reset();
  const store::SendPricing free{store::PricingCategory::service,
                                false,
                                store::PricingModel::pmp,
                                store::PricingType::free_customer_service,
                                "",
                                0.0,
                                "USD"};
  const std::pair<store::SendPricing, const char*> rows[] = {
      {unpriced, "- billed as marketing (PMP): no price configured"},
      {free, "- not billable: service (PMP, free_customer_service)"},
  };
  int hour = 73;
  for (const auto& [pricing, line] : rows) {
    INFO(line);
    REQUIRE(store::apply_delivery(s.db, {"out.dispatchd-1-1", "", store::DeliveryStatus::read, "", pricing, ""},
                                  k_t0 + std::chrono::hours(hour++)));
    CHECK(staff::trail_markdown(s.trail(1)).find(line) != std::string::npos);
  }
}

TEST_CASE("trail: the chain check names a changed or deleted row in the segment", "[trail]") {
  Seeded s;
  const auto before = s.trail(4);
  const std::int64_t second = before.audit.at(1).id;
  SECTION("a row of the message changed") {
    REQUIRE(test::exec(
        s.db, test::drop_audit_trigger() + "UPDATE audit SET detail = '{}' WHERE id = " + std::to_string(second)));
    const auto t = s.trail(4);
    CHECK(t.chain->check.first_broken == second);
    CHECK(t.chain->check.reason.find("do not match its hash") != std::string::npos);
  }
  SECTION("the row before the segment deleted: the first row's link breaks") {
    REQUIRE(test::exec(s.db, "DELETE FROM audit WHERE id = " + std::to_string(before.audit.front().id - 1)));
    CHECK(s.trail(4).chain->check.first_broken == before.audit.front().id);
  }
  SECTION("a row outside the segment changed: this message's segment still verifies") {
    REQUIRE(test::exec(s.db, test::drop_audit_trigger() + "UPDATE audit SET detail = '{}' WHERE id = 1"));
    CHECK_FALSE(s.trail(4).chain->check.first_broken);
    auto whole = store::verify_audit(s.db);
    REQUIRE(whole);
    CHECK(whole->first_broken == 1);
  }
}

TEST_CASE("trail: a missing message, and messages found by provider id", "[trail]") {
  Seeded s;
  const auto missing = store::load_trail(s.db, 99, 10);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == store::ErrorKind::not_found);
  CHECK(*store::messages_with_provider_id(s.db, "wamid.seed4", {"whatsapp", "gmail"}) == std::vector<std::int64_t>{4});
  CHECK(*store::messages_with_provider_id(s.db, "18c2f0a1b2c3d4e5", {"whatsapp", "gmail"}) ==
        std::vector<std::int64_t>{5});
  CHECK(store::messages_with_provider_id(s.db, "wamid.nope", {"whatsapp", "gmail"})->empty());
  // A message nobody took yet has a trail too: received, nothing else.
  const auto waiting = s.trail(8);
  CHECK(waiting.message.outcome == store::Outcome::pending);
  CHECK(waiting.attempts.empty());
  CHECK(events(waiting) == std::vector<std::string>{"received/dispatchd"});
}

}  // namespace dispatchd::test
