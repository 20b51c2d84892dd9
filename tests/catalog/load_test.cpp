#include <catch2/catch.hpp>
#include <string>

#include "catalog/catalog.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

// Parses `text` and returns every problem as "pointer: message".
std::vector<std::string> problems_of(const std::string& text) {
  auto loaded = catalog::Catalog::parse(text, "t.json");
  std::vector<std::string> out;
  if (!loaded) {
    for (const auto& p : loaded.error()) out.push_back(p.pointer + ": " + p.message);
  }
  return out;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& line : lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

const char* k_minimal = R"({"name":"m","action_field":"act","fields":{"x":{"type":"string"}},
  "actions":[{"name":"go","description":"d","kind":"ignore","required":["x"]}]})";

}  // namespace

TEST_CASE("the example catalogs load with the documented contract", "[catalog]") {
  const auto& es = test::support_es();
  CHECK(es.action_field() == "accion");
  REQUIRE(es.actions().size() == 3);
  CHECK(es.actions()[0].name == "enviar_mensaje");
  CHECK(es.actions()[1].name == "consultar_estado");
  CHECK(es.actions()[2].name == "escalar_humano");
  REQUIRE(es.fields().size() == 3);
  CHECK(es.fields()[0].name == "destinatario");
  CHECK(es.fields()[1].name == "contenido");
  CHECK(es.fields()[1].schema.max_length == 4096u);
  CHECK(es.fields()[2].schema.enum_values == std::vector<std::string>{"\"alta\"", "\"media\"", "\"baja\""});
  CHECK(es.actions()[0].policy.recipient_field == "destinatario");
  for (const auto& field : es.fields()) CHECK(es.required_by_all(field.name));

  const auto& en = test::support_en();
  CHECK(en.action_field() == "action");
  CHECK(en.find_action("send_message"));
  CHECK(en.find_action("query_status")->kind == catalog::ActionKind::http);
  CHECK(en.find_action("escalate_to_human")->kind == catalog::ActionKind::escalate);
  CHECK(en.find_field("priority")->schema.enum_values.size() == 3);
}

TEST_CASE("a minimal catalog loads", "[catalog]") { CHECK(problems_of(k_minimal).empty()); }

TEST_CASE("loading reports every problem with its JSON pointer", "[catalog]") {
  struct Row {
    const char* text;
    const char* expected;  // a substring of one problem line
  };
  const Row rows[] = {
      {"not json", ": not valid JSON"},
      {"[]", ": the catalog must be a JSON object"},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[]})", "\"actions\" must be a non-empty array"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"text"}},"actions":[]})", "/fields/x/type: "},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","maxLen":3}},"actions":[]})",
       "/fields/x/maxLen: unknown key"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","pattern":"("}},"actions":[]})",
       "/fields/x/pattern: not a valid ECMAScript regular expression"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","enum":["a","a"]}},"actions":[]})",
       "/fields/x/enum/1: duplicate enum value"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","enum":[1]}},"actions":[]})",
       "/fields/x/enum/0: must be a string literal"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"integer","minLength":1}},"actions":[]})",
       "/fields/x/minLength: applies to strings only"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","format":"email"}},"actions":[]})",
       "/fields/x/format: the only format is \"date\""},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string","minLength":5,"maxLength":2}},"actions":[]})",
       "/fields/x: minLength is greater than maxLength"},
      {R"({"name":"m","action_field":"x","fields":{"x":{"type":"string"}},"actions":[]})",
       "/fields/x: a field cannot share the action field's name"},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"run"}]})",
       "/actions/0/kind: "},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"ignore","required":["nope"]}]})",
       "/actions/0/required/0: unknown field \"nope\""},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"http"}]})",
       "/actions/0: an action has \"http\" exactly when its kind is \"http\""},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"http","http":{"method":"POST","url":"http://h/{y}"}}]})",
       "/actions/0/http/method: must be \"GET\""},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"http","http":{"url":"http://h/{y}"}}]})",
       "/actions/0/http/url: placeholder {y} is not a field the action requires"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string"}},"actions":[{"name":"go","description":"d","kind":"ignore","optional":["x"],"policy":{"recipient_field":"x"}}]})",
       "/actions/0/policy/recipient_field: must name a string field the action requires"},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"reply"}]})",
       "/actions/0: an action has \"text_field\" exactly when its kind is \"reply\""},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"integer"}},"actions":[{"name":"go","description":"d","kind":"reply","required":["x"],"text_field":"x"}]})",
       "/actions/0/text_field: must name a string field the action requires"},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"ignore"},{"name":"go","description":"d","kind":"ignore"}]})",
       "/actions/1/name: duplicate action name"},
      {R"({"name":"m","action_field":"a","fields":{"x":{"type":"string"}},"actions":[{"name":"go","description":"d","kind":"ignore"}]})",
       "/fields/x: no action uses this field"},
      {R"({"name":"m","action_field":"a","fields":{},"actions":[{"name":"go","description":"d","kind":"ignore","examples":[{"valid":true,"output":{}}]}]})",
       "/actions/0/examples/0/reason: every example says why"},
      {R"({"name":"m","name":"n","action_field":"a","fields":{},"actions":[]})", "duplicate key \"name\""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto problems = problems_of(row.text);
    CAPTURE(problems);
    CHECK(any_contains(problems, row.expected));
  }
}

TEST_CASE("loading collects several problems at once", "[catalog]") {
  const auto problems = problems_of(
      R"({"name":"","action_field":"a","fields":{"x":{"type":"text"},"y":{"type":"string","bogus":1}},"actions":[{"name":"go","kind":"ignore"}]})");
  CHECK(problems.size() >= 4);
  CHECK(any_contains(problems, "/name: must be a non-empty string"));
  CHECK(any_contains(problems, "/fields/x/type"));
  CHECK(any_contains(problems, "/fields/y/bogus"));
  CHECK(any_contains(problems, "/actions/0/description"));
}

TEST_CASE("load_file names the file and refuses oversized input", "[catalog]") {
  auto missing = catalog::Catalog::load_file("/nonexistent/catalog.json");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().front().to_string() == "/nonexistent/catalog.json:/: cannot open the file");

  auto orders = catalog::Catalog::load_file(test::source_path("tests/data/catalogs/orders.json"));
  REQUIRE(orders);
  CHECK(orders->find_field("order_id")->schema.grounding == catalog::Grounding::reject);
  CHECK(orders->find_field("customer_name")->schema.grounding == catalog::Grounding::review);
  CHECK(orders->find_field("delivery_date")->schema.date);
  CHECK(orders->find_action("refund")->policy.requires_approval);
  CHECK(orders->find_action("lookup")->http->url == "http://127.0.0.1:8089/orders/{order_id}");
  CHECK_FALSE(orders->required_by_all("recipient"));
}
