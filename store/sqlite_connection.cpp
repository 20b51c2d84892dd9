// The SQLite engine behind a Database (store/internal/connection.h): the store's only
// sqlite3 calls besides the backup API (backup.cpp) and the WAL hook (round.cpp).

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <sqlite3.h>

#include "store/internal/connection.h"

namespace dispatchd::store::internal {
namespace {

// Process-wide SQLite settings, before the library initializes itself on the first open:
// no memory statistics (with them every allocation SQLite makes takes a global mutex, and
// nothing here reads them). Fails harmlessly when SQLite was initialized already.
void configure_sqlite() { [[maybe_unused]] static const int once = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// The statement cache is looked up by the SQL text as given, without copying it into a key.
struct SqlHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view sql) const noexcept { return std::hash<std::string_view>{}(sql); }
};

// The one mapping from SQLite's result codes to ours (store/error.h). A failed system call
// is told apart by its errno: an I/O error because the disk is full is `full`.
ErrorKind kind_of(int primary, int system) {
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return ErrorKind::busy;
    case SQLITE_FULL: return ErrorKind::full;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY: return (system == ENOSPC || system == EDQUOT) ? ErrorKind::full : ErrorKind::io;
    case SQLITE_CONSTRAINT: return ErrorKind::refused;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return ErrorKind::corrupt;
    default: return ErrorKind::internal;
  }
}

// SQLite's message, with the system's reason when a failed system call caused it: "disk I/O
// error" alone does not say that the disk is full or the folder is gone.
Error describe_error(sqlite3* db, std::string message) {
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  const int system = sqlite3_system_errno(db);
  const bool system_call = primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN;
  if (system != 0 && system_call) message += std::string(" (") + std::strerror(system) + ")";
  return {kind_of(primary, system_call ? system : 0), std::move(message)};
}

class SqliteStatement final : public Statement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
  ~SqliteStatement() override { sqlite3_finalize(m_stmt); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind_text(int index, std::string_view value) override {
    // A null pointer would bind NULL: an empty text is "" here, as on PostgreSQL.
    sqlite3_bind_text(m_stmt, index, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
  }
  void bind_int64(int index, std::int64_t value) override { sqlite3_bind_int64(m_stmt, index, value); }
  void bind_double(int index, double value) override { sqlite3_bind_double(m_stmt, index, value); }
  void bind_null(int index) override { sqlite3_bind_null(m_stmt, index); }
  void bind_blob(int index, std::string_view bytes) override {
    // A null pointer would bind NULL: an empty blob is zero bytes, as on PostgreSQL.
    sqlite3_bind_blob64(m_stmt, index, bytes.empty() ? "" : bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  }

  Result<bool> step() override {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return std::unexpected(describe_error(m_db, sqlite3_errmsg(m_db)));
  }

  std::string_view column_text(int column) const override {
    const auto* bytes = sqlite3_column_text(m_stmt, column);
    if (!bytes) return {};
    return {reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column))};
  }
  std::int64_t column_int64(int column) const override { return sqlite3_column_int64(m_stmt, column); }
  double column_double(int column) const override { return sqlite3_column_double(m_stmt, column); }
  bool column_is_null(int column) const override { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
  std::string column_blob(int column) const override {
    const void* bytes = sqlite3_column_blob(m_stmt, column);
    if (!bytes) return {};
    return {static_cast<const char*>(bytes), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column))};
  }

  void reset() override {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
  }

 private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt;
};

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(sqlite3* db) : m_db(db) {}
  ~SqliteConnection() override {
    m_statements.clear();  // finalized before the connection closes
    sqlite3_close_v2(m_db);
  }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Backend backend() const override { return Backend::sqlite; }

  Result<void> exec(std::string_view sql) override {
    const std::string text(sql);
    char* message = nullptr;
    if (sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      Error error = message ? describe_error(m_db, message) : last_error();
      sqlite3_free(message);
      return std::unexpected(std::move(error));
    }
    return {};
  }

  Result<Statement*> statement(std::string_view sql) override {
    if (const auto it = m_statements.find(sql); it != m_statements.end()) return it->second.get();
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) !=
        SQLITE_OK) {
      Error error = last_error();
      error.message += " (in: " + std::string(sql.substr(0, 80)) + ")";
      return std::unexpected(std::move(error));
    }
    auto owned = std::make_unique<SqliteStatement>(m_db, stmt);
    Statement* raw = owned.get();
    m_statements.emplace(std::string(sql), std::move(owned));
    return raw;
  }

  bool in_transaction() const override { return sqlite3_get_autocommit(m_db) == 0; }
  Error last_error() const override { return describe_error(m_db, sqlite3_errmsg(m_db)); }
  bool lost() const override { return false; }
  std::int64_t changes() const override { return sqlite3_changes64(m_db); }
  std::int64_t total_changes() const override { return sqlite3_total_changes64(m_db); }

  sqlite3* handle() const { return m_db; }

 private:
  sqlite3* m_db;
  std::unordered_map<std::string, std::unique_ptr<SqliteStatement>, SqlHash, std::equal_to<>> m_statements;
};

}  // namespace

Result<std::unique_ptr<Connection>> open_sqlite(const std::string& path, bool create) {
  configure_sqlite();
  sqlite3* db = nullptr;
  // NOMUTEX: a Database is used by one thread at a time (the contract in database.h), so
  // SQLite need not lock the connection around every call.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error = db ? describe_error(db, sqlite3_errmsg(db)) : Error{kind_of(rc & 0xff, 0), sqlite3_errstr(rc)};
    sqlite3_close_v2(db);
    return std::unexpected(std::move(error));
  }
  sqlite3_busy_timeout(db, 5000);
  return std::make_unique<SqliteConnection>(db);
}

sqlite3* sqlite_handle(Connection& connection) {
  if (connection.backend() != Backend::sqlite) return nullptr;
  return static_cast<SqliteConnection&>(connection).handle();
}

}  // namespace dispatchd::store::internal
