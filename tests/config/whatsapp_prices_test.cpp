// connectors.whatsapp.prices: per message category, by default and per market; what
// --check-config refuses.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/config.h"

using namespace dispatchd;
using store::PricingCategory;

namespace {

constexpr std::string_view k_wa_prices_base = R"({"catalog": "c.json", "llm": {"provider": "openai",
    "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"})";

std::expected<config::Config, std::vector<std::string>> wa_prices(const std::string& prices) {
  return config::parse(std::string(k_wa_prices_base) + R"(, "connectors": {"whatsapp": {"prices": )" + prices + "}}}",
                       "/etc/d.json");
}

bool has_price_problem(const std::vector<std::string>& problems, const std::string& expected) {
  return std::ranges::find(problems, expected) != problems.end();
}

}  // namespace

TEST_CASE("config: connectors.whatsapp.prices by default and per market", "[config][cost]") {
  auto c = wa_prices(R"({"currency": "USD", "$comment": "Meta's rate card",
    "default": {"marketing": 0.025, "utility": 0.004, "authentication": 0.0035, "service": 0},
    "markets": {"52": {"marketing": 0.0436}, "1876": {"marketing": 0.08, "utility": 0.01}}})");
  if (!c) FAIL(c.error().front());
  const auto& p = c->whatsapp.prices;
  CHECK(p.currency == "USD");
  CHECK(p.base.size() == 4);
  CHECK(p.base.at(PricingCategory::authentication) == 0.0035);
  CHECK(p.base.at(PricingCategory::service) == 0);
  REQUIRE(p.markets.size() == 2);
  CHECK(p.markets.at("52").at(PricingCategory::marketing) == 0.0436);
  CHECK(p.markets.at("1876").size() == 2);
}

TEST_CASE("config: without connectors.whatsapp.prices nothing is priced", "[config][cost]") {
  auto c = config::parse(std::string(k_wa_prices_base) + "}", "/etc/d.json");
  REQUIRE(c);
  CHECK(c->whatsapp.prices.empty());
  CHECK(c->whatsapp.prices.currency.empty());
}

TEST_CASE("config: connectors.whatsapp.prices mistakes name their key", "[config][cost]") {
  struct Row {
    const char* prices;
    const char* problem;
  };
  const Row rows[] = {
      {R"({"default": {"marketing": 0.025}})",
       "/etc/d.json: /connectors/whatsapp/prices/currency: is required with "
       "prices (e.g. \"USD\")"},
      {R"({"currency": "usd"})",
       "/etc/d.json: /connectors/whatsapp/prices/currency: must be a currency code of three "
       "capital letters, e.g. \"USD\""},
      {R"({"currency": "USD", "default": {"marketting": 0.025}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketting: unknown pricing category; known: marketing, "
       "marketing_lite, utility, authentication, authentication_international, service, referral_conversion, "
       "unknown"},
      {R"({"currency": "USD", "default": {"marketing": -1}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketing: must be a number from 0 to 100 (the price of one "
       "message)"},
      {R"({"currency": "USD", "default": {"marketing": "0.02"}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketing: must be a number from 0 to 100 (the price of one "
       "message)"},
      {R"({"currency": "USD", "markets": {"+52": {"marketing": 0.04}}})",
       "/etc/d.json: /connectors/whatsapp/prices/markets/+52: must be a country calling code: 1 to 6 digits, without "
       "\"+\""},
      {R"({"currency": "USD", "markets": {"52": 0.04}})",
       "/etc/d.json: /connectors/whatsapp/prices/markets/52: must be an object: category -> price of one message"},
      {R"({"currency": "USD", "default": {}, "market": {}})",
       "/etc/d.json: /connectors/whatsapp/prices/market: unknown key (known here: currency, default, markets)"},
      {R"([0.025])", "/etc/d.json: /connectors/whatsapp/prices: must be an object"},
  };
  for (const Row& row : rows) {
    INFO(row.prices);
    auto c = wa_prices(row.prices);
    REQUIRE_FALSE(c);
    for (const auto& problem : c.error()) UNSCOPED_INFO(problem);
    CHECK(has_price_problem(c.error(), row.problem));
  }
}
