// Catalog actions of kind "mcp": what the file says, and what it may not say.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "catalog/catalog.h"

using namespace dispatchd;

namespace {

// A catalog with one mcp action whose "mcp" member is `mcp` and whose fields are order_id
// (required) and region (optional).
std::string catalog_with(const std::string& mcp, const std::string& extra = "") {
  return R"({"name":"m","action_field":"action","fields":{
      "order_id":{"type":"string","maxLength":20},"region":{"type":"string","enum":["eu","us"]}},
    "actions":[{"name":"lookup_order","description":"Looks an order up","kind":"mcp",
      "required":["order_id"],"optional":["region"])" +
         extra + R"(,"mcp":)" + mcp + "}]}";
}

std::vector<std::string> mcp_problems(const std::string& text) {
  auto parsed = catalog::Catalog::parse(text, "c.json");
  std::vector<std::string> out;
  if (!parsed)
    for (const auto& problem : parsed.error()) out.push_back(problem.to_string());
  return out;
}

}  // namespace

TEST_CASE("an mcp action names its server, tool, use and argument names", "[catalog][mcp]") {
  auto parsed = catalog::Catalog::parse(
      catalog_with(R"({"server":"orders","tool":"get_order","use":"lookup","arguments":{"order_id":"id"}})"), "c.json");
  REQUIRE(parsed);
  const catalog::Action* action = parsed->find_action("lookup_order");
  REQUIRE(action);
  CHECK(action->kind == catalog::ActionKind::mcp);
  REQUIRE(action->mcp);
  CHECK(action->mcp->server == "orders");
  CHECK(action->mcp->tool == "get_order");
  CHECK(action->mcp->use == catalog::McpUse::lookup);
  CHECK(action->mcp->argument_of("order_id") == "id");
  CHECK(action->mcp->argument_of("region") == "region");
  CHECK(std::string(catalog::to_string(action->kind)) == "mcp");
}

TEST_CASE("an mcp action that says something wrong is refused, naming where", "[catalog][mcp]") {
  struct Row {
    std::string text;
    std::string expected;  // a substring of one problem line
  };
  const Row rows[] = {
      {catalog_with(R"("orders")"), "c.json:/actions/0/mcp: must be an object"},
      {catalog_with(R"({"tool":"get_order","use":"lookup"})"), "/actions/0/mcp/server: must be the name of a server"},
      {catalog_with(R"({"server":"orders","tool":"","use":"lookup"})"), "/actions/0/mcp/tool: must be the tool's name"},
      {catalog_with(R"({"server":"orders","tool":"t","use":"write"})"), "/actions/0/mcp/use: must be \"lookup\""},
      {catalog_with(R"({"server":"orders","tool":"t"})"), "/actions/0/mcp/use: must be \"lookup\""},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup","url":"x"})"), "/actions/0/mcp/url: unknown key"},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup","arguments":["id"]})"),
       "/actions/0/mcp/arguments: must be an object"},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup","arguments":{"nope":"id"}})"),
       "/actions/0/mcp/arguments/nope: unknown field \"nope\""},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup","arguments":{"order_id":3}})"),
       "/actions/0/mcp/arguments/order_id: must be the tool's argument name"},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup","arguments":{"order_id":"region"}})"),
       "/actions/0/mcp/arguments: fields \"order_id\" and \"region\" are both sent as \"region\""},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"mcp"}]})",
       "/actions/0: an action has \"mcp\" exactly when its kind is \"mcp\""},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"ignore",
          "mcp":{"server":"s","tool":"t","use":"lookup"}}]})",
       "/actions/0: an action has \"mcp\" exactly when its kind is \"mcp\""},
      {catalog_with(R"({"server":"orders","tool":"t","use":"lookup"})", R"(,"text_field":"order_id")"),
       "/actions/0: an action has \"text_field\" exactly when its kind is \"reply\""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto problems = mcp_problems(row.text);
    CAPTURE(problems);
    bool found = false;
    for (const auto& line : problems) found = found || line.find(row.expected) != std::string::npos;
    CHECK(found);
  }
}

TEST_CASE("a field the action does not use cannot be renamed for the tool", "[catalog][mcp]") {
  const std::string text = R"({"name":"m","action_field":"action","fields":{
      "order_id":{"type":"string"},"note":{"type":"string"}},
    "actions":[{"name":"lookup_order","description":"d","kind":"mcp","required":["order_id"],
      "mcp":{"server":"orders","tool":"t","use":"lookup","arguments":{"note":"n"}}},
      {"name":"say","description":"d","kind":"reply","required":["note"],"text_field":"note"}]})";
  const auto problems = mcp_problems(text);
  CAPTURE(problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front() ==
        "c.json:/actions/0/mcp/arguments/note: \"note\" is not a field the action requires or allows");
}
