#include "net/http.h"

#include <algorithm>

namespace dispatchd::net {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [field, value] : m_fields)
    if (iequals(field, name)) return std::string_view(value);
  return std::nullopt;
}

std::string_view to_string(TransportErrorKind kind) {
  switch (kind) {
    case TransportErrorKind::connect_failed: return "connect_failed";
    case TransportErrorKind::timed_out: return "timed_out";
    case TransportErrorKind::too_large: return "too_large";
    case TransportErrorKind::other: break;
  }
  return "other";
}

}  // namespace dispatchd::net
