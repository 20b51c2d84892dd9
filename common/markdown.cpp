#include "common/markdown.h"

namespace dispatchd::markdown {

std::string table_cell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      if (c == '|' || c == '\\' || c == '`' || c == '<' || c == '*' || c == '_' || c == '[') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace dispatchd::markdown
