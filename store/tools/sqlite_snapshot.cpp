#include "store/tools/sqlite_snapshot.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "store/audit.h"
#include "store/tools/internal/row_copy.h"

namespace dispatchd::store {
namespace {

using internal::applied_migrations;
using internal::Column;
using internal::ColumnType;
using internal::text_rows;

// Rows per FETCH from the server-side cursor.
constexpr int k_fetch_rows = 1000;
constexpr const char* k_cursor = "dispatchd_snapshot";

Result<std::vector<std::string>> names(Database& db, std::string_view sql) {
  auto rows = text_rows(db, sql, 1);
  if (!rows) return std::unexpected(rows.error());
  std::vector<std::string> out;
  for (auto& row : *rows) out.push_back(std::move(row[0]));
  return out;
}

Result<std::vector<std::string>> sqlite_tables(Database& copy) {
  return names(copy,
               "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
               " AND name <> 'schema_migrations' ORDER BY name");
}

Result<std::vector<std::string>> postgresql_tables(Database& source) {
  return names(source,
               "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
               " AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name");
}

// What is read from the server for one table of the copy.
struct TableRead {
  std::string table;
  std::vector<Column> columns;  // the copy's, in its order
  std::string select;
  bool folded = false;
};

Result<TableRead> plan_table(Database& source, Database& copy, const std::string& table) {
  auto columns = internal::sqlite_columns(copy, table);
  if (!columns) return std::unexpected(columns.error());
  auto on_server = internal::postgresql_columns(source, table);
  if (!on_server) return std::unexpected(on_server.error());
  std::vector<std::string> mine;
  for (const auto& c : *columns) mine.push_back(c.name);
  std::ranges::sort(mine);
  std::ranges::sort(*on_server);
  if (mine != *on_server) return std::unexpected(Error::schema("table " + table + ": the columns differ"));
  TableRead read{table, std::move(*columns), "", false};
  read.folded = std::ranges::any_of(read.columns, [](const Column& c) { return c.name == "shard"; });
  if (!read.folded) {
    read.select = "SELECT " + internal::column_list(read.columns) + " FROM " + table;
    return read;
  }
  // The copy's key (without the shard) groups; every other column is a counter and is summed.
  auto key = names(copy, "SELECT name FROM pragma_table_info('" + table + "') WHERE pk > 0 AND name <> 'shard'");
  if (!key) return std::unexpected(key.error());
  std::string list;
  for (const auto& c : read.columns) {
    std::string value = c.name;
    if (c.name == "shard") {
      value = "0";
    } else if (std::ranges::find(*key, c.name) == key->end()) {
      if (c.type == ColumnType::text)
        return std::unexpected(Error::schema("table " + table + ": text column " + c.name + " cannot be summed"));
      value = "sum(" + c.name + (c.type == ColumnType::integer ? ")::bigint" : ")::double precision");
    }
    list += (list.empty() ? "" : ", ") + value;
  }
  std::string group;
  for (const auto& k : *key) group += (group.empty() ? "" : ", ") + k;
  if (group.empty()) return std::unexpected(Error::schema("table " + table + ": a shard column without a key"));
  read.select = "SELECT " + list + " FROM " + table + " GROUP BY " + group;
  return read;
}

// Streams one table's rows from the server into the copy.
Result<std::int64_t> copy_table(Database& source, Database& copy, const TableRead& read) {
  DISPATCHD_TRY(internal::exec(source, std::string("DECLARE ") + k_cursor + " NO SCROLL CURSOR FOR " + read.select));
  const std::string insert = internal::insert_statement(read.table, read.columns);
  const std::string fetch = "FETCH " + std::to_string(k_fetch_rows) + " FROM " + k_cursor;
  std::int64_t rows = 0;
  while (true) {
    auto q = Query::prepare(source, fetch);
    if (!q) return std::unexpected(q.error());
    auto copied = internal::copy_rows(*q, copy, insert, read.columns);
    if (!copied) return std::unexpected(with_context(std::move(copied.error()), "copying " + read.table));
    rows += *copied;
    if (*copied < k_fetch_rows) break;
  }
  DISPATCHD_TRY(internal::exec(source, std::string("CLOSE ") + k_cursor));
  return rows;
}

// Step 2, in one transaction on the copy: triggers off, the migrations' seeded rows out,
// every table copied, triggers back.
Result<std::int64_t> fill(Database& source, Database& copy, const std::vector<TableRead>& reads) {
  return transaction<std::int64_t>(copy, [&]() -> Result<std::int64_t> {
    DISPATCHD_TRY(internal::exec(copy, "PRAGMA defer_foreign_keys = ON"));
    auto triggers = text_rows(copy, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name", 2);
    if (!triggers) return std::unexpected(triggers.error());
    for (const auto& t : *triggers) DISPATCHD_TRY(internal::exec(copy, "DROP TRIGGER \"" + t[0] + "\""));
    for (const auto& read : reads) DISPATCHD_TRY(internal::exec(copy, "DELETE FROM " + read.table));
    std::int64_t rows = 0;
    for (const auto& read : reads) {
      auto copied = copy_table(source, copy, read);
      if (!copied) return std::unexpected(copied.error());
      if (!read.folded) {
        auto on_server = internal::query_int(source, "SELECT count(*) FROM " + read.table);
        if (!on_server) return std::unexpected(on_server.error());
        if (*on_server != *copied)
          return std::unexpected(Error{ErrorKind::corrupt, "table " + read.table + ": " + std::to_string(*on_server) +
                                                               " rows on the server, " + std::to_string(*copied) +
                                                               " copied"});
      }
      rows += *copied;
    }
    for (const auto& t : *triggers) DISPATCHD_TRY(internal::exec(copy, t[1]));
    return rows;
  });
}

bool same_event(const std::optional<AuditAnchor>& a, const std::optional<AuditAnchor>& b) {
  if (!a || !b) return !a && !b;
  return a->last_id == b->last_id && a->last_hash == b->last_hash;
}

// Everything but the rename, inside the server's read transaction.
Result<SnapshotResult> make_copy(Database& source, const std::string& partial, const std::vector<Migration>& migrations,
                                 const std::string& now) {
  auto version = schema_version(source);
  if (!version) return std::unexpected(with_context(std::move(version.error()), "the server's schema version"));
  std::vector<Migration> wanted;
  for (const auto& m : migrations)
    if (m.version <= *version) wanted.push_back(m);
  if (wanted.empty() || wanted.back().version != *version)
    return std::unexpected(Error::schema("the database is at schema version " + std::to_string(*version) +
                                         ", which this dispatchctl's SQLite migrations lack"));
  auto copy = Database::open(partial, Database::Mode::create);
  if (!copy) return std::unexpected(copy.error());
  DISPATCHD_TRY(migrate(*copy, wanted, now));
  auto theirs = applied_migrations(source);
  if (!theirs) return std::unexpected(theirs.error());
  auto ours = applied_migrations(*copy);
  if (!ours) return std::unexpected(ours.error());
  if (*theirs != *ours)
    return std::unexpected(Error::schema("the server and the copy have not applied the same migrations"));
  auto server_tables = postgresql_tables(source);
  if (!server_tables) return std::unexpected(server_tables.error());
  auto copy_tables = sqlite_tables(*copy);
  if (!copy_tables) return std::unexpected(copy_tables.error());
  if (*server_tables != *copy_tables)
    return std::unexpected(Error::schema("the server and the copy do not hold the same tables"));
  std::vector<TableRead> reads;
  for (const auto& table : *copy_tables) {
    auto read = plan_table(source, *copy, table);
    if (!read) return std::unexpected(read.error());
    reads.push_back(std::move(*read));
  }
  auto rows = fill(source, *copy, reads);
  if (!rows) return std::unexpected(rows.error());

  auto chain = verify_audit(*copy);
  if (!chain) return std::unexpected(with_context(std::move(chain.error()), "verifying the copy's audit chain"));
  if (chain->first_broken)
    return std::unexpected(Error{ErrorKind::corrupt, "the copy's audit chain breaks at id " +
                                                         std::to_string(*chain->first_broken) + ": " + chain->reason});
  auto server_head = newest_audit_event(source);
  if (!server_head) return std::unexpected(server_head.error());
  auto copy_head = newest_audit_event(*copy);
  if (!copy_head) return std::unexpected(copy_head.error());
  if (!same_event(*server_head, *copy_head))
    return std::unexpected(Error{ErrorKind::corrupt, "the copy's newest audit event is not the server's"});
  // One self-contained file, as a backup is.
  DISPATCHD_TRY(internal::exec(*copy, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE"));
  return SnapshotResult{*version, static_cast<std::int64_t>(reads.size()), *rows, chain->events};
}

}  // namespace

Result<SnapshotResult> snapshot_to_sqlite(Database& source, const std::string& dest,
                                          const std::vector<Migration>& migrations, const std::string& now) {
  if (source.backend() != Backend::postgresql)
    return std::unexpected(Error::refused("a snapshot copies a PostgreSQL store; a SQLite file is copied by backup"));
  if (source.in_transaction() || internal::Access::round(source))
    return std::unexpected(Error::internal("snapshot_to_sqlite needs the source outside any transaction"));
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dest, ec)) return std::unexpected(Error::refused(dest + " exists; a copy never overwrites a file"));
  const std::string partial = dest + ".partial";
  const auto remove_partial = [&] {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(partial + suffix, ec);
  };
  remove_partial();
  auto made = internal::read_transaction<SnapshotResult>(source, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                                                         [&] { return make_copy(source, partial, migrations, now); });
  if (!made) {
    remove_partial();
    return made;
  }
  fs::rename(partial, dest, ec);
  if (ec) {
    remove_partial();
    return std::unexpected(Error{ErrorKind::io, "cannot rename the copy to " + dest + ": " + ec.message()});
  }
  return made;
}

}  // namespace dispatchd::store
