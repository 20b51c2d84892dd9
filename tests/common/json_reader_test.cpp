// read_object() must accept exactly the objects parse_strict() accepts (trailing commas
// allowed) and read the same values: the validator trusts it on the fast path and asks
// parse_strict() only why a text was refused.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_reader.h"
#include "common/strict_json.h"
#include "common/utf8.h"

using namespace dispatchd;

namespace {

std::string_view view(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// Checks that the two parsers agree on `text`; returns whether it was read.
bool agrees(const std::string& text, std::size_t max_depth = 32) {
  json::Object object;
  const bool read = json::read_object(text, max_depth, object);
  auto parsed = json::parse_strict(text, {.max_depth = max_depth, .input_utf8_checked = true}, true);
  const bool strict_object = parsed && parsed->document.IsObject();
  CAPTURE(text);
  REQUIRE(read == strict_object);
  if (!read) return false;
  CHECK(object.used_trailing_commas() == parsed->used_trailing_commas);
  CHECK(object.compact() == json::minify(text));
  const rapidjson::Value& dom = parsed->document;
  REQUIRE(object.size() == dom.MemberCount());
  std::size_t i = 0;
  for (const auto& m : dom.GetObject()) {
    const json::Member& member = object.members()[i++];
    CHECK(member.key == view(m.name));
    CHECK(std::string_view(json::type_name(member.value)) == json::type_name(m.value));
    CHECK(json::to_string(member.value) == json::to_string(m.value));
    if (m.value.IsString()) CHECK(member.value.text == view(m.value));
    if (m.value.IsNumber()) CHECK(member.value.number.as_double() == m.value.GetDouble());
    if (m.value.IsBool()) CHECK(member.value.boolean == m.value.GetBool());
  }
  return true;
}

}  // namespace

TEST_CASE("read_object agrees with parse_strict on a table of objects", "[json]") {
  const char* rows[] = {
      R"({})",
      R"(  {"a":1}  )",
      R"({"a":1,"b":[true,null,"x"],"c":{"d":false}})",
      "{\n  \"a\" : \"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\" ,\r\n\t\"b\":\"\\u00e9\\u0041\\ud83d\\ude00\\u0000\"\n}",
      R"({"a":1,"a":2})",
      R"({"a":1,"\u0061":2})",
      R"({"o":{"k":1,"k":1}})",
      R"({"o":[{"k":1},{"k":1}],"k":2})",
      R"({"a":1,})",
      R"({"a":[1,2,],})",
      R"({,})",
      R"({"a":[,]})",
      R"({"a":1,,"b":2})",
      R"({"a":NaN})",
      R"({"a":1e999})",
      R"({"a":-1e999})",
      R"({"a":1e-999})",
      R"({"a":[0,-0,-0.0,2.0,2.5,1e1,1E+2,1e-2,01]})",
      R"({"a":01})",
      R"({"a":1.})",
      R"({"a":.5})",
      R"({"a":-})",
      R"({"a":+1})",
      R"({"a":12345678901234567890,"b":123456789012345678901234567890,"c":-9223372036854775809})",
      R"({"a":1.7976931348623157e308,"b":1.7976931348623159e308,"c":9007199254740993})",
      R"({'a':1})",
      R"({a:1})",
      R"({"a":"\udc00"})",
      R"({"a":"\ud800"})",
      R"({"a":"\ud800\u0041"})",
      R"({"a":"\ud800\udbff"})",
      R"({"a":"\u00"})",
      R"({"a":"\x"})",
      R"({"a":tru})",
      R"({"a":truex})",
      R"({"a":true} {"b":2})",
      R"({"a":1}])",
      R"({"a":"cut)",
      R"({"a":1)",
      R"([1,2])",
      R"("text")",
      "",
      "{\"a\":\"tab\there\"}",
      "{\"a\":\"\x1f after sixteen bytes\x1f\"}",
      "{\"a\":\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"}",
  };
  for (const char* row : rows) agrees(row);
  agrees(std::string("{\"a\":1}\0", 8));     // a NUL byte after the object
  agrees(std::string("{\"a\":\"\0\"}", 9));  // and inside a string
}

