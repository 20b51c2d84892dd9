// Pinning: a tool's inputSchema must accept everything the catalog's fields let through;
// what the check cannot prove is a problem, named by field, argument and keyword.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mcp/pinning.h"

using namespace dispatchd;
using catalog::FieldType;
using mcp::PinnedArgument;

namespace {

PinnedArgument string_arg(const std::string& name, bool always_sent = true) {
  PinnedArgument a{name, name, {}, always_sent};
  a.schema.type = FieldType::string;
  return a;
}

std::string schema(const std::string& properties, const std::string& rest = "") {
  return R"({"type":"object","properties":{)" + properties + "}" + rest + "}";
}

}  // namespace

TEST_CASE("mcp pinning: a schema no stricter than the catalog's fields pins", "[mcp]") {
  auto order = string_arg("order");
  order.schema.min_length = 3;
  order.schema.max_length = 20;
  order.schema.pattern = "^PED-[0-9]+$";
  PinnedArgument count{"cantidad", "quantity", {}, false};
  count.schema.type = FieldType::integer;
  count.schema.minimum = 1;
  count.schema.maximum = 10;
  PinnedArgument priority = string_arg("priority");
  priority.schema.enum_values = {R"("high")", R"("low")"};
  PinnedArgument day = string_arg("day", false);
  day.schema.date = true;

  const auto problems = mcp::pin_problems(
      {order, count, priority, day},
      schema(
          R"("order":{"type":"string","description":"The order","minLength":1,"maxLength":32,"pattern":"^PED-[0-9]+$"},)"
          R"("quantity":{"type":"number","minimum":0,"exclusiveMaximum":11},)"
          R"("priority":{"type":["string","null"],"enum":["high","medium","low"]},)"
          R"("day":{"type":"string","format":"date"},"unused":{"type":"boolean"})",
          R"(,"required":["order","priority"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#")"));
  CHECK(problems.empty());
  for (const auto& p : problems) UNSCOPED_INFO(p);

  CHECK(mcp::pin_problems({string_arg("message")}, R"({"type":"object"})").empty());  // no properties: any
  CHECK(mcp::pin_problems({}, R"({"type":"object","properties":{}})").empty());
}

TEST_CASE("mcp pinning: each way a server is stricter is named", "[mcp]") {
  auto bounded = string_arg("note");
  bounded.schema.max_length = 500;
  PinnedArgument n{"n", "n", {}, true};
  n.schema.type = FieldType::number;
  n.schema.minimum = 0;
  PinnedArgument fixed = string_arg("kind");
  fixed.schema.const_value = R"("refund")";

  struct Row {
    const char* name;
    std::vector<PinnedArgument> args;
    std::string schema;
    const char* problem;
  };
  const std::vector<Row> rows = {
      {"another type",
       {string_arg("order")},
       schema(R"("order":{"type":"integer"})"),
       "field `order` (argument `order`): the server's type is \"integer\", the catalog's string"},
      {"a number where the catalog allows fractions",
       {n},
       schema(R"("n":{"type":"integer"})"),
       "the server's type is \"integer\", the catalog's number"},
      {"an enum the field does not have",
       {string_arg("order")},
       schema(R"("order":{"enum":["a","b"]})"),
       "the server allows only some values, the catalog any"},
      {"a const the field does not have",
       {fixed},
       schema(R"("kind":{"const":"cancel"})"),
       "the server's const is \"cancel\", the catalog allows \"refund\""},
      {"a narrower enum",
       {[] {
         auto p = string_arg("p");
         p.schema.enum_values = {R"("a")", R"("b")"};
         return p;
       }()},
       schema(R"("p":{"enum":["a"]})"),
       "the server's enum lacks \"b\""},
      {"a longer minimum length",
       {string_arg("order")},
       schema(R"("order":{"minLength":2})"),
       "the server's minLength is 2, the catalog's none"},
      {"a shorter maximum length",
       {bounded},
       schema(R"("note":{"maxLength":100})"),
       "the server's maxLength is 100, the catalog's 500"},
      {"a higher minimum", {n}, schema(R"("n":{"minimum":1})"), "the server's minimum is 1, the catalog's minimum 0"},
      {"an exclusive minimum at the field's own",
       {n},
       schema(R"("n":{"exclusiveMinimum":0})"),
       "the server's exclusiveMinimum is 0, the catalog's minimum 0"},
      {"a maximum the field lacks",
       {n},
       schema(R"("n":{"maximum":100})"),
       "the server's maximum is 100, the catalog's maximum none"},
      {"a pattern",
       {string_arg("order")},
       schema(R"("order":{"pattern":"^[0-9]+$"})"),
       "the server requires the pattern \"^[0-9]+$\", the catalog none"},
      {"a format",
       {string_arg("mail")},
       schema(R"("mail":{"format":"email"})"),
       "the server requires the format \"email\""},
      {"a keyword the check does not follow",
       {string_arg("order")},
       schema(R"("order":{"anyOf":[{"type":"string"}]})"),
       "the server's schema has `anyOf`"},
      {"a $ref",
       {string_arg("order")},
       schema(R"("order":{"$ref":"#/$defs/o"})", R"(,"$defs":{"o":{}})"),
       "it has `$defs`"},
      {"a required property no field gives",
       {string_arg("order")},
       schema(R"("order":{})", R"(,"required":["tenant"])"),
       "it requires `tenant`, which no catalog field gives"},
      {"a required property an optional field may leave out",
       {string_arg("order", false)},
       schema(R"("order":{})", R"(,"required":["order"])"),
       "which field `order` may leave out"},
      {"a closed set of properties without the argument",
       {string_arg("order")},
       schema(R"("id":{})", R"(,"additionalProperties":false)"),
       "field `order` (argument `order`): the server's schema has no such property and allows no others"},
      {"additionalProperties as a schema",
       {string_arg("order")},
       schema(R"("order":{})", R"(,"additionalProperties":{"type":"string"})"),
       "additionalProperties is a schema"},
      {"not an object schema", {string_arg("order")}, R"({"type":"array"})", "its type is not \"object\""},
      {"not JSON", {string_arg("order")}, "{", "the server's inputSchema is not JSON"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto problems = mcp::pin_problems(row.args, row.schema);
    REQUIRE_FALSE(problems.empty());
    std::string all;
    for (const auto& p : problems) all += p + "\n";
    CHECK_THAT(all, Catch::Contains(row.problem));
  }
}

TEST_CASE("mcp pinning: a renamed field is checked under the tool's name", "[mcp]") {
  PinnedArgument renamed{"pedido", "order_id", {}, true};
  renamed.schema.type = FieldType::string;
  CHECK(mcp::pin_problems({renamed}, schema(R"("order_id":{"type":"string"})", R"(,"required":["order_id"])")).empty());
  const auto problems =
      mcp::pin_problems({renamed}, schema(R"("pedido":{"type":"string"})", R"(,"additionalProperties":false)"));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("field `pedido` (argument `order_id`)"));
}
