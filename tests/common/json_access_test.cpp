// The defensive accessors over a parsed document: every lookup that finds nothing, or a
// value of another type, answers nullptr / nullopt / "" instead of asserting.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "common/json_access.h"
#include "common/strict_json.h"

using namespace dispatchd;

namespace {

rapidjson::Document parsed(const std::string& text) {
  auto result = json::parse_strict(text, {});
  REQUIRE(result.has_value());
  return std::move(result->document);
}

}  // namespace

TEST_CASE("string_member reads a string member, and only that", "[json_access]") {
  const auto doc = parsed(R"({"s":"text","n":1,"e":"","u":"ñ\u00e9","z":"a\u0000b","o":{"s":"inner"},"a":["s"]})");
  CHECK(json::string_member(doc, "s") == "text");
  CHECK(json::string_member(doc, "e") == "");
  CHECK(json::string_member(doc, "u") == "ñé");
  CHECK(json::string_member(doc, "z") == std::string("a\0b", 3));  // the whole string, NUL included
  CHECK_FALSE(json::string_member(doc, "n"));                      // a number
  CHECK_FALSE(json::string_member(doc, "o"));                      // an object
  CHECK_FALSE(json::string_member(doc, "missing"));
  CHECK_FALSE(json::string_member(doc, std::string_view("s\0", 2)));  // names compare by length too
  CHECK(json::string_member(json::member(doc, "o"), "s") == "inner");
  CHECK_FALSE(json::string_member(json::member(doc, "a"), "s"));  // an array has no members
  CHECK_FALSE(json::string_member(json::member(doc, "missing"), "s"));
  CHECK_FALSE(json::string_member(nullptr, "s"));
  CHECK_FALSE(json::string_member(parsed(R"("s")"), "s"));  // the value itself is no object
}

TEST_CASE("member, object_member and array_member check the type they promise", "[json_access]") {
  const auto doc = parsed(R"({"o":{"k":null},"a":[1],"n":null})");
  REQUIRE(json::member(doc, "n") != nullptr);
  CHECK(json::member(doc, "n")->IsNull());
  CHECK(json::object_member(doc, "o") != nullptr);
  CHECK(json::object_member(doc, "a") == nullptr);
  CHECK(json::array_member(doc, "a") != nullptr);
  CHECK(json::array_member(doc, "o") == nullptr);
  CHECK(json::member(json::object_member(doc, "o"), "k") != nullptr);
  CHECK(json::member(json::object_member(doc, "a"), "k") == nullptr);
}

TEST_CASE("int_member, number_member and bool_member take their own type only", "[json_access]") {
  const auto doc =
      parsed(R"({"i":-9223372036854775808,"u":18446744073709551615,"d":1.0,"t":true,"f":false,"s":"1","x":1.5})");
  CHECK(json::int_member(doc, "i") == std::numeric_limits<std::int64_t>::min());
  CHECK_FALSE(json::int_member(doc, "u"));  // does not fit an int64
  CHECK_FALSE(json::int_member(doc, "d"));  // 1.0 is written as a fraction
  CHECK_FALSE(json::int_member(doc, "s"));
  CHECK(json::number_member(doc, "x") == 1.5);
  CHECK(json::number_member(doc, "d") == 1.0);
  CHECK_FALSE(json::number_member(doc, "s"));
  CHECK(json::bool_member(doc, "t") == true);
  CHECK(json::bool_member(doc, "f") == false);
  CHECK_FALSE(json::bool_member(doc, "i"));
  CHECK_FALSE(json::bool_member(doc, "missing"));
}

TEST_CASE("string_of views a string value, else gives nothing", "[json_access]") {
  const auto doc = parsed(R"({"s":"text","n":2})");
  CHECK(json::string_of(json::member(doc, "s")) == "text");
  CHECK(json::string_of(json::member(doc, "n")).empty());
  CHECK(json::string_of(json::member(doc, "missing")).empty());
  CHECK(json::string_of(doc).empty());
}
