#include <catch2/catch.hpp>
#include <string>

#include "common/template_send.h"

namespace ts = dispatchd::template_send;

TEST_CASE("template send: the stored form reads back as written", "[common]") {
  const ts::TemplateSend send{"order_shipped",
                              "es_MX",
                              {{ts::Part::header, 0, "image", "https://example.com/a.png"},
                               {ts::Part::body, 0, "1", "Pedido \"A-1\" ñ"},
                               {ts::Part::button, 2, "1", "A-1"}}};
  const std::string json = ts::to_json(send);
  CHECK(json == R"({"name":"order_shipped","language":"es_MX","parameters":[{"part":"header","name":"image",)"
                R"("value":"https://example.com/a.png"},{"part":"body","name":"1","value":"Pedido \"A-1\" ñ"},)"
                R"({"part":"button","button":2,"name":"1","value":"A-1"}]})");
  const auto back = ts::parse_stored(json);
  REQUIRE(back.has_value());
  CHECK(back->name == send.name);
  CHECK(back->language == send.language);
  REQUIRE(back->parameters.size() == 3);
  CHECK((back->parameters[2].part == ts::Part::button && back->parameters[2].button == 2));
  CHECK(back->parameters[1].value == "Pedido \"A-1\" ñ");
  CHECK(ts::summary(send) ==
        "template order_shipped (es_MX): header image = https://example.com/a.png, 1 = Pedido \"A-1\" ñ, "
        "button 2 1 = A-1");
}

TEST_CASE("template send: a damaged stored form is an error, not a guess", "[common]") {
  CHECK_FALSE(ts::parse_stored("").has_value());
  CHECK_FALSE(ts::parse_stored("[]").has_value());
  CHECK(ts::parse_stored(R"({"name":"a","parameters":[]})").error() ==
        "the stored template lacks its name, language or parameters");
  CHECK(ts::parse_stored(R"({"name":"a","language":"en","parameters":[{"part":"footer","name":"1","value":"x"}]})")
            .error() == "unknown template part footer");
  CHECK_FALSE(
      ts::parse_stored(R"({"name":"a","language":"en","parameters":[{"part":"body","name":"1"}]})").has_value());
}

// WhatsApp answers 132018 for a text parameter with a line break, a tab or more than four
// spaces in a row; anything else (braces, quotes, a phone number) is only text.
TEST_CASE("template send: what WhatsApp refuses in a text parameter", "[common]") {
  struct Row {
    const char* value;
    const char* problem;  // nullptr: may be sent
  };
  const Row rows[] = {
      {"Ana", nullptr},
      {"Ana    Banana", nullptr},  // four spaces: allowed
      {"Ana     Banana", "has more than 4 spaces in a row"},
      {"Ana\nBanana", "has a line break"},
      {"Ana\r\nBanana", "has a line break"},
      {"Ana\rBanana", "has a line break"},
      {"Ana\tBanana", "has a tab"},
      {"{{2}}", nullptr},
      {R"("}],"type":"header")", nullptr},
  };
  for (const auto& row : rows) {
    CAPTURE(row.value);
    const auto problem = ts::text_parameter_problem(row.value);
    if (row.problem == nullptr)
      CHECK_FALSE(problem.has_value());
    else
      CHECK(problem.value_or("") == row.problem);
  }
}
