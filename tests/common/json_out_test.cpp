// The one JSON writer: the exact bytes it writes. The audit trail's hash chain, stored
// columns and the documented outputs depend on them, so these tests pin them down.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "common/json_out.h"
#include "common/strict_json.h"

using namespace dispatchd;

namespace {

// `s` written as a lone JSON string.
std::string quoted(std::string_view s) { return JsonOut().value(s).str(); }

}  // namespace

TEST_CASE("JsonOut nests objects and arrays, members in call order", "[json_out]") {
  JsonOut out;
  out.begin_object().field("b", 1).begin_object("inner").field("a", "x").end_object();
  out.begin_array("list").value(1).begin_object().end_object().begin_array().end_array().value("y").end_array();
  out.begin_object("empty").end_object().begin_array("none").end_array().end_object();
  CHECK(out.str() == R"({"b":1,"inner":{"a":"x"},"list":[1,{},[],"y"],"empty":{},"none":[]})");
  CHECK(json::parse_strict(out.str(), {}).has_value());
}

TEST_CASE("JsonOut escapes quotes, backslashes and control characters only", "[json_out]") {
  CHECK(quoted("plain") == R"("plain")");
  CHECK(quoted("a\"b\\c/d") == R"("a\"b\\c/d")");  // the slash is not escaped
  CHECK(quoted("\b\t\n\f\r") == R"("\b\t\n\f\r")");
  CHECK(quoted(std::string("\0", 1)) == R"("\u0000")");                            // a NUL is written, not an end
  CHECK(quoted("\x01\x0B\x0E\x1A\x1F") == R"("\u0001\u000B\u000E\u001A\u001F")");  // upper-case hex
  CHECK(quoted("\x7F") == "\"\x7F\"");                                             // DEL as it is
  SECTION("every control character has one escape, and every other ASCII byte none") {
    for (int c = 0; c < 0x80; ++c) {
      const std::string written = quoted(std::string(1, static_cast<char>(c)));
      CAPTURE(c, written);
      if (c < 0x20 || c == '"' || c == '\\') {
        CHECK(written.size() > 3);
        CHECK(written[1] == '\\');
      } else {
        CHECK(written == "\"" + std::string(1, static_cast<char>(c)) + "\"");
      }
      // Whatever was escaped reads back as the byte written.
      const auto back = json::parse_strict(written, {});
      REQUIRE(back.has_value());
      CHECK(std::string(back->document.GetString(), back->document.GetStringLength()) ==
            std::string(1, static_cast<char>(c)));
    }
  }
}

TEST_CASE("JsonOut writes non-ASCII UTF-8 as it is, never as backslash-u escapes", "[json_out]") {
  CHECK(quoted("ñandú €") == "\"ñandú €\"");
  CHECK(quoted("\xF0\x9F\x98\x80") == "\"\xF0\x9F\x98\x80\"");                  // U+1F600, four bytes
  CHECK(quoted("\xE2\x80\xA8\xE2\x80\xA9") == "\"\xE2\x80\xA8\xE2\x80\xA9\"");  // U+2028, U+2029
  CHECK(JsonOut().begin_object().field("ñ", "é").end_object().str() == R"({"ñ":"é"})");
}

TEST_CASE("JsonOut writes integers of every width to their limits", "[json_out]") {
  constexpr auto min64 = std::numeric_limits<std::int64_t>::min();
  constexpr auto max64 = std::numeric_limits<std::int64_t>::max();
  constexpr auto maxu64 = std::numeric_limits<std::uint64_t>::max();
  JsonOut out;
  out.begin_array().value(min64).value(max64).value(maxu64).value(0).value(-1);
  out.value(static_cast<short>(-7)).value(static_cast<unsigned char>(200)).value(std::size_t{42}).end_array();
  CHECK(out.str() == "[-9223372036854775808,9223372036854775807,18446744073709551615,0,-1,-7,200,42]");
  const auto back = json::parse_strict(out.str(), {});
  REQUIRE(back.has_value());
  CHECK(back->document[0].GetInt64() == min64);
  CHECK(back->document[1].GetInt64() == max64);
  CHECK(back->document[2].GetUint64() == maxu64);
}

TEST_CASE("JsonOut writes booleans, null, doubles and optionals", "[json_out]") {
  std::optional<std::string> none;
  std::optional<int> three = 3;
  JsonOut out;
  out.begin_object().field("yes", true).field("no", false).field("nothing", nullptr);
  out.field("half", 0.5).field("one", 1.0).field("big", 1e21).field("tenth", 0.1);
  out.field("absent", none).field("three", three).field_if_set("skipped", none).field_if_set("kept", three);
  out.end_object();
  CHECK(out.str() == R"({"yes":true,"no":false,"nothing":null,"half":0.5,"one":1.0,"big":1e21,"tenth":0.1,)"
                     R"("absent":null,"three":3,"kept":3})");
}

TEST_CASE("JsonOut takes a string literal as a string, never as a boolean", "[json_out]") {
  const char* pointer = "text";
  const std::string owned = "owned";
  JsonOut out;
  out.begin_array().value("literal").value(pointer).value(owned).value(std::string_view("view")).end_array();
  CHECK(out.str() == R"(["literal","text","owned","view"])");
}

TEST_CASE("JsonOut embeds already-valid JSON as it is", "[json_out]") {
  const std::string stored = R"({"accion":"enviar_mensaje","n":[1,2]})";
  JsonOut out;
  out.begin_object().raw("output", stored).begin_array("list").raw("7").raw(R"("s")").end_array();
  out.raw_or_null("absent", std::nullopt).raw_or_null("empty", std::string()).raw_or_null("stored", stored);
  out.end_object();
  CHECK(out.str() == R"({"output":{"accion":"enviar_mensaje","n":[1,2]},"list":[7,"s"],"absent":null,)"
                     R"("empty":null,"stored":{"accion":"enviar_mensaje","n":[1,2]}})");
}

TEST_CASE("PrettyJsonOut indents by two spaces, one member or element per line", "[json_out]") {
  PrettyJsonOut out;
  out.begin_object().field("type", "object").begin_array("enum").raw(R"("a")").value(nullptr).end_array();
  out.begin_object("empty").end_object().field("n", 1).end_object();
  CHECK(out.str() ==
        "{\n"
        "  \"type\": \"object\",\n"
        "  \"enum\": [\n"
        "    \"a\",\n"
        "    null\n"
        "  ],\n"
        "  \"empty\": {},\n"
        "  \"n\": 1\n"
        "}");
}
