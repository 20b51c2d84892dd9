// The cost arithmetic (llm/cost.h) as a table: each provider's token shape (llm::Usage, as
// the dialects fill it) times a price gives the USD billed; unknown is never free.
#include <catch2/catch.hpp>

#include "llm/cost.h"

using namespace dispatchd;
using llm::Price;
using llm::Unpriced;
using llm::Usage;

namespace {

// Per million tokens, as published (gpt-4o-mini, gemini-2.5-flash, claude-sonnet-4).
const Price k_gpt = {.input = 0.15, .output = 0.60, .cached_input = 0.075, .cache_write = 0.0};
const Price k_gemini = {.input = 0.30, .output = 2.50, .cached_input = 0.075, .cache_write = std::nullopt};
const Price k_claude = {.input = 3.0, .output = 15.0, .cached_input = 0.30, .cache_write = 3.75};
const Price k_no_cache_rates = {.input = 1.0, .output = 2.0};

struct Row {
  const char* name;
  Usage usage;
  Price price;
  llm::Cost expected;
};

}  // namespace

TEST_CASE("cost: tokens times the price of their kind, per million", "[cost]") {
  const std::vector<Row> rows = {
      {"zero tokens cost nothing", {}, k_gpt, 0.0},
      {"zero tokens need no cache rates", {}, k_no_cache_rates, 0.0},
      {"openai, plain", {.input_tokens = 1000, .output_tokens = 200}, k_gpt, (1000 * 0.15 + 200 * 0.60) / 1e6},
      // 1,408 of a 1,486-token prompt read from the cache; 512 of 651 completion tokens were
      // reasoning (the dialect splits them: usage_test.cpp).
      {"openai, cached input and reasoning",
       {.input_tokens = 78, .output_tokens = 139, .cached_input_tokens = 1408, .reasoning_tokens = 512},
       k_gpt,
       (78 * 0.15 + 1408 * 0.075 + (139 + 512) * 0.60) / 1e6},
      {"gemini, thoughts billed as output",
       {.input_tokens = 900, .output_tokens = 60, .reasoning_tokens = 340},
       k_gemini,
       (900 * 0.30 + (60 + 340) * 2.50) / 1e6},
      {"gemini, implicit cache hit",
       {.input_tokens = 100, .output_tokens = 50, .cached_input_tokens = 2048},
       k_gemini,
       (100 * 0.30 + 2048 * 0.075 + 50 * 2.50) / 1e6},
      {"anthropic, cache write on the first call",
       {.input_tokens = 20, .output_tokens = 80, .cache_write_tokens = 3000},
       k_claude,
       (20 * 3.0 + 3000 * 3.75 + 80 * 15.0) / 1e6},
      {"anthropic, cache read on the next",
       {.input_tokens = 25, .output_tokens = 90, .cached_input_tokens = 3000},
       k_claude,
       (25 * 3.0 + 3000 * 0.30 + 90 * 15.0) / 1e6},
      {"a zero cache-write rate is a rate (OpenAI has no such charge)",
       {.input_tokens = 10, .output_tokens = 10, .cache_write_tokens = 5},
       k_gpt,
       (10 * 0.15 + 10 * 0.60) / 1e6},
      {"cached input without a cached_input rate is unknown",
       {.input_tokens = 10, .output_tokens = 10, .cached_input_tokens = 1},
       k_no_cache_rates,
       std::unexpected(Unpriced::cached_input)},
      {"cache writes without a cache_write rate are unknown",
       {.input_tokens = 10, .output_tokens = 10, .cache_write_tokens = 1},
       k_gemini,
       std::unexpected(Unpriced::cache_write)},
      {"a million output tokens cost the output rate", {.output_tokens = 1'000'000}, k_claude, 15.0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const llm::Cost cost = llm::cost_usd(row.usage, row.price);
    REQUIRE(cost.has_value() == row.expected.has_value());
    if (cost) {
      CHECK(*cost == Approx(*row.expected).epsilon(1e-12));
    } else {
      CHECK(cost.error() == row.expected.error());
    }
  }
}

TEST_CASE("cost: a model missing from the table has no cost, never 0", "[cost]") {
  const llm::PriceTable prices = {{"gpt-4o-mini", k_gpt}};
  const Usage usage{.input_tokens = 1000, .output_tokens = 200};
  const auto known = llm::cost_usd(usage, prices, "gpt-4o-mini");
  REQUIRE(known.has_value());
  CHECK(*known == Approx(0.00027));
  const auto unknown = llm::cost_usd(usage, prices, "gpt-4o");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error() == Unpriced::model);
  CHECK(llm::to_string(unknown.error()) == "no price for the model");
  CHECK_FALSE(llm::cost_usd(Usage{}, llm::PriceTable{}, "gpt-4o-mini").has_value());  // even with no tokens
}
