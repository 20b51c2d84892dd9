// A status's pricing object as the store keeps it (connectors/whatsapp/pricing.h): its texts
// mapped to the store's enums and priced at connectors.whatsapp.prices.
#include <catch2/catch.hpp>

#include "connectors/whatsapp/pricing.h"

using namespace dispatchd;
using store::PricingCategory;
using store::PricingModel;
using store::PricingType;

TEST_CASE("whatsapp pricing: a status's pricing object becomes the send's category and cost") {
  store::PriceTable prices;
  prices.currency = "USD";
  prices.base = {{PricingCategory::marketing, 0.025}, {PricingCategory::utility, 0.004}};
  prices.markets["52"] = {{PricingCategory::marketing, 0.0436}};

  struct Row {
    whatsapp::StatusPricing pricing;
    const char* recipient;
    PricingCategory category;
    PricingModel model;
    std::optional<PricingType> type;
    std::optional<double> cost;
  };
  const Row rows[] = {
      {{true, "PMP", "marketing", "regular"},
       "5215512345678",
       PricingCategory::marketing,
       PricingModel::pmp,
       PricingType::regular,
       0.0436},
      {{true, "PMP", "marketing", ""},
       "4915112345678",
       PricingCategory::marketing,
       PricingModel::pmp,
       std::nullopt,
       0.025},
      {{true, "CBP", "utility", ""}, "5215512345678", PricingCategory::utility, PricingModel::cbp, std::nullopt, 0.004},
      {{false, "PMP", "service", "free_customer_service"},
       "5215512345678",
       PricingCategory::service,
       PricingModel::pmp,
       PricingType::free_customer_service,
       0.0},
      {{false, "PMP", "utility", "free_entry_point"},
       "5215512345678",
       PricingCategory::utility,
       PricingModel::pmp,
       PricingType::free_entry_point,
       0.0},
      // Billable with no price: unpriced, never 0.
      {{true, "PMP", "authentication_international", ""},
       "5215512345678",
       PricingCategory::authentication_international,
       PricingModel::pmp,
       std::nullopt,
       std::nullopt},
      // Texts this version does not know.
      {{true, "XYZ", "marketing_ultra", "premium"},
       "5215512345678",
       PricingCategory::unknown,
       PricingModel::unknown,
       PricingType::unknown,
       std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.pricing.category << " to " << row.recipient);
    whatsapp::StatusEvent status;
    status.recipient_id = row.recipient;
    status.pricing = row.pricing;
    status.conversation_origin = "marketing";
    const auto out = whatsapp::send_pricing_of(status, prices);
    REQUIRE(out);
    CHECK(out->category == row.category);
    CHECK(out->billable == row.pricing.billable);
    CHECK(out->model == row.model);
    CHECK(out->type == row.type);
    CHECK(out->cost == row.cost);
    CHECK(out->currency == "USD");
    CHECK(out->origin == "marketing");
  }
}

TEST_CASE("whatsapp pricing: a status without a pricing object has none") {
  whatsapp::StatusEvent status;
  status.recipient_id = "5215512345678";
  CHECK_FALSE(whatsapp::send_pricing_of(status, {}).has_value());
}
