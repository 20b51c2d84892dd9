#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "catalog/catalog.h"
#include "catalog/render.h"

using namespace dispatchd;

namespace {

// A catalog with fields to (the recipient), order, eta, link and flag, a reply action, and
// the action under test.
std::expected<catalog::Catalog, std::vector<catalog::Problem>> template_catalog(const std::string& action) {
  const std::string text =
      R"({"name":"m","action_field":"act","fields":{"to":{"type":"string"},"order":{"type":"string","maxLength":20},)"
      R"("eta":{"type":"integer"},"link":{"type":"string"},"flag":{"type":"boolean"},"text":{"type":"string"}},)"
      R"("actions":[{"name":"say","description":"d","kind":"reply","text_field":"text","required":["text"],)"
      R"("optional":["to","order","eta","link","flag"]},)" +
      action + "]}";
  return catalog::Catalog::parse(text, "t.json");
}

std::vector<std::string> template_problems(const std::string& action) {
  std::vector<std::string> out;
  if (auto loaded = template_catalog(action); !loaded) {
    for (const auto& p : loaded.error()) out.push_back(p.pointer + ": " + p.message);
  }
  return out;
}

}  // namespace

TEST_CASE("template actions: the template object names a template and fills its parameters from fields", "[catalog]") {
  const auto loaded = template_catalog(
      R"({"name":"shipped","description":"d","kind":"template","required":["to","order","eta","link"],)"
      R"("policy":{"recipient_field":"to"},"template":{"name":"order_shipped","language":"en_US",)"
      R"("buttons":{"1":{"1":"order"}},"body":{"2":"eta","1":"order"},"header":{"image":"link"}}})");
  REQUIRE(loaded.has_value());
  const catalog::Action* action = loaded->find_action("shipped");
  REQUIRE(action != nullptr);
  CHECK(action->kind == catalog::ActionKind::template_message);
  CHECK(std::string(catalog::to_string(action->kind)) == "template");
  REQUIRE(action->template_message.has_value());
  const auto& t = *action->template_message;
  CHECK(t.name == "order_shipped");
  CHECK(t.language == "en_US");
  // Header first, then the body, then the buttons by position.
  REQUIRE(t.parameters.size() == 4);
  CHECK((t.parameters[0].part == catalog::TemplatePart::header && t.parameters[0].name == "image" &&
         t.parameters[0].field == "link"));
  CHECK((t.parameters[1].part == catalog::TemplatePart::body && t.parameters[2].part == catalog::TemplatePart::body));
  CHECK((t.parameters[3].part == catalog::TemplatePart::button && t.parameters[3].button == 1 &&
         t.parameters[3].field == "order"));
  SECTION("the prompt says what the action sends and that it reaches a closed window") {
    const std::string prompt = catalog::render_prompt(*loaded, {});
    CHECK(prompt.find("Sends the approved message template \"order_shipped\"") != std::string::npos);
    CHECK(prompt.find("more than 24 hours ago") != std::string::npos);
  }
}

TEST_CASE("template actions: what the loader refuses, each with where and why", "[catalog]") {
  struct Row {
    const char* action;
    const char* expected;  // one of the problems
  };
  const Row rows[] = {
      {R"({"name":"go","description":"d","kind":"template","required":["order"]})",
       "/actions/1: an action has \"template\" exactly when its kind is \"template\""},
      {R"({"name":"go","description":"d","kind":"reply","text_field":"text","required":["text"],)"
       R"("template":{"name":"a","language":"en"}})",
       "/actions/1: an action has \"template\" exactly when its kind is \"template\""},
      {R"({"name":"go","description":"d","kind":"template","template":{"name":"Order-Shipped","language":"en"}})",
       "/actions/1/template/name: must be the template's name: lower-case letters, digits and '_' (at most 512)"},
      {R"({"name":"go","description":"d","kind":"template","template":{"name":"a","language":"english"}})",
       "/actions/1/template/language: must be the template's language code, e.g. \"en_US\" or \"es\""},
      {R"({"name":"go","description":"d","kind":"template","template":{"name":"a","language":"en","footer":{}}})",
       "/actions/1/template/footer: unknown key \"footer\" (allowed: name, language, header, body, buttons)"},
      {R"({"name":"go","description":"d","kind":"template","template":{"name":"a","language":"en",)"
       R"("body":{"1":"order"}}})",
       "/actions/1/template/body/1: \"order\" must be a string or number field the action requires"},
      {R"({"name":"go","description":"d","kind":"template","optional":["order"],"template":{"name":"a",)"
       R"("language":"en","body":{"1":"order"}}})",
       "/actions/1/template/body/1: \"order\" must be a string or number field the action requires"},
      {R"({"name":"go","description":"d","kind":"template","required":["flag"],"template":{"name":"a",)"
       R"("language":"en","body":{"1":"flag"}}})",
       "/actions/1/template/body/1: \"flag\" must be a string or number field the action requires"},
      {R"({"name":"go","description":"d","kind":"template","required":["order"],"template":{"name":"a",)"
       R"("language":"en","body":{"Order":"order"}}})",
       "/actions/1/template/body/Order: unknown parameter \"Order\": a number from 1 ({{1}}), a lower-case name "
       "({{name}})"},
      {R"({"name":"go","description":"d","kind":"template","required":["eta"],"template":{"name":"a",)"
       R"("language":"en","header":{"video":"eta"}}})",
       "/actions/1/template/header/video: the media's link must be a string field"},
      {R"({"name":"go","description":"d","kind":"template","required":["order"],"template":{"name":"a",)"
       R"("language":"en","body":{"0":"order"}}})",
       "/actions/1/template/body/0: unknown parameter \"0\": a number from 1 ({{1}}), a lower-case name ({{name}})"},
      {R"({"name":"go","description":"d","kind":"template","required":["order"],"template":{"name":"a",)"
       R"("language":"en","buttons":{"x":{"1":"order"}}}})",
       "/actions/1/template/buttons/x: a button's position must be \"0\" to \"9\""},
      {R"({"name":"go","description":"d","kind":"template","required":["order"],"template":{"name":"a",)"
       R"("language":"en","body":{"1":"nope"}}})",
       "/actions/1/template/body/1: must name a catalog field"},
      {R"({"name":"go","description":"d","kind":"template","text_field":"text","required":["text"],)"
       R"("template":{"name":"a","language":"en"}})",
       "/actions/1: an action has \"text_field\" exactly when its kind is \"reply\" (it names the field sent as the "
       "message), or may when it is an mcp act (the reply sent once the tool succeeded)"},
      {R"({"name":"go","description":"d","kind":"templates"})",
       "/actions/1/kind: \"kind\" must be \"reply\", \"escalate\", \"ignore\", \"http\", \"mcp\" or \"template\""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.action);
    const auto problems = template_problems(row.action);
    CAPTURE(problems);
    CHECK(std::find(problems.begin(), problems.end(), row.expected) != problems.end());
  }
}
