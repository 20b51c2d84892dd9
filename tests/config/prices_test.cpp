// llm.prices: per model, USD per million tokens; what --check-config refuses.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/config.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

std::expected<config::Config, std::vector<std::string>> with_prices(const std::string& prices,
                                                                    const std::string& model = "gpt-4o-mini") {
  return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": ")" + model + R"(", "api_key_env": "K", "prices": )" +
                           prices + "}}",
                       "/etc/d.json");
}

bool any_is(const std::vector<std::string>& problems, const std::string& expected) {
  return std::ranges::find(problems, expected) != problems.end();
}

}  // namespace

TEST_CASE("config: llm.prices per model, the cache rates optional", "[config][cost]") {
  auto c = with_prices(R"({
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cached_input": 0.075, "cache_write": 0},
    "claude-sonnet-4": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75},
    "llama3.1": {"input": 0, "output": 0, "$comment": "self-hosted"}})");
  if (!c) FAIL(c.error().front());
  REQUIRE(c->llm.prices.size() == 3);
  CHECK(c->llm.prices.at("gpt-4o-mini") == config::ModelPrice{0.15, 0.6, 0.075, 0.0});
  CHECK(c->llm.prices.at("claude-sonnet-4") == config::ModelPrice{3, 15, 0.3, 3.75});
  CHECK(c->llm.prices.at("llama3.1") == config::ModelPrice{0, 0, std::nullopt, std::nullopt});
}

TEST_CASE("config: no llm.prices is no price at all, not a zero one", "[config][cost]") {
  auto c = config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K"}})",
                         "/etc/d.json");
  REQUIRE(c);
  CHECK(c->llm.prices.empty());
}

TEST_CASE("config: every bad price is reported with its pointer", "[config][cost]") {
  auto c = with_prices(R"({
    "gpt-4o-mini": {"input": 0.15, "output": 0.6},
    "a": {"input": -0.15, "output": "0.60"},
    "b": {"output": 1},
    "c": {"input": 1, "output": 2, "cached": 0.5},
    "d": {"input": 1, "output": 2, "cache_write": null},
    "e": 3,
    "f": {"input": 1, "output": 1e9},
    "": {"input": 1, "output": 1}})");
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  const std::string at = "/etc/d.json: /llm/prices/";
  const std::string rate = ": must be a number from 0 to 100000 (USD per million tokens)";
  CHECK(any_is(p, at + "a/input" + rate));
  CHECK(any_is(p, at + "a/output" + rate));
  CHECK(any_is(p, at + "b/input: is required (USD per million input tokens)"));
  CHECK(any_is(p, at + "c/cached: unknown key (known here: input, output, cached_input, cache_write)"));
  CHECK(any_is(p, at + "d/cache_write" + rate));
  CHECK(any_is(p, at + "e: must be an object"));
  CHECK(any_is(p, at + "f/output" + rate));
  CHECK(any_is(p, at + ": a model name must not be empty"));
  CHECK(p.size() == 8);

  auto not_object = with_prices("[]");
  REQUIRE_FALSE(not_object);
  CHECK(any_is(
      not_object.error(),
      R"(/etc/d.json: /llm/prices: must be an object: model name -> {"input": N, "output": N} in USD per million tokens)"));
}

TEST_CASE("config: prices that leave out the configured model are refused", "[config][cost]") {
  // A typo in the model's name would otherwise leave every attempt without a cost.
  auto c = with_prices(R"({"gpt-4o-mni": {"input": 0.15, "output": 0.6}})");
  REQUIRE_FALSE(c);
  CHECK(any_is(c.error(),
               "/etc/d.json: /llm/prices: has no price for llm.model \"gpt-4o-mini\" (its attempts would "
               "have no known cost)"));
}

TEST_CASE("config: the shipped example prices its model", "[config][cost]") {
  auto c = config::load(test::source_path("config/examples/dispatchd.json"));
  if (!c) FAIL(c.error().front());
  REQUIRE(c->llm.prices.contains(c->llm.model));
  CHECK(c->llm.prices.at(c->llm.model).output > 0);
}
