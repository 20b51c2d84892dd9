#pragma once
// Moving a deployment from its SQLite file to PostgreSQL (`dispatchctl migrate-store
// --from PATH --to URI`). All or nothing: the target ends with every row of
// the source, ids kept, and an audit chain that verifies and ends where the source's does,
// or it ends as it was.
//
// The steps, in order; the first that fails stops the move:
//   1. Source: one read transaction over the SQLite file, so every later read sees one
//      snapshot (WAL lets a writer go on meanwhile). Its audit chain is verified first; a
//      broken chain is refused (source_chain_broken).
//   2. Target: refused when it holds rows (target_not_empty; a move never merges). The only
//      rows allowed are what the migrations seed on an empty database (metric_counts rows
//      with n = 0).
//   3. One PostgreSQL transaction from here to the end: the target is migrated to the
//      source's schema version with `migrations` (versions above the source's are left for
//      `dispatchctl migrate`), and both must then hold the same schema_migrations versions
//      and names and the same tables with the same columns (schema_mismatch). The tables are
//      read from the schema (SQLite's sqlite_master): views, sqlite_* and schema_migrations
//      are not copied.
//   4. Every table, parents before children (its foreign keys), rows in primary key order,
//      streamed from SQLite and inserted in batches with their ids (memory is bounded by a
//      batch, never a table). The target's user triggers (the metric counters) are off
//      during the copy, so the metric tables hold the source's counts, not a second tally.
//      SQLite values are dynamically typed: each must fit its PostgreSQL column (an integer
//      for BIGINT, a number for DOUBLE PRECISION, 0/1 for BOOLEAN, text for TEXT; NULL
//      anywhere the column allows it); a value that does not is refused, naming the table,
//      row and column (value_mismatch). A constraint the data breaks on PostgreSQL (SQLite
//      checks less) fails the move (database, kind refused).
//   5. Each identity column's sequence is set past the table's largest id.
//   6. Checked before the commit: the target's audit chain verifies, holds as many events as
//      the source's and ends at the same id and hash, from the same anchor; every table holds
//      as many rows on both sides (target_mismatch).
//   7. Rows written to the source after the snapshot: the operator stops dispatchd first. The
//      move does not block writers; it checks instead, just before the commit, whether any
//      other connection committed to the file since the snapshot began (PRAGMA data_version),
//      and if so rolls the target back (source_changed): a copy never silently misses a row.
//
// REQUIRES: `source` is a SQLite Database and `target` a PostgreSQL one, neither inside a
// transaction nor with a Round attached. Reads the source only (step 1's transaction is a
// read). Exceptions never escape.

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/audit.h"
#include "store/database.h"
#include "store/error.h"
#include "store/migrations.h"

namespace dispatchd::store {

enum class MigrateStoreFailure {
  source_chain_broken,  // the source's audit chain does not verify
  target_not_empty,     // the target holds rows
  schema_mismatch,      // versions, tables or columns differ between the two
  value_mismatch,       // a source value does not fit its PostgreSQL column
  source_changed,       // another connection committed to the source during the move
  target_mismatch,      // the copy does not check out (chain, head, counts)
  database,             // a store call failed; `error` tells which kind
};

std::string_view to_string(MigrateStoreFailure failure);

struct MigrateStoreError {
  MigrateStoreFailure failure = MigrateStoreFailure::database;
  Error error;  // kind refused for every failure but `database` and `schema_mismatch` (schema)
};

struct TableCopied {
  std::string table;
  std::int64_t rows = 0;
};

struct MigrateStoreOptions {
  // Called after each table is copied, in copy order (the CLI's progress lines). May be null;
  // must not throw.
  std::function<void(const TableCopied&)> on_table;
  // Rows per INSERT statement; a batch is also cut at k_migrate_batch_bytes of values.
  int batch_rows = 128;
};

// Buffered values past which a batch is sent whatever its row count.
inline constexpr std::size_t k_migrate_batch_bytes = 8u << 20;

struct MigrateStoreResult {
  int schema_version = 0;
  std::vector<TableCopied> tables;  // in copy order
  std::int64_t audit_events = 0;    // on both sides, verified
  std::optional<AuditAnchor> head;  // the newest audit event on both sides
};

// Moves `source`'s rows into `target` (the steps above). `now` is the applied_at of the
// migrations applied to the target (ISO 8601 UTC).
[[nodiscard]] std::expected<MigrateStoreResult, MigrateStoreError> migrate_store(
    Database& source, Database& target, const std::vector<Migration>& migrations, const std::string& now,
    const MigrateStoreOptions& options = {});

}  // namespace dispatchd::store
