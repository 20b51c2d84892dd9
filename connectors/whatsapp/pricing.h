#pragma once
// What Meta bills for a message we sent, from its status webhook's `pricing` object
// (webhook.h's StatusPricing), priced at connectors.whatsapp.prices: the value the store
// keeps with the delivery report (store/send_pricing.h). Pure; safe from any thread.

#include <optional>

#include "connectors/whatsapp/webhook.h"
#include "store/send_pricing.h"

namespace dispatchd::whatsapp {

// None when the status has no pricing object. Texts this version does not know map to
// `unknown`; the market is the status's recipient_id (the customer's number, calling code
// first). A billable message without a price for its category has no cost (unpriced); a
// non-billable one costs 0.
std::optional<store::SendPricing> send_pricing_of(const StatusEvent& status, const store::PriceTable& prices);

}  // namespace dispatchd::whatsapp
