// llm.budget: USD per UTC day, for the deployment and per conversation; what --check-config refuses.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/config.h"

using namespace dispatchd;

namespace {

std::expected<config::Config, std::vector<std::string>> with_budget(const std::string& budget,
                                                                    const std::string& prices = R"({"m": {"input": 1,
                                                                      "output": 2}})") {
  return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K", "prices": )" +
                           prices + R"(, "budget": )" + budget + "}}",
                       "/etc/d.json");
}

bool has_problem(const std::vector<std::string>& problems, const std::string& expected) {
  return std::ranges::find(problems, expected) != problems.end();
}

}  // namespace

TEST_CASE("config: llm.budget and its defaults", "[config][budget]") {
  auto none = with_budget("{}");
  REQUIRE(none);
  CHECK_FALSE(none->llm.budget.any());
  CHECK(none->llm.budget.when_spent == config::WhenSpent::wait);
  CHECK(none->llm.budget.unknown_cost == config::UnknownCost::stop);

  auto c = with_budget(
      R"({"daily_usd": 25, "conversation_daily_usd": 0.5, "when_spent": "escalate", "unknown_cost": "allow"})");
  REQUIRE(c);
  CHECK(c->llm.budget.daily_usd == 25.0);
  CHECK(c->llm.budget.conversation_daily_usd == 0.5);
  CHECK(c->llm.budget.when_spent == config::WhenSpent::escalate);
  CHECK(c->llm.budget.unknown_cost == config::UnknownCost::allow);
}

TEST_CASE("config: every bad llm.budget value is reported with its pointer", "[config][budget]") {
  auto c = with_budget(
      R"({"daily_usd": -1, "conversation_daily_usd": "0.5", "when_spent": "pause", "unknown_cost": 0, "monthly_usd": 9})");
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  const std::string at = "/etc/d.json: /llm/budget/";
  CHECK(has_problem(p, at + "daily_usd: must be a number from 0 to 1000000 (USD)"));
  CHECK(has_problem(p, at + "conversation_daily_usd: must be a number from 0 to 1000000 (USD)"));
  CHECK(has_problem(p, at + R"(when_spent: must be "wait" or "escalate")"));
  CHECK(has_problem(p, at + R"(unknown_cost: must be "stop" or "allow")"));
  CHECK(has_problem(p, at + "monthly_usd: unknown key (known here: daily_usd, conversation_daily_usd, when_spent, "
                            "unknown_cost)"));
  CHECK(p.size() == 5);
}

TEST_CASE("config: a budget without a price for the model is refused", "[config][budget]") {
  // Its attempts would have no known cost: the budget could not be held.
  auto c = with_budget(R"({"daily_usd": 5})", "{}");
  REQUIRE_FALSE(c);
  CHECK(has_problem(c.error(),
                    "/etc/d.json: /llm/budget: needs a price for llm.model \"m\" in llm.prices (a budget "
                    "counts the attempts' costs)"));
}
