#pragma once
// Online backup: a consistent copy of a live database, safe while the daemon writes.
//
// The copy is one read transaction over the source (SQLite's backup API in a single step),
// so it holds every committed transaction up to a moment and none after; WAL lets writers
// go on meanwhile. It is written to "<dest>.partial", checked (integrity_check and the audit
// chain), then renamed to `dest`, so `dest` never names a half-written or unchecked copy.

#include <cstdint>
#include <expected>
#include <string>

#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store {

struct BackupResult {
  std::int64_t pages = 0;
  std::int64_t audit_events = 0;  // the copy's audit chain, verified
};

// Refuses an existing `dest`. Refuses a PostgreSQL store (kind refused): the server's own
// tools back it up (pg_dump, continuous archiving).
[[nodiscard]] Result<BackupResult> backup(Database& db, const std::string& dest);

}  // namespace dispatchd::store
