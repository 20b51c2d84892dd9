#include <catch2/catch.hpp>
#include <string>

#include "tests/test_util.h"
#include "validator/outbound.h"
#include "validator/validator.h"

using namespace dispatchd;

namespace {

const catalog::Catalog& interactive_catalog() {
  static const catalog::Catalog catalog = test::load_catalog("catalog/examples/interactive.en.json");
  return catalog;
}

std::string with_buttons(const std::string& buttons, const std::string& content = "Pick one") {
  return R"({"action":"send_buttons","recipient":"15551234567","content":")" + content + R"(","buttons":)" + buttons +
         R"(,"menu":null})";
}

std::string with_menu(const std::string& menu) {
  return R"({"action":"send_list","recipient":"15551234567","content":"Pick one","buttons":null,"menu":)" + menu + "}";
}

std::string rows(int n, const std::string& title = "Row") {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += (i ? "," : "") + (R"({"id":"r)" + std::to_string(i) + R"(","title":")" + title + "\"}");
  return out;
}

std::string a_list(const std::string& sections, const std::string& button = "Options") {
  return R"({"button":")" + button + R"(","sections":)" + sections + "}";
}

}  // namespace

// Meta's limits (common/interactive.h), each at its bound and one past it: the finding the
// re-ask carries, by JSON pointer, code and message.
TEST_CASE("choices: the validator holds replies to Meta's limits for buttons and lists", "[choices]") {
  const std::string t20(20, 'b'), t21(21, 'b'), t24(24, 'r'), t25(25, 'r'), d72(72, 'd'), d73(73, 'd');
  const std::string id256(256, 'i'), id257(257, 'i'), id200(200, 'i'), id201(201, 'i');
  struct Row {
    std::string reply;
    const char* path;  // "" when the reply is valid
    const char* code;
    std::string message;
  };
  const Row table[] = {
      {with_buttons(R"([{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"c","title":"C"}])"), "", "", ""},
      {with_buttons(R"([{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"c","title":"C"},{"id":"d","title":"D"}])"),
       "/buttons", "max_items", "4 buttons; at most 3 allowed"},
      {with_buttons("[]"), "/buttons", "min_items", "no buttons; at least 1 required"},
      {with_buttons(R"([{"id":"a","title":")" + t20 + "\"}]"), "", "", ""},
      {with_buttons(R"([{"id":"a","title":")" + t21 + "\"}]"), "/buttons/0/title", "max_length",
       "21 characters; at most 20 allowed"},
      {with_buttons(R"([{"id":"a","title":""}])"), "/buttons/0/title", "min_length",
       "empty; at least 1 character required"},
      {with_buttons(R"([{"id":")" + id256 + R"(","title":"A"}])"), "", "", ""},
      {with_buttons(R"([{"id":")" + id257 + R"(","title":"A"}])"), "/buttons/0/id", "max_length",
       "257 characters; at most 256 allowed"},
      {with_buttons(R"([{"id":"a","title":"A"},{"id":"a","title":"B"}])"), "/buttons/1/id", "duplicate",
       "id \"a\" is used twice"},
      {with_buttons(R"([{"id":"a","title":"A"},{"id":"b","title":"A"}])"), "/buttons/1/title", "duplicate",
       "title \"A\" is used twice"},
      {with_buttons(R"([{"id":"a"}])"), "/buttons/0", "required", "missing \"title\""},
      {with_buttons(R"([{"id":"a","title":"A","url":"x"}])"), "/buttons/0/url", "additional_property",
       "\"url\" is not allowed here"},
      {with_buttons(R"({"id":"a","title":"A"})"), "/buttons", "type",
       "expected an array of buttons, got object {\"id\":\"a\",\"title\":\"A\"}"},
      {with_buttons(R"([{"id":"a","title":"A"}])", std::string(1024, 'x')), "", "", ""},
      {with_buttons(R"([{"id":"a","title":"A"}])", std::string(1025, 'x')), "/content", "max_length",
       "1025 characters; at most 1024 allowed with reply buttons"},
      {with_menu(a_list("[{\"title\":\"S\",\"rows\":[" + rows(10) + "]}]")), "", "", ""},
      {with_menu(a_list("[{\"title\":\"S\",\"rows\":[" + rows(11) + "]}]")), "/menu/sections", "max_items",
       "11 rows in all sections; at most 10 allowed"},
      {with_menu(a_list("[{\"title\":\"S\",\"rows\":[" + rows(6) + "]},{\"title\":\"T\",\"rows\":[" +
                        R"({"id":"x0","title":"Row"},{"id":"x1","title":"Row"},{"id":"x2","title":"Row"},)"
                        R"({"id":"x3","title":"Row"},{"id":"x4","title":"Row"}]}])")),
       "/menu/sections", "max_items", "11 rows in all sections; at most 10 allowed"},
      {with_menu(a_list("[{\"title\":\"S\",\"rows\":[" + rows(1, t24) + "]}]")), "", "", ""},
      {with_menu(a_list("[{\"title\":\"S\",\"rows\":[" + rows(1, t25) + "]}]")), "/menu/sections/0/rows/0/title",
       "max_length", "25 characters; at most 24 allowed"},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":"a","title":"A","description":")" + d72 + "\"}]}]")), "", "",
       ""},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":"a","title":"A","description":")" + d73 + "\"}]}]")),
       "/menu/sections/0/rows/0/description", "max_length", "73 characters; at most 72 allowed"},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":"a","title":"A","description":null}]}])")), "", "", ""},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":")" + id200 + R"(","title":"A"}]}])")), "", "", ""},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":")" + id201 + R"(","title":"A"}]}])")),
       "/menu/sections/0/rows/0/id", "max_length", "201 characters; at most 200 allowed"},
      {with_menu(a_list(R"([{"title":")" + t25 + R"(","rows":[{"id":"a","title":"A"}]}])")), "/menu/sections/0/title",
       "max_length", "25 characters; at most 24 allowed"},
      {with_menu(a_list(R"([{"title":"S","rows":[{"id":"a","title":"A"}]}])", t21)), "/menu/button", "max_length",
       "21 characters; at most 20 allowed"},
      {with_menu(a_list("[]")), "/menu/sections", "min_items", "no sections; at least 1 required"},
      {with_menu(
           a_list(R"([{"title":"S","rows":[{"id":"a","title":"A"}]},{"title":"T","rows":[{"id":"a","title":"B"}]}])")),
       "/menu/sections/1/rows/0/id", "duplicate", "id \"a\" is used twice"},
  };
  for (const auto& row : table) {
    CAPTURE(row.reply);
    const auto verdict = validator::validate(interactive_catalog(), row.reply, {.sender = "15551234567", .source = {}});
    if (std::string(row.path).empty() && std::string(row.code).empty()) {
      CHECK(verdict.ok);
      continue;
    }
    REQUIRE_FALSE(verdict.ok);
    REQUIRE(verdict.errors.size() == 1);
    CHECK(verdict.errors[0].path == row.path);
    CHECK(verdict.errors[0].code == row.code);
    CHECK(verdict.errors[0].message == row.message);
    CHECK(verdict.feedback.find(std::string("- ") + row.path + " (" + row.code + "): " + row.message) !=
          std::string::npos);
  }
}

TEST_CASE("choices: a valid reply's choices go to the outbox in their stored form", "[choices]") {
  const auto verdict = validator::validate(
      interactive_catalog(),
      with_menu(a_list(
          R"([{"title":"S","rows":[{"id":"a","title":"A","description":null},{"id":"b","title":"B","description":"x"}]}])")),
      {.sender = "15551234567", .source = {}});
  REQUIRE(verdict.ok);
  const auto outbound = validator::outbound_of(interactive_catalog(), verdict, "15551234567");
  REQUIRE(outbound);
  CHECK(outbound->body == "Pick one");
  CHECK(outbound->interactive ==
        R"({"type":"list","button":"Options","sections":[{"title":"S","rows":[{"id":"a","title":"A"},)"
        R"({"id":"b","title":"B","description":"x"}]}]})");
  const auto plain = validator::validate(
      interactive_catalog(),
      R"({"action":"send_message","recipient":"15551234567","content":"Hi","buttons":null,"menu":null})",
      {.sender = "15551234567", .source = {}});
  REQUIRE(plain.ok);
  CHECK_FALSE(validator::outbound_of(interactive_catalog(), plain, "15551234567")->interactive);
}
