#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the connection behind a Database, for the store's own files
// (statements, the backup API, the WAL hook). Nothing outside store/ sees an engine type.

#include "store/database.h"
#include "store/internal/connection.h"
#include "store/internal/writer_intent.h"

namespace dispatchd::store::internal {

struct Access {
  static Connection& connection(const Database& db);
  // The SQLite handle, or null on PostgreSQL (store/internal/connection.h, sqlite_handle).
  static sqlite3* handle(const Database& db);
  // The connection's descriptor for writer announcements (store/internal/writer_intent.h),
  // or null on PostgreSQL. A Round asks through its Database's, which never announces.
  static const WriterIntent* writers(const Database& db);
};

}  // namespace dispatchd::store::internal
