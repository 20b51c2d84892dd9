// What a channel billed for each sent message (store/send_pricing.h, migration 0033): the
// price lookup as a table, and a delivery report's pricing kept, replaced, shown in
// v_messages and totalled for dispatchctl cost.
#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/outbox.h"
#include "store/send_pricing.h"
#include "store/views.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using store::PricingCategory;
using test::k_t0;

namespace {

store::PriceTable example_prices() {
  store::PriceTable prices;
  prices.currency = "USD";
  prices.base = {{PricingCategory::marketing, 0.025},
                 {PricingCategory::utility, 0.004},
                 {PricingCategory::authentication, 0.0035},
                 {PricingCategory::service, 0}};
  prices.markets["52"] = {{PricingCategory::marketing, 0.0436}};
  prices.markets["1"] = {{PricingCategory::marketing, 0.03}, {PricingCategory::utility, 0.005}};
  prices.markets["1876"] = {{PricingCategory::marketing, 0.08}};
  return prices;
}

store::SendPricing marketing(bool billable, std::optional<double> cost) {
  return {PricingCategory::marketing, billable, store::PricingModel::pmp, store::PricingType::regular, "", cost, "USD"};
}

}  // namespace

TEST_CASE("send pricing: a message's price is its longest market's, else the default", "[store][pricing]") {
  struct Row {
    PricingCategory category;
    const char* recipient;
    std::optional<double> price;
  };
  const Row rows[] = {
      {PricingCategory::marketing, "5215512345678", 0.0436},  // market 52
      {PricingCategory::utility, "5215512345678", 0.004},     // 52 lists no utility: the default
      {PricingCategory::marketing, "18765550100", 0.08},      // 1876 is longer than 1
      {PricingCategory::utility, "18765550100", 0.005},       // 1876 lists no utility: market 1
      {PricingCategory::marketing, "15551234567", 0.03},      // market 1
      {PricingCategory::marketing, "4915112345678", 0.025},   // no market: the default
      {PricingCategory::service, "4915112345678", 0.0},
      {PricingCategory::authentication_international, "4915112345678", std::nullopt},  // no price
      {PricingCategory::unknown, "5215512345678", std::nullopt},
      {PricingCategory::marketing, "", 0.025},
  };
  const auto prices = example_prices();
  for (const Row& row : rows) {
    INFO(store::to_sql(row.category) << " to " << row.recipient);
    CHECK(store::price_of(prices, row.category, row.recipient) == row.price);
  }
  CHECK(store::price_of({}, PricingCategory::marketing, "5215512345678") == std::nullopt);
}

TEST_CASE("send pricing: a message that is not billable costs nothing, priced or not", "[store][pricing]") {
  const auto prices = example_prices();
  CHECK(store::cost_of(prices, marketing(true, {}), "5215512345678") == 0.0436);
  CHECK(store::cost_of(prices, marketing(false, {}), "5215512345678") == 0.0);
  CHECK(store::cost_of({}, marketing(false, {}), "5215512345678") == 0.0);
  CHECK(store::cost_of({}, marketing(true, {}), "5215512345678") == std::nullopt);
}

TEST_CASE("send pricing: a channel's texts map to the enums, any other text to unknown", "[store][pricing]") {
  CHECK(store::pricing_value<PricingCategory>("marketing_lite") == PricingCategory::marketing_lite);
  CHECK(store::pricing_value<PricingCategory>("authentication_international") ==
        PricingCategory::authentication_international);
  CHECK(store::pricing_value<PricingCategory>("Marketing") == PricingCategory::unknown);
  CHECK(store::pricing_value<PricingCategory>("") == PricingCategory::unknown);
  CHECK(store::pricing_value<store::PricingModel>("PMP") == store::PricingModel::pmp);
  CHECK(store::pricing_value<store::PricingModel>("pmp") == store::PricingModel::unknown);
  CHECK(store::pricing_value<store::PricingType>("free_entry_point") == store::PricingType::free_entry_point);
}

