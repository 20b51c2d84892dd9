#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the connection behind a Database, for the store's own files
// (statements, the backup API, the WAL hook). Nothing outside store/ sees an engine type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/database.h"
#include "store/error.h"
#include "store/internal/connection.h"
#include "store/internal/writer_intent.h"

namespace dispatchd::store {
class Round;
}

namespace dispatchd::store::internal {

// What the store caches from the database: the audit chain's tail (store/audit.cpp). Valid
// only inside a transaction and while the epoch it was read in lasts.
struct AuditTail {
  std::uint64_t epoch = 0;
  std::int64_t id = 0;
  std::string hash;
};

struct Access {
  static Connection& connection(const Database& db);
  // The SQLite handle, or null on PostgreSQL (store/internal/connection.h, sqlite_handle).
  static sqlite3* handle(const Database& db);
  // The connection's descriptor for writer announcements (store/internal/writer_intent.h),
  // or null on PostgreSQL. A Round asks through its Database's, which never announces.
  static const WriterIntent* writers(const Database& db);
  // Changes whenever a transaction begins or anything is rolled back (SQL text of BEGIN...
  // or ROLLBACK...), and on a new connection: what the store caches is valid within one.
  static std::uint64_t transaction_epoch(const Database& db);
  static std::optional<AuditTail>& audit_tail(Database& db);
  // The group commit top-level transactions join, or null (a Round attaches itself).
  static Round* round(const Database& db);
  static void attach_round(Database& db, Round* round);
  // Runs one or more statements that return no rows.
  [[nodiscard]] static Result<void> exec(Database& db, std::string_view sql);
  // Runs a query returning one integer (0 when it returns no row).
  [[nodiscard]] static Result<long long> query_int(Database& db, std::string_view sql);
};

// SQL text on a Database, for the store's own files.
[[nodiscard]] inline Result<void> exec(Database& db, std::string_view sql) { return Access::exec(db, sql); }
[[nodiscard]] inline Result<long long> query_int(Database& db, std::string_view sql) {
  return Access::query_int(db, sql);
}

}  // namespace dispatchd::store::internal
