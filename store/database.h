#pragma once
// An open store database with dispatchd's settings, on one of two engines
// (store/backend.h): a SQLite file (the default) or a PostgreSQL server. Engine types
// (sqlite3, libpq) live only in store/'s .cpp files and store/internal/; callers see this
// class and store::Error values.
//
// SQLite settings applied on open: WAL journal, foreign keys on, busy timeout 5 s, and
// synchronous=FULL, so that a committed transaction (an acknowledged inbound message) is
// on disk before the commit returns. The daemon commits in rounds (store/round.h), one
// sync for many steps. temp_store=MEMORY keeps the savepoints' journals in memory: the
// store nests savepoints in every transaction, and spilled to temporary files they cost
// more writes than the database itself.
//
// Prepared statements are cached per connection (store/internal/connection.h, used through
// store/internal/sql.h's Query): each SQL text is compiled once and reused.
//
// PostgreSQL: the target is a libpq URI (postgresql://user@host:port/db) without the
// password, which comes in OpenOptions; transactions run at READ COMMITTED. When the link
// to the server breaks (a restart, a network cut), calls fail with `io` and the Database
// connects again on its own, but only where no transaction can be cut in two: when a
// top-level transaction begins (BEGIN) or a one-value query runs outside one. Attempts are paced
// (250 ms doubling to 10 s between them); between attempts a call fails at once with `io`
// and the reason. The new connection prepares its statements again as they are used.
//
// Thread-safety: a Database is used by one thread at a time (it is opened without SQLite's
// per-connection mutex); SQLite serializes writers across connections and processes.

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "store/backend.h"
#include "store/error.h"

namespace dispatchd::store {

namespace internal {
struct Access;  // store/internal/access.h: the connection, for the store's own files
}

struct OpenOptions {
  // PostgreSQL: the role's password (from database_password_env or a systemd credential),
  // never part of the target. Ignored for SQLite.
  std::string password;
};

class Database {
 public:
  enum class Mode {
    create,    // create the file when missing (the daemon, `dispatchctl migrate`)
    existing,  // refuse a missing file (staff commands: a typo must not make an empty db);
               // PostgreSQL: only connects (whether the schema is there is migrations' call)
  };

  // Opens the SQLite file at `target`, or connects to the PostgreSQL server a postgresql://
  // `target` names (backend_of). A connection that cannot be made is `io`, with libpq's
  // reason in one line and never the password.
  [[nodiscard]] static Result<Database> open(const std::string& target, Mode mode = Mode::create,
                                             const OpenOptions& options = {});

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  // True inside BEGIN ... COMMIT (or a savepoint).
  bool in_transaction() const;

  // One round trip to the database: the health probe. On PostgreSQL outside a transaction
  // a lost link is first made again (as above).
  [[nodiscard]] Result<void> ping();

  // The most recent error of this connection.
  Error last_error() const;
  // The link to the PostgreSQL server is broken (see above); never for SQLite.
  bool unreachable() const;

  Backend backend() const;
  // The target as opened: the SQLite file's path, or the PostgreSQL URI (with any password
  // in it replaced by ***).
  const std::string& path() const;

 private:
  friend struct internal::Access;
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  [[nodiscard]] Result<void> reconnect();
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::store
