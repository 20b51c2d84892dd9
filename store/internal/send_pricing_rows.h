#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: apply_delivery (store/outbox.cpp) keeps a report's pricing
// (store/send_pricing.h) in the same transaction as its audit event.

#include <cstdint>
#include <string_view>

#include "common/json_out.h"
#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/send_pricing.h"

namespace dispatchd::store::internal {

// Inserts or replaces the action's send_pricing row. REQUIRES: inside a transaction.
[[nodiscard]] Result<void> record_send_pricing(Database& db, std::int64_t action_id, std::int64_t message_id,
                                               const SendPricing& pricing, Time now);

// The pricing's fields in a delivery audit event's detail (open object): category (the
// provider's text when it is not one we know), billable, pricing_model, pricing_type, cost,
// currency.
void add_pricing_detail(JsonOut& detail, const SendPricing& pricing, std::string_view category_text);

}  // namespace dispatchd::store::internal
