#include "llm/cost.h"

namespace dispatchd::llm {

std::string_view to_string(Unpriced why) {
  switch (why) {
    case Unpriced::model: return "no price for the model";
    case Unpriced::cached_input: return "cached input tokens without a cached_input rate";
    case Unpriced::cache_write: return "cache-write tokens without a cache_write rate";
  }
  return "unpriced";
}

Cost cost_usd(const Usage& usage, const Price& price) {
  if (usage.cached_input_tokens > 0 && !price.cached_input) return std::unexpected(Unpriced::cached_input);
  if (usage.cache_write_tokens > 0 && !price.cache_write) return std::unexpected(Unpriced::cache_write);
  // Token counts stay far below 2^53, so each product is exact enough in a double; the sum
  // is divided once, at the end.
  const auto tokens = [](std::int64_t n) { return static_cast<double>(n); };
  const double per_million = tokens(usage.input_tokens) * price.input +
                             tokens(usage.cached_input_tokens) * price.cached_input.value_or(0) +
                             tokens(usage.cache_write_tokens) * price.cache_write.value_or(0) +
                             tokens(usage.output_tokens + usage.reasoning_tokens) * price.output;
  return per_million / 1'000'000.0;
}

Cost cost_usd(const Usage& usage, const PriceTable& prices, std::string_view model) {
  const auto price = prices.find(model);
  if (price == prices.end()) return std::unexpected(Unpriced::model);
  return cost_usd(usage, price->second);
}

}  // namespace dispatchd::llm
