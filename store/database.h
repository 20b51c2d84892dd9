#pragma once
// An open SQLite database with dispatchd's settings. The only place sqlite3 types live
// is store/*.cpp; callers see this class and error strings.
//
// Settings applied on open: WAL journal, foreign keys on, busy timeout 5 s, and
// synchronous=FULL, so that a committed transaction (an acknowledged inbound message) is
// on disk before the commit returns.
//
// Thread-safety: one Database per thread; SQLite serializes writers across processes.

#include <expected>
#include <memory>
#include <string>
#include <string_view>

struct sqlite3;

namespace dispatchd::store {

class Database {
 public:
  // Opens (creating when missing) the database file at `path`.
  static std::expected<Database, std::string> open(const std::string& path);

  // Runs one or more statements that return no rows.
  std::expected<void, std::string> exec(std::string_view sql);

  // Runs a query returning one integer (0 when it returns no row).
  std::expected<long long, std::string> query_int(std::string_view sql);

  sqlite3* handle() const { return m_db.get(); }

 private:
  struct Close {
    void operator()(sqlite3* db) const;
  };
  explicit Database(sqlite3* db) : m_db(db) {}
  std::unique_ptr<sqlite3, Close> m_db;
};

}  // namespace dispatchd::store
