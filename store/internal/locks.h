#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the locks that keep several instances' writers apart on PostgreSQL
// where a row lock cannot (store/instances.h). On SQLite every write transaction already
// holds the one writer lock (BEGIN IMMEDIATE), so these take nothing there.

#include <cstdint>
#include <optional>
#include <string>

#include "store/internal/sql.h"

namespace dispatchd::store::internal {

// Waits for and takes the advisory lock `key` (store::advisory_lock_key) until the current
// transaction ends: COMMIT or ROLLBACK release it, and so does a ROLLBACK TO a savepoint
// made before it was taken. REQUIRES: inside a transaction (outside one PostgreSQL would
// release it as the statement ends). SQLite: nothing.
[[nodiscard]] Result<void> lock_until_commit(Database& db, std::int64_t key);

// Takes the audit chain's tail until the transaction ends (lock_until_commit). append_audit
// takes it before it reads the tail, so that two instances never chain two events to the
// same predecessor. A store function that changes rows and then appends its audit event
// takes it first, before its first change: a transaction then never waits for the tail
// while it holds a row lock that the tail's holder may wait for (PostgreSQL would end one
// of the two as a deadlock, a busy error, after a second). Several calls in one transaction
// are fine: the holder takes it again without waiting.
[[nodiscard]] Result<void> lock_audit_tail(Database& db);

// Picks one row to claim so that the claimer holds the lock of that row and of no other
// (take_next's inbox rows, begin_send's outbox rows). `scan()` finds the row with queries
// that lock what they return and skip what others hold (FOR ... SKIP LOCKED): on
// PostgreSQL a row locked and then dropped by READ COMMITTED's re-read, or found by a query
// whose hit is not used, stays locked until the transaction ends, and such stray locks on
// rows other instances own end in deadlocks. So the scan runs in a savepoint that is rolled
// back, dropping every lock it took, and `relock(id)` locks the chosen row again if it is
// still claimable (true) or reports it claimed meanwhile (false: look again, at most three
// times). SQLite: `scan()` alone (its one writer needs no row locks).
// Scan: () -> Result<std::optional<T>>; Relock: (std::int64_t id) -> Result<bool>; T has `id`.
// REQUIRES: inside a transaction.
template <typename T, typename Scan, typename Relock>
[[nodiscard]] Result<std::optional<T>> pick_locked(Database& db, Scan&& scan, Relock&& relock) {
  if (db.backend() != Backend::postgresql) return scan();
  for (int tries = 0; tries < 3; ++tries) {
    DISPATCHD_TRY(internal::exec(db, "SAVEPOINT pick_scan"));
    auto picked = scan();
    if (!picked) return picked;  // the caller's transaction rolls the savepoint back
    DISPATCHD_TRY(internal::exec(db, "ROLLBACK TO SAVEPOINT pick_scan"));
    if (*picked) {
      auto locked = relock((*picked)->id);
      if (!locked) return std::unexpected(locked.error());
      if (!*locked) {
        // Claimed by another instance since the scan: drop this lock too, and look again.
        DISPATCHD_TRY(internal::exec(db, "ROLLBACK TO SAVEPOINT pick_scan; RELEASE SAVEPOINT pick_scan"));
        continue;
      }
    }
    DISPATCHD_TRY(internal::exec(db, "RELEASE SAVEPOINT pick_scan"));
    return picked;
  }
  return std::optional<T>();
}

}  // namespace dispatchd::store::internal
