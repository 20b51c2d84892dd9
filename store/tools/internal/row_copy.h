#pragma once
#ifndef DISPATCHD_INTERNAL_STORE
#error "store/tools/internal/ is private to store/: include the module's public headers instead"
#endif
// Internal to store/: rows read on PostgreSQL and written into a SQLite file, for the two
// places where a SQLite file is filled from a PostgreSQL store (an archive file,
// store/tools/archive_copy.cpp; a scratch copy, store/tools/sqlite_snapshot.cpp). Columns go by name,
// never by position, and each value is bound with the type its SQLite column declares
// (the SQLite migrations declare INTEGER, REAL or TEXT), so it keeps its SQLite type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/internal/sql.h"

namespace dispatchd::store::internal {

// The rows of a small query about a schema, every column as text; `parameter` bound as ?1.
[[nodiscard]] Result<std::vector<std::vector<std::string>>> text_rows(
    Database& db, std::string_view sql, int columns, std::optional<std::string> parameter = std::nullopt);

// The migrations applied, "0001 0001_initial.sql\n..." one per line in version order: what two
// databases on different engines must have applied alike.
[[nodiscard]] Result<std::string> applied_migrations(Database& db);

enum class ColumnType { integer, real, text, blob };

struct Column {
  std::string name;
  ColumnType type = ColumnType::text;
};

// A SQLite table's columns in their order, typed from their declared types.
[[nodiscard]] Result<std::vector<Column>> sqlite_columns(Database& sqlite, std::string_view table);

// A PostgreSQL table's column names in their order (current_schema()).
[[nodiscard]] Result<std::vector<std::string>> postgresql_columns(Database& postgresql, std::string_view table);

// "a, b, c": the names, for a SELECT list or an INSERT's column list.
std::string column_list(const std::vector<Column>& columns);

// "INSERT INTO <table> (a, b) VALUES (?1, ?2)".
std::string insert_statement(std::string_view table, const std::vector<Column>& columns);

// Steps `read` (prepared and bound on the PostgreSQL side, its columns those of `columns`
// in order) to its end and runs `insert` on `to` for each row. Returns the rows copied.
[[nodiscard]] Result<std::int64_t> copy_rows(Query& read, Database& to, const std::string& insert,
                                             const std::vector<Column>& columns);

// A read transaction around `body`, begun with `begin`, committed when the body succeeds
// and rolled back otherwise.
template <typename T, typename Body>
[[nodiscard]] Result<T> read_transaction(Database& db, std::string_view begin, Body&& body) {
  DISPATCHD_TRY(internal::exec(db, begin));
  Result<T> result = body();
  if (result) {
    if (auto ok = internal::exec(db, "COMMIT"); !ok) result = std::unexpected(ok.error());
  }
  if (!result) {
    if (auto undone = internal::exec(db, "ROLLBACK"); !undone)
      result.error().message += "; the rollback failed too: " + undone.error().message;
  }
  return result;
}

}  // namespace dispatchd::store::internal
