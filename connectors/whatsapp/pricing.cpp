#include "connectors/whatsapp/pricing.h"

namespace dispatchd::whatsapp {

std::optional<store::SendPricing> send_pricing_of(const StatusEvent& status, const store::PriceTable& prices) {
  if (!status.pricing) return std::nullopt;
  const StatusPricing& p = *status.pricing;
  store::SendPricing out;
  out.category = store::pricing_value<store::PricingCategory>(p.category);
  out.billable = p.billable;
  out.model = store::pricing_value<store::PricingModel>(p.pricing_model);
  if (!p.type.empty()) out.type = store::pricing_value<store::PricingType>(p.type);
  out.origin = status.conversation_origin;
  out.cost = store::cost_of(prices, out, status.recipient_id);
  out.currency = prices.currency;
  return out;
}

}  // namespace dispatchd::whatsapp
