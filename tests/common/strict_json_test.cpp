#include <catch2/catch.hpp>
#include <string>

#include "common/strict_json.h"

using namespace dispatchd;

namespace {
std::string code_of(const std::string& text, json::ParseLimits limits = {}, bool commas = false) {
  auto parsed = json::parse_strict(text, limits, commas);
  return parsed ? "ok" : parsed.error().code;
}
}  // namespace

TEST_CASE("parse_strict accepts exactly one valid JSON value", "[json]") {
  struct Row {
    const char* text;
    const char* code;
  };
  const Row rows[] = {
      {R"({"a":1,"b":[true,null,"x"]})", "ok"},
      {R"({"a":1,"a":2})", "duplicate_key"},
      {R"({"o":{"k":1,"k":1}})", "duplicate_key"},
      {R"([{"k":1},{"k":1}])", "ok"},  // same key in sibling objects is fine
      {R"({"a":1,})", "syntax"},
      {R"({"a":NaN})", "syntax"},
      {R"({"a":Infinity})", "syntax"},
      {R"({"a":1e999})", "number_out_of_range"},
      {R"({'a':1})", "syntax"},
      {R"({a:1})", "syntax"},
      {R"({"a":"\udc00"})", "invalid_string"},
      {R"({"a":"\ud800"})", "invalid_string"},
      {R"({"a":"\ud83d\ude00"})", "ok"},  // a real surrogate pair
      {R"({"a":1} {"b":2})", "syntax"},
      {R"({"a":"cut)", "truncated"},
      {"", "empty"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    CHECK(code_of(row.text) == row.code);
  }
}

TEST_CASE("parse_strict rejects raw invalid UTF-8 inside strings", "[json]") {
  CHECK(code_of("{\"a\":\"\xC0\xAF\"}") == "invalid_string");
  CHECK(code_of("{\"a\":\"\xED\xA0\x80\"}") == "invalid_string");
}

TEST_CASE("parse_strict limits depth without recursing", "[json]") {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(code_of(nested(32)) == "ok");
  CHECK(code_of(nested(33)) == "too_deep");
  CHECK(code_of(nested(200000), {.max_depth = 32}) == "too_deep");
  CHECK(code_of(nested(200000), {.max_depth = 1000000}) == "ok");  // iterative: no stack overflow
}

TEST_CASE("parse_strict tolerates trailing commas only when asked, and says so", "[json]") {
  auto strict = json::parse_strict(R"({"a":[1,2,],})", {}, false);
  REQUIRE_FALSE(strict);
  auto lenient = json::parse_strict(R"({"a":[1,2,],})", {}, true);
  REQUIRE(lenient);
  CHECK(lenient->used_trailing_commas);
  CHECK(json::to_string(lenient->document) == R"({"a":[1,2]})");
  auto clean = json::parse_strict(R"({"a":1})", {}, true);
  REQUIRE(clean);
  CHECK_FALSE(clean->used_trailing_commas);
}

TEST_CASE("type_name names JSON types for messages", "[json]") {
  auto parsed = json::parse_strict(R"(["s",1,1.5,true,null,{},[]])", {});
  REQUIRE(parsed);
  const auto& a = parsed->document;
  const char* expected[] = {"string", "integer", "number", "boolean", "null", "object", "array"};
  for (rapidjson::SizeType i = 0; i < a.Size(); ++i) CHECK(std::string(json::type_name(a[i])) == expected[i]);
}

TEST_CASE("string_end skips escaped quotes by counting backslashes", "[json]") {
  const std::string_view s = R"("a\"b" "c\\" "d\\\"e" "open)";
  CHECK(json::string_end(s, 0, s.size()) == 5);
  CHECK(json::string_end(s, 7, s.size()) == 11);
  CHECK(json::string_end(s, 13, s.size()) == 20);
  CHECK(json::string_end(s, 22, s.size()) == std::string_view::npos);
  CHECK(json::string_end(s, 0, 4) == std::string_view::npos);  // bounded by `end`
}

TEST_CASE("minify drops whitespace between tokens and keeps strings byte for byte", "[json]") {
  CHECK(json::minify("{ \"a\" : [ 1 ,\r\n 2 ] ,\t\"b\" : \"x  \\\" y\" }") == "{\"a\":[1,2],\"b\":\"x  \\\" y\"}");
  CHECK(json::minify("{\"k\":\"\\\\\",\"j\": 1}") == "{\"k\":\"\\\\\",\"j\":1}");
  CHECK(json::minify("{}") == "{}");
}

TEST_CASE("a parse arena holds the document", "[json]") {
  json::ParseArena arena;
  auto parsed = json::parse_strict(R"({"a":"b","c":[1,2,3]})", {}, false, &arena);
  REQUIRE(parsed);
  CHECK(json::to_string(parsed->document) == R"({"a":"b","c":[1,2,3]})");
  std::string big = "[";
  for (int i = 0; i < 5000; ++i) big += "\"some text\",";
  big += "1]";
  auto spilled = json::parse_strict(big, {}, false, &arena);  // larger than the arena
  REQUIRE(spilled);
  CHECK(spilled->document.Size() == 5001);
}
