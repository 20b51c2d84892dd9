#include "store/tools/internal/row_copy.h"

namespace dispatchd::store::internal {
namespace {

ColumnType type_of(const std::string& declared) {
  if (declared == "BLOB") return ColumnType::blob;
  if (declared.find("INT") != std::string::npos) return ColumnType::integer;
  if (declared.find("REAL") != std::string::npos || declared.find("DOUB") != std::string::npos ||
      declared.find("FLOA") != std::string::npos)
    return ColumnType::real;
  return ColumnType::text;
}

}  // namespace

Result<std::vector<std::vector<std::string>>> text_rows(Database& db, std::string_view sql, int columns,
                                                        std::optional<std::string> parameter) {
  auto query = Query::prepare(db, sql);
  if (!query) return std::unexpected(query.error());
  if (parameter) query->bind(1, *parameter);
  std::vector<std::vector<std::string>> rows;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return rows;
    auto& out = rows.emplace_back();
    for (int c = 0; c < columns; ++c) out.push_back(query->text(c));
  }
}

Result<std::string> applied_migrations(Database& db) {
  auto rows = text_rows(db, "SELECT version, name FROM schema_migrations ORDER BY version", 2);
  if (!rows) return std::unexpected(rows.error());
  std::string out;
  for (const auto& row : *rows) out += row[0] + " " + row[1] + "\n";
  return out;
}

Result<std::vector<Column>> sqlite_columns(Database& sqlite, std::string_view table) {
  auto q = Query::prepare(sqlite, "SELECT name, upper(type) FROM pragma_table_info(?1, 'main') ORDER BY cid");
  if (!q) return std::unexpected(q.error());
  q->bind(1, table);
  std::vector<Column> out;
  while (true) {
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back({q->text(0), type_of(q->text(1))});
  }
}

Result<std::vector<std::string>> postgresql_columns(Database& postgresql, std::string_view table) {
  auto q = Query::prepare(postgresql,
                          "SELECT column_name FROM information_schema.columns"
                          " WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position");
  if (!q) return std::unexpected(q.error());
  q->bind(1, table);
  std::vector<std::string> out;
  while (true) {
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(q->text(0));
  }
}

std::string column_list(const std::vector<Column>& columns) {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

std::string insert_statement(std::string_view table, const std::vector<Column>& columns) {
  std::string values;
  for (std::size_t i = 0; i < columns.size(); ++i) values += (i ? ", ?" : "?") + std::to_string(i + 1);
  return "INSERT INTO " + std::string(table) + " (" + column_list(columns) + ") VALUES (" + values + ")";
}

Result<std::int64_t> copy_rows(Query& read, Database& to, const std::string& insert,
                               const std::vector<Column>& columns) {
  std::int64_t copied = 0;
  while (true) {
    auto row = read.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return copied;
    auto write = Query::prepare(to, insert);
    if (!write) return std::unexpected(write.error());
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const int column = static_cast<int>(i);
      const int parameter = column + 1;
      switch (columns[i].type) {
        case ColumnType::integer: write->bind(parameter, read.optional_integer(column)); break;
        case ColumnType::real: write->bind(parameter, read.optional_real(column)); break;
        case ColumnType::text: write->bind(parameter, read.optional_text(column)); break;
        case ColumnType::blob:
          if (read.is_null(column)) {
            write->bind(parameter, std::optional<std::string>());
          } else {
            write->bind_blob(parameter, read.blob(column));
          }
          break;
      }
    }
    DISPATCHD_TRY(write->run());
    ++copied;
  }
}

}  // namespace dispatchd::store::internal
