#include "connectors/channel.h"

#include "store/transaction.h"

namespace dispatchd::connectors {

std::optional<std::string_view> WebhookRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return std::nullopt;
}

store::Result<StoredEvents> store_inbound(store::Database& db, const InboundEvents& events, store::Instant now) {
  return store::transaction<StoredEvents>(db, [&]() -> store::Result<StoredEvents> {
    StoredEvents stored;
    for (const auto& m : events.messages) {
      auto inserted = store::insert_inbound(db, m, now);
      if (!inserted)
        return std::unexpected(
            store::with_context(std::move(inserted.error()), "cannot store message " + m.provider_message_id));
      if (inserted->duplicate)
        ++stored.duplicates;
      else
        stored.new_ids.push_back(m.provider_message_id);
    }
    for (const auto& report : events.reports) {
      auto applied = store::apply_delivery(db, report, store::whole_seconds(now));
      if (!applied)
        return std::unexpected(store::with_context(
            std::move(applied.error()),
            "cannot record status " + std::string(store::to_sql(report.status)) + " of " + report.provider_message_id));
    }
    return stored;
  });
}

}  // namespace dispatchd::connectors
