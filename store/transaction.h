#pragma once
// Transactions, public so that a caller can group several store calls into one commit.
//
// transaction(): BEGIN IMMEDIATE ... COMMIT, or a savepoint when a transaction is already
// open, so store functions compose: the outermost call commits or rolls back everything,
// and a nested call that fails undoes only its own changes.
//
// durable_transaction(): the same, but its COMMIT syncs the WAL to disk (synchronous=FULL)
// whatever the connection's setting. Because the WAL is one file written in order, that
// sync also makes every earlier commit durable. The daemon runs its connection with
// Sync::normal and commits through durable_transaction() exactly the steps that precede
// an effect outside the process (answering 200 to a webhook, calling the Graph API after
// marking an action `sending`), each for a whole batch: group commit. Inside an open
// transaction it is a savepoint and the outer transaction decides.

#include <expected>
#include <string>

#include "store/database.h"

namespace dispatchd::store {

template <typename T, typename Body>
std::expected<T, std::string> transaction(Database& db, Body&& body) {
  // IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout
  // instead of deadlocking on a read-to-write upgrade.
  const bool nested = db.in_transaction();
  if (auto ok = db.exec(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE"); !ok) return std::unexpected(ok.error());
  std::expected<T, std::string> result = body();
  if (result) {
    if (auto ok = db.exec(nested ? "RELEASE nested" : "COMMIT"); !ok) result = std::unexpected(ok.error());
  }
  if (!result) (void)db.exec(nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK");
  return result;
}

template <typename T, typename Body>
std::expected<T, std::string> durable_transaction(Database& db, Body&& body) {
  if (db.in_transaction() || db.synchronous() == Database::Sync::full) return transaction<T>(db, body);
  if (auto ok = db.set_synchronous(Database::Sync::full); !ok) return std::unexpected(ok.error());
  std::expected<T, std::string> result = transaction<T>(db, body);
  if (auto ok = db.set_synchronous(Database::Sync::normal); !ok && result) result = std::unexpected(ok.error());
  return result;
}

}  // namespace dispatchd::store
