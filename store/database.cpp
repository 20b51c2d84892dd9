#include "store/database.h"

#include "store/internal/access.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <string_view>

#include "store/internal/connection.h"
#include "store/internal/sql.h"
#include "store/internal/writer_intent.h"
#include "store/round.h"
#include "store/transaction.h"

namespace dispatchd::store {
namespace {

// A URI's password (postgresql://user:secret@host) is not for logs or messages.
std::string redact_uri(const std::string& uri) {
  const std::size_t scheme = uri.find("://");
  const std::size_t at = uri.find('@', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || at == std::string::npos) return uri;
  const std::size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon + 1) + "***" + uri.substr(at);
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

// Between two attempts to reach a PostgreSQL server that went away.
constexpr std::chrono::milliseconds k_first_reconnect{250};
constexpr std::chrono::milliseconds k_last_reconnect{10'000};

struct Database::Impl {
  std::unique_ptr<internal::Connection> connection;
  std::string path;
  // PostgreSQL: what a new connection needs, and the pacing of attempts.
  std::string target;
  std::string password;
  std::chrono::steady_clock::time_point next_attempt{};
  std::chrono::milliseconds pause = k_first_reconnect;
  bool open_transaction = false;  // a top-level BEGIN not yet ended by COMMIT or ROLLBACK
  Round* round = nullptr;
  std::uint64_t epoch = 0;
  std::optional<internal::AuditTail> audit_tail;
  std::optional<internal::WriterIntent> writers;  // SQLite only
};

Database::Database(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Result<Database> Database::open(const std::string& target, Mode mode, const OpenOptions& options) {
  auto impl = std::make_unique<Impl>();
  if (backend_of(target) == Backend::postgresql) {
    impl->path = redact_uri(target);
    impl->target = target;
    impl->password = options.password;
    auto connection = internal::open_postgresql(target, options.password);
    if (!connection) return std::unexpected(with_context(std::move(connection.error()), impl->path));
    impl->connection = std::move(*connection);
    return Database(std::move(impl));
  }
  if (mode == Mode::existing && !std::filesystem::exists(target)) {
    return std::unexpected(
        Error::not_found(target + ": no such database (run dispatchctl migrate or start dispatchd first)"));
  }
  impl->path = target;
  auto connection = internal::open_sqlite(target, mode == Mode::create);
  if (!connection) return std::unexpected(with_context(std::move(connection.error()), target));
  impl->connection = std::move(*connection);
  impl->writers.emplace(target);
  Database db(std::move(impl));
  // journal_size_limit: when the WAL starts over, its file is cut back to 64 MiB instead of
  // keeping the size of its largest burst.
  if (auto ok = internal::exec(db,
                               "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL; "
                               "PRAGMA temp_store=MEMORY; PRAGMA journal_size_limit=67108864;");
      !ok) {
    return std::unexpected(with_context(std::move(ok.error()), target));
  }
  return db;
}

internal::Connection& internal::Access::connection(const Database& db) { return *db.m_impl->connection; }
sqlite3* internal::Access::handle(const Database& db) { return internal::sqlite_handle(*db.m_impl->connection); }
const internal::WriterIntent* internal::Access::writers(const Database& db) {
  return db.m_impl->writers ? &*db.m_impl->writers : nullptr;
}
const std::string& Database::path() const { return m_impl->path; }
Backend Database::backend() const { return m_impl->connection->backend(); }
bool Database::in_transaction() const { return m_impl->connection->in_transaction(); }
std::uint64_t internal::Access::transaction_epoch(const Database& db) { return db.m_impl->epoch; }
std::optional<internal::AuditTail>& internal::Access::audit_tail(Database& db) { return db.m_impl->audit_tail; }
Round* internal::Access::round(const Database& db) { return db.m_impl->round; }
void internal::Access::attach_round(Database& db, Round* round) { db.m_impl->round = round; }

// transaction()'s steps (store/transaction.h).
Result<bool> detail::open(Database& db) {
  Round* round = internal::Access::round(db);
  if (!db.in_transaction() && round != nullptr) DISPATCHD_TRY(round->open());
  const bool nested = db.in_transaction();
  DISPATCHD_TRY(internal::exec(db, nested ? "SAVEPOINT nested" : begin_write(db.backend())));
  return nested;
}

Result<void> detail::commit(Database& db, bool nested) {
  return internal::exec(db, nested ? "RELEASE nested" : "COMMIT");
}

Result<void> detail::roll_back(Database& db, bool nested) {
  return internal::exec(db, nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK");
}

Result<void> Database::ping() {
  auto one = internal::query_int(*this, "SELECT 1");
  if (!one) return std::unexpected(std::move(one.error()));
  return {};
}

Error Database::last_error() const { return m_impl->connection->last_error(); }
bool Database::unreachable() const { return m_impl->connection->lost(); }

// A new connection in place of a lost one, where nothing is in flight on it (the callers
// check): the statements cached on the old one go with it.
Result<void> Database::reconnect() {
  auto& impl = *m_impl;
  const auto now = std::chrono::steady_clock::now();
  if (now < impl.next_attempt) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(impl.next_attempt - now);
    return std::unexpected(Error{ErrorKind::io, "the connection to PostgreSQL is lost (" +
                                                    impl.connection->last_error().message + "); next attempt in " +
                                                    std::to_string(wait.count()) + " ms"});
  }
  auto connection = internal::open_postgresql(impl.target, impl.password);
  if (!connection) {
    impl.next_attempt = now + impl.pause;
    impl.pause = std::min(impl.pause * 2, k_last_reconnect);
    return std::unexpected(with_context(std::move(connection.error()), impl.path));
  }
  impl.connection = std::move(*connection);
  impl.pause = k_first_reconnect;
  impl.next_attempt = {};
  impl.audit_tail.reset();
  ++impl.epoch;
  return {};
}

Result<void> internal::Access::exec(Database& db, std::string_view sql) {
  auto& impl = *db.m_impl;
  const auto starts = [&](std::string_view word) {
    return sql.size() >= word.size() && std::equal(word.begin(), word.end(), sql.begin(), [](char a, char b) {
             return a == std::toupper(static_cast<unsigned char>(b));
           });
  };
  const bool begin = starts("BEGIN");
  if (begin || starts("ROLLBACK")) ++impl.epoch;
  if (begin && !impl.open_transaction && impl.connection->lost()) DISPATCHD_TRY(db.reconnect());
  // A writer outside the daemon says it waits, so that a daemon's Round stops keeping its
  // rounds open (store/internal/writer_intent.h). The daemon's own BEGIN has its Round.
  const bool announce = begin && impl.writers && impl.round == nullptr && starts("BEGIN IMMEDIATE");
  if (announce) impl.writers->announce();
  auto done = impl.connection->exec(sql);
  if (announce) impl.writers->withdraw();
  if (begin) {
    impl.open_transaction = done.has_value();
  } else if (starts("COMMIT") ? done.has_value() : starts("ROLLBACK") && !starts("ROLLBACK TO")) {
    // A failed COMMIT leaves the transaction open (SQLite: busy); the owner rolls it back.
    impl.open_transaction = false;
  }
  return done;
}

Result<long long> internal::Access::query_int(Database& db, std::string_view sql) {
  auto& impl = *db.m_impl;
  if (!impl.open_transaction && impl.connection->lost()) DISPATCHD_TRY(db.reconnect());
  auto stmt = impl.connection->statement(sql);
  if (!stmt) return std::unexpected(stmt.error());
  auto row = (*stmt)->step();
  const long long value = row && *row ? (*stmt)->column_int64(0) : 0;
  (*stmt)->reset();
  if (!row) return std::unexpected(std::move(row.error()));
  return value;
}

}  // namespace dispatchd::store
