#pragma once
// Internal to store/: small sqlite3 helpers shared by the store's .cpp files.

#include <string>

#include <sqlite3.h>

#include "store/database.h"

namespace dispatchd::store {

// A prepared statement that finalizes itself.
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt); }
};

inline std::string column_text(sqlite3_stmt* stmt, int column) {
  const auto* text = sqlite3_column_text(stmt, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

inline void bind(sqlite3_stmt* stmt, int index, const std::string& value) {
  sqlite3_bind_text(stmt, index, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back when it fails.
template <typename T, typename Body>
std::expected<T, std::string> transaction(Database& db, Body&& body) {
  if (auto ok = db.exec("BEGIN IMMEDIATE"); !ok) return std::unexpected(ok.error());
  std::expected<T, std::string> result = body();
  if (result) {
    if (auto ok = db.exec("COMMIT"); !ok) result = std::unexpected(ok.error());
  }
  if (!result) (void)db.exec("ROLLBACK");
  return result;
}

}  // namespace dispatchd::store