TEST_CASE("send pricing: a delivery report's pricing is kept per send and shown in v_messages", "[store][pricing]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  auto message = store::insert_inbound(db, {"whatsapp", "wamid.IN", "c", "5215512345678", "hola", "{}"}, k_t0);
  REQUIRE(message);
  auto action = store::add_action(db,
                                  {.message_id = message->id,
                                   .action = "send_message",
                                   .arguments = "{}",
                                   .recipient = "5215512345678",
                                   .body = "hola"},
                                  k_t0);
  REQUIRE(action);
  REQUIRE(store::begin_send(db, k_t0 + 1s).value());
  REQUIRE(store::complete_send(db, *action, "wamid.OUT", k_t0 + 2s));
  const auto view = [&](const std::string& column) {
    return test::query_int(
        db, "SELECT count(*) FROM v_messages WHERE message_id = " + std::to_string(message->id) + " AND " + column);
  };
  CHECK(view("send_category IS NULL AND send_cost IS NULL").value() == 1);

  // sent: free (a service reply in the customer service window).
  store::SendPricing free{PricingCategory::service,
                          false,
                          store::PricingModel::pmp,
                          store::PricingType::free_customer_service,
                          "service",
                          0.0,
                          "USD"};
  auto sent = store::apply_delivery(db, {"wamid.OUT", "", store::DeliveryStatus::sent, "", free, "service"}, k_t0 + 3s);
  REQUIRE(sent);
  CHECK(sent->action_id == *action);
  CHECK(view("send_category = 'service' AND send_billable = 0 AND send_cost = 0 AND send_currency = 'USD'").value() ==
        1);
  // delivered: the same message reported again, now as marketing: the row is replaced.
  auto delivered = store::apply_delivery(
      db, {"wamid.OUT", "", store::DeliveryStatus::delivered, "", marketing(true, 0.0436), "marketing"}, k_t0 + 4s);
  REQUIRE(delivered);
  CHECK(test::query_int(db, "SELECT count(*) FROM send_pricing").value() == 1);
  CHECK(
      view("send_category = 'marketing' AND send_billable = 1 AND send_cost > 0.0435 AND send_cost < 0.0437").value() ==
      1);
  // A category this version does not know: kept as unknown, its text in the audit event.
  store::SendPricing strange = marketing(true, std::nullopt);
  strange.category = PricingCategory::unknown;
  REQUIRE(store::apply_delivery(db, {"wamid.OUT", "", store::DeliveryStatus::read, "", strange, "marketing_ultra"},
                                k_t0 + 5s));
  CHECK(view("send_category = 'unknown' AND send_cost IS NULL").value() == 1);
  auto audit = store::list_audit(db, message->id, std::nullopt);
  REQUIRE(audit);
  CHECK(audit->back().event == "delivery");
  CHECK(audit->back().detail.find(R"("category":"marketing_ultra","billable":true,"pricing_model":"PMP")") !=
        std::string::npos);

  auto totals = store::read_send_costs(db);
  REQUIRE(totals);
  REQUIRE(totals->size() == 1);
  CHECK(totals->at(0).channel == "whatsapp");
  CHECK(totals->at(0).category == PricingCategory::unknown);
  CHECK(totals->at(0).sends == 1);
  CHECK(totals->at(0).billable == 1);
  CHECK(totals->at(0).unpriced == 1);
  CHECK(totals->at(0).cost == 0);
}

TEST_CASE("send pricing: the totals are per channel, category and currency", "[store][pricing]") {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  const std::pair<const char*, store::SendPricing> sends[] = {
      {"5215500000001", marketing(true, 0.0436)},
      {"5215500000002", marketing(true, 0.0436)},
      {"5215500000003", marketing(false, 0.0)},
      {"5215500000004", {PricingCategory::utility, true, store::PricingModel::pmp, {}, "", 0.004, "USD"}},
  };
  int n = 0;
  for (const auto& [customer, pricing] : sends) {
    const std::string in = "wamid.IN" + std::to_string(++n), out = "wamid.OUT" + std::to_string(n);
    auto message = store::insert_inbound(db, {"whatsapp", in, customer, customer, "hola", "{}"}, k_t0);
    REQUIRE(message);
    auto action = store::add_action(
        db,
        {.message_id = message->id, .action = "send_message", .arguments = "{}", .recipient = customer, .body = "x"},
        k_t0);
    REQUIRE(action);
    REQUIRE(store::begin_send(db, k_t0 + 1s).value());
    REQUIRE(store::complete_send(db, *action, out, k_t0 + 2s));
    REQUIRE(store::apply_delivery(db, {out, "", store::DeliveryStatus::sent, "", pricing, ""}, k_t0 + 3s));
  }
  auto totals = store::read_send_costs(db);
  REQUIRE(totals);
  REQUIRE(totals->size() == 2);
  const auto& m = totals->at(0);
  CHECK(m.category == PricingCategory::marketing);
  CHECK(m.sends == 3);
  CHECK(m.billable == 2);
  CHECK(m.cost == Approx(0.0872));
  CHECK(m.unpriced == 0);
  CHECK(m.currency == "USD");
  CHECK(totals->at(1).category == PricingCategory::utility);
  CHECK(totals->at(1).cost == Approx(0.004));
}
