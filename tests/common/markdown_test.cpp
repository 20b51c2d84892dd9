#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/markdown.h"

using namespace dispatchd;

TEST_CASE("markdown::table_cell: one line, the markup characters escaped", "[markdown]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"plain", "plain"},
      {"", ""},
      {"a|b", "a\\|b"},
      {"one\ntwo\r\nthree\tfour", "one two  three four"},
      {"send_message", "send\\_message"},
      {"**bold** `code` [link](http://127.0.0.1/)", "\\*\\*bold\\*\\* \\`code\\` \\[link](http://127.0.0.1/)"},
      {"<img src=x onerror=alert(1)>", "\\<img src=x onerror=alert(1)>"},
      {"back\\slash", "back\\\\slash"},
      {"¿Envío a Monterrey? ✓", "¿Envío a Monterrey? ✓"},  // UTF-8 passes through byte for byte
  };
  for (const auto& [text, cell] : table) {
    INFO(text);
    CHECK(markdown::table_cell(text) == cell);
  }
}

TEST_CASE("markdown::table_cell: a hostile value cannot end its cell or its row", "[markdown]") {
  const std::string hostile = "x | y\n| injected | row |\\|";
  const std::string row = "| " + markdown::table_cell(hostile) + " |";
  CHECK(row.find('\n') == std::string::npos);
  // Every `|` inside the cell is preceded by an odd run of backslashes: escaped, not a border.
  std::size_t borders = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] != '|') continue;
    std::size_t slashes = 0;
    while (slashes < i && row[i - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 0) ++borders;
  }
  CHECK(borders == 2);
}
