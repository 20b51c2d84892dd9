#pragma once
// Transactions, public so that a caller can group several store calls into one commit.
//
// transaction(): BEGIN IMMEDIATE ... COMMIT (BEGIN on PostgreSQL), or a savepoint when a transaction is already
// open, so store functions compose: the outermost call commits or rolls back everything,
// and a nested call that fails undoes only its own changes. With a Round attached to the
// database (store/round.h: the daemon's group commit), a top-level call first joins the
// round's transaction and so becomes a savepoint too; the round commits later.

#include <expected>
#include <string>
#include <string_view>

#include "store/backend.h"
#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store {

// How a top-level write transaction begins. SQLite: IMMEDIATE takes the write lock up
// front, so two writers queue on the busy timeout instead of deadlocking on a read-to-write
// upgrade. PostgreSQL: READ COMMITTED with row locks as statements take them; several
// instances take the same work apart through the statements that take it (FOR ... UPDATE
// SKIP LOCKED in store/inbox.cpp, store/outbox.cpp, store/instances.cpp), not through the
// transaction's mode.
constexpr std::string_view begin_write(Backend backend) {
  return backend == Backend::postgresql ? "BEGIN" : "BEGIN IMMEDIATE";
}

namespace detail {
// The steps of transaction() (store/database.cpp), out of the template so that a caller
// sees no SQL and no round. open() joins the attached round's transaction when one is not
// open and begins (BEGIN or a savepoint); it answers whether the transaction is nested.
[[nodiscard]] Result<bool> open(Database& db);
[[nodiscard]] Result<void> commit(Database& db, bool nested);
[[nodiscard]] Result<void> roll_back(Database& db, bool nested);
}  // namespace detail

template <typename T, typename Body>
[[nodiscard]] Result<T> transaction(Database& db, Body&& body) {
  const auto nested = detail::open(db);
  if (!nested) return std::unexpected(nested.error());
  Result<T> result = body();
  if (result) {
    if (auto ok = detail::commit(db, *nested); !ok) result = std::unexpected(ok.error());
  }
  if (!result) {
    // A rollback that fails too (the connection lost its file) is told with the first error.
    if (auto undone = detail::roll_back(db, *nested); !undone)
      result.error().message += "; the rollback failed too: " + undone.error().message;
  }
  return result;
}

}  // namespace dispatchd::store
