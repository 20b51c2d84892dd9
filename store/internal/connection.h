#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the seam between the store's SQL and an engine. A Database owns one
// Connection; store::Query (store/internal/sql.h) runs on its Statements. Two engines:
// SQLite (store/sqlite_connection.cpp) and PostgreSQL through libpq
// (store/postgresql_connection.cpp). No engine type appears here.
//
// The SQL the store writes is the same text for both: `?` and `?N` placeholders (the
// PostgreSQL side rewrites them to `$N`, store/dialect.h), and what the engines differ in
// is the caller's business (Database::backend()).
//
// Thread-safety: one thread at a time per Connection, like the Database that owns it.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/backend.h"
#include "store/error.h"

struct sqlite3;

namespace dispatchd::store::internal {

// One prepared statement, cached by its Connection and reused: bind, step, read, reset.
// Parameters are 1-based (as `?N`); an index past the statement's parameters is ignored,
// as SQLite ignores it; an unbound parameter is NULL. Column reads are valid while step()
// last returned true; a text view lives until the next step() or reset().
class Statement {
 public:
  virtual ~Statement() = default;

  virtual void bind_text(int index, std::string_view value) = 0;
  virtual void bind_int64(int index, std::int64_t value) = 0;
  virtual void bind_double(int index, double value) = 0;
  virtual void bind_null(int index) = 0;
  // Bytes, not text (a BLOB; a BYTEA on PostgreSQL): any byte value, NULs included.
  virtual void bind_blob(int index, std::string_view bytes) = 0;

  // Runs the statement on the first call, then moves through its rows: true when a row is
  // ready, false when there is none left. An error leaves the statement to be reset.
  [[nodiscard]] virtual Result<bool> step() = 0;

  virtual std::string_view column_text(int column) const = 0;  // "" for NULL
  virtual std::int64_t column_int64(int column) const = 0;     // 0 for NULL; a boolean is 0/1
  virtual double column_double(int column) const = 0;          // 0 for NULL
  virtual bool column_is_null(int column) const = 0;
  // A BLOB (BYTEA) column's bytes, copied out: "" for NULL.
  virtual std::string column_blob(int column) const = 0;

  // Ready for the next use: results dropped, every parameter back to NULL. Never fails.
  virtual void reset() = 0;
};

class Connection {
 public:
  virtual ~Connection() = default;

  virtual Backend backend() const = 0;
  // One or more statements without parameters and without rows to read.
  [[nodiscard]] virtual Result<void> exec(std::string_view sql) = 0;
  // The cached statement for `sql`, prepared on first use. REQUIRES: the caller resets it
  // after use (store::Query does); one use of a given text at a time.
  [[nodiscard]] virtual Result<Statement*> statement(std::string_view sql) = 0;
  // True inside BEGIN ... COMMIT (also a failed transaction not yet rolled back).
  virtual bool in_transaction() const = 0;
  // The most recent error of this connection.
  virtual Error last_error() const = 0;
  // The link to the server broke (PostgreSQL): every call fails until a new connection is
  // made. Never true for SQLite.
  virtual bool lost() const = 0;
  // Rows changed by the last statement that ran, and by all of them since opening.
  virtual std::int64_t changes() const = 0;
  virtual std::int64_t total_changes() const = 0;
};

// Opens a SQLite file (creating it when `create`). Applies nothing: Database sets the
// connection's settings.
[[nodiscard]] Result<std::unique_ptr<Connection>> open_sqlite(const std::string& path, bool create);

// Connects to PostgreSQL. `uri` is a libpq connection URI; `password`, when not empty,
// overrides any in it. An error's message is one line and never holds the password.
[[nodiscard]] Result<std::unique_ptr<Connection>> open_postgresql(const std::string& uri, const std::string& password);

// The SQLite handle behind a SQLite connection (the backup API, the WAL hook), else null.
sqlite3* sqlite_handle(Connection& connection);

}  // namespace dispatchd::store::internal
