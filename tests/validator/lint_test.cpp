#include <catch2/catch.hpp>
#include <string>

#include "tests/test_util.h"
#include "validator/lint.h"

using namespace dispatchd;

namespace {

std::vector<std::string> lint(const std::string& text) {
  auto loaded = catalog::Catalog::parse(text, "t.json");
  REQUIRE(loaded);
  std::vector<std::string> out;
  for (const auto& p : validator::lint_examples(*loaded)) out.push_back(p.pointer + ": " + p.message);
  return out;
}

std::string catalog_with(const std::string& examples) {
  return R"({"name":"t","action_field":"act","fields":{"x":{"type":"string","enum":["a","b"]}},
    "actions":[{"name":"go","description":"d","kind":"ignore","required":["x"],"examples":)" +
         examples + "}]}";
}

}  // namespace

TEST_CASE("lint: the shipped example catalogs are clean", "[lint]") {
  CHECK(validator::lint_examples(test::support_en()).empty());
  CHECK(validator::lint_examples(test::support_es()).empty());
  CHECK(validator::lint_examples(test::load_catalog("tests/data/catalogs/orders.json")).empty());
  CHECK(validator::lint_examples(test::load_catalog("catalog/examples/templates.en.json")).empty());
}

TEST_CASE("lint: examples must get the verdict they claim", "[lint]") {
  CHECK(lint(catalog_with(R"([{"valid":true,"output":{"act":"go","x":"a"},"reason":"r"}])")).empty());

  const auto rejected_good = lint(catalog_with(R"([{"valid":true,"output":{"act":"go","x":"c"},"reason":"r"}])"));
  REQUIRE(rejected_good.size() == 1);
  CHECK(rejected_good[0].starts_with("/actions/0/examples/0: a valid example is rejected"));

  const auto accepted_bad = lint(catalog_with(
      R"([{"valid":true,"output":{"act":"go","x":"a"},"reason":"r"},{"valid":false,"output":{"act":"go","x":"b"},"reason":"r"}])"));
  REQUIRE(accepted_bad.size() == 1);
  CHECK(accepted_bad[0] == "/actions/0/examples/1: an invalid example is accepted");

  const auto wrong_code = lint(catalog_with(
      R"([{"valid":true,"output":{"act":"go","x":"a"},"reason":"r"},{"valid":false,"expect":"type","output":{"act":"go","x":"z"},"reason":"r"}])"));
  REQUIRE(wrong_code.size() == 1);
  CHECK(wrong_code[0] == "/actions/0/examples/1: an invalid example fails with enum, not type");

  const auto none = lint(catalog_with("[]"));
  REQUIRE(none.size() == 1);
  CHECK(none[0] == "/actions/0: action \"go\" has no valid example");
}

TEST_CASE("lint: raw-text examples go through extraction too", "[lint]") {
  CHECK(lint(catalog_with(R"([{"valid":true,"output":"```json\n{\"act\":\"go\",\"x\":\"a\"}\n```","reason":"r"},
                              {"valid":false,"expect":"truncated","output":"{\"act\":\"go\",\"x\":\"a\"","reason":"r"}])"))
            .empty());
}
