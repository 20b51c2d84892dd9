#pragma once
// An open SQLite database with dispatchd's settings. sqlite3 types live only in store/'s
// .cpp files and store/internal/; callers see this class and store::Error values.
//
// Settings applied on open: WAL journal, foreign keys on, busy timeout 5 s, and
// synchronous=FULL, so that a committed transaction (an acknowledged inbound message) is
// on disk before the commit returns. The daemon commits in rounds (store/round.h), one
// sync for many steps. temp_store=MEMORY keeps the savepoints' journals in memory: the
// store nests savepoints in every transaction, and spilled to temporary files they cost
// more writes than the database itself.
//
// Prepared statements are cached per Database (see store/sql.h): each SQL text is compiled
// once and reused.
//
// Thread-safety: a Database is used by one thread at a time (it is opened without SQLite's
// per-connection mutex); SQLite serializes writers across connections and processes.

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/error.h"

namespace dispatchd::store {

class Round;
namespace internal {
struct Access;  // store/internal/access.h: the SQLite handle, for the store's own files
}

class Database {
 public:
  enum class Mode {
    create,    // create the file when missing (the daemon, `dispatchctl migrate`)
    existing,  // refuse a missing file (staff commands: a typo must not make an empty db)
  };

  // Opens the database file at `path`.
  static Result<Database> open(const std::string& path, Mode mode = Mode::create);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  // True inside BEGIN ... COMMIT (or a savepoint).
  bool in_transaction() const;
  // Changes whenever a transaction begins or anything is rolled back (exec of BEGIN... or
  // ROLLBACK...): what the store caches from the database (the audit chain's tail) is
  // valid only inside a transaction and while this stays the same.
  std::uint64_t transaction_epoch() const;
  struct AuditTail {
    std::uint64_t epoch = 0;
    std::int64_t id = 0;
    std::string hash;
  };
  std::optional<AuditTail>& audit_tail();  // store/audit.cpp's cache

  // The group commit top-level transactions join, or null (Round attaches itself).
  Round* round() const;
  void attach_round(Round* round);

  // Runs one or more statements that return no rows.
  Result<void> exec(std::string_view sql);

  // Runs a query returning one integer (0 when it returns no row).
  Result<long long> query_int(std::string_view sql);

  // The most recent error of this connection.
  Error last_error() const;

  const std::string& path() const;

 private:
  friend struct internal::Access;
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::store
