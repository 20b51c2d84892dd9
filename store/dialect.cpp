#include "store/dialect.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>

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

namespace sql {
namespace {

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const auto part : parts) out += part;
  return out;
}

}  // namespace

std::string json_text(Backend backend, std::string_view column, std::string_view key) {
  if (backend == Backend::postgresql) return cat({"(", column, "::jsonb ->> '", key, "')"});
  return cat({"json_extract(", column, ", '$.", key, "')"});
}

std::string json_integer(Backend backend, std::string_view column, std::string_view key) {
  // SQLite's json_extract keeps a JSON number's type; PostgreSQL's ->> gives text.
  if (backend == Backend::postgresql) return cat({"(", column, "::jsonb ->> '", key, "')::bigint"});
  return json_text(backend, column, key);
}

std::string json_integers(Backend backend, std::string_view parameter, std::string_view alias) {
  // PostgreSQL 15 wants a subquery in FROM named.
  if (backend == Backend::postgresql)
    return cat({"(SELECT value::bigint AS value, key FROM jsonb_array_elements_text(", parameter,
                "::jsonb) WITH ORDINALITY AS e(value, key)) AS ", alias});
  return cat({"json_each(", parameter, ") AS ", alias});
}

std::string json_integer_array(Backend backend, std::string_view column, std::string_view order_by) {
  if (backend == Backend::postgresql)
    return cat({"coalesce(json_agg(", column, " ORDER BY ", order_by, ")::text, '[]')"});
  // SQLite aggregates in the order its input comes: the caller's subquery orders it.
  return cat({"json_group_array(", column, ")"});
}

std::string contains(Backend backend, std::string_view haystack, std::string_view needle) {
  if (backend == Backend::postgresql) return cat({"strpos(", haystack, ", ", needle, ") > 0"});
  return cat({"instr(", haystack, ", ", needle, ") > 0"});
}

std::string text_list(const std::vector<std::string>& texts) {
  if (texts.empty()) return "(NULL)";
  std::string out = "(";
  for (const auto& text : texts) {
    out += out.size() == 1 ? "'" : ", '";
    for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    out += "'";
  }
  return out + ")";
}

std::string table_exists(Backend backend, std::string_view table) {
  // to_regclass follows the search_path, as the store's unqualified table names do.
  if (backend == Backend::postgresql)
    return cat({"SELECT CASE WHEN to_regclass('", table, "') IS NULL THEN 0 ELSE 1 END"});
  return cat({"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '", table, "'"});
}

std::string column_exists(Backend backend, std::string_view table, std::string_view column) {
  if (backend == Backend::postgresql)
    return cat({"SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('", table, "') AND attname = '", column,
                "' AND attnum > 0 AND NOT attisdropped"});
  return cat({"SELECT count(*) FROM pragma_table_info('", table, "') WHERE name = '", column, "'"});
}

}  // namespace sql

}  // namespace dispatchd::store
