#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "catalog/catalog.h"
#include "catalog/render.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

// A catalog with a text field t, a buttons field b and a list field l, and one action.
std::vector<std::string> interactive_problems(const std::string& action) {
  const std::string text = R"({"name":"m","action_field":"act","fields":{"t":{"type":"string"},"b":{"type":"buttons"},)"
                           R"("l":{"type":"list"}},"actions":[{"name":"other","description":"d","kind":"reply",)"
                           R"("text_field":"t","interactive_field":"l","required":["t","l"]},)" +
                           action + "]}";
  auto loaded = catalog::Catalog::parse(text, "t.json");
  std::vector<std::string> out;
  if (!loaded) {
    for (const auto& p : loaded.error()) out.push_back(p.pointer + ": " + p.message);
  }
  return out;
}

}  // namespace

TEST_CASE("interactive fields: an action opts in by naming its interactive_field", "[catalog]") {
  struct Row {
    const char* action;
    const char* expected;  // the one problem, "" for none
  };
  const Row rows[] = {
      {R"({"name":"go","description":"d","kind":"reply","text_field":"t","interactive_field":"b","required":["t"],)"
       R"("optional":["b"]})",
       ""},
      {R"({"name":"go","description":"d","kind":"reply","text_field":"t","required":["t","b"]})",
       "/actions/1: \"b\" is a buttons field: only the action's \"interactive_field\" may use it"},
      {R"({"name":"go","description":"d","kind":"escalate","interactive_field":"b","required":["t","b"]})",
       "/actions/1/interactive_field: only a reply action (with its text_field) sends choices"},
      {R"({"name":"go","description":"d","kind":"reply","text_field":"t","interactive_field":"t","required":["t"]})",
       "/actions/1/interactive_field: must name a buttons or list field the action requires or allows"},
      {R"({"name":"go","description":"d","kind":"reply","text_field":"t","interactive_field":"b","required":["t"]})",
       "/actions/1/interactive_field: must name a buttons or list field the action requires or allows"},
      {R"({"name":"go","description":"d","kind":"reply","text_field":"t","interactive_field":3,"required":["t","b"]})",
       "/actions/1/interactive_field: must be a field name"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.action);
    const auto problems = interactive_problems(row.action);
    if (std::string(row.expected).empty()) {
      CHECK(problems.empty());
    } else {
      CHECK(std::find(problems.begin(), problems.end(), row.expected) != problems.end());
    }
  }
}

TEST_CASE("interactive fields: the shipped example loads, and every rendering shows the shape", "[catalog]") {
  const auto catalog = test::load_catalog("catalog/examples/interactive.en.json");
  CHECK(catalog.find_action("send_buttons")->interactive_field == "buttons");
  CHECK(catalog.contract_line().find(R"("buttons": [{"id": string, "title": string}]|null)") != std::string::npos);
  CHECK(render_prompt(catalog).find("reply buttons: 1 to 3 buttons; each title 1 to 20 characters") !=
        std::string::npos);
  const auto schema = test::parse_json(catalog::render_json_schema(catalog));
  CHECK(schema["properties"]["buttons"]["maxItems"].GetInt() == 3);
  CHECK(schema["properties"]["menu"]["properties"]["sections"]["items"]["properties"]["rows"]["maxItems"].GetInt() ==
        10);
  const auto openai = test::parse_json(catalog::render_openai_response_format(catalog));
  const auto& buttons = openai["json_schema"]["schema"]["properties"]["buttons"];
  CHECK(std::string(buttons["type"][0].GetString()) == "array");
  CHECK_FALSE(buttons.HasMember("maxItems"));  // in the description instead
  const auto gemini = test::parse_json(catalog::render_gemini_schema(catalog));
  CHECK(std::string(gemini["properties"]["menu"]["type"].GetString()) == "OBJECT");
}
