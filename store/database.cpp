#include "store/database.h"

#include <sqlite3.h>

namespace dispatchd::store {

void Database::Close::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

std::expected<Database, std::string> Database::open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Database db(raw);
  if (rc != SQLITE_OK) {
    return std::unexpected(path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, 5000);
  if (auto ok = db.exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"); !ok) {
    return std::unexpected(path + ": " + ok.error());
  }
  return db;
}

std::expected<void, std::string> Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(m_db.get(), text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = message ? message : sqlite3_errmsg(m_db.get());
    sqlite3_free(message);
    return std::unexpected(error);
  }
  return {};
}

std::expected<long long, std::string> Database::query_int(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(m_db.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return std::unexpected(std::string(sqlite3_errmsg(m_db.get())));
  }
  const int rc = sqlite3_step(stmt);
  long long value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  std::string error = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? "" : sqlite3_errmsg(m_db.get());
  sqlite3_finalize(stmt);
  if (!error.empty()) return std::unexpected(error);
  return value;
}

}  // namespace dispatchd::store
