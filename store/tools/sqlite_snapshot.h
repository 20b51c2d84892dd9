#pragma once
// A PostgreSQL store's consistent copy in a new SQLite file: the scratch database online
// replay runs in when the live store is on PostgreSQL (replay/online.h), as store::backup
// gives it for a SQLite file. The copy is SQLite on both engines, so a replay needs no
// rights on the server beyond reading, and cannot write to it.
//
// One REPEATABLE READ, READ ONLY transaction on the server: the copy holds every
// transaction committed before its first read and none after; the instances go on writing
// meanwhile. The file is written to "<dest>.partial":
//   1. created and migrated with `migrations` (the SQLite ones) up to the server's schema
//      version; both sides must then have applied the same versions and names and hold the
//      same tables with the same columns (kind schema);
//   2. filled in one SQLite transaction, table by table, the rows streamed through a
//      server-side cursor (memory is bounded by a fetch, never a table). The file's
//      triggers are dropped for the copy and created again after it, so that the metric
//      tables hold the server's counts, not a second tally; foreign keys are checked at
//      the COMMIT. A table with a `shard` column (the /metrics counters, migration 0015) is
//      folded to one row per key with its other columns summed: SQLite keeps one shard;
//   3. checked: the copy's audit chain verifies and ends at the server's newest event, and
//      every table that is not folded holds as many rows as on the server (kind corrupt);
//   4. renamed to `dest`, so `dest` never names a half-written or unchecked copy.
//
// REQUIRES: `source` is on PostgreSQL, outside any transaction and without a Round.
// Refuses an existing `dest` (kind refused). Exceptions never escape.

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/error.h"
#include "store/migrations.h"

namespace dispatchd::store {

struct SnapshotResult {
  int schema_version = 0;
  std::int64_t tables = 0;
  std::int64_t rows = 0;          // copied, folded tables counted after folding
  std::int64_t audit_events = 0;  // the copy's audit chain, verified
};

// `now` is the applied_at of the migrations applied to the copy (ISO 8601 UTC).
[[nodiscard]] Result<SnapshotResult> snapshot_to_sqlite(Database& source, const std::string& dest,
                                                        const std::vector<Migration>& migrations,
                                                        const std::string& now);

}  // namespace dispatchd::store
