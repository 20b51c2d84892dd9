#include <catch2/catch.hpp>
#include <string>

#include "common/interactive.h"

using namespace dispatchd::interactive;

TEST_CASE("interactive: the stored form reads back as written, and only as read() allows") {
  const auto read_list = read(Kind::list, R"({"button":"Options","sections":[{"title":"S","rows":[)"
                                          R"({"id":"a","title":"A","description":"one"},{"id":"b","title":"B"}]}]})");
  REQUIRE(read_list.has_value());
  const std::string stored = to_json(*read_list);
  const auto back = parse_stored(stored);
  REQUIRE(back.has_value());
  CHECK(to_json(*back) == stored);
  const auto buttons = read(Kind::buttons, R"([{"id":"y","title":"Yes"}])");
  REQUIRE(buttons.has_value());
  CHECK(to_json(*buttons) == R"({"type":"button","buttons":[{"id":"y","title":"Yes"}]})");
  CHECK(parse_stored(to_json(*buttons)).has_value());
  struct Row {
    const char* stored;
    const char* error;
  };
  const Row refused[] = {
      {"[]", "the stored choices are not a JSON object"},
      {R"({"type":"carousel"})", "the stored choices have no known type"},
      {R"({"type":"button","buttons":[]})", "the stored choices break a rule: no buttons; at least 1 required"},
  };
  for (const auto& row : refused) {
    CAPTURE(row.stored);
    const auto parsed = parse_stored(row.stored);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error() == row.error);
  }
}

TEST_CASE("interactive: a channel without buttons gets the choices as numbered lines") {
  const auto buttons = read(Kind::buttons, R"([{"id":"y","title":"Yes"},{"id":"n","title":"No"}])");
  REQUIRE(buttons.has_value());
  CHECK(as_text("Ship it today?", *buttons) == "Ship it today?\n\n1. Yes\n2. No");
  const auto list = read(Kind::list, R"({"button":"Slots","sections":[{"title":"Monday","rows":[)"
                                     R"({"id":"a","title":"10:00","description":"Morning"}]},)"
                                     R"({"title":"Tuesday","rows":[{"id":"b","title":"16:00"}]}]})");
  REQUIRE(list.has_value());
  CHECK(as_text("Pick a slot.", *list) == "Pick a slot.\n\nMonday\n1. 10:00 - Morning\nTuesday\n2. 16:00");
}