TEST_CASE("read_object agrees with parse_strict on every small edit of valid objects", "[json]") {
  // Seeds that touch every kind of token, then each seed with one token inserted at every
  // position and with every byte deleted: tens of thousands of near-valid texts.
  const std::string seeds[] = {
      R"({"action":"send","to":"1555","text":"a \"b\" \\ \n é 😀","n":[1,-2.5e3,true,null],"o":{"k":{}}})",
      "{ \"a\" : [ 1 , { \"b\" : \"\\u00e9\\ud83d\\ude00\" } ] , \"c\" : 0.5 ,\n\"d\":false }",
  };
  const std::string tokens[] = {"{",  "}",   "[",       "]",       "\"",   "\\",   ",",    ":",        " ",
                                "\n", "0",   "1",       "-",       ".",    "e",    "true", "null",     ",}",
                                ",]", "\\u", "\\ud800", "\\udc00", "\x01", "\x1f", "é",    "\"a\":1,", "\"action\":0,"};
  std::size_t read = 0, total = 0;
  for (const auto& seed : seeds) {
    REQUIRE(agrees(seed));
    for (std::size_t at = 0; at <= seed.size(); ++at) {
      std::vector<std::string> edits;
      for (const auto& token : tokens) edits.push_back(seed.substr(0, at) + token + seed.substr(at));
      if (at < seed.size()) edits.push_back(seed.substr(0, at) + seed.substr(at + 1));
      for (const auto& text : edits) {
        if (!utf8::is_valid(text)) continue;  // read_object requires valid UTF-8
        ++total;
        read += agrees(text) ? 1 : 0;
      }
    }
  }
  CHECK(read > 0);
  CHECK(read < total);
}

TEST_CASE("read_object limits depth like parse_strict, without recursing", "[json]") {
  const auto nested = [](std::size_t depth) {
    std::string s;
    for (std::size_t i = 0; i < depth; ++i) s += "{\"a\":";
    return s + "1" + std::string(depth, '}');
  };
  json::Object object;
  CHECK(json::read_object(nested(32), 32, object));
  CHECK_FALSE(json::read_object(nested(33), 32, object));
  CHECK(json::read_object("{\"a\":" + std::string(31, '[') + std::string(31, ']') + "}", 32, object));
  CHECK_FALSE(json::read_object("{\"a\":" + std::string(32, '[') + std::string(32, ']') + "}", 32, object));
  CHECK(json::read_object(nested(100000), 1000000, object));
  REQUIRE(object.size() == 1);
  CHECK(object.members()[0].value.type == json::Type::object);
}

TEST_CASE("read_object keeps plain strings in place and decodes escaped ones", "[json]") {
  const std::string text = R"({"plain":"abc","escaped":"a\nb","n":-3,"big":1e3})";
  json::Object object;
  REQUIRE(json::read_object(text, 32, object));
  const json::Value* plain = object.find("plain");
  REQUIRE(plain);
  CHECK(plain->text.data() == text.data() + text.find("abc"));  // a view, not a copy
  CHECK(object.find("escaped")->text == "a\nb");
  CHECK(object.find("n")->number.is_integer());
  CHECK(object.find("n")->number.as_double() == -3);
  CHECK_FALSE(object.find("big")->number.is_integer());
  CHECK(object.find("missing") == nullptr);
  CHECK(object.compact() == text);
}

TEST_CASE("read_object handles many members and long strings past its inline storage", "[json]") {
  std::string text = "{";
  for (int i = 0; i < 500; ++i) text += "\"k" + std::to_string(i) + "\":\"" + std::string(40, 'x') + "\\n\",";
  text.back() = '}';
  CHECK(agrees(text));
}

TEST_CASE("read_object_prefix reads the object at the start and says where it ends", "[json]") {
  json::Object object;
  const std::string text = R"(  {"a":"}","b":[1,{"c":"]"}]} and then {"x":1} prose)";
  const auto end = json::read_object_prefix(text, 32, object);
  REQUIRE(end);
  CHECK(text.substr(0, *end) == R"(  {"a":"}","b":[1,{"c":"]"}]})");
  CHECK(object.size() == 2);
  CHECK_FALSE(json::read_object(text, 32, object));  // the whole text is more than one value
  CHECK_FALSE(json::read_object_prefix(R"({"a":1,"a":2} ok)", 32, object));
  CHECK_FALSE(json::read_object_prefix(R"([1] {"a":1})", 32, object));
}
