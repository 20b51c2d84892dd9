#pragma once
// What a model call cost, in USD, from its billed tokens (Usage, llm/provider.h) and the
// price of its model (the config's llm.prices). Pure: no I/O, no clock.
//
// The agent computes it when it records an attempt (attempts.cost_usd): the price in force
// when the call was made is the one billed, so a later price change never rewrites history.
// Replay and eval reports call the same function for their own calls.
//
// Unknown is not free: a model without a price, or tokens of a kind its price has no rate
// for (cached input, cache writes), give no cost at all rather than a cost that leaves them
// out. Zero tokens of a kind need no rate for it.

#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "llm/provider.h"

namespace dispatchd::llm {

// USD per million tokens. Reasoning tokens are billed at the output rate.
struct Price {
  double input = 0;
  double output = 0;
  std::optional<double> cached_input;  // none: calls that read the cache are not priced
  std::optional<double> cache_write;   // none: calls that write the cache are not priced

  bool operator==(const Price&) const = default;
};

// Model name (llm.model, as sent to the provider) -> its price.
using PriceTable = std::map<std::string, Price, std::less<>>;

// Why a call has no cost.
enum class Unpriced {
  model,         // the table has no price for the model
  cached_input,  // cached input tokens, and the price has no cached_input rate
  cache_write,   // cache-write tokens, and the price has no cache_write rate
};
std::string_view to_string(Unpriced why);

using Cost = std::expected<double, Unpriced>;

// The cost of `usage` at `price`:
//   (input * price.input + cached_input * price.cached_input + cache_write * price.cache_write
//    + (output + reasoning) * price.output) / 1,000,000
Cost cost_usd(const Usage& usage, const Price& price);

// The cost of `usage` for `model` at the table's price for it.
Cost cost_usd(const Usage& usage, const PriceTable& prices, std::string_view model);

}  // namespace dispatchd::llm
