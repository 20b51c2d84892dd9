#pragma once
// What a channel bills for each message dispatchd sent (migration 0033, table send_pricing,
// v_messages.send_*; docs/channels.md, "What each message costs"). For WhatsApp this is the
// `pricing` object of the message's status webhooks: the connector maps its texts to the
// enums below, prices it with price_of() at the configured prices
// (connectors.whatsapp.prices) and hands it over with the delivery report
// (store/outbox.h's DeliveryReport::pricing); apply_delivery() keeps it.
//
// The cost is computed when the report arrives, at the prices configured then, and stored:
// what a message cost does not change when the prices are edited later (Meta's own rate
// changes apply to the messages sent after them), and the views and `dispatchctl cost` need
// no configuration to read it.
//
//   price_of            pure: a message's cost at a price table, or nullopt (no price)
//   read_send_costs     the totals per channel, category and currency (dispatchctl cost)
//
// Threading: as the Database (one thread).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/states.h"

namespace dispatchd::store {

// What the message was billed as (send_pricing.category). `unknown`: a category this
// version does not know (its text as sent is in the delivery's audit event).
enum class PricingCategory {
  marketing,
  marketing_lite,
  utility,
  authentication,
  authentication_international,
  service,
  referral_conversion,
  unknown,
};

// How the channel prices (send_pricing.pricing_model): per conversation or per message.
enum class PricingModel { cbp, pmp, unknown };

// Whether the message is charged at the regular rate or free (send_pricing.pricing_type).
enum class PricingType { regular, free_customer_service, free_entry_point, unknown };

template <>
struct SqlNames<PricingCategory> {
  static constexpr std::array<std::pair<PricingCategory, std::string_view>, 8> table{{
      {PricingCategory::marketing, "marketing"},
      {PricingCategory::marketing_lite, "marketing_lite"},
      {PricingCategory::utility, "utility"},
      {PricingCategory::authentication, "authentication"},
      {PricingCategory::authentication_international, "authentication_international"},
      {PricingCategory::service, "service"},
      {PricingCategory::referral_conversion, "referral_conversion"},
      {PricingCategory::unknown, "unknown"},
  }};
};

template <>
struct SqlNames<PricingModel> {
  static constexpr std::array<std::pair<PricingModel, std::string_view>, 3> table{{
      {PricingModel::cbp, "CBP"},
      {PricingModel::pmp, "PMP"},
      {PricingModel::unknown, "unknown"},
  }};
};

template <>
struct SqlNames<PricingType> {
  static constexpr std::array<std::pair<PricingType, std::string_view>, 4> table{{
      {PricingType::regular, "regular"},
      {PricingType::free_customer_service, "free_customer_service"},
      {PricingType::free_entry_point, "free_entry_point"},
      {PricingType::unknown, "unknown"},
  }};
};

// A channel's text for the enum: its own value, `unknown` for any other text.
template <typename E>
E pricing_value(std::string_view text) {
  return from_sql<E>(text).value_or(E::unknown);
}

// Prices per category, for every market (`base`) and per market: a market is the
// recipient's country calling code ("52"), matched as the longest prefix of the
// recipient's number. A category a market does not list takes its base price.
struct PriceTable {
  std::string currency;  // ISO 4217, e.g. "USD"
  std::map<PricingCategory, double> base;
  std::map<std::string, std::map<PricingCategory, double>> markets;

  bool empty() const { return base.empty() && markets.empty(); }
  bool operator==(const PriceTable&) const = default;
};

// The price of one message of `category` to `recipient` (digits, country code first):
// the longest market prefix of the recipient that lists the category, else the base price;
// nullopt when neither has one. A price for `unknown` prices every unknown category.
std::optional<double> price_of(const PriceTable& prices, PricingCategory category, std::string_view recipient);

// What the channel billed for one sent message, with its cost.
struct SendPricing {
  PricingCategory category = PricingCategory::unknown;
  bool billable = false;
  PricingModel model = PricingModel::unknown;
  std::optional<PricingType> type;  // none when the report gave none
  std::string origin;               // the conversation's origin type; "" when not given
  std::optional<double> cost;       // 0 when not billable; none when billable and unpriced
  std::string currency;             // the prices' currency; "" when none are configured

  bool operator==(const SendPricing&) const = default;
};

// The cost of a send: 0 when not billable, else its price (price_of).
std::optional<double> cost_of(const PriceTable& prices, const SendPricing& pricing, std::string_view recipient);

// Totals of send_pricing per channel, category and currency (dispatchctl cost).
struct SendCostTotals {
  std::string channel;
  PricingCategory category = PricingCategory::unknown;
  std::string currency;
  std::int64_t sends = 0;     // priced sends (one per outbox row)
  std::int64_t billable = 0;  // of which billable
  double cost = 0;            // the sum of the priced ones
  std::int64_t unpriced = 0;  // billable with no price: not in `cost`
};

// Ordered by channel, category, currency.
[[nodiscard]] Result<std::vector<SendCostTotals>> read_send_costs(Database& db);

}  // namespace dispatchd::store
