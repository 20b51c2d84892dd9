#include "store/send_pricing.h"

#include "store/inbox.h"
#include "store/internal/send_pricing_rows.h"
#include "store/internal/sql.h"
#include "store/internal/view_rows.h"

namespace dispatchd::store {

std::optional<double> price_of(const PriceTable& prices, PricingCategory category, std::string_view recipient) {
  const std::map<PricingCategory, double>* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& [market, table] : prices.markets) {
    if (market.size() <= best_length || !recipient.starts_with(market) || !table.contains(category)) continue;
    best = &table;
    best_length = market.size();
  }
  if (best != nullptr) return best->at(category);
  const auto base = prices.base.find(category);
  if (base == prices.base.end()) return std::nullopt;
  return base->second;
}

std::optional<double> cost_of(const PriceTable& prices, const SendPricing& pricing, std::string_view recipient) {
  if (!pricing.billable) return 0.0;
  return price_of(prices, pricing.category, recipient);
}

Result<std::vector<SendCostTotals>> read_send_costs(Database& db) {
  auto q = Query::prepare(db,
                          "SELECT m.channel, p.category, p.currency, count(*), sum(p.billable),"
                          " coalesce(sum(p.cost), 0), count(*) - count(p.cost)"
                          " FROM send_pricing p JOIN inbox m ON m.id = p.message_id"
                          " GROUP BY m.channel, p.category, p.currency ORDER BY m.channel, p.category, p.currency");
  if (!q) return std::unexpected(q.error());
  return collect<SendCostTotals>(*q, [](const Query& r) {
    return SendCostTotals{r.text(0),    pricing_value<PricingCategory>(r.text(1)),
                          r.text(2),    r.integer(3),
                          r.integer(4), r.optional_real(5).value_or(0),
                          r.integer(6)};
  });
}

namespace internal {

Result<void> record_send_pricing(Database& db, std::int64_t action_id, std::int64_t message_id,
                                 const SendPricing& pricing, Time now) {
  auto upsert = Query::prepare(
      db,
      "INSERT INTO send_pricing (action_id, message_id, category, billable, pricing_model, pricing_type, origin, cost,"
      " currency, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
      " ON CONFLICT (action_id) DO UPDATE SET category = excluded.category, billable = excluded.billable,"
      " pricing_model = excluded.pricing_model, pricing_type = excluded.pricing_type, origin = excluded.origin,"
      " cost = excluded.cost, currency = excluded.currency, updated_at = excluded.updated_at");
  if (!upsert) return std::unexpected(upsert.error());
  const std::optional<std::string> origin =
      pricing.origin.empty() ? std::nullopt : std::optional<std::string>(pricing.origin);
  upsert->bind(1, action_id).bind(2, message_id).bind(3, pricing.category).bind(4, pricing.billable ? 1 : 0);
  upsert->bind(5, pricing.model).bind(6, pricing.type).bind(7, origin).bind(8, pricing.cost);
  upsert->bind(9, pricing.currency).bind(10, format_time(now));
  return upsert->run();
}

void add_pricing_detail(JsonOut& detail, const SendPricing& pricing, std::string_view category_text) {
  detail.field("category", category_text.empty() ? to_sql(pricing.category) : category_text);
  detail.field("billable", pricing.billable).field("pricing_model", to_sql(pricing.model));
  if (pricing.type) detail.field("pricing_type", to_sql(*pricing.type));
  detail.field("cost", pricing.cost);
  if (!pricing.currency.empty()) detail.field("currency", pricing.currency);
}

}  // namespace internal
}  // namespace dispatchd::store
