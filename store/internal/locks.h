#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the locks that keep several instances' writers apart on PostgreSQL
// where a row lock cannot (store/instances.h). On SQLite every write transaction already
// holds the one writer lock (BEGIN IMMEDIATE), so these take nothing there.

#include <cstdint>

#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store::internal {

// Waits for and takes the advisory lock `key` (store::advisory_lock_key) until the current
// transaction ends: COMMIT or ROLLBACK release it, and so does a ROLLBACK TO a savepoint
// made before it was taken. REQUIRES: inside a transaction (outside one PostgreSQL would
// release it as the statement ends). SQLite: nothing.
Result<void> lock_until_commit(Database& db, std::int64_t key);

// Takes the audit chain's tail until the transaction ends (lock_until_commit). append_audit
// takes it before it reads the tail, so that two instances never chain two events to the
// same predecessor. A store function that changes rows and then appends its audit event
// takes it first, before its first change: a transaction then never waits for the tail
// while it holds a row lock that the tail's holder may wait for (PostgreSQL would end one
// of the two as a deadlock, a busy error, after a second). Several calls in one transaction
// are fine: the holder takes it again without waiting.
Result<void> lock_audit_tail(Database& db);

}  // namespace dispatchd::store::internal
