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

#include "store/database.h"
#include "store/dialect.h"
#include "store/error.h"
#include "store/internal/access.h"
#include "store/internal/connection.h"
#include "store/states.h"
#include "store/transaction.h"

namespace dispatchd::store {

// One use of a cached prepared statement: bind, step, read columns. The statement is reset
// and its bindings cleared when the Query ends, ready for the next use. The same on both
// engines (store/internal/connection.h); SQL with `?` or `?N` placeholders.
class Query {
 public:
  [[nodiscard]] static Result<Query> prepare(Database& db, std::string_view sql) {
    auto& connection = internal::Access::connection(db);
    auto stmt = connection.statement(sql);
    if (!stmt) return std::unexpected(stmt.error());
    return Query(connection, **stmt);
  }
  Query(Query&& other) noexcept : m_connection(other.m_connection), m_stmt(other.m_stmt) { other.m_stmt = nullptr; }
  Query& operator=(Query&&) = delete;
  ~Query() {
    if (m_stmt) m_stmt->reset();
  }

  Query& bind(int index, std::string_view value) {
    m_stmt->bind_text(index, value);
    return *this;
  }
  Query& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Query& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Query& bind(int index, std::int64_t value) {
    m_stmt->bind_int64(index, value);
    return *this;
  }
  Query& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Query& bind(int index, double value) {
    m_stmt->bind_double(index, value);
    return *this;
  }
  // Bytes for a BLOB (BYTEA) column; bind() of a string is text.
  Query& bind_blob(int index, std::string_view bytes) {
    m_stmt->bind_blob(index, bytes);
    return *this;
  }
  template <typename E>
  requires std::is_enum_v<E> Query& bind(int index, E value) { return bind(index, to_sql(value)); }
  template <typename T>
  Query& bind(int index, const std::optional<T>& value) {
    if (value) return bind(index, *value);
    m_stmt->bind_null(index);
    return *this;
  }

  // Steps once: true when a row is ready, false when the statement is done.
  [[nodiscard]] Result<bool> step() { return m_stmt->step(); }
  // Runs a statement that returns no rows.
  [[nodiscard]] Result<void> run() {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    return {};
  }
  // Runs an INSERT ... RETURNING id: the new row's id, or nullopt when it inserted nothing
  // (ON CONFLICT DO NOTHING met a duplicate).
  [[nodiscard]] Result<std::optional<std::int64_t>> insert_returning_id() {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::nullopt;
    const std::int64_t id = integer(0);
    // To the end, so that SQLite finishes the statement as run() would.
    if (auto done = step(); !done) return std::unexpected(done.error());
    return id;
  }
  // The same for an INSERT that always inserts a row.
  [[nodiscard]] Result<std::int64_t> inserted_id() {
    auto id = insert_returning_id();
    if (!id) return std::unexpected(id.error());
    if (!*id) return std::unexpected(Error::internal("the INSERT ... RETURNING id returned no row"));
    return **id;
  }

  std::string text(int column) const { return std::string(m_stmt->column_text(column)); }
  std::optional<std::string> optional_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return text(column);
  }
  std::string blob(int column) const { return m_stmt->column_blob(column); }
  std::int64_t integer(int column) const { return m_stmt->column_int64(column); }
  std::optional<std::int64_t> optional_integer(int column) const {
    if (is_null(column)) return std::nullopt;
    return integer(column);
  }
  std::optional<double> optional_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return m_stmt->column_double(column);
  }
  bool is_null(int column) const { return m_stmt->column_is_null(column); }
  // A column holding one of store/states.h's enums as its SQL text. Any other text is an
  // `internal` error: the schema's CHECK lists keep it out, so it means a newer schema's value.
  template <typename E>
  [[nodiscard]] Result<E> state(int column) const {
    const std::string_view stored = m_stmt->column_text(column);  // valid until the next step
    if (const auto value = from_sql<E>(stored)) return *value;
    return std::unexpected(Error::internal("a stored state this dispatchd does not know: " + std::string(stored)));
  }

  // Rows changed by the last statement run on this connection.
  std::int64_t changes() const { return m_connection->changes(); }

 private:
  Query(internal::Connection& connection, internal::Statement& stmt) : m_connection(&connection), m_stmt(&stmt) {}
  internal::Connection* m_connection;
  internal::Statement* m_stmt;
};

// A statement whose text differs between the engines (store/dialect.h, namespace sql):
// `build(backend)` runs once per engine for each call site (each lambda is its own type, so
// its own static), and later calls only pick the text.
//   Query::prepare(db, per_backend(db.backend(), [](Backend b) { return "..." + sql::json_text(b, ...); }))
template <typename Build>
const std::string& per_backend(Backend backend, Build build) {
  static const std::string texts[2] = {build(Backend::sqlite), build(Backend::postgresql)};
  return texts[backend == Backend::postgresql ? 1 : 0];
}

// Shorthand for the common "propagate the error" step inside store functions.
#define DISPATCHD_TRY(expr)                                            \
  do {                                                                 \
    if (auto dispatchd_try_result = (expr); !dispatchd_try_result)     \
      return std::unexpected(std::move(dispatchd_try_result.error())); \
  } while (0)

}  // namespace dispatchd::store
