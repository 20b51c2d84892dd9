#include <catch2/catch.hpp>
#include <string>

#include "common/utf8.h"

using namespace dispatchd;

TEST_CASE("utf8::first_invalid finds the first bad byte", "[utf8]") {
  struct Row {
    std::string text;
    std::optional<std::size_t> bad;
  };
  const Row rows[] = {
      {"", std::nullopt},
      {"plain ascii", std::nullopt},
      {"ma\xC3\xB1"
       "ana",
       std::nullopt},                              // ñ
      {"\xF0\x9F\x98\x80 emoji", std::nullopt},    // U+1F600
      {"\xE4\xB8\xAD\xE6\x96\x87", std::nullopt},  // CJK
      {"ab\xFF", 2},                               // never a lead byte
      {"ab\xC3", 2},                               // truncated sequence
      {"\xC0\xAF", 0},                             // overlong '/'
      {"\xE0\x80\xAF", 0},                         // overlong, 3 bytes
      {"x\xED\xA0\x80", 1},                        // encoded high surrogate U+D800
      {"\xED\xBF\xBF", 0},                         // encoded low surrogate U+DFFF
      {"\xF4\x90\x80\x80", 0},                     // above U+10FFFF
      {"ok\x80", 2},                               // stray continuation
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    CHECK(utf8::first_invalid(row.text) == row.bad);
  }
  // The vector check works on 16-byte chunks: the same rows, shifted across chunk
  // boundaries and followed by more text, give the same answers.
  for (std::size_t pad = 1; pad < 40; ++pad) {
    for (const char* tail : {"", "z", "tail text past the next chunk boundary"}) {
      for (const auto& row : rows) {
        const std::string text = std::string(pad, ' ') + row.text + tail;
        CAPTURE(pad, tail, row.text);
        CHECK(utf8::first_invalid(text) == (row.bad ? std::optional<std::size_t>(pad + *row.bad) : std::nullopt));
      }
    }
  }
}

TEST_CASE("utf8::code_points and prefix count characters, not bytes", "[utf8]") {
  const std::string text = "a\xC3\xB1\xF0\x9F\x98\x80z";  // a ñ 😀 z
  CHECK(utf8::code_points(text) == 4);
  CHECK(utf8::prefix(text, 2) == "a\xC3\xB1");
  CHECK(utf8::prefix(text, 3) == "a\xC3\xB1\xF0\x9F\x98\x80");
  CHECK(utf8::prefix(text, 10) == text);
  CHECK(utf8::prefix(text, 0).empty());
}
