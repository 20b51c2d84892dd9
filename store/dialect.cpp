#include "store/dialect.h"

#include <algorithm>
#include <cctype>

namespace dispatchd::store {
namespace {

// Where the text that starts at `at` (a quote or a comment opener) ends: one past its
// closing delimiter, or the end of `sql` when it is not closed.
std::size_t skip_quoted(std::string_view sql, std::size_t at) {
  const char open = sql[at];
  if (open == '-') {
    const std::size_t end = sql.find('\n', at);
    return end == std::string_view::npos ? sql.size() : end + 1;
  }
  if (open == '/') {
    const std::size_t end = sql.find("*/", at + 2);
    return end == std::string_view::npos ? sql.size() : end + 2;
  }
  // '...' or "...": a doubled delimiter is the delimiter itself, so scanning on to the next
  // one and continuing from there reads it as two adjacent quoted parts, which is the same.
  const std::size_t end = sql.find(open, at + 1);
  return end == std::string_view::npos ? sql.size() : end + 1;
}

bool opens_quoted(std::string_view sql, std::size_t at) {
  const char c = sql[at];
  if (c == '\'' || c == '"') return true;
  const char next = at + 1 < sql.size() ? sql[at + 1] : '\0';
  return (c == '-' && next == '-') || (c == '/' && next == '*');
}

}  // namespace

PostgresqlSql to_postgresql_placeholders(std::string_view sql) {
  PostgresqlSql out;
  out.text.reserve(sql.size() + 16);
  std::size_t at = 0;
  while (at < sql.size()) {
    if (opens_quoted(sql, at)) {
      const std::size_t end = skip_quoted(sql, at);
      out.text.append(sql.substr(at, end - at));
      at = end;
      continue;
    }
    if (sql[at] != '?') {
      out.text.push_back(sql[at++]);
      continue;
    }
    ++at;
    int number = 0;
    std::size_t digits = 0;
    // Five digits at most: SQLite's own limit on parameters is 32766.
    while (at < sql.size() && digits < 5 && std::isdigit(static_cast<unsigned char>(sql[at]))) {
      number = number * 10 + (sql[at++] - '0');
      ++digits;
    }
    if (digits == 0) number = out.parameters + 1;
    out.parameters = std::max(out.parameters, number);
    out.text += '$';
    out.text += std::to_string(number);
  }
  return out;
}

ErrorKind kind_of_sqlstate(std::string_view sqlstate) {
  const auto is = [&](std::string_view code) { return sqlstate == code; };
  const auto in_class = [&](std::string_view prefix) { return sqlstate.size() == 5 && sqlstate.starts_with(prefix); };
  if (is("40001") || is("40P01") || is("55P03")) return ErrorKind::busy;
  if (in_class("08") || is("57P01") || is("57P02") || is("57P03")) return ErrorKind::io;
  if (is("53100")) return ErrorKind::full;
  if (in_class("23")) return ErrorKind::refused;
  if (is("XX001") || is("XX002")) return ErrorKind::corrupt;
  return ErrorKind::internal;
}

}  // namespace dispatchd::store
