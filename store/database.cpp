#include "store/database.h"

#include "store/internal/access.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string_view>
#include <unordered_map>

#include <sqlite3.h>

namespace dispatchd::store {
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

}  // namespace

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::busy: return "busy";
    case ErrorKind::io: return "io";
    case ErrorKind::full: return "full";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::refused: return "refused";
    case ErrorKind::schema: return "schema";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
}

bool is_retryable(ErrorKind kind) {
  return kind == ErrorKind::busy || kind == ErrorKind::io || kind == ErrorKind::full;
}

Error with_context(Error error, std::string_view context) {
  error.message = std::string(context) + ": " + error.message;
  return error;
}

struct Database::Impl {
  sqlite3* db = nullptr;
  std::string path;
  Round* round = nullptr;
  std::uint64_t epoch = 0;
  std::optional<AuditTail> audit_tail;
  std::unordered_map<std::string, sqlite3_stmt*, SqlHash, std::equal_to<>> statements;

  ~Impl() {
    for (auto& [sql, stmt] : statements) sqlite3_finalize(stmt);
    sqlite3_close_v2(db);
  }
};

Database::Database(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Result<Database> Database::open(const std::string& path, Mode mode) {
  if (mode == Mode::existing && !std::filesystem::exists(path)) {
    return std::unexpected(
        Error::not_found(path + ": no such database (run dispatchctl migrate or start dispatchd first)"));
  }
  configure_sqlite();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  // NOMUTEX: a Database is used by one thread at a time (the contract in database.h), so
  // SQLite need not lock the connection around every call.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (mode == Mode::create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error = impl->db ? describe_error(impl->db, sqlite3_errmsg(impl->db))
                           : Error{kind_of(rc & 0xff, 0), sqlite3_errstr(rc)};
    return std::unexpected(with_context(std::move(error), path));
  }
  sqlite3_busy_timeout(impl->db, 5000);
  Database db(std::move(impl));
  // journal_size_limit: when the WAL starts over, its file is cut back to 64 MiB instead of
  // keeping the size of its largest burst.
  if (auto ok = db.exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL; "
                        "PRAGMA temp_store=MEMORY; PRAGMA journal_size_limit=67108864;");
      !ok) {
    return std::unexpected(with_context(std::move(ok.error()), path));
  }
  return db;
}

sqlite3* internal::Access::handle(const Database& db) { return db.m_impl->db; }
const std::string& Database::path() const { return m_impl->path; }
bool Database::in_transaction() const { return sqlite3_get_autocommit(m_impl->db) == 0; }
Round* Database::round() const { return m_impl->round; }
std::uint64_t Database::transaction_epoch() const { return m_impl->epoch; }
std::optional<Database::AuditTail>& Database::audit_tail() { return m_impl->audit_tail; }
void Database::attach_round(Round* round) { m_impl->round = round; }

Error Database::last_error() const { return describe_error(m_impl->db, sqlite3_errmsg(m_impl->db)); }

Result<void> Database::exec(std::string_view sql) {
  const auto starts = [&](std::string_view word) {
    return sql.size() >= word.size() && std::equal(word.begin(), word.end(), sql.begin(), [](char a, char b) {
             return a == std::toupper(static_cast<unsigned char>(b));
           });
  };
  if (starts("BEGIN") || starts("ROLLBACK")) ++m_impl->epoch;
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(m_impl->db, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = message ? describe_error(m_impl->db, message) : last_error();
    sqlite3_free(message);
    return std::unexpected(std::move(error));
  }
  return {};
}

Result<sqlite3_stmt*> internal::Access::statement(Database& db, std::string_view sql) {
  auto& cache = db.m_impl->statements;
  if (const auto it = cache.find(sql); it != cache.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db.m_impl->db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    Error error = db.last_error();
    error.message += " (in: " + std::string(sql.substr(0, 80)) + ")";
    return std::unexpected(std::move(error));
  }
  cache.emplace(std::string(sql), stmt);
  return stmt;
}

Result<long long> Database::query_int(std::string_view sql) {
  auto stmt = internal::Access::statement(*this, sql);
  if (!stmt) return std::unexpected(stmt.error());
  const int rc = sqlite3_step(*stmt);
  const long long value = rc == SQLITE_ROW ? sqlite3_column_int64(*stmt, 0) : 0;
  const bool failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
  Error error = failed ? last_error() : Error{};
  sqlite3_reset(*stmt);
  if (failed) return std::unexpected(std::move(error));
  return value;
}

}  // namespace dispatchd::store
