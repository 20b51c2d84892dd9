#include "common/text.h"

#include <algorithm>
#include <vector>

#include "common/utf8.h"

namespace dispatchd::text {

std::string quote(std::string_view value, std::size_t max_points) {
  const std::string_view shown =
      utf8::is_valid(value) ? utf8::prefix(value, max_points) : value.substr(0, std::min(value.size(), max_points));
  std::string out = "\"";
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || (byte >= 0x80 && !utf8::is_valid(value))) {
          out += "\\x" + hex(std::span<const unsigned char>(&byte, 1));
        } else {
          out += c;
        }
    }
  }
  if (shown.size() < value.size()) out += "…";
  out += '"';
  return out;
}

std::string pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (const char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string percent_encode(std::string_view value) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' || byte == '_' || byte == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += k_hex[byte >> 4];
      out += k_hex[byte & 0xF];
    }
  }
  return out;
}

std::optional<std::string> form_decode(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '+') {
      out += ' ';
    } else if (value[i] != '%') {
      out += value[i];
    } else {
      if (i + 2 >= value.size()) return std::nullopt;
      const int high = hex_value(value[i + 1]);
      const int low = hex_value(value[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > cap) return cap + 1;
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    std::size_t row_min = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min > cap) return cap + 1;
  }
  return std::min(row[b.size()], cap + 1);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  // The differences are OR-ed into a volatile byte: each store is a side effect the compiler
  // must perform, in order and with its exact value, so it can neither stop at the first
  // difference nor turn the loop into memcmp (which does). Plain C++ rather than OpenSSL's
  // CRYPTO_memcmp, so that common/ (and the pure validator above it) links no crypto library.
  volatile unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference = difference | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

std::string hex(std::span<const unsigned char> bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    out += k_hex[byte >> 4];
    out += k_hex[byte & 0xF];
  }
  return out;
}

}  // namespace dispatchd::text
