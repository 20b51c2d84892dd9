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
#include "store/round.h"

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

template <typename T, typename Body>
Result<T> transaction(Database& db, Body&& body) {
  if (!db.in_transaction() && db.round() != nullptr) {
    if (auto ok = db.round()->open(); !ok) return std::unexpected(ok.error());
  }
  const bool nested = db.in_transaction();
  if (auto ok = db.exec(nested ? "SAVEPOINT nested" : begin_write(db.backend())); !ok)
    return std::unexpected(ok.error());
  Result<T> result = body();
  if (result) {
    if (auto ok = db.exec(nested ? "RELEASE nested" : "COMMIT"); !ok) result = std::unexpected(ok.error());
  }
  if (!result) {
    // A rollback that fails too (the connection lost its file) is told with the first error.
    if (auto undone = db.exec(nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK"); !undone)
      result.error().message += "; the rollback failed too: " + undone.error().message;
  }
  return result;
}

}  // namespace dispatchd::store
