#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: the SQLite connection behind a Database, for the store's own files
// (statements, the backup API, the WAL hook). Nothing outside store/ sees a sqlite3 type.

#include <string_view>

#include <sqlite3.h>

#include "store/database.h"
#include "store/error.h"

namespace dispatchd::store::internal {

struct Access {
  static sqlite3* handle(const Database& db);
  // The cached prepared statement for `sql`, compiled on first use. REQUIRES: the caller
  // resets it after use (store::Query does); one use of a given text at a time.
  static Result<sqlite3_stmt*> statement(Database& db, std::string_view sql);
};

}  // namespace dispatchd::store::internal
