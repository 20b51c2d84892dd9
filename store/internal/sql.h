#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the cached-statement handle and the transaction helper shared by the
// store's .cpp files.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <sqlite3.h>

#include "store/database.h"
#include "store/error.h"
#include "store/internal/access.h"
#include "store/states.h"
#include "store/transaction.h"

namespace dispatchd::store {

// One use of a cached prepared statement: bind, step, read columns. The statement is reset
// and its bindings cleared when the Query ends, ready for the next use.
class Query {
 public:
  static Result<Query> prepare(Database& db, std::string_view sql) {
    auto stmt = internal::Access::statement(db, sql);
    if (!stmt) return std::unexpected(stmt.error());
    return Query(db, *stmt);
  }
  Query(Query&& other) noexcept : m_db(other.m_db), m_stmt(other.m_stmt) { other.m_stmt = nullptr; }
  Query& operator=(Query&&) = delete;
  ~Query() {
    if (!m_stmt) return;
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
  }

  Query& bind(int index, std::string_view value) {
    sqlite3_bind_text(m_stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Query& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Query& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Query& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(m_stmt, index, value);
    return *this;
  }
  Query& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Query& bind(int index, double value) {
    sqlite3_bind_double(m_stmt, index, value);
    return *this;
  }
  template <typename E>
  requires std::is_enum_v<E> Query& bind(int index, E value) { return bind(index, to_sql(value)); }
  template <typename T>
  Query& bind(int index, const std::optional<T>& value) {
    if (value) return bind(index, *value);
    sqlite3_bind_null(m_stmt, index);
    return *this;
  }

  // Steps once: true when a row is ready, false when the statement is done.
  Result<bool> step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return std::unexpected(m_db->last_error());
  }
  // Runs a statement that returns no rows.
  Result<void> run() {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    return {};
  }

  std::string text(int column) const {
    const auto* bytes = sqlite3_column_text(m_stmt, column);
    return bytes ? std::string(reinterpret_cast<const char*>(bytes), sqlite3_column_bytes(m_stmt, column)) : "";
  }
  std::optional<std::string> optional_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return text(column);
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
  std::optional<std::int64_t> optional_integer(int column) const {
    if (is_null(column)) return std::nullopt;
    return integer(column);
  }
  std::optional<double> optional_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return sqlite3_column_double(m_stmt, column);
  }
  bool is_null(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

  // Rows changed by the last run() on this connection, and the newest rowid.
  int changes() const { return sqlite3_changes(internal::Access::handle(*m_db)); }
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(internal::Access::handle(*m_db)); }

 private:
  Query(Database& db, sqlite3_stmt* stmt) : m_db(&db), m_stmt(stmt) {}
  Database* m_db;
  sqlite3_stmt* m_stmt;
};

// Shorthand for the common "propagate the error" step inside store functions.
#define DISPATCHD_TRY(expr)                                            \
  do {                                                                 \
    if (auto dispatchd_try_result = (expr); !dispatchd_try_result)     \
      return std::unexpected(std::move(dispatchd_try_result.error())); \
  } while (0)

}  // namespace dispatchd::store
